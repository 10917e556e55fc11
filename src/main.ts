#!/usr/bin/env bun
/**
 * Entry point of the pi-events binary: dispatches subcommands and maps errors to exit codes
 * (0 results, 1 no results, 2 error). The only module that sets the process exit status.
 */
import type { ArgsDef, CommandDef, ParsedArgs } from "citty";
import { parseArgv } from "./cli/argv.ts";
import { errorCode, isPiEventsError, publicMessage } from "./errors.ts";
import { VERSION, VERSION_LINE } from "./version.ts";
import { terminalSafe } from "./present/terminal.ts";
import { isTerminal, writeErr, writeOut } from "./cli/out.ts";

// biome-ignore lint/suspicious/noExplicitAny: citty's CommandDef is invariant in its args, and this table holds commands with different ones.
type AnyCommand = CommandDef<any>;

/**
 * Each command's module is loaded when it runs: a process initialises only the code its command
 * uses (a search does not build the MCP tool schemas, an `index` not the query engine). citty
 * resolves these for the top-level usage.
 */
const subCommands: Record<string, () => Promise<AnyCommand>> = {
	index: async () => (await import("./cli/index-cmd.ts")).indexCommand,
	search: async () => (await import("./cli/search.ts")).searchCommand,
	sessions: async () => (await import("./cli/sessions.ts")).sessionsCommand,
	read: async () => (await import("./cli/read.ts")).readCommand,
	trace: async () => (await import("./cli/trace.ts")).traceCommand,
	serve: async () => (await import("./cli/serve.ts")).serveCommand,
	status: async () => (await import("./cli/status.ts")).statusCommand,
};

const main: AnyCommand = {
	meta: { name: "pi-events", version: VERSION, description: "Local, read-only event search over pi session history" },
	subCommands,
};

/** citty colours usage even into pipes and pads columns with spaces: clean both for non-terminals. */
async function usage(command: AnyCommand, parent?: AnyCommand): Promise<string> {
	// Loaded only here, not by every process (cli/argv.ts).
	const { renderUsage } = await import("citty");
	const text = await renderUsage(command, parent);
	const plain = isTerminal(1) && !process.env.NO_COLOR ? text : text.replace(/\x1b\[[0-9;]*m/g, "");
	return plain.replace(/[ \t]+$/gm, "");
}

async function run(argv: string[]): Promise<number> {
	if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
		writeOut(`${VERSION_LINE}\n`);
		return 0;
	}
	const name = argv[0];
	if (name === undefined || name === "--help" || name === "-h" || name === "help") {
		writeOut(`${await usage(main)}\n`);
		return name === undefined ? 2 : 0;
	}
	const load = Object.hasOwn(subCommands, name) ? subCommands[name] : undefined;
	if (!load) {
		writeErr(`pi-events: unknown command ${terminalSafe(JSON.stringify(name))} (commands: ${Object.keys(subCommands).join(", ")})\n`);
		return 2;
	}
	const command = await load();
	const rest = argv.slice(1);
	if (rest.includes("--help") || rest.includes("-h")) {
		writeOut(`${await usage(command, main)}\n`);
		return 0;
	}
	try {
		// Parsed here rather than by citty's runCommand: see cli/argv.ts.
		// citty's ParsedArgs type cannot be built structurally (its `_` contradicts its index signature).
		const result = await command.run?.({
			rawArgs: rest,
			args: parseArgv(rest, (command.args ?? {}) as ArgsDef) as unknown as ParsedArgs,
			cmd: command,
		});
		return typeof result === "number" ? result : 0;
	} catch (err) {
		if (isPiEventsError(err)) {
			writeErr(`pi-events: ${terminalSafe(err.message)}\n`);
			return 2;
		}
		writeErr(`pi-events: ${publicMessage(err)} [${errorCode(err)}]\n`);
		if (process.env.PI_EVENTS_DEBUG) writeErr(`${err instanceof Error ? err.stack : String(err)}\n`);
		return 2;
	}
}

// No top-level await: bytecode compilation (bun build --bytecode) does not support it.
void run(process.argv.slice(2)).then((code) => {
	process.exitCode = code;
});
