/** `pi-events sessions`: the sessions in the caller's scope, most recently active first. */
import { defineCommand } from "./argv.ts";
import { PiEventsError } from "../errors.ts";
import { toJson } from "../present/json.ts";
import { freshnessLine, PICK_ROOT, renderSessions, sessionsHead } from "../present/render.ts";
import { parseTimeArg } from "../query/filters.ts";
import { Gate } from "../gate/gate.ts";
import { DEFAULT_SESSIONS, listSessions, MAX_SESSIONS } from "../query/sessions.ts";
import type { Freshness } from "../sync/freshness.ts";
import { callerArgs } from "./caller.ts";
import { commonArgs } from "./shared.ts";
import { onFreshIndex, type QueryStart, startQuery } from "./prologue.ts";
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
		const start = startQuery(args, a, rawArgs);
		const limit = a.limit === undefined ? DEFAULT_SESSIONS : Number(a.limit);
		if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SESSIONS) {
			throw new PiEventsError("E_USAGE", `--limit must be an integer from 1 to ${MAX_SESSIONS}`);
		}
		const now = Date.now();
		const sinceMs = a.since === undefined ? undefined : parseTimeArg("since", a.since, now);
		const untilMs = a.until === undefined ? undefined : parseTimeArg("until", a.until, now);
		return onFreshIndex(start, a.sync !== false, (db, freshness) =>
			printSessions(a, start, listSessions(new Gate(db, start.scope), { sinceMs, untilMs, limit }), freshness),
		);
	},
});

/** The sessions on stdout (JSON or text, under a head naming the scope), the rest on stderr; the exit code. */
function printSessions(a: { json?: boolean; paths?: boolean }, start: QueryStart, result: ReturnType<typeof listSessions>, freshness: Freshness): number {
	if (a.json) {
		writeOut(`${toJson({ ...result, freshness }, 2)}\n`);
	} else {
		const color = isTerminal(1) && !start.env.NO_COLOR;
		const head = terminalSafe(sessionsHead(result, PICK_ROOT.cli));
		if (result.sessions.length > 0)
			writeOut(`${head}:\n${renderSessions(result.sessions, { color, paths: a.paths === true, root: start.scope.roots?.[0] ?? null })}`);
		else writeErr(`pi-events: ${head}\n`);
		if (result.truncated) writeErr(`pi-events: ${result.sessions.length} of ${result.total} sessions (raise --limit)\n`);
		writeErr(`pi-events: ${freshnessLine(freshness)}\n`);
	}
	return result.sessions.length > 0 ? 0 : 1;
}
