/** `pi-events trace SESSION ENTRY`: the event's place in its session tree and its relationships. */
import { defineCommand } from "./argv.ts";
import { refresh } from "../sync/freshness.ts";
import { renderTrace } from "../present/render-trace.ts";
import { Gate } from "../gate/gate.ts";
import { traceEvent } from "../query/trace.ts";
import { callerArgs, scopeFrom } from "./caller.ts";
import { checkFlags, commonArgs, debugLog, settingsFrom } from "./shared.ts";
import { invocation } from "./invocation.ts";
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
		checkFlags(rawArgs, args);
		const settings = settingsFrom(a, rawArgs);
		const scope = scopeFrom(a, settings, invocation().env, invocation().cwd);
		const db = invocation().connect(settings.indexPath);
		try {
			if (a.sync !== false) refresh(db, settings, { sync: true, scope, debug: debugLog() });
			const result = traceEvent(new Gate(db, scope), a.session, a.entry);
			const color = isTerminal(1) && !invocation().env.NO_COLOR;
			writeOut(a.json ? `${toJson(result, 2)}\n` : renderTrace(result, { color }));
			return 0;
		} finally {
			invocation().release(db);
		}
	},
});
