/**
 * Attacks on the resident server (`serve --socket`) and its client: a client's environment that
 * names a FIFO or a device as a settings file, a server that accepts and never answers, a request
 * that would carry secrets or land on another account's socket, a stopping server and its
 * replacement, and a server whose own environment (PI_EVENTS_DEBUG, HOME) would leak into its
 * clients' answers. Every process is spawned asynchronously with a hard timeout (a wedged child
 * fails the test, never hangs it) and killed in afterEach.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { answers } from "../../src/server/socket-file.ts";
import { CLIENT_ONLY_ENV, FORWARDED_ENV } from "../../src/server/command-protocol.ts";
import { type AgentLayout, cleanupTempDirs, isolatedEnv, MAIN, makeAgentLayout, makeTempDir, runCli } from "../helpers/temp.ts";
import { oneMessageSession, writeSession } from "../query/helpers.ts";

const APP = "/work/served/app";

let layout: AgentLayout;
let sessions: string;
let indexDir: string;
let indexPath: string;
let socketPath: string;
let version: string;

interface Child {
	proc: ReturnType<typeof Bun.spawn>;
	stderr: () => string;
}
const children: Child[] = [];
const listeners: { stop(closeActive?: boolean): void }[] = [];

afterEach(async () => {
	for (const l of listeners.splice(0)) l.stop(true);
	for (const { proc } of children.splice(0)) {
		// A suspended server takes SIGTERM only once continued; SIGKILL if it does not end soon.
		proc.kill("SIGCONT");
		proc.kill("SIGTERM");
		const ended = await Promise.race([proc.exited.then(() => true), Bun.sleep(5_000).then(() => false)]);
		if (!ended) {
			proc.kill("SIGKILL");
			await proc.exited;
		}
	}
	chmodSync(indexDir, 0o700);
});
afterAll(cleanupTempDirs);

beforeAll(() => {
	layout = makeAgentLayout();
	sessions = join(layout.root, "sessions");
	writeSession(sessions, oneMessageSession("aaaa1111-0000-4000-8000-000000000001", APP, "the deploy failed with ECONNREFUSED"));
	indexDir = join(layout.root, "idx");
	mkdirSync(indexDir, { mode: 0o700 });
	indexPath = join(indexDir, "index.db");
	socketPath = `${indexPath}.sock`;
	const built = runCli(layout, ["index", "--index", indexPath, "--sessions-dir", sessions], { env: { PI_EVENTS_SERVER: "off" } });
	if (built.exitCode !== 0) throw new Error(built.stderr);
	version = runCli(layout, ["--version"]).stdout.trim();
});

interface Run {
	exitCode: number | null;
	stdout: string;
	stderr: string;
	ms: number;
	timedOut: boolean;
}

/** `pi-events ARGS` in its own process, killed after `timeoutMs`; `env` values of null unset a variable. */
async function run(args: string[], opts: { env?: Record<string, string | null>; timeoutMs?: number } = {}): Promise<Run> {
	const env: Record<string, string> = isolatedEnv(layout);
	for (const [name, value] of Object.entries(opts.env ?? {})) {
		if (value === null) delete env[name];
		else env[name] = value;
	}
	const started = performance.now();
	const proc = Bun.spawn([process.execPath, MAIN, ...args], { cwd: layout.root, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		proc.kill("SIGKILL");
	}, opts.timeoutMs ?? 10_000);
	const [stdout, stderr] = await Promise.all([new Response(proc.stdout as ReadableStream).text(), new Response(proc.stderr as ReadableStream).text()]);
	await proc.exited;
	clearTimeout(timer);
	return { exitCode: proc.exitCode, stdout, stderr, ms: performance.now() - started, timedOut };
}

/** A query command on the test's index and sessions, telling on stderr who ran it. */
const query = (args: string[], env: Record<string, string | null> = {}, timeoutMs?: number) =>
	run([args[0]!, "--index", indexPath, "--sessions-dir", sessions, ...args.slice(1)], { env: { PI_EVENTS_DEBUG: "1", ...env }, timeoutMs });
const byServer = (r: Run, socket = socketPath) => r.stderr.includes(`run by the server at ${socket}`);

/** A server process (`serve ARGS`), ready once its socket answers. */
async function startServer(args: string[], opts: { env?: Record<string, string>; socket?: string; stdin?: "pipe" } = {}): Promise<Child> {
	const proc = Bun.spawn([process.execPath, MAIN, "serve", ...args], {
		cwd: layout.root,
		env: isolatedEnv(layout, opts.env),
		stdin: opts.stdin ?? "ignore",
		stdout: "pipe",
		stderr: "pipe",
	});
	let stderr = "";
	void (async () => {
		for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) stderr += new TextDecoder().decode(chunk);
	})();
	const child = { proc, stderr: () => stderr };
	children.push(child);
	const socket = opts.socket ?? socketPath;
	for (let i = 0; i < 400; i++) {
		if (existsSync(socket) && (await answers(socket))) return child;
		await Bun.sleep(25);
	}
	throw new Error(`the server did not listen: ${stderr}`);
}
const serveSocket = (extra: string[] = [], env?: Record<string, string>) =>
	startServer(["--socket", "--index", indexPath, "--sessions-dir", sessions, ...extra], { env });

/** Send one raw line to a socket; what came back before it closed, or null after `timeoutMs`. */
function ask(line: string, socket = socketPath, timeoutMs = 5_000): Promise<string | null> {
	return new Promise((resolve) => {
		const chunks: Buffer[] = [];
		let connection: { terminate(): void } | null = null;
		const timer = setTimeout(() => {
			connection?.terminate();
			resolve(null);
		}, timeoutMs);
		const done = (text: string) => {
			clearTimeout(timer);
			resolve(text);
		};
		Bun.connect({
			unix: socket,
			socket: {
				open: (s) => void s.write(line),
				data: (_s, d) => void chunks.push(Buffer.from(d)),
				close: () => done(Buffer.concat(chunks).toString()),
				error: () => done(Buffer.concat(chunks).toString()),
			},
		}).then(
			(s) => {
				connection = s;
			},
			() => done(""),
		);
	});
}

/** A request line as a client of this build would send it. */
function request(env: Record<string, string>, argv = ["search", "--all", "--json", "--index", indexPath, "--sessions-dir", sessions, "ECONNREFUSED"]): string {
	return `${JSON.stringify({ version, argv, cwd: layout.root, env, terminal: { out: false, err: false } })}\n`;
}

/** A listener at the server's socket that is not a pi-events server: it hands each request line to `onLine`. */
function fakeServer(onLine: (line: string) => string | null): void {
	const umask = process.umask(0o077);
	try {
		const listener = Bun.listen<{ text: string }>({
			unix: socketPath,
			socket: {
				open(s) {
					s.data = { text: "" };
				},
				data(s, d) {
					s.data.text += Buffer.from(d).toString();
					if (!s.data.text.includes("\n")) return;
					const reply = onLine(s.data.text.slice(0, s.data.text.indexOf("\n")));
					if (reply !== null) {
						s.write(reply);
						s.end();
					}
				},
			},
		});
		listeners.push(listener);
	} finally {
		process.umask(umask);
	}
}

describe("32.1: settings files that are FIFOs or devices", () => {
	test("a FIFO as PI_EVENTS_CONFIG, or as pi's settings.json, does not hang a command run on its own", async () => {
		const dir = makeTempDir();
		const fifo = join(dir, "fifo");
		expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
		const config = await query(["search", "--all", "--json", "ECONNREFUSED"], { PI_EVENTS_SERVER: "off", PI_EVENTS_CONFIG: fifo });
		expect(config.timedOut).toBe(false);
		expect(config.exitCode).toBe(2);
		expect(config.stderr).toContain(`config file ${fifo} is not a regular file`);
		// pi's settings.json as a FIFO: ignored, as pi's own fallback would be; the search answers.
		const agentDir = join(dir, "agent");
		mkdirSync(agentDir);
		expect(Bun.spawnSync(["mkfifo", join(agentDir, "settings.json")]).exitCode).toBe(0);
		const settings = await query(["search", "--all", "--json", "ECONNREFUSED"], { PI_EVENTS_SERVER: "off", PI_CODING_AGENT_DIR: agentDir });
		expect(settings.timedOut).toBe(false);
		expect(settings.exitCode).toBe(0);
		expect(JSON.parse(settings.stdout).hits.length).toBe(1);
	});

	test("/dev/zero as the config file or as pi's settings.json is refused or ignored at once, not read until memory runs out", async () => {
		const agentDir = join(makeTempDir(), "agent");
		mkdirSync(agentDir);
		symlinkSync("/dev/zero", join(agentDir, "settings.json"));
		const config = await query(["search", "--all", "--json", "ECONNREFUSED"], { PI_EVENTS_SERVER: "off", PI_EVENTS_CONFIG: "/dev/zero" });
		expect(config.timedOut).toBe(false);
		expect(config.exitCode).toBe(2);
		expect(config.stderr).toContain("config file /dev/zero is not a regular file");
		const settings = await query(["search", "--all", "--json", "ECONNREFUSED"], { PI_EVENTS_SERVER: "off", PI_CODING_AGENT_DIR: agentDir });
		expect(settings.timedOut).toBe(false);
		expect(settings.exitCode).toBe(0);
		// A regular config file past the size bound is refused, not read whole.
		const big = join(makeTempDir(), "config.json");
		writeFileSync(big, "");
		truncateSync(big, 64 * 1024 * 1024);
		const large = await query(["search", "--all", "--json", "ECONNREFUSED"], { PI_EVENTS_SERVER: "off", PI_EVENTS_CONFIG: big });
		expect(large.exitCode).toBe(2);
		expect(large.stderr).toContain(`config file ${big} is larger than 256 KiB`);
	});

	test("a request whose PI_EVENTS_CONFIG is a FIFO does not wedge `serve --stdio --socket`: it answers, MCP answers, SIGTERM stops it", async () => {
		const fifo = join(makeTempDir(), "fifo");
		expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
		const server = await startServer(["--stdio", "--socket", "--index", indexPath, "--sessions-dir", sessions], { stdin: "pipe" });
		const reply = await ask(request({ ...isolatedEnv(layout), PI_EVENTS_CONFIG: fifo }));
		expect(reply).not.toBeNull();
		const answer = JSON.parse(reply!);
		expect(answer.exitCode).toBe(2);
		expect(answer.output).toEqual([[2, `pi-events: config file ${fifo} is not a regular file\n`]]);
		// The MCP side answers, and the next client is served.
		const stdin = server.proc.stdin as import("bun").FileSink;
		stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })}\n`);
		stdin.flush();
		const reader = (server.proc.stdout as ReadableStream<Uint8Array>).getReader();
		const first = await Promise.race([reader.read(), Bun.sleep(5_000).then(() => null)]);
		expect(first).not.toBeNull();
		expect(JSON.parse(new TextDecoder().decode(first!.value).split("\n")[0]!)).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
		reader.releaseLock();
		expect(byServer(await query(["search", "--all", "--json", "ECONNREFUSED"]))).toBe(true);
		server.proc.kill("SIGTERM");
		expect(await Promise.race([server.proc.exited, Bun.sleep(5_000).then(() => "still running")])).toBe(0);
		expect(existsSync(socketPath)).toBe(false);
	});
	test("no other path a request names blocks the server: a FIFO as --sessions-dir, --root, --index, --file or PI_SESSION_FILE is answered at once", async () => {
		const fifo = join(makeTempDir(), "fifo");
		expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
		await serveSocket();
		const base = ["search", "--all", "--json", "--index", indexPath, "--sessions-dir", sessions];
		const cases: [string[], Record<string, string>][] = [
			[[...base, "--sessions-dir", fifo, "ECONNREFUSED"], {}],
			[[...base, "--root", fifo, "ECONNREFUSED"], {}],
			[["search", "--all", "--json", "--index", fifo, "ECONNREFUSED"], {}],
			[[...base, "--file", fifo, "ECONNREFUSED"], {}],
			[[...base, "ECONNREFUSED"], { PI_SESSION_FILE: fifo }],
		];
		for (const [argv, env] of cases) {
			const reply = await ask(request({ ...isolatedEnv(layout), ...env }, argv));
			expect(reply).not.toBeNull();
			expect(JSON.parse(reply!).exitCode).toBeGreaterThanOrEqual(0);
		}
	});
});

describe("32.2: a server that accepts and does not answer", () => {
	test("a socket that accepts and stays silent: the command runs itself within seconds, prints its answer once and exits", async () => {
		const requests: string[] = [];
		fakeServer((line) => {
			requests.push(line);
			return null;
		});
		const r = await query(["search", "--all", "--json", "ECONNREFUSED"], {}, 15_000);
		expect(r.timedOut).toBe(false);
		expect(r.exitCode).toBe(0);
		expect(JSON.parse(r.stdout).hits.length).toBe(1);
		expect(r.stderr).toContain(`the server at ${socketPath} did not take the command within 2 s; running here`);
		expect(r.ms).toBeLessThan(8_000);
		expect(requests.length).toBe(1);
	}, 20_000);

	test("a server suspended (SIGSTOP, as Ctrl-Z does): the command runs itself within seconds and exits; continued, the server answers again", async () => {
		const server = await serveSocket();
		server.proc.kill("SIGSTOP");
		const r = await query(["search", "--all", "--json", "ECONNREFUSED"], {}, 15_000);
		expect(r.timedOut).toBe(false);
		expect(r.exitCode).toBe(0);
		expect(byServer(r)).toBe(false);
		expect(JSON.parse(r.stdout).hits.length).toBe(1);
		expect(r.ms).toBeLessThan(8_000);
		server.proc.kill("SIGCONT");
		expect(byServer(await query(["search", "--all", "--json", "ECONNREFUSED"]))).toBe(true);
	}, 20_000);
});

describe("32.3: what a request carries, and to whom", () => {
	test("a request carries only the variables the command reads: no API key, no token", async () => {
		let sent = "";
		fakeServer((line) => {
			sent = line;
			return `${JSON.stringify({ refused: "a test" })}\n`;
		});
		const r = await query(["search", "--all", "--json", "ECONNREFUSED"], {
			OPENAI_API_KEY: "sk-secret-openai",
			GITHUB_TOKEN: "ghp_secret_token",
			PI_SESSION_ID: "aaaa1111",
			NO_COLOR: "1",
		});
		expect(r.exitCode).toBe(0);
		expect(r.stderr).toContain("running here: a test");
		expect(sent).not.toContain("secret");
		const env = JSON.parse(sent).env as Record<string, string>;
		expect(Object.keys(env).sort()).toEqual(
			["HOME", "NO_COLOR", "PI_CODING_AGENT_DIR", "PI_EVENTS_DEBUG", "PI_SESSION_ID", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"].sort(),
		);
		expect(env.HOME).toBe(layout.home);
	});

	test("every environment variable src/ reads is forwarded, or read by the client alone", () => {
		const SRC = join(import.meta.dir, "..", "..", "src");
		const read = new Set<string>();
		for (const file of new Bun.Glob("**/*.ts").scanSync(SRC)) {
			for (const m of readFileSync(join(SRC, file), "utf8").matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)|\[\s*"([A-Z][A-Z0-9_]*)"\s*\])/g)) read.add((m[1] ?? m[2])!);
		}
		expect(read.size).toBeGreaterThan(10);
		expect([...read].filter((name) => !FORWARDED_ENV.includes(name) && !CLIENT_ONLY_ENV.includes(name))).toEqual([]);
	});

	test("a socket in a directory other accounts can write is never asked (sticky or not): the command runs itself", async () => {
		await serveSocket();
		for (const mode of [0o770, 0o777, 0o1777]) {
			chmodSync(indexDir, mode);
			const r = await query(["search", "--all", "--json", "ECONNREFUSED"]);
			expect(r.exitCode).toBe(0);
			expect(byServer(r)).toBe(false);
			expect(r.stderr).toContain(`not asking a server: ${indexDir} is writable by other accounts (mode ${mode.toString(8)})`);
		}
		chmodSync(indexDir, 0o755);
		expect(byServer(await query(["search", "--all", "--json", "ECONNREFUSED"]))).toBe(true);
	});

	test("a directory above the socket's that others can write and that is not sticky: the command runs itself", async () => {
		await serveSocket();
		chmodSync(layout.root, 0o777);
		try {
			const r = await query(["search", "--all", "--json", "ECONNREFUSED"]);
			expect(byServer(r)).toBe(false);
			expect(r.stderr).toContain(`not asking a server: ${layout.root} is writable by other accounts`);
			chmodSync(layout.root, 0o1777);
			expect(byServer(await query(["search", "--all", "--json", "ECONNREFUSED"]))).toBe(true);
		} finally {
			chmodSync(layout.root, 0o700);
		}
	});
});

describe("32.4: a stopping server and its replacement", () => {
	test("a server that stops leaves the socket of the server that replaced it", async () => {
		const first = await serveSocket();
		// Its socket removed by hand, another server takes the name.
		unlinkSync(socketPath);
		await serveSocket();
		first.proc.kill("SIGTERM");
		expect(await first.proc.exited).toBe(0);
		expect(existsSync(socketPath)).toBe(true);
		expect(byServer(await query(["search", "--all", "--json", "ECONNREFUSED"]))).toBe(true);
		// Nothing else is left beside the index: the name a server binds before linking is gone.
		expect(readdirSync(indexDir).filter((n) => n.startsWith(".")).length).toBe(0);
	});
});

describe("32.5: the server's own environment never reaches a client", () => {
	test("the server's PI_EVENTS_DEBUG does not reach a client's stderr; the client's own does", async () => {
		const dir = makeTempDir();
		const index = join(dir, "index.db");
		const socket = `${index}.sock`;
		const more = join(dir, "sessions");
		mkdirSync(more);
		await startServer(["--socket", "--index", index, "--sessions-dir", more], { env: { PI_EVENTS_DEBUG: "1" }, socket });
		// A large new file (a session padded to 65 MB, sparse: no disk) makes a sync say, in debug,
		// how many new files it prepares.
		const plant = (id: string) => {
			const file = writeSession(more, oneMessageSession(id, APP, "a padded session"));
			truncateSync(file, 65 * 1024 * 1024);
			appendFileSync(file, "\n");
		};
		const search = (env: Record<string, string | null>) =>
			run(["search", "--all", "--json", "--index", index, "--sessions-dir", more, "anything"], { env, timeoutMs: 20_000 });
		plant("ffff6666-0000-4000-8000-000000000006");
		const quiet = await search({ PI_EVENTS_DEBUG: null });
		expect(quiet.timedOut).toBe(false);
		expect(quiet.stderr).not.toContain("debug");
		plant("ffff7777-0000-4000-8000-000000000007");
		const told = await search({ PI_EVENTS_DEBUG: "1" });
		expect(byServer(told, socket)).toBe(true);
		expect(told.stderr).toContain("pi-events debug: preparing 1 new files");
	}, 30_000);

	test("a request without HOME never takes the server's: the client runs itself, and the server refuses such a request", async () => {
		const serverHome = join(makeTempDir(), "home");
		const planted = join(serverHome, "pi-events-server-home-sessions");
		writeSession(planted, oneMessageSession("eeee5555-0000-4000-8000-000000000005", APP, "the server's own zebrafinch"));
		await serveSocket([], { HOME: serverHome });
		const r = await query(["search", "--all", "--json", "--sessions-dir", "~/pi-events-server-home-sessions", "zebrafinch"], { HOME: null });
		expect(byServer(r)).toBe(false);
		expect(r.exitCode).toBe(1);
		expect(JSON.parse(r.stdout).hits).toEqual([]);
		const { HOME: _, ...homeless } = isolatedEnv(layout);
		expect(JSON.parse((await ask(request(homeless)))!)).toEqual({ refused: "the request has no HOME" });
	});
});
