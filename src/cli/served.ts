/**
 * The query commands a resident server runs for other processes (server/command-protocol.ts
 * SERVED_COMMANDS), and the runner it is given (server/command-server.ts CommandRunner): a
 * client's command runs here exactly as in the client's own process, with the client's cwd,
 * environment and index connection (invocation.ts) and its output collected for the client.
 */
import type { ServedCommandName } from "../server/command-protocol.ts";
import type { ClientCommand, CommandRunner } from "../server/command-server.ts";
import { PiEventsError } from "../errors.ts";
import { type AnyCommand, execute } from "./execute.ts";
import { within } from "./invocation.ts";

/** Loaded when first run, as every command is (dispatch.ts). */
export const servedCommands: Record<ServedCommandName, () => Promise<AnyCommand>> = {
	search: async () => (await import("./search.ts")).searchCommand,
	sessions: async () => (await import("./sessions.ts")).sessionsCommand,
	read: async () => (await import("./read.ts")).readCommand,
	trace: async () => (await import("./trace.ts")).traceCommand,
};

export const runServedCommand: CommandRunner = async (client: ClientCommand) => {
	const [name, ...rest] = client.argv;
	if (!Object.hasOwn(servedCommands, name!)) throw new PiEventsError("E_INTERNAL", `${name} is not a served command`);
	const command = await servedCommands[name as ServedCommandName]();
	const output: [1 | 2, string][] = [];
	const code = within(
		client,
		{ write: (fd, text) => output.push([fd, text]), isTerminal: (fd) => (fd === 1 ? client.terminal.out : client.terminal.err) },
		() => execute(command, rest),
	);
	// The served commands finish synchronously; a promise here would be a command a server must not run.
	if (typeof code !== "number") throw new PiEventsError("E_INTERNAL", `${name} did not finish synchronously`);
	return { output, exitCode: code };
};
