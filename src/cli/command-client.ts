/**
 * A query command handed to the resident server (`pi-events serve --socket`), when one listens
 * beside the index this command would use. The server runs the command as this process would
 * (same arguments, cwd and environment, so the same settings, scope and answer) but with its code
 * compiled and its index pages in memory; this process only passes the request and prints the
 * answer. With no server, another build's server, or any trouble reaching it, the command runs
 * here as usual. PI_EVENTS_SERVER=off never asks a server.
 */
import { lstatSync } from "node:fs";
import { indexPathOf } from "../config.ts";
import { VERSION_LINE } from "../version.ts";
import { type CommandAnswer, type CommandRequest, MAX_MESSAGE_BYTES, parseAnswer, SERVED_COMMANDS, socketPathFor } from "./command-protocol.ts";
import { isTerminal, writeErr, writeOut } from "./out.ts";
import { spawnDetached } from "./self.ts";

/** How long a client waits for an answer before running the command itself. */
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
	const env: Record<string, string> = {};
	for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
	const request: CommandRequest = { version: VERSION_LINE, argv, cwd: process.cwd(), env, terminal: { out: isTerminal(1), err: isTerminal(2) } };
	const answer = await ask(socket, request);
	if (answer === null || "refused" in answer) {
		if (process.env.PI_EVENTS_DEBUG) writeErr(`pi-events debug: running here: ${answer ? answer.refused : `no answer from ${socket}`}\n`);
		return null;
	}
	if (process.env.PI_EVENTS_DEBUG) writeErr(`pi-events debug: run by the server at ${socket}\n`);
	for (const [fd, text] of answer.output) {
		if (fd === 1) writeOut(text);
		else writeErr(text);
	}
	return answer.exitCode;
}

/**
 * Where a server for this command's index listens, and whether a socket is there; null when there
 * can be none (settings this process will report as wrong, a path too long for a socket, a file
 * there that is not this account's own socket: a request holds the environment, and is never
 * handed to another account).
 */
function serverSocket(argv: string[]): { indexPath: string; socketPath: string; present: boolean } | null {
	let indexPath: string;
	try {
		indexPath = indexPathOf({ indexPath: lastFlagValue(argv, "--index"), cwd: process.cwd(), env: process.env });
	} catch {
		return null;
	}
	const socketPath = socketPathFor(indexPath);
	if (socketPath === null) return null;
	try {
		const st = lstatSync(socketPath);
		return st.isSocket() && st.uid === process.getuid?.() ? { indexPath, socketPath, present: true } : null;
	} catch {
		return { indexPath, socketPath, present: false };
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

/** Send the request and read the answer; null when the server cannot be reached or answers nothing usable. */
function ask(socket: string, request: CommandRequest): Promise<CommandAnswer | null> {
	return new Promise((resolve) => {
		const chunks: Buffer[] = [];
		let bytes = 0;
		let settled = false;
		const settle = (answer: CommandAnswer | null) => {
			if (settled) return;
			settled = true;
			clearTimeout(timer);
			resolve(answer);
		};
		const timer = setTimeout(() => {
			writeErr(`pi-events: the server at ${socket} did not answer in ${ANSWER_TIMEOUT_MS / 1000} s; running here\n`);
			settle(null);
		}, ANSWER_TIMEOUT_MS);
		Bun.connect({
			unix: socket,
			socket: {
				open(s) {
					s.write(`${JSON.stringify(request)}\n`);
				},
				data(s, data) {
					chunks.push(Buffer.from(data));
					bytes += data.length;
					if (bytes > MAX_MESSAGE_BYTES) {
						s.end();
						settle(null);
					}
				},
				close() {
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
		}).catch(() => settle(null));
	});
}
