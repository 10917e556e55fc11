/**
 * Caller context for the CLI: the authorization root (--root, config, Git worktree root, cwd),
 * `--all`, and the current session (flags, else PI_SESSION_ID / PI_SESSION_FILE that pi 1.x
 * exports into every bash tool command). Shared by search, read and trace.
 */
import type { ArgsDef } from "citty";
import type { Scope } from "../auth/scope.ts";
import type { Settings } from "../config.ts";
import { resolveCaller } from "../gate/caller.ts";

export const callerArgs = {
	root: {
		type: "string",
		description: "Whose history: sessions started in DIR or below (default: the Git worktree root of the cwd, else the cwd; needed only for another workspace)",
		valueHint: "dir",
	},
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

/** The caller as flags and pi's environment describe it (flags win). */
export function scopeFrom(flags: CallerFlags, settings: Settings, env: Record<string, string | undefined>, cwd: string): Scope {
	return resolveCaller({
		cwd,
		root: flags.root ?? null,
		configRoot: settings.configRoot,
		all: flags.all === true,
		sessionId: flags["current-session"] || env.PI_SESSION_ID || null,
		sessionFile: flags["current-file"] || env.PI_SESSION_FILE || null,
		toolCallId: flags["tool-call-id"] || null,
	});
}
