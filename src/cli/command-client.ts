/**
 * A query command handed to the resident server (`pi-events serve --socket`), when one listens
 * beside the index this command would use. The server runs the command as this process would
 * (same arguments, cwd and the environment variables the command reads, so the same settings,
 * scope and answer) but with its code compiled and its index pages in memory; this process only
 * passes the request and prints the answer. With no server, another build's server, or any
 * trouble reaching it, the command runs here as usual. PI_EVENTS_SERVER=off never asks a server.
 */
import { lstatSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { indexPathOf } from "../config.ts";
import { VERSION_LINE } from "../version.ts";
import {
	type CommandAnswer,
	type CommandRequest,
	forwardedEnv,
	MAX_MESSAGE_BYTES,
	parseAnswer,
	SERVED_COMMANDS,
	socketPathFor,
} from "../server/command-protocol.ts";
import { isTerminal, writeErr, writeOut } from "./out.ts";
import { spawnDetached } from "./self.ts";

/**
 * How long a client waits for the server to take its request (the server's first byte, sent
 * before it runs the command): a server suspended (Ctrl-Z), wedged or busy with another client's
 * long command costs the client this much, then it runs the command itself.
 */
const TAKE_TIMEOUT_MS = 2_000;

/** How long a client waits for the answer once the server took the request, before running the command itself. */
const ANSWER_TIMEOUT_MS = 60_000;

/**
 * How long a server that PI_EVENTS_SERVER=auto started waits for commands before it stops
 * (PI_EVENTS_SERVER_IDLE, in seconds, sets another).
 */
const AUTO_SERVER_IDLE_SECONDS = 600;

/** The command's exit code when a server ran it, null when it must run here. */
export async function runOnServer(argv: string[]): Promise<number | null> {
	const mode = process.env.PI_EVENTS_SERVER;
	if (mode === "off" || !SERVED_COMMANDS.has(argv[0]!)) return null;
	const found = serverSocket(argv);
	if (found === null) return null;
	if (!found.present) {
		if (mode === "auto") startServer(found.indexPath);
		return null;
	}
	const answer = await askAt(found.socketPath, argv);
	if (answer === null && mode === "auto") startServer(found.indexPath);
	return answer;
}

async function askAt(socket: string, argv: string[]): Promise<number | null> {
	const request: CommandRequest = {
		version: VERSION_LINE,
		argv,
		cwd: process.cwd(),
		env: forwardedEnv(process.env),
		terminal: { out: isTerminal(1), err: isTerminal(2) },
	};
	const answer = await ask(socket, request);
	if (answer === null || "refused" in answer) {
		debugLine(`running here: ${answer ? answer.refused : `no answer from ${socket}`}`);
		return null;
	}
	debugLine(`run by the server at ${socket}`);
	for (const [fd, text] of answer.output) {
		if (fd === 1) writeOut(text);
		else writeErr(text);
	}
	return answer.exitCode;
}

function debugLine(line: string): void {
	if (process.env.PI_EVENTS_DEBUG) writeErr(`pi-events debug: ${line}\n`);
}

/**
 * Where a server for this command's index listens, and whether a socket is there; null when there
 * can be none or it must not be asked: settings this process will report as wrong, no HOME (the
 * server would have to fill it in from its own), a path too long for a socket, a socket in a
 * directory another account can write (it could swap the socket between the check and the
 * connection: see privateDirectory), a file there that is not this account's own socket. A
 * request holds the command's arguments, cwd and settings, and is never handed to another account.
 */
function serverSocket(argv: string[]): { indexPath: string; socketPath: string; present: boolean } | null {
	if (!process.env.HOME) return null;
	let indexPath: string;
	try {
		indexPath = indexPathOf({ indexPath: lastFlagValue(argv, "--index"), cwd: process.cwd(), env: process.env });
	} catch {
		return null;
	}
	const named = socketPathFor(indexPath);
	if (named === null) return null;
	let directory: string;
	try {
		directory = realpathSync(dirname(named));
	} catch {
		return null;
	}
	const uid = process.getuid?.() ?? -1;
	const unsafe = privateDirectory(directory, uid);
	if (unsafe !== null) {
		debugLine(`not asking a server: ${unsafe}`);
		return null;
	}
	// Reached through the resolved directory: no symlink on the way can be changed to point elsewhere.
	const socketPath = join(directory, basename(named));
	try {
		const st = lstatSync(socketPath);
		return st.isSocket() && st.uid === uid ? { indexPath, socketPath, present: true } : null;
	} catch {
		return { indexPath, socketPath, present: false };
	}
}

/**
 * Why another account could put its own socket at a name in `dir` (an absolute path without
 * symlinks), or null when it cannot: `dir` and every directory above it must belong to this
 * account or root; `dir` itself must be writable by nobody else (sticky or not: in a sticky
 * directory others still create names, such as the socket's name when no server holds it); a
 * directory above may be writable by others only if sticky (as /tmp is: nobody but its owner can
 * rename or remove a directory in it). The check and the connection are two steps, so this is
 * what keeps a socket from being swapped in between; Bun offers no peer credentials to check the
 * server's account after connecting.
 */
function privateDirectory(dir: string, uid: number): string | null {
	for (let current = dir, first = true; ; first = false) {
		let st: ReturnType<typeof statSync>;
		try {
			st = statSync(current);
		} catch {
			return `cannot check ${current}`;
		}
		if (st.uid !== uid && st.uid !== 0) return `${current} belongs to another account`;
		const othersWrite = (st.mode & 0o022) !== 0;
		const sticky = (st.mode & 0o1000) !== 0;
		if (othersWrite && (first || !sticky)) return `${current} is writable by other accounts (mode ${(st.mode & 0o7777).toString(8)})`;
		const parent = dirname(current);
		if (parent === current) return null;
		current = parent;
	}
}

/**
 * Start a server for the next commands (PI_EVENTS_SERVER=auto), detached from this process, which
 * neither waits for it nor keeps it: it stops after AUTO_SERVER_IDLE_SECONDS without a command.
 * Two clients starting one at once is harmless: the second server finds the first and exits.
 */
function startServer(indexPath: string): void {
	const idle = Number(process.env.PI_EVENTS_SERVER_IDLE) > 0 ? Number(process.env.PI_EVENTS_SERVER_IDLE) : AUTO_SERVER_IDLE_SECONDS;
	// Not started: the next command runs here again.
	spawnDetached(["serve", "--socket", "--index", indexPath, "--idle-exit", String(idle)]);
}

/** The last `--name value` or `--name=value` before `--` (as cli/argv.ts reads string flags). */
function lastFlagValue(argv: string[], name: string): string | undefined {
	let value: string | undefined;
	for (let i = 1; i < argv.length; i++) {
		const arg = argv[i]!;
		if (arg === "--") break;
		if (arg === name) value = argv[++i] ?? "";
		else if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1);
	}
	return value;
}

/**
 * Send the request and read the answer; null when the server cannot be reached, does not take
 * the request within TAKE_TIMEOUT_MS or answer within ANSWER_TIMEOUT_MS, or answers nothing
 * usable. The connection is closed whichever way it ends: left open, it would keep this process
 * alive after it printed its answer.
 */
function ask(socket: string, request: CommandRequest): Promise<CommandAnswer | null> {
	return new Promise((resolve) => {
		const chunks: Buffer[] = [];
		let bytes = 0;
		let settled = false;
		let connection: { terminate(): void } | null = null;
		const settle = (answer: CommandAnswer | null) => {
			if (settled) return;
			settled = true;
			clearTimeout(timer);
			connection?.terminate();
			connection = null;
			resolve(answer);
		};
		const giveUp = (why: string) => () => {
			writeErr(`pi-events: the server at ${socket} ${why}; running here\n`);
			settle(null);
		};
		let timer = setTimeout(giveUp(`did not take the command within ${TAKE_TIMEOUT_MS / 1000} s`), TAKE_TIMEOUT_MS);
		Bun.connect({
			unix: socket,
			socket: {
				open(s) {
					s.write(`${JSON.stringify(request)}\n`);
				},
				data(s, data) {
					if (bytes === 0) {
						clearTimeout(timer);
						timer = setTimeout(giveUp(`did not answer within ${ANSWER_TIMEOUT_MS / 1000} s`), ANSWER_TIMEOUT_MS);
					}
					chunks.push(Buffer.from(data));
					bytes += data.length;
					if (bytes > MAX_MESSAGE_BYTES) {
						s.end();
						settle(null);
					}
				},
				close() {
					connection = null;
					const text = Buffer.concat(chunks).toString("utf8");
					settle(text.endsWith("\n") ? parseAnswer(text) : null);
				},
				error() {
					settle(null);
				},
				connectError() {
					settle(null);
				},
			},
		}).then(
			(s) => {
				if (settled) s.terminate();
				else connection = s;
			},
			() => settle(null),
		);
	});
}
