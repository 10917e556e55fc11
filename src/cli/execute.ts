/**
 * How a loaded command runs: its arguments parsed, its errors turned into exit codes (0 results,
 * 1 no results, 2 error) and a message on stderr. Used by main.ts (through dispatch.ts) for this
 * process and by cli/served.ts for the resident server's clients.
 */
import type { ArgsDef, CommandDef, ParsedArgs } from "citty";
import { parseArgv } from "./argv.ts";
import { errorCode, isPiEventsError, publicMessage } from "../errors.ts";
import { terminalSafe } from "../present/terminal.ts";
import { writeErr } from "./out.ts";
import { invocation } from "./invocation.ts";

// biome-ignore lint/suspicious/noExplicitAny: citty's CommandDef is invariant in its args, and this table holds commands with different ones.
export type AnyCommand = CommandDef<any>;

/**
 * Run a loaded command with its arguments (after the command's name). Every command but `serve`
 * finishes synchronously and returns its exit code; `serve` returns a promise of it.
 */
export function execute(command: AnyCommand, rest: string[]): number | Promise<number> {
	try {
		// Parsed here rather than by citty's runCommand: see cli/argv.ts.
		// citty's ParsedArgs type cannot be built structurally (its `_` contradicts its index signature).
		const result = command.run?.({
			rawArgs: rest,
			args: parseArgv(rest, (command.args ?? {}) as ArgsDef) as unknown as ParsedArgs,
			cmd: command,
		});
		if (result instanceof Promise) return result.then((code) => (typeof code === "number" ? code : 0), failed);
		return typeof result === "number" ? result : 0;
	} catch (err) {
		return failed(err);
	}
}

function failed(err: unknown): number {
	if (isPiEventsError(err)) {
		writeErr(`pi-events: ${terminalSafe(err.message)}\n`);
		return 2;
	}
	writeErr(`pi-events: ${publicMessage(err)} [${errorCode(err)}]\n`);
	if (invocation().env.PI_EVENTS_DEBUG) writeErr(`${err instanceof Error ? err.stack : String(err)}\n`);
	return 2;
}
