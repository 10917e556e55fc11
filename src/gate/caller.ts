/**
 * resolveCaller(): who is asking, for the CLI and the MCP server alike. The authorization root
 * (an explicit root, else the configured root, else the Git worktree root of the cwd, else the
 * cwd; none with `all`), and the current session (id, own file, invoking tool call) from which the
 * gate derives the session exclusion and the invocation cutoff (gate/gate.ts).
 */
import type { Scope } from "../auth/scope.ts";
import { resolve } from "node:path";
import { canonicalPath, resolveRootSource } from "../config.ts";

interface CallerInput {
	/** The caller's working directory (absolute). */
	cwd: string;
	/** An explicit root (`--root`, or the server's launch `--root`); wins over the configured one. */
	root: string | null;
	/** The configured root (`root` in the config file). */
	configRoot: string | null;
	/** No root at all: a person at the terminal (`--all`). The model-facing tools never set it. */
	all?: boolean;
	sessionId: string | null;
	/** The caller's own session file (any spelling: it is canonicalised here). */
	sessionFile: string | null;
	toolCallId: string | null;
}

export function resolveCaller(input: CallerInput): Scope {
	const { sessionId, sessionFile, toolCallId } = input;
	const current =
		sessionId || sessionFile
			? { sessionId: sessionId || null, sessionFile: sessionFile ? canonicalPath(resolve(input.cwd, sessionFile)) : null, toolCallId: toolCallId || null }
			: null;
	if (input.all) return { roots: null, current };
	const { root, source } = resolveRootSource(input.cwd, input.root ?? input.configRoot);
	return { roots: [root], rootSource: source === "explicit" ? (input.root ? "flag" : "config") : source, current };
}
