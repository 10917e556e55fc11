/**
 * Caller context for the CLI: the authorization root (--root, config, Git worktree root, cwd),
 * `--all`, and the current session (flags, else PI_SESSION_ID / PI_SESSION_FILE that pi 1.x
 * exports into every bash tool command). Shared by search, read and trace.
 */
import type { ArgsDef } from "citty";
import type { Scope } from "../auth/scope.ts";
import { canonicalPath, resolveRoot, type Settings } from "../config.ts";

export const callerArgs = {
	root: { type: "string", description: "Authorization root (default: Git worktree root of the cwd, else the cwd)", valueHint: "dir" },
	all: { type: "boolean", description: "Search every indexed workspace (people only; the model-facing tools never offer this)" },
	"current-session": { type: "string", description: "Id of the session making the call (default: $PI_SESSION_ID)", valueHint: "id" },
	"current-file": { type: "string", description: "File of the session making the call (default: $PI_SESSION_FILE)", valueHint: "path" },
	"tool-call-id": { type: "string", description: "Tool call that invoked pi-events: it and everything after are excluded", valueHint: "id" },
} as const satisfies ArgsDef;

export interface CallerFlags {
	root?: string;
	all?: boolean;
	"current-session"?: string;
	"current-file"?: string;
	"tool-call-id"?: string;
}

export function scopeFrom(flags: CallerFlags, settings: Settings, env: Record<string, string | undefined>, cwd: string): Scope {
	const roots = flags.all ? null : [resolveRoot(cwd, flags.root ?? settings.configRoot)];
	const sessionId = flags["current-session"] || env.PI_SESSION_ID || null;
	const file = flags["current-file"] || env.PI_SESSION_FILE || null;
	const current =
		sessionId || file
			? { sessionId, sessionFile: file ? canonicalPath(file) : null, toolCallId: flags["tool-call-id"] || null }
			: null;
	return { roots, current };
}
