/**
 * The resident server for the command line (`serve --socket`): a query command handed to it
 * answers exactly as the same command run in its own process, scoped by the client's own cwd and
 * environment (never the server's, never another client's); the server refuses another build, bad
 * requests and a second server; a stale socket is cleared; a replaced index is reopened; appends are
 * seen; the socket is this account's only and gone when the server stops.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { type AgentLayout, cleanupTempDirs, type CliResult, isolatedEnv, MAIN, makeAgentLayout, runCli } from "../helpers/temp.ts";
import { assistantEntry, oneMessageSession, userEntry, writeSession } from "../query/helpers.ts";
import { answers } from "../../src/server/socket-file.ts";

afterAll(cleanupTempDirs);

let layout: AgentLayout;
let sessions: string;
let indexPath: string;
let socketPath: string;
const APP = "/work/served/app";
const OTHER = "/work/served/other";

interface Server {
	proc: ReturnType<typeof Bun.spawn>;
	stderr: () => Promise<string>;
}
const servers: Server[] = [];

async function startServer(cwd = layout.root, extra: string[] = []): Promise<Server> {
	const proc = Bun.spawn([process.execPath, MAIN, "serve", "--socket", "--index", indexPath, "--sessions-dir", sessions, ...extra], {
		cwd,
		env: isolatedEnv(layout),
		stdout: "pipe",
		stderr: "pipe",
	});
	const server = { proc, stderr: () => new Response(proc.stderr as ReadableStream).text() };
	servers.push(server);
	// Ready once the socket answers (a stale socket file may be there before).
	for (let i = 0; i < 200; i++) {
		if (await answers(socketPath)) return server;
		await Bun.sleep(25);
	}
	throw new Error(`the server did not listen: ${await server.stderr()}`);
}

async function stopAll(): Promise<void> {
	for (const s of servers.splice(0)) {
		s.proc.kill("SIGTERM");
		await s.proc.exited;
	}
}

afterEach(stopAll);

/** A query command with the layout's isolated environment; PI_EVENTS_DEBUG says who ran it. */
function cli(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): CliResult {
	return runCli(layout, [args[0]!, "--index", indexPath, "--sessions-dir", sessions, ...args.slice(1)], {
		cwd: opts.cwd,
		env: { PI_EVENTS_DEBUG: "1", ...opts.env },
	});
}
const byServer = (r: CliResult) => r.stderr.includes(`run by the server at ${socketPath}`);
/** The answer without what differs between any two runs (timings, the time of the sync). */
const stable = (r: CliResult) => JSON.stringify(r.json(), (k, v) => (k === "elapsedMs" || k === "syncMs" || k === "lastSyncAt" ? 0 : v));

beforeAll(() => {
	layout = makeAgentLayout();
	sessions = join(layout.root, "sessions");
	const t = "2026-10-01T10:00:0";
	writeSession(sessions, {
		id: "aaaa1111-0000-4000-8000-000000000001",
		cwd: APP,
		entries: [
			userEntry("u1", null, `${t}1.000Z`, "the deploy failed with ECONNREFUSED on port 5432"),
			assistantEntry("a1", "u1", `${t}2.000Z`, "The database was not running; start it and retry the deploy."),
		],
	});
	writeSession(sessions, oneMessageSession("bbbb2222-0000-4000-8000-000000000002", OTHER, "other workspace: ECONNREFUSED from the cache"));
	for (const dir of [APP, OTHER]) mkdirSync(join(layout.root, "ws", dir), { recursive: true });
	indexPath = join(layout.root, "idx", "index.db");
	socketPath = `${indexPath}.sock`;
	const built = cli(["index"]);
	if (built.exitCode !== 0) throw new Error(built.stderr);
});

describe("serve --socket", () => {
	test("search, read, trace and sessions answer as in their own process, and the server ran them", async () => {
		const commands = [
			["search", "--all", "--json", "ECONNREFUSED"],
			["search", "--all", "--json", "--sort", "newest", "deploy"],
			["search", "--all", "--json", "nosuchwordanywhere"],
			["sessions", "--all", "--json"],
			["read", "--all", "--json", "--before", "1", "aaaa1111", "a1"],
			["trace", "--all", "--json", "aaaa1111", "a1"],
		];
		const alone = commands.map((c) => cli(c, { env: { PI_EVENTS_SERVER: "off" } }));
		expect(alone.map((r) => r.exitCode)).toEqual([0, 0, 1, 0, 0, 0]);
		await startServer();
		for (const [i, c] of commands.entries()) {
			const served = cli(c);
			expect(byServer(served)).toBe(true);
			expect(byServer(alone[i]!)).toBe(false);
			expect(served.exitCode).toBe(alone[i]!.exitCode);
			expect(stable(served)).toBe(stable(alone[i]!));
		}
		// Text output and its diagnostics, in order, on the right streams.
		const text = cli(["search", "--all", "nosuchwordanywhere"]);
		expect(byServer(text)).toBe(true);
		expect(text.exitCode).toBe(1);
		expect(text.stdout).toBe("");
		expect(text.stderr).toContain("no hits");
	});

	test("each client is scoped by its own cwd, whatever the server's and the other clients'", async () => {
		// The server's own cwd, `/`, would be a root holding every workspace.
		await startServer("/");
		const hitCwds = (r: CliResult) => [...new Set((r.json().hits as { cwd: string }[]).map((h) => h.cwd))];
		// A cwd outside any Git repository is its own root; the sessions' cwds do not exist here, so
		// each client names its workspace with --root, and a wrong one sees nothing.
		const app = cli(["search", "--root", APP, "--json", "ECONNREFUSED"], { cwd: join(layout.root, "ws", APP) });
		const other = cli(["search", "--root", OTHER, "--json", "ECONNREFUSED"]);
		const fromCwd = cli(["search", "--json", "ECONNREFUSED"], { cwd: join(layout.root, "ws", APP) });
		for (const r of [app, other, fromCwd]) expect(byServer(r)).toBe(true);
		expect(hitCwds(app)).toEqual([APP]);
		expect(hitCwds(other)).toEqual([OTHER]);
		// The client's cwd (a directory with no sessions) is its scope: nothing, not the server's view.
		expect(fromCwd.exitCode).toBe(1);
		expect(fromCwd.json().hits).toEqual([]);
		// A relative --root is refused for the client exactly as in its own process.
		const relative = cli(["search", "--root", "app", "ECONNREFUSED"]);
		expect(relative.exitCode).toBe(2);
		expect(relative.stderr).toContain("--root must be an absolute path");
	});

	test("a search through the server syncs first: an append is in the next answer", async () => {
		await startServer();
		const file = writeSession(sessions, oneMessageSession("cccc3333-0000-4000-8000-000000000003", APP, "first words only"));
		expect(cli(["search", "--all", "--json", "first"]).json().hits.length).toBe(1);
		appendFileSync(file, `${JSON.stringify(userEntry("u-late", "u-cccc33", "2026-10-01T10:09:00.000Z", "a late zebracorn appears"))}\n`);
		const after = cli(["search", "--all", "--json", "zebracorn"]);
		expect(byServer(after)).toBe(true);
		expect(after.json().hits.map((h: { entryId: string }) => h.entryId)).toEqual(["u-late"]);
	});

	test("an index deleted and built again is reopened, not read from the old file", async () => {
		await startServer();
		expect(cli(["search", "--all", "--json", "ECONNREFUSED"]).json().hits.length).toBe(2);
		for (const suffix of ["", "-wal", "-shm"]) rmSync(`${indexPath}${suffix}`, { force: true });
		const extra = join(layout.root, "more-sessions");
		writeSession(extra, oneMessageSession("dddd4444-0000-4000-8000-000000000004", APP, "ECONNREFUSED once more"));
		const rebuilt = runCli(layout, ["index", "--index", indexPath, "--sessions-dir", sessions, "--sessions-dir", extra], { env: { PI_EVENTS_SERVER: "off" } });
		expect(rebuilt.exitCode).toBe(0);
		// The new index holds the extra session (the client names both directories, as its index did).
		const r = runCli(
			layout,
			["search", "--index", indexPath, "--sessions-dir", sessions, "--sessions-dir", extra, "--all", "--json", "--no-sync", "ECONNREFUSED"],
			{
				env: { PI_EVENTS_DEBUG: "1" },
			},
		);
		expect(byServer(r)).toBe(true);
		expect(r.json().hits.length).toBe(3);
	});

	test("the socket is this account's only, and removed when the server stops", async () => {
		const server = await startServer();
		expect(statSync(socketPath).mode & 0o077).toBe(0);
		server.proc.kill("SIGTERM");
		await server.proc.exited;
		expect(existsSync(socketPath)).toBe(false);
		const r = cli(["search", "--all", "--json", "ECONNREFUSED"]);
		expect(byServer(r)).toBe(false);
		expect(r.json().hits.length).toBeGreaterThan(0);
	});

	test("a SIGTERM the moment the socket appears still removes it (the handlers are there before the bind)", async () => {
		for (let round = 0; round < 5; round++) {
			const proc = Bun.spawn([process.execPath, MAIN, "serve", "--socket", "--index", indexPath, "--sessions-dir", sessions], {
				cwd: layout.root,
				env: isolatedEnv(layout),
				stdout: "ignore",
				stderr: "ignore",
			});
			// Spin, not sleep: the signal must land as close to the bind as this process can see it.
			const deadline = performance.now() + 10_000;
			while (!existsSync(socketPath) && performance.now() < deadline);
			proc.kill("SIGTERM");
			await proc.exited;
			expect(proc.signalCode).toBe(null);
			expect(proc.exitCode).toBe(0);
			expect(existsSync(socketPath)).toBe(false);
		}
	});

	test("a socket left by a killed server: clients run the command themselves, and a new server takes its place", async () => {
		const killed = await startServer();
		killed.proc.kill("SIGKILL");
		await killed.proc.exited;
		servers.splice(0);
		expect(existsSync(socketPath)).toBe(true);
		const r = cli(["search", "--all", "--json", "ECONNREFUSED"]);
		expect(byServer(r)).toBe(false);
		expect(r.exitCode).toBe(0);
		expect(r.stderr).toContain(`no answer from ${socketPath}`);
		await startServer();
		expect(byServer(cli(["search", "--all", "--json", "ECONNREFUSED"]))).toBe(true);
	});

	test("one server per index: a second one is refused", async () => {
		await startServer();
		const second = Bun.spawnSync([process.execPath, MAIN, "serve", "--socket", "--index", indexPath, "--sessions-dir", sessions], {
			cwd: layout.root,
			env: isolatedEnv(layout),
			stderr: "pipe",
		});
		expect(second.exitCode).toBe(2);
		expect(second.stderr.toString()).toContain(`a pi-events server already listens at ${socketPath}`);
		expect(byServer(cli(["search", "--all", "--json", "ECONNREFUSED"]))).toBe(true);
	});

	test("another build's request, a malformed one and a command it does not run are refused, not run", async () => {
		await startServer();
		const ask = (line: string) =>
			new Promise<string>((resolve, reject) => {
				const chunks: Buffer[] = [];
				Bun.connect({
					unix: socketPath,
					socket: {
						open: (s) => void s.write(line),
						data: (_s, d) => void chunks.push(Buffer.from(d)),
						close: () => resolve(Buffer.concat(chunks).toString()),
						error: (_s, e) => reject(e),
					},
				}).catch(reject);
			});
		const request = (over: Record<string, unknown>) =>
			`${JSON.stringify({ version: "x", argv: ["search", "--all", "--json", "--index", indexPath, "--sessions-dir", sessions, "ECONNREFUSED"], cwd: layout.root, env: isolatedEnv(layout), terminal: { out: false, err: false }, ...over })}\n`;
		expect(JSON.parse(await ask(request({ version: "0.0.0 (elsewhere, commit other)" })))).toEqual({ refused: expect.stringContaining("this server is") });
		expect(JSON.parse(await ask("{not json\n"))).toEqual({ refused: "the request is not JSON" });
		expect(JSON.parse(await ask(`${JSON.stringify({ argv: "search" })}\n`)).refused).toContain("the request is malformed");
		expect(JSON.parse(await ask(request({ cwd: "relative/dir" }))).refused).toContain("cwd must be an absolute path");
		// The version the server reports is its own: with it, `index` is still not run for a client.
		const version = runCli(layout, ["--version"]).stdout.trim();
		expect(JSON.parse(await ask(request({ version, argv: ["index", "--index", indexPath] })))).toEqual({ refused: "this server does not run index" });
		const served = JSON.parse(await ask(request({ version })));
		expect(served.exitCode).toBe(0);
		const alone = cli(["search", "--all", "--json", "ECONNREFUSED"], { env: { PI_EVENTS_SERVER: "off" } });
		expect(JSON.parse(served.output.find((o: [number, string]) => o[0] === 1)[1]).hits).toEqual(alone.json().hits);
	});

	test("--idle-exit: a server without commands stops after that many seconds and removes its socket", async () => {
		const server = await startServer(layout.root, ["--idle-exit", "0.5"]);
		expect(byServer(cli(["search", "--all", "--json", "ECONNREFUSED"]))).toBe(true);
		const code = await Promise.race([server.proc.exited, Bun.sleep(10_000).then(() => "still running")]);
		expect(code).toBe(0);
		expect(existsSync(socketPath)).toBe(false);
	});

	test("PI_EVENTS_SERVER=auto: a command with no server runs here and starts one, which runs the next and stops when idle", async () => {
		const auto = { PI_EVENTS_SERVER: "auto", PI_EVENTS_SERVER_IDLE: "1.5" };
		const first = cli(["search", "--all", "--json", "ECONNREFUSED"], { env: auto });
		expect(byServer(first)).toBe(false);
		expect(first.exitCode).toBe(0);
		let listening = false;
		for (let i = 0; i < 200 && !listening; i++) {
			listening = await answers(socketPath);
			if (!listening) await Bun.sleep(25);
		}
		expect(listening).toBe(true);
		const next = cli(["search", "--all", "--json", "ECONNREFUSED"], { env: auto });
		expect(byServer(next)).toBe(true);
		expect(stable(next)).toBe(stable(first));
		// Idle for 1.5 s, it stops and takes its socket with it.
		for (let i = 0; i < 400 && existsSync(socketPath); i++) await Bun.sleep(25);
		expect(existsSync(socketPath)).toBe(false);
	});

	test("bad serve flags are usage errors", () => {
		const serve = (args: string[]) =>
			Bun.spawnSync([process.execPath, MAIN, "serve", "--index", indexPath, ...args], { cwd: layout.root, env: isolatedEnv(layout), stderr: "pipe" });
		const cases: [string[], string][] = [
			[[], "serve needs --stdio, --socket or both"],
			[["--socket", "--idle-exit", "soon"], "--idle-exit must be a number of seconds above 0"],
			[["--socket", "--idle-exit", "0"], "--idle-exit must be a number of seconds above 0"],
			[["--stdio", "--socket", "--idle-exit", "5"], "--idle-exit goes with --socket alone"],
		];
		for (const [args, message] of cases) {
			const r = serve(args);
			expect(r.exitCode).toBe(2);
			expect(r.stderr.toString()).toContain(message);
		}
		expect(existsSync(socketPath)).toBe(false);
	});

	test("serve --stdio --socket: the MCP server also runs commands, leaves a taken socket to its owner, and removes its own at EOF", async () => {
		const stdioServer = () =>
			Bun.spawn([process.execPath, MAIN, "serve", "--stdio", "--socket", "--index", indexPath, "--sessions-dir", sessions], {
				cwd: layout.root,
				env: isolatedEnv(layout),
				stdin: "pipe",
				stdout: "pipe",
				stderr: "pipe",
			});
		const ping = async (proc: ReturnType<typeof stdioServer>) => {
			proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`);
			proc.stdin.flush();
			const reader = proc.stdout.getReader();
			const { value } = await reader.read();
			reader.releaseLock();
			return JSON.parse(new TextDecoder().decode(value).split("\n")[0]!);
		};
		// Alone, it listens: a command is run by it; at EOF it stops and takes its socket with it.
		const alone = stdioServer();
		expect(await ping(alone)).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
		expect(existsSync(socketPath)).toBe(true);
		expect(byServer(cli(["search", "--all", "--json", "ECONNREFUSED"]))).toBe(true);
		alone.stdin.end();
		expect(await alone.exited).toBe(0);
		expect(existsSync(socketPath)).toBe(false);
		// Beside a server that holds the socket, it serves MCP without it and leaves that one alone.
		await startServer();
		const beside = stdioServer();
		expect(await ping(beside)).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
		beside.stdin.end();
		expect(await beside.exited).toBe(0);
		expect(await new Response(beside.stderr).text()).toContain(`not listening for commands: a pi-events server already listens at ${socketPath}`);
		expect(await answers(socketPath)).toBe(true);
	});

	test("a client that connects and never finishes its request is dropped, and does not hold up others", async () => {
		await startServer();
		let closedAt = 0;
		const opened = performance.now();
		await Bun.connect({
			unix: socketPath,
			socket: {
				open: (s) => void s.write('{"version": "half a request'),
				data() {},
				close() {
					closedAt = performance.now();
				},
			},
		});
		expect(byServer(cli(["search", "--all", "--json", "ECONNREFUSED"]))).toBe(true);
		for (let i = 0; i < 100 && closedAt === 0; i++) await Bun.sleep(200);
		expect(closedAt).toBeGreaterThan(0);
		// Dropped after about 10 s (the event loop checks timeouts every few seconds).
		expect(closedAt - opened).toBeGreaterThan(9_000);
	}, 30_000);

	test("a request over 8 MiB and bytes that are not JSON get no command run; the server goes on answering", async () => {
		await startServer();
		const send = (payload: Uint8Array) =>
			new Promise<string>((resolve) => {
				const chunks: Buffer[] = [];
				let offset = 0;
				const push = (s: { write(d: Uint8Array): number }) => {
					while (offset < payload.length) {
						const n = s.write(payload.subarray(offset, offset + 65536));
						if (n <= 0) return;
						offset += n;
					}
				};
				Bun.connect({
					unix: socketPath,
					socket: {
						open: push,
						drain: push,
						data: (_s, d) => void chunks.push(Buffer.from(d)),
						close: () => resolve(Buffer.concat(chunks).toString()),
						error: () => resolve(Buffer.concat(chunks).toString()),
					},
				}).catch(() => resolve(""));
			});
		// No newline within 8 MiB: closed without an answer.
		expect(await send(new Uint8Array(9 * 1024 * 1024).fill(0x61))).toBe("");
		// Random bytes ending a line: refused as not JSON.
		const noise = new Uint8Array(4096).map((_, i) => (i * 7919 + 13) % 256 || 1);
		noise[noise.length - 1] = 10;
		const refused = await send(noise.map((b, i) => (b === 10 && i < noise.length - 1 ? 32 : b)));
		expect(JSON.parse(refused)).toEqual({ refused: "the request is not JSON" });
		expect(byServer(cli(["search", "--all", "--json", "ECONNREFUSED"]))).toBe(true);
	});
});
