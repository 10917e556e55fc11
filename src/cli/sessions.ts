/** `pi-events sessions`: the sessions in the caller's scope, most recently active first. */
import { defineCommand } from "./argv.ts";
import { PiEventsError } from "../errors.ts";
import { toJson } from "../present/json.ts";
import { freshnessLine, PICK_ROOT, renderSessions, sessionsHead } from "../present/render.ts";
import { parseTimeArg } from "../query/filters.ts";
import { Gate } from "../gate/gate.ts";
import { DEFAULT_SESSIONS, listSessions, MAX_SESSIONS } from "../query/sessions.ts";
import { refresh } from "../sync/freshness.ts";
import { callerArgs, scopeFrom } from "./caller.ts";
import { checkFlags, commonArgs, debugLog, settingsFrom } from "./shared.ts";
import { invocation } from "./invocation.ts";
import { isTerminal, writeErr, writeOut } from "./out.ts";
import { terminalSafe } from "../present/terminal.ts";

const args = {
	...commonArgs,
	...callerArgs,
	since: { type: "string", description: "Only sessions active at or after this time (ISO date/time, or 30m, 12h, 7d, 2w ago)", valueHint: "time" },
	until: { type: "string", description: "Only sessions begun before this time (same forms as --since)", valueHint: "time" },
	limit: { type: "string", description: `Maximum sessions (default ${DEFAULT_SESSIONS}, at most ${MAX_SESSIONS})`, valueHint: "n" },
	paths: { type: "boolean", description: "Show each session's file in text output (JSON always has sessionFile)" },
	sync: { type: "boolean", description: "Sync the index first (--no-sync to skip)", default: true },
} as const;

export const sessionsCommand = defineCommand({
	meta: { name: "sessions", description: "List the sessions in scope, most recently active first" },
	args,
	run({ args: a, rawArgs }) {
		checkFlags(rawArgs, args);
		const settings = settingsFrom(a, rawArgs);
		const scope = scopeFrom(a, settings, invocation().env, invocation().cwd);
		const limit = a.limit === undefined ? DEFAULT_SESSIONS : Number(a.limit);
		if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SESSIONS) {
			throw new PiEventsError("E_USAGE", `--limit must be an integer from 1 to ${MAX_SESSIONS}`);
		}
		const now = Date.now();
		const sinceMs = a.since === undefined ? undefined : parseTimeArg("since", a.since, now);
		const untilMs = a.until === undefined ? undefined : parseTimeArg("until", a.until, now);
		const db = invocation().connect(settings.indexPath);
		try {
			const freshness = refresh(db, settings, { sync: a.sync !== false, scope, debug: debugLog() });
			const result = listSessions(new Gate(db, scope), { sinceMs, untilMs, limit });
			if (a.json) {
				writeOut(`${toJson({ ...result, freshness }, 2)}\n`);
			} else {
				const color = isTerminal(1) && !invocation().env.NO_COLOR;
				const head = terminalSafe(sessionsHead(result, PICK_ROOT.cli));
				if (result.sessions.length > 0)
					writeOut(`${head}:\n${renderSessions(result.sessions, { color, paths: a.paths === true, root: scope.roots?.[0] ?? null })}`);
				else writeErr(`pi-events: ${head}\n`);
				if (result.truncated) writeErr(`pi-events: ${result.sessions.length} of ${result.total} sessions (raise --limit)\n`);
				writeErr(`pi-events: ${freshnessLine(freshness)}\n`);
			}
			return result.sessions.length > 0 ? 0 : 1;
		} finally {
			invocation().release(db);
		}
	},
});
