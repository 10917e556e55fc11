/** `pi-events trace SESSION ENTRY`: the event's place in its session tree and its relationships. */
import { defineCommand } from "./argv.ts";
import { renderTrace } from "../present/render-trace.ts";
import { Gate } from "../gate/gate.ts";
import { traceEvent } from "../query/trace.ts";
import { callerArgs } from "./caller.ts";
import { commonArgs } from "./shared.ts";
import { onIndex, startQuery } from "./prologue.ts";
import { toJson } from "../present/json.ts";
import { isTerminal, writeOut } from "./out.ts";

const args = {
	session: { type: "positional", description: "Session id", required: true },
	entry: { type: "positional", description: "Entry id", required: true },
	...commonArgs,
	...callerArgs,
	sync: { type: "boolean", description: "Sync the index first (--no-sync to skip)", default: true },
} as const;

export const traceCommand = defineCommand({
	meta: { name: "trace", description: "Show an event's parent, children, siblings and relationships" },
	args,
	run({ args: a, rawArgs }) {
		const start = startQuery(args, a, rawArgs);
		return onIndex(start, a.sync !== false, (db) => {
			const result = traceEvent(new Gate(db, start.scope), a.session, a.entry);
			const color = isTerminal(1) && !start.env.NO_COLOR;
			writeOut(a.json ? `${toJson(result, 2)}\n` : renderTrace(result, { color }));
			return 0;
		});
	},
});
