/** `pi-events read SESSION ENTRY`: the exact event, re-read from its source file. */
import { defineCommand } from "./argv.ts";
import { PiEventsError } from "../errors.ts";
import { refresh } from "../sync/freshness.ts";
import { renderRead } from "../present/render-read.ts";
import { Gate } from "../gate/gate.ts";
import { MAX_NEIGHBOURS, readEvent } from "../query/read.ts";
import { callerArgs, scopeFrom } from "./caller.ts";
import { checkFlags, commonArgs, debug, settingsFrom } from "./shared.ts";
import { invocation } from "./invocation.ts";
import { toJson } from "../present/json.ts";
import { writeOut } from "./out.ts";

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
	sync: { type: "boolean", description: "Sync the index first (--no-sync to skip)", default: true },
} as const;

function intArg(name: string, value: string | undefined): number | undefined {
	if (value === undefined) return undefined;
	if (!/^\d+$/.test(value)) throw new PiEventsError("E_USAGE", `--${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
	return Number(value);
}

export const readCommand = defineCommand({
	meta: { name: "read", description: "Read one event exactly, from its source file" },
	args,
	run({ args: a, rawArgs }) {
		checkFlags(rawArgs, args);
		const settings = settingsFrom(a, rawArgs);
		const scope = scopeFrom(a, settings, invocation().env, invocation().cwd);
		const order = a.order ?? "append";
		if (order !== "append" && order !== "branch") throw new PiEventsError("E_USAGE", `--order must be append or branch, got ${JSON.stringify(order)}`);
		if (a.only !== undefined && a.only !== "conversation") throw new PiEventsError("E_USAGE", `--only must be conversation, got ${JSON.stringify(a.only)}`);
		const db = invocation().connect(settings.indexPath);
		try {
			if (a.sync !== false) refresh(db, settings, { sync: true, scope, debug });
			const result = readEvent(new Gate(db, scope), {
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
		} finally {
			invocation().release(db);
		}
	},
});
