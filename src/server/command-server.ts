/**
 * The resident server's side of the command socket (command-protocol.ts): it runs a client's
 * query command exactly as the client would run it itself (its arguments, cwd and environment),
 * through the server's own connection to the index, whose pages stay in memory between commands,
 * with its code compiled. A new process pays only for starting and passing the request.
 *
 * This module is the socket, the requests and the kept connection; running a command is the
 * command line's (`CommandRunner`, given by cli/serve.ts: cli/served.ts), so the server knows no
 * command and imports nothing from cli/.
 *
 * Requests are run one at a time: each command runs synchronously from start to end. The socket is
 * made readable and writable by this account only, and a request must come from the same build.
 */
import type { Database } from "bun:sqlite";
import { linkSync, lstatSync } from "node:fs";
import { isAbsolute } from "node:path";
import * as v from "valibot";
import { PiEventsError } from "../errors.ts";
import { openIndex } from "../store/db.ts";
import { MergeInSlices } from "../sync/merge.ts";
import { type CommandAnswer, forwardedEnv, MAX_MESSAGE_BYTES, SERVED_COMMANDS } from "./command-protocol.ts";
import { clearStaleSocket, fileIdentity, listenAtFreshName, removeSocket } from "./socket-file.ts";

/** One command the server hands to its runner: a client's, or its own warm-up search. */
export interface ClientCommand {
	/** The command's name and arguments, as typed after `pi-events`. */
	argv: string[];
	cwd: string;
	env: Readonly<Record<string, string | undefined>>;
	terminal: { out: boolean; err: boolean };
	/** The index connection the command uses (the server's kept one for its own index); `release` once done. */
	connect(indexPath: string): Database;
	release(db: Database): void;
}

/** Runs one served command to its end: what it wrote, in order (1 data, 2 diagnostics), and its exit code. */
export type CommandRunner = (command: ClientCommand) => Promise<{ output: [1 | 2, string][]; exitCode: number }>;

const RequestSchema = v.object({
	version: v.string(),
	argv: v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(1000)),
	// Relative paths in a command resolve against it: it must name one directory, not this server's.
	cwd: v.pipe(v.string(), v.check(isAbsolute, "cwd must be an absolute path")),
	env: v.record(v.string(), v.string()),
	terminal: v.object({ out: v.boolean(), err: v.boolean() }),
});

/** How long a connection may take to send its request line. */
const REQUEST_TIMEOUT_SECONDS = 10;

interface CommandServerOptions {
	socketPath: string;
	/** The index this server keeps open; a command naming another index opens that one for itself. */
	indexPath: string;
	/** This build's VERSION_LINE: clients of another build run their commands themselves. */
	version: string;
	run: CommandRunner;
	log: (line: string) => void;
	/**
	 * Merge the full-text index between commands when a sync marked it (sync/merge.ts): for a server
	 * on its own; beside `--stdio`, the MCP server does it.
	 */
	merge?: boolean;
}

export interface CommandServer {
	/** Stop listening, close the index and remove the socket (unless another server replaced it). */
	stop(): void;
	readonly socketPath: string;
	/** When the last command came in (performance.now()), or when the server started. */
	readonly lastCommandAt: number;
}

interface Connection {
	chunks: Buffer[];
	bytes: number;
	/** The answer's bytes not yet taken by the socket. */
	pending: Buffer | null;
	/** One request per connection: anything after its line is ignored. */
	received: boolean;
}

export async function listenForCommands(options: CommandServerOptions): Promise<CommandServer> {
	await clearStaleSocket(options.socketPath);
	const index = new KeptConnection(options.indexPath);
	let lastCommandAt = performance.now();
	// Made while only this account may use it: a socket takes its mode from the umask when bound.
	const umask = process.umask(0o077);
	let listener: ReturnType<typeof Bun.listen<Connection>>;
	let bound: string;
	try {
		[listener, bound] = listenAtFreshName<Connection>(options.socketPath, {
			open(s) {
				s.data = { chunks: [], bytes: 0, pending: null, received: false };
				// A client that connects and never sends its request does not keep a connection.
				s.timeout(REQUEST_TIMEOUT_SECONDS);
			},
			timeout(s) {
				if (!s.data.received) s.end();
			},
			data(s, data) {
				const c = s.data;
				if (c.received) return;
				c.chunks.push(Buffer.from(data));
				c.bytes += data.length;
				if (c.bytes > MAX_MESSAGE_BYTES) {
					s.end();
					return;
				}
				if (data.indexOf(10) === -1) return;
				c.received = true;
				s.timeout(0);
				const all = Buffer.concat(c.chunks);
				const line = all.subarray(0, all.indexOf(10)).toString("utf8");
				c.chunks = [];
				// Taken: the client now waits for the answer, however long the command runs
				// (command-client.ts). A newline: blank before the answer's JSON line.
				s.write("\n");
				void answer(line)
					.catch((err): CommandAnswer => {
						options.log(`pi-events serve: a command failed: ${err instanceof Error ? err.message : String(err)}`);
						return { refused: "the server failed to run it" };
					})
					.then((reply) => {
						c.pending = Buffer.from(`${JSON.stringify(reply)}\n`, "utf8");
						flush(s);
					});
			},
			drain(s) {
				flush(s);
			},
			error(_s, err) {
				options.log(`pi-events serve: a client connection failed: ${err.message}`);
			},
		});
	} catch (err) {
		throw new PiEventsError("E_USAGE", `cannot listen at ${options.socketPath}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
	} finally {
		process.umask(umask);
	}
	// Which socket file is this server's: a server started after this one stopped answering may have
	// replaced it, and stopping must not remove that one.
	const own = fileIdentity(bound, lstatSync);
	// The socket takes its name by a hard link, which fails when the name exists: two servers
	// starting at once cannot both pass clearStaleSocket and take it in turn.
	try {
		linkSync(bound, options.socketPath);
	} catch (err) {
		listener.stop(true);
		const code = (err as NodeJS.ErrnoException).code;
		if (code === "EEXIST") throw new PiEventsError("E_USAGE", `a pi-events server already listens at ${options.socketPath}`);
		throw new PiEventsError("E_USAGE", `cannot listen at ${options.socketPath}: ${code ?? String(err)}`, { cause: err });
	} finally {
		removeSocket(bound);
	}
	let stopped = false;
	// A server on its own merges the full-text index after it starts and after each command.
	const merging = options.merge ? new MergeInSlices(() => index.get(), options.log) : null;
	void warmUp(options.run, index, options.indexPath, () => stopped).then(() => merging?.plan());

	async function answer(line: string): Promise<CommandAnswer> {
		let raw: unknown;
		try {
			raw = JSON.parse(line);
		} catch {
			return { refused: "the request is not JSON" };
		}
		const parsed = v.safeParse(RequestSchema, raw);
		if (!parsed.success) return { refused: `the request is malformed: ${v.summarize(parsed.issues).replace(/\n/g, "; ")}` };
		const request = parsed.output;
		if (request.version !== options.version) return { refused: `this server is ${options.version}` };
		// Its settings come from the request alone: without HOME, the command would take the server's.
		if (!request.env.HOME) return { refused: "the request has no HOME" };
		lastCommandAt = performance.now();
		const name = request.argv[0]!;
		if (!SERVED_COMMANDS.has(name)) return { refused: `this server does not run ${name}` };
		const ran = await options.run({
			argv: request.argv,
			cwd: request.cwd,
			env: forwardedEnv(request.env),
			terminal: request.terminal,
			connect: (path) => (path === options.indexPath ? index.get() : openIndex(path, { oneShot: true })),
			release: (db) => {
				if (!index.holds(db)) db.close();
			},
		});
		merging?.plan();
		return ran;
	}

	return {
		stop() {
			stopped = true;
			merging?.stop();
			listener.stop(true);
			index.close();
			if (fileIdentity(options.socketPath, lstatSync) === own) removeSocket(options.socketPath);
		},
		socketPath: options.socketPath,
		get lastCommandAt() {
			return lastCommandAt;
		},
	};
}

/**
 * Searches the server runs for itself once it listens, their output discarded: a new server's
 * first commands compiled their code and filled its page cache as they went, and took longer than
 * the same command in a process of its own (at 5 GB, `the` 34–42 ms against 26). One search at a
 * time, each in its own turn of the event loop, so a client that comes meanwhile waits for one
 * search at most. Read-only (`--no-sync`); they look at nothing a client's command would not.
 */
const WARM_UP: string[][] = [["the"], ["error"], ['"the error"'], ["the", "error"], ["--error"], ["--sort", "newest", "--group", "session", "file"]];
const WARM_UP_ROUNDS = 3;

async function warmUp(run: CommandRunner, index: KeptConnection, indexPath: string, stopped: () => boolean): Promise<void> {
	for (let round = 0; round < WARM_UP_ROUNDS; round++) {
		for (const args of WARM_UP) {
			await Bun.sleep(0);
			if (stopped()) return;
			await run({
				argv: ["search", "--all", "--no-sync", "--json", "--index", indexPath, ...args],
				cwd: "/",
				env: process.env,
				terminal: { out: false, err: false },
				connect: () => index.get(),
				release() {},
			});
		}
	}
}

/** Write what the socket takes now; the rest when it drains; close once all is written. */
function flush(s: { write(data: Buffer): number; end(): void; data: Connection }): void {
	const pending = s.data.pending;
	if (pending === null) return;
	const written = s.write(pending);
	if (written >= pending.length) {
		s.data.pending = null;
		s.end();
	} else {
		s.data.pending = pending.subarray(Math.max(0, written));
	}
}

/**
 * The server's connection to its index, kept open between commands. When the index file is
 * replaced (deleted and built again), the connection would keep reading the old file: it is
 * reopened when the file at the path is no longer the one it opened.
 */
class KeptConnection {
	private db: Database | null = null;
	private identity = "";

	constructor(private readonly path: string) {}

	get(): Database {
		const now = fileIdentity(this.path);
		if (this.db !== null && now !== this.identity) this.close();
		if (this.db === null) {
			this.db = openIndex(this.path);
			this.identity = fileIdentity(this.path);
		}
		return this.db;
	}

	holds(db: Database): boolean {
		return db === this.db;
	}

	close(): void {
		this.db?.close();
		this.db = null;
	}
}
