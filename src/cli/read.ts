/** `pi-events read SESSION ENTRY`: the exact event, re-read from its source file. */
import { defineCommand } from "./argv.ts";
import { PiEventsError } from "../errors.ts";
import { renderRead } from "../present/render-read.ts";
import { Gate } from "../gate/gate.ts";
import { MAX_NEIGHBOURS, readEvent } from "../query/read.ts";
import { DEFAULT_TURN_BYTES, MAX_NEXT_TURNS, MAX_TURN_BYTES, MIN_TURN_BYTES, readTurn } from "../query/turn-read.ts";
import { renderTurn, type TurnHow } from "../present/render-turn.ts";
import { callerArgs } from "./caller.ts";
import { commonArgs } from "./shared.ts";
import { onIndex, startQuery } from "./prologue.ts";
import { toJson } from "../present/json.ts";
import { writeOut } from "./out.ts";
import type { Scope } from "../auth/scope.ts";
import { scopeFlags } from "../present/search-text.ts";

const utf8 = (text: string) => new TextEncoder().encode(text).length;

const args = {
	session: { type: "positional", description: "Session id", required: true },
	entry: { type: "positional", description: "Entry id", required: true },
	...commonArgs,
	...callerArgs,
	fragment: { type: "string", description: "Read a character window of this fragment (e.g. tool.result#0)", valueHint: "id" },
	offset: { type: "string", description: "Window start, in characters (default 0)", valueHint: "n" },
	length: { type: "string", description: "Window length, in characters (default 4000, at most 20000)", valueHint: "n" },
	order: { type: "string", description: "Neighbour order: append (file order, default) or branch (conversation path)", valueHint: "append|branch" },
	before: { type: "string", description: `Neighbours before (0-${MAX_NEIGHBOURS}, default 0)`, valueHint: "n" },
	after: { type: "string", description: `Neighbours after (0-${MAX_NEIGHBOURS}, default 0)`, valueHint: "n" },
	only: {
		type: "string",
		description: "conversation: count neighbours among user/assistant text, session names and summaries only",
		valueHint: "conversation",
	},
	turn: { type: "boolean", description: "Read the whole turn holding the entry as one transcript (prompt to next prompt, on its branch)" },
	"max-bytes": {
		type: "string",
		description: `With --turn: the transcript's budget in bytes (default ${DEFAULT_TURN_BYTES}, ${MIN_TURN_BYTES}-${MAX_TURN_BYTES})`,
		valueHint: "n",
	},
	turns: { type: "string", description: `With --turn: also the next N turns of the same branch (0-${MAX_NEXT_TURNS})`, valueHint: "n" },
	sync: { type: "boolean", description: "Sync the index first (--no-sync to skip)", default: true },
} as const;

/** Flags that read one event's content or neighbours: not with --turn. */
const EVENT_ONLY = ["fragment", "offset", "length", "order", "before", "after", "only"] as const;

/** The CLI's ways to read more, named in a transcript's omissions: they repeat `--root`/`--all` when this read had it. */
function cliHow(sessionId: string, scope: Scope): TurnHow {
	const where = scopeFlags(scope);
	return {
		read: (entryId) => `pi-events read ${sessionId} ${entryId}${where}`,
		turn: (entryId) => `pi-events read ${sessionId} ${entryId} --turn${where}`,
		after: (entryId) => `pi-events read ${sessionId} ${entryId} --order branch --after ${MAX_NEIGHBOURS} --only conversation${where}`,
		moreTurns: "add --turns 1",
	};
}

function checkTurnFlags(a: Record<string, unknown>): void {
	if (a.turn === true) {
		const clash = EVENT_ONLY.find((name) => a[name] !== undefined);
		if (clash) throw new PiEventsError("E_USAGE", `--${clash} reads one event; it does not go with --turn`);
	} else {
		const needs = (["max-bytes", "turns"] as const).find((name) => a[name] !== undefined);
		if (needs) throw new PiEventsError("E_USAGE", `--${needs} goes with --turn`);
	}
}

function intArg(name: string, value: string | undefined): number | undefined {
	if (value === undefined) return undefined;
	if (!/^\d+$/.test(value)) throw new PiEventsError("E_USAGE", `--${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
	return Number(value);
}

export const readCommand = defineCommand({
	meta: { name: "read", description: "Read one event exactly, from its source file" },
	args,
	run({ args: a, rawArgs }) {
		const start = startQuery(args, a, rawArgs);
		const order = a.order ?? "append";
		if (order !== "append" && order !== "branch") throw new PiEventsError("E_USAGE", `--order must be append or branch, got ${JSON.stringify(order)}`);
		if (a.only !== undefined && a.only !== "conversation") throw new PiEventsError("E_USAGE", `--only must be conversation, got ${JSON.stringify(a.only)}`);
		checkTurnFlags(a);
		return onIndex(start, a.sync !== false, (db) => {
			const gate = new Gate(db, start.scope);
			if (a.turn === true) {
				const turn = readTurn(gate, {
					sessionId: a.session,
					entryId: a.entry,
					maxBytes: intArg("max-bytes", a["max-bytes"]),
					turns: intArg("turns", a.turns),
					commandBytes: utf8(scopeFlags(start.scope)),
				});
				writeOut(a.json ? `${toJson(turn, 2)}\n` : renderTurn(turn, cliHow(turn.session.sessionId, start.scope)));
				return 0;
			}
			const result = readEvent(gate, {
				sessionId: a.session,
				entryId: a.entry,
				fragmentId: a.fragment,
				offset: intArg("offset", a.offset),
				length: intArg("length", a.length),
				order,
				before: intArg("before", a.before),
				after: intArg("after", a.after),
				only: a.only === "conversation" ? "conversation" : undefined,
			});
			writeOut(a.json ? `${toJson(result, 2)}\n` : renderRead(result));
			return 0;
		});
	},
});
