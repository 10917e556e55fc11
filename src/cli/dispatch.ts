/**
 * The subcommands and how one runs: its module loaded when it runs, its arguments parsed, its
 * errors turned into exit codes (0 results, 1 no results, 2 error) and a message on stderr. Used
 * by main.ts for this process and by the resident server (command-server.ts) for its clients.
 */
import type { ArgsDef, CommandDef, ParsedArgs } from "citty";
import { parseArgv } from "./argv.ts";
import { errorCode, isPiEventsError, publicMessage } from "../errors.ts";
import { VERSION } from "../version.ts";
import { terminalSafe } from "../present/terminal.ts";
import { isTerminal, writeErr } from "./out.ts";
import { invocation } from "./invocation.ts";

// biome-ignore lint/suspicious/noExplicitAny: citty's CommandDef is invariant in its args, and this table holds commands with different ones.
export type AnyCommand = CommandDef<any>;

/**
 * Each command's module is loaded when it runs: a process initialises only the code its command
 * uses (a search does not build the MCP tool schemas, an `index` not the query engine). citty
 * resolves these for the top-level usage.
 */
export const subCommands: Record<string, () => Promise<AnyCommand>> = {
	index: async () => (await import("./index-cmd.ts")).indexCommand,
	search: async () => (await import("./search.ts")).searchCommand,
	sessions: async () => (await import("./sessions.ts")).sessionsCommand,
	read: async () => (await import("./read.ts")).readCommand,
	trace: async () => (await import("./trace.ts")).traceCommand,
	serve: async () => (await import("./serve.ts")).serveCommand,
	status: async () => (await import("./status.ts")).statusCommand,
};

export const mainCommand: AnyCommand = {
	meta: { name: "pi-events", version: VERSION, description: "Local, read-only event search over pi session history" },
	subCommands,
};

/** The command called `name`, loaded; null for an unknown name. */
export async function loadCommand(name: string): Promise<AnyCommand | null> {
	const load = Object.hasOwn(subCommands, name) ? subCommands[name] : undefined;
	return load ? await load() : null;
}

/** citty colours usage even into pipes and pads columns with spaces: clean both for non-terminals. */
export async function usage(command: AnyCommand, parent?: AnyCommand): Promise<string> {
	// Loaded only here, not by every process (cli/argv.ts).
	const { renderUsage } = await import("citty");
	const text = await renderUsage(command, parent);
	const plain = isTerminal(1) && !invocation().env.NO_COLOR ? text : text.replace(/\x1b\[[0-9;]*m/g, "");
	return plain.replace(/[ \t]+$/gm, "");
}

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
