/** The search filter flags (citty definitions) and their comma-separated lists; validation is query/filters.ts. */
import type { ArgsDef } from "citty";
import { BRANCH_STATES, SELECTION_STATES, SEMANTIC_KINDS } from "../model.ts";

export const filterArgs = {
	session: { type: "string", description: "Only this session id (may target the current session, up to the invocation cutoff)", valueHint: "id" },
	cwd: { type: "string", description: "Only sessions whose cwd is this directory or below it", valueHint: "dir" },
	type: {
		type: "string",
		description: "Event types, comma-separated (message, compaction, branch_summary, custom_message, session_info, ...)",
		valueHint: "types",
	},
	kind: { type: "string", description: `Semantic kinds, comma-separated (${SEMANTIC_KINDS.join(", ")})`, valueHint: "kinds" },
	role: { type: "string", description: "Message roles, comma-separated (user, assistant, toolResult, bashExecution, custom)", valueHint: "roles" },
	tool: { type: "string", description: "Tool names, comma-separated (bash, read, edit, ...)", valueHint: "names" },
	since: { type: "string", description: "Only events at or after this time (ISO date/time, or 30m, 12h, 7d, 2w ago)", valueHint: "time" },
	until: { type: "string", description: "Only events before this time (same forms as --since)", valueHint: "time" },
	error: { type: "boolean", description: "Only failed events (tool errors, non-zero exits, errored replies); --no-error for the rest" },
	branch: { type: "string", description: `Branch states, comma-separated (${BRANCH_STATES.join(", ")})`, valueHint: "states" },
	selection: { type: "string", description: `Selection states, comma-separated (${SELECTION_STATES.join(", ")})`, valueHint: "states" },
	file: { type: "string", description: "Only events that touched this path or a path under it (repeatable)", valueHint: "path" },
} as const satisfies ArgsDef;

export function list(value: string | undefined): string[] | undefined {
	if (value === undefined) return undefined;
	const items = value
		.split(",")
		.map((s) => s.trim())
		.filter(Boolean);
	return items.length > 0 ? items : undefined;
}
