/** `pi-events serve --stdio`: the MCP tool server used by the pi extension and other MCP clients. */
import { defineCommand } from "./argv.ts";
import { canonicalPath } from "../config.ts";
import { PiEventsError } from "../errors.ts";
import { compileForLongWork } from "../jit.ts";
import { VERSION, VERSION_LINE } from "../version.ts";
import { type CommandServer, listenForCommands } from "../server/command-server.ts";
import { socketPathFor } from "../server/command-protocol.ts";
import { runServedCommand } from "./served.ts";
import { serveStream, StdioServer } from "../server/stdio.ts";
import { toolNamesInProse } from "../server/tools.ts";
import { openIndex } from "../store/db.ts";
import { checkFlags, commonArgs, settingsFrom } from "./shared.ts";

const args = {
	stdio: { type: "boolean", description: "Serve MCP over stdin/stdout (the pi extension, MCP clients)" },
	socket: {
		type: "boolean",
		description: "Run query commands (search, read, trace, sessions) for other pi-events processes, over a Unix socket beside the index",
	},
	"idle-exit": { type: "string", description: "With --socket alone: stop after this many seconds without a command (default: never)", valueHint: "seconds" },
	index: commonArgs.index,
	"sessions-dir": commonArgs["sessions-dir"],
	root: { type: "string", description: "Authorization root for every call (default: from the caller's cwd)", valueHint: "dir" },
} as const;

export const serveCommand = defineCommand({
	meta: {
		name: "serve",
		description: `Run the MCP tool server (${toolNamesInProse()}) over stdio, or a resident server for the command line (--socket)`,
	},
	args,
	async run({ args: a, rawArgs }) {
		checkFlags(rawArgs, args);
		if (!a.stdio && !a.socket) throw new PiEventsError("E_USAGE", "serve needs --stdio, --socket or both");
		if (a.root && !a.root.startsWith("/")) throw new PiEventsError("E_USAGE", "--root must be an absolute path");
		const idleExit = a["idle-exit"] === undefined ? null : Number(a["idle-exit"]);
		if (idleExit !== null && (!a.socket || a.stdio))
			throw new PiEventsError("E_USAGE", "--idle-exit goes with --socket alone (a --stdio server ends with its client)");
		if (idleExit !== null && !(Number.isFinite(idleExit) && idleExit > 0)) {
			throw new PiEventsError("E_USAGE", `--idle-exit must be a number of seconds above 0, got ${JSON.stringify(a["idle-exit"])}`);
		}
		const settings = settingsFrom(a, rawArgs);
		// A server answers many calls: its code is worth compiling (jit.ts).
		compileForLongWork();
		const log = (line: string) => process.stderr.write(`${line}\n`);
		if (!a.stdio) {
			const commands = await listenAtIndex(settings.indexPath, log, true);
			log(`pi-events serve: ready (index ${settings.indexPath}, socket ${commands.socketPath})`);
			await untilStopped(commands, idleExit);
			return 0;
		}
		// Beside an MCP client's server, the socket is a bonus: taken by another server, it is left to it.
		let commands: CommandServer | null = null;
		if (a.socket) {
			try {
				commands = await listenAtIndex(settings.indexPath, log);
			} catch (err) {
				if (!(err instanceof PiEventsError)) throw err;
				log(`pi-events serve: not listening for commands: ${err.message}`);
			}
		}
		const db = openIndex(settings.indexPath);
		const server = new StdioServer({
			db,
			settings,
			version: VERSION,
			launch: {
				root: a.root ?? null,
				cwd: process.cwd(),
				sessionId: process.env.PI_SESSION_ID || null,
				sessionFile: process.env.PI_SESSION_FILE ? canonicalPath(process.env.PI_SESSION_FILE) : null,
			},
			write: (frame) => process.stdout.write(`${frame}\n`),
			log,
		});
		log(`pi-events serve: ready (index ${settings.indexPath})`);
		try {
			await serveStream(server, Bun.stdin.stream(), () =>
				process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: frame too large" } })}\n`),
			);
		} finally {
			server.close();
			commands?.stop();
			db.close();
		}
		return 0;
	},
});

async function listenAtIndex(indexPath: string, log: (line: string) => void, merge = false): Promise<CommandServer> {
	const socketPath = socketPathFor(indexPath);
	if (socketPath === null) throw new PiEventsError("E_USAGE", `the socket path ${indexPath}.sock is too long for a Unix socket: use a shorter --index`);
	// A stopped server removes its socket, so no client waits on it. The handlers come before the
	// socket is bound: a signal's default action, in the moment between bind and handlers, would end
	// the process and leave the socket behind. (A handler runs on the event loop, after the
	// assignment below, never between the bind and it.)
	let server: CommandServer | null = null;
	const stop = () => {
		server?.stop();
		process.exit(0);
	};
	process.once("SIGINT", stop);
	process.once("SIGTERM", stop);
	process.once("SIGHUP", stop);
	try {
		server = await listenForCommands({ socketPath, indexPath, version: VERSION_LINE, log, merge, run: runServedCommand });
	} catch (err) {
		// Not listening (the socket is another server's, say): a --stdio server goes on without them.
		for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.off(signal, stop);
		throw err;
	}
	return server;
}

/** Until a signal ends the process (the handlers above), or it has been idle for `idleSeconds`. */
function untilStopped(server: CommandServer, idleSeconds: number | null): Promise<void> {
	return new Promise((resolve) => {
		if (idleSeconds === null) return;
		const every = Math.min(1000, (idleSeconds * 1000) / 4);
		const timer = setInterval(() => {
			if (performance.now() - server.lastCommandAt < idleSeconds * 1000) return;
			clearInterval(timer);
			server.stop();
			resolve();
		}, every);
	});
}
