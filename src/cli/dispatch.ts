/**
 * The subcommands: each one's module loaded when it runs, the top-level usage, and (from
 * execute.ts) how one runs. Used by main.ts for this process.
 */
import { VERSION } from "../version.ts";
import { isTerminal } from "./out.ts";
import { invocation } from "./invocation.ts";
import type { AnyCommand } from "./execute.ts";
import { servedCommands } from "./served.ts";

export { type AnyCommand, execute } from "./execute.ts";

/**
 * Each command's module is loaded when it runs: a process initialises only the code its command
 * uses (a search does not build the MCP tool schemas, an `index` not the query engine). citty
 * resolves these for the top-level usage. The query commands come from served.ts, which the
 * resident server's runner shares.
 */
export const subCommands: Record<string, () => Promise<AnyCommand>> = {
	index: async () => (await import("./index-cmd.ts")).indexCommand,
	search: servedCommands.search,
	sessions: servedCommands.sessions,
	read: servedCommands.read,
	trace: servedCommands.trace,
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
