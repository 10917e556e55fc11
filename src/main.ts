#!/usr/bin/env bun
/**
 * Entry point of the pi-events binary: answers `--version`, hands a query command to a resident
 * server when one listens for this index (cli/command-client.ts), else runs the command here
 * (cli/dispatch.ts). Each is loaded only when needed: what a process initialises is what it
 * pays for. The only module that sets the process exit status.
 */
import { VERSION_LINE } from "./version.ts";
import { terminalSafe } from "./present/terminal.ts";
import { writeErr, writeOut } from "./cli/out.ts";
import { SERVED_COMMANDS } from "./server/command-protocol.ts";

async function run(argv: string[]): Promise<number> {
	if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
		writeOut(`${VERSION_LINE}\n`);
		return 0;
	}
	const name = argv[0];
	const rest = argv.slice(1);
	const help = rest.includes("--help") || rest.includes("-h");
	if (name !== undefined && SERVED_COMMANDS.has(name) && !help) {
		const { runOnServer } = await import("./cli/command-client.ts");
		const answered = await runOnServer(argv);
		if (answered !== null) return answered;
	}
	// Loaded only to run a command here: a client of the server needs none of it.
	const { execute, loadCommand, mainCommand, subCommands, usage } = await import("./cli/dispatch.ts");
	if (name === undefined || name === "--help" || name === "-h" || name === "help") {
		writeOut(`${await usage(mainCommand)}\n`);
		return name === undefined ? 2 : 0;
	}
	if (!Object.hasOwn(subCommands, name)) {
		writeErr(`pi-events: unknown command ${terminalSafe(JSON.stringify(name))} (commands: ${Object.keys(subCommands).join(", ")})\n`);
		return 2;
	}
	const command = (await loadCommand(name))!;
	if (help) {
		writeOut(`${await usage(command, mainCommand)}\n`);
		return 0;
	}
	return await execute(command, rest);
}

// No top-level await: bytecode compilation (bun build --bytecode) does not support it.
void run(process.argv.slice(2)).then((code) => {
	process.exitCode = code;
});
