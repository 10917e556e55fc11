/**
 * extension/pi-events.ts without pi: its default export is called with a recording stand-in for
 * pi's ExtensionAPI, and the registered tools are executed directly, against the compiled server
 * (the happy path, scope via _meta, respawn) and against test/server/fake-mcp-server.ts (JSON-RPC
 * errors, crashes, timeouts, aborts, a handshake that never completes).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import piEvents, {
	fitWidth,
	parseEventsArgs,
	ReadParams,
	SearchParams,
	ServerProcess,
	SessionsParams,
	serverCommand,
	statusLines,
	TraceParams,
} from "../../extension/pi-events.ts";
import { type AgentLayout, cleanupTempDirs, copyAllPiFixtures, isolatedEnv, makeAgentLayout, makeTempDir, piFixture } from "../helpers/temp.ts";
import { compiledBinary } from "./harness.ts";

type Rendered = { render(width: number): string[] };
type Tool = {
	name: string;
	renderCall?: (args: unknown, theme: unknown, context: unknown) => Rendered;
	renderResult?: (result: unknown, options: { expanded: boolean; isPartial: boolean }, theme: unknown, context: unknown) => Rendered;
	parameters: unknown;
	promptSnippet?: string;
	promptGuidelines?: string[];
	annotations?: Record<string, unknown>;
	execute: (id: string, params: unknown, signal: AbortSignal | undefined, onUpdate: undefined, ctx: unknown) => Promise<any>;
};

const tools = new Map<string, Tool>();
const handlers = new Map<string, ((event: unknown, ctx: unknown) => Promise<unknown>)[]>();
const commands = new Map<string, { getArgumentCompletions?: (prefix: string) => { value: string }[] | null }>();
const fakePi = {
	registerTool: (tool: Tool) => tools.set(tool.name, tool),
	registerCommand: (name: string, command: { getArgumentCompletions?: (prefix: string) => { value: string }[] | null }) => commands.set(name, command),
	on: (event: string, handler: (event: unknown, ctx: unknown) => Promise<unknown>) => {
		handlers.set(event, [...(handlers.get(event) ?? []), handler]);
	},
} as unknown as ExtensionAPI;

const basic = piFixture("basic");
const branched = piFixture("branched");
const holder = () => (globalThis as Record<symbol, { server: ServerProcess | null }>)[Symbol.for("pi-events/extension-server")]!;

let layout: AgentLayout;
let realBin: string;
let fakeBin: string;
let fakeLog: string;
const savedEnv = { ...process.env };
const ENV_KEYS = ["PI_EVENTS_BIN", "PI_EVENTS_ARGS", "PI_EVENTS_TIMEOUT_MS", "FAKE_LOG", "FAKE_NO_INIT", "FAKE_NO_SOCKET", "PI_EVENTS_SERVER"];

/** The invoking pi session of most calls: a new one, not in the index. */
const CURRENT = "01a2ffff-0000-7000-8000-000000000000";

function ctx(sessionId = CURRENT, cwd = "/work/demo/app") {
	return { cwd, sessionManager: { getSessionId: () => sessionId, getSessionFile: () => `/tmp/nowhere/${sessionId}.jsonl` } };
}

async function fire(event: string): Promise<void> {
	for (const h of handlers.get(event) ?? []) await h({ type: event }, ctx());
}

/** Stop the current server and point the extension at another binary / settings. */
async function use(bin: string, extra: Record<string, string> = {}): Promise<void> {
	await fire("session_shutdown");
	for (const key of ENV_KEYS) delete process.env[key];
	Object.assign(process.env, { PI_EVENTS_BIN: bin, FAKE_LOG: fakeLog }, extra);
}

const exec = (name: string, params: unknown, opts: { id?: string; signal?: AbortSignal; context?: unknown } = {}) =>
	tools.get(name)!.execute(opts.id ?? "call_1", params, opts.signal, undefined, opts.context ?? ctx());

function alive(pid: number | undefined): boolean {
	if (pid === undefined) return false;
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
	const deadline = Date.now() + ms;
	while (!cond()) {
		if (Date.now() > deadline) throw new Error("condition not met in time");
		await Bun.sleep(10);
	}
}

const logged = () =>
	readFileSync(fakeLog, "utf8")
		.split("\n")
		.filter(Boolean)
		.map((l) => JSON.parse(l) as { id?: number; method: string; params?: any });

beforeAll(() => {
	realBin = compiledBinary();
	layout = makeAgentLayout();
	copyAllPiFixtures(layout.sessionsDir);
	// The child inherits process.env: isolate HOME, the agent dir and the index like the CLI tests.
	Object.assign(process.env, isolatedEnv(layout));
	const dir = makeTempDir("pi-events-fake-");
	fakeLog = join(dir, "frames.log");
	writeFileSync(fakeLog, "");
	fakeBin = join(dir, "fake-pi-events");
	writeFileSync(fakeBin, `#!/bin/sh\nexec '${process.execPath}' '${join(import.meta.dir, "fake-mcp-server.ts")}' "$@"\n`, { mode: 0o755 });
	piEvents(fakePi);
});

afterAll(async () => {
	await fire("session_shutdown");
	for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
	Object.assign(process.env, savedEnv);
	cleanupTempDirs();
});

describe("registration", () => {
	test("four tools with the exported TypeBox schemas, prompt text and read-only annotations", () => {
		expect([...tools.keys()]).toEqual(["event_search", "event_read", "event_trace", "event_sessions"]);
		expect(tools.get("event_search")!.parameters).toBe(SearchParams);
		expect(tools.get("event_read")!.parameters).toBe(ReadParams);
		expect(tools.get("event_trace")!.parameters).toBe(TraceParams);
		expect(tools.get("event_sessions")!.parameters).toBe(SessionsParams);
		for (const tool of tools.values()) {
			expect(tool.promptSnippet?.length).toBeGreaterThan(20);
			expect(tool.promptGuidelines?.length).toBeGreaterThan(0);
			expect(tool.annotations?.readOnlyHint).toBe(true);
		}
		for (const event of ["turn_end", "agent_end", "session_shutdown"]) expect(handlers.get(event)?.length).toBe(1);
	});

	test("nothing is started before the first call", () => {
		expect(holder().server).toBeNull();
	});
});

describe("against the compiled server", () => {
	beforeAll(() => use(realBin));

	test("event_search returns the server's text and structured content; the caller travels in _meta", async () => {
		const res = await exec("event_search", { query: "ECONNREFUSED", limit: undefined });
		expect(res.content[0].type).toBe("text");
		expect(res.content[0].text).toContain(basic.notes.writeErrorResult);
		expect(res.details.hits.map((h: { entryId: string }) => h.entryId)).toContain(basic.notes.writeErrorResult);
		// The same search from inside the basic session: the current session is excluded.
		const own = await exec("event_search", { query: "ECONNREFUSED" }, { context: ctx(basic.sessionId) });
		expect(own.details.hits).toEqual([]);
		// And from another workspace: out of scope.
		const other = await exec("event_search", { query: "ECONNREFUSED" }, { context: ctx(CURRENT, "/work/demo/other") });
		expect(other.details.hits).toEqual([]);
	});

	test("the renderers change nothing the model receives: the content is the server's text, untouched by rendering", async () => {
		const args = { query: "ECONNREFUSED", limit: 5 };
		const res = await exec("event_search", args);
		const before = JSON.stringify(res);
		// The same call straight to a server of our own, without the extension's tool (and its renderers).
		const direct = new ServerProcess(serverCommand(process.env, null, null, false), 10_000);
		const raw = await direct.callTool(
			"event_search",
			args,
			{ cwd: ctx().cwd, sessionId: CURRENT, sessionFile: `/tmp/nowhere/${CURRENT}.jsonl`, toolCallId: "call_1" },
			undefined,
		);
		direct.kill();
		// Only the freshness line may differ: two calls, two syncs ("synced in 3 ms", "synced 40 ms before this call").
		const timing = (text: string) => text.replace(/synced (in [\d.]+ ms|[\d.]+ ms before this call)/g, "synced …");
		expect(res.content).toHaveLength(1);
		expect(timing(res.content[0].text)).toBe(timing(raw.text));
		// Rendering the row (collapsed, expanded, as an error) reads the result and leaves it as it was.
		const theme = { fg: (_c: string, t: string) => t, bold: (t: string) => t };
		const tool = tools.get("event_search")!;
		const lines = (expanded: boolean, isError = false) =>
			tool.renderResult!(res, { expanded, isPartial: false }, theme, { isError, expanded, args }).render(100).join("\n");
		expect(tool.renderCall!(args, theme, { args }).render(100)).toEqual(['event_search "ECONNREFUSED" limit 5']);
		expect(lines(false)).toMatch(/^\d+ hits? in \d+ sessions? · top \S+ \d{4}-\d\d-\d\d \d\d:\d\d · synced \d+ ms \(ctrl\+o to expand\)$/);
		expect(lines(true)).toContain(`/${basic.notes.writeErrorResult}`);
		expect(lines(true, true).split("\n")[0]).toStartWith("✗ ");
		for (const width of [10, 40])
			for (const line of tool.renderResult!(res, { expanded: true, isPartial: false }, theme, {}).render(width))
				expect(Bun.stringWidth(line)).toBeLessThanOrEqual(width);
		expect(JSON.stringify(res)).toBe(before);
	});

	test("/events completes the filters from event_search's schema", () => {
		const complete = commands.get("events")!.getArgumentCompletions!;
		const all = complete("--")!.map((i) => i.value.trim());
		for (const flag of ["--kind", "--since", "--error", "--tool", "--session", "--file", "--limit", "--include-derived"]) expect(all).toContain(flag);
		expect(all).toHaveLength(Object.keys(SearchParams.properties).length - 1);
		expect(complete("deploy --kind tool.r")!.map((i) => i.value)).toEqual(["deploy --kind tool.result "]);
		expect(complete("st")!.map((i) => i.value)).toEqual(["status"]);
	});

	test("event_read and event_trace", async () => {
		const read = await exec("event_read", { sessionId: basic.sessionId, entryId: basic.notes.writeErrorResult });
		expect(read.details.event.entryId).toBe(basic.notes.writeErrorResult);
		const trace = await exec("event_trace", { sessionId: branched.sessionId, entryId: branched.notes.E });
		expect(trace.details.parent.entryId).toBe(branched.notes.B);
		// Their rows: the ids on the call line, a one-line summary, the view the model reads when expanded.
		const theme = { fg: (_c: string, t: string) => t, bold: (t: string) => t };
		const row = (name: string, result: unknown, args: Record<string, unknown>, expanded: boolean) =>
			[
				...tools.get(name)!.renderCall!(args, theme, { args }).render(200),
				...tools.get(name)!.renderResult!(result, { expanded, isPartial: false }, theme, { args }).render(200),
			].join("\n");
		const readArgs = { sessionId: basic.sessionId, entryId: basic.notes.writeErrorResult };
		expect(row("event_read", read, readArgs, false)).toMatch(
			new RegExp(
				`^event_read ${basic.sessionId.slice(0, 8)}/${basic.notes.writeErrorResult}\nmessage/toolResult \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d · \\d+ chars · .*\\(ctrl\\+o to expand\\)$`,
			),
		);
		expect(row("event_read", read, readArgs, true)).toContain(read.content[0].text.split("\n")[1]);
		const traceArgs = { sessionId: branched.sessionId, entryId: branched.notes.E };
		expect(row("event_trace", trace, traceArgs, false)).toMatch(
			/^event_trace \S+\n\S+ \d{4}-\d\d-\d\d \d\d:\d\d · parent message\/\w+ · \d+ child(ren)? · \d+ siblings? \(ctrl/,
		);
		expect(row("event_trace", trace, traceArgs, true)).toContain("◀ target");
		const sessions = await exec("event_sessions", { limit: 2 });
		expect(row("event_sessions", sessions, { limit: 2 }, false)).toMatch(/^event_sessions limit 2\n2 of \d+ sessions · latest \d{4}-\d\d-\d\d \d\d:\d\d "/);
		expect(row("event_sessions", sessions, { limit: 2 }, true).split("\n")).toHaveLength(4);
	});

	test("a search hit without a turn renders without an answer line; one with an outcome shows it", () => {
		const theme = { fg: (_c: string, t: string) => t, bold: (t: string) => t };
		const hit = {
			sessionId: "01a19b7c-a680",
			entryId: "8161e986",
			semanticKind: "assistant.text",
			timestamp: "2026-11-02T09:02:00.000Z",
			snippet: "the\tdialog",
		};
		const render = (hits: unknown[]) =>
			tools.get("event_search")!.renderResult!(
				{ content: [{ type: "text", text: "" }], details: { hits, freshness: { synced: true, syncMs: 3.4 } } },
				{ expanded: true, isPartial: false },
				theme,
				{},
			).render(80);
		expect(render([hit])).toEqual([
			"1 hit in 1 session · top assistant.text 2026-11-02 09:02 · synced 3 ms",
			"1. assistant.text 2026-11-02 09:02 · 01a19b7c/8161e986",
			"   the dialog",
		]);
		const withTurn = { ...hit, turn: { prompt: { entryId: "p1", preview: "why?" }, outcome: { entryId: "o1", preview: "Start\nPostgres" } } };
		expect(render([withTurn])[3]).toBe("   → Start Postgres");
	});

	test("/events filters: flags as on the command line, lists comma-separated, booleans negated with no-", () => {
		expect(parseEventsArgs('pool "exit code" --kind tool.result,bash.output --since=7d --no-error --limit 5 --exact')).toEqual({
			args: { query: 'pool "exit code"', kinds: ["tool.result", "bash.output"], since: "7d", isError: false, limit: 5, exact: true },
		});
		expect(parseEventsArgs("--tool bash --tool read --session 01a19b7c").args).toEqual({ tools: ["bash", "read"], sessionId: "01a19b7c" });
		expect(parseEventsArgs("x --colour red").error).toBe("unknown filter --colour");
		expect(parseEventsArgs("x --since").error).toBe("--since needs a value");
	});

	test("rows are cut to the width pi gives them, counting wide characters as two cells", () => {
		for (const line of ["\x1b[31mred ECONNREFUSED 127.0.0.1:5432\x1b[0m", "数据库连接失败：无法连接到服务器", "emoji 🙂🙂🙂🙂🙂🙂 and → arrows ─── done"]) {
			for (const width of [1, 5, 12, 30]) {
				const cut = fitWidth(line, width);
				expect(Bun.stringWidth(cut)).toBeLessThanOrEqual(width);
				if (Bun.stringWidth(line) > width) expect(cut).toEndWith("…");
			}
			expect(fitWidth(line, 200)).toBe(line);
		}
	});

	test("an isError result is thrown with the server's message", async () => {
		await expect(exec("event_search", { query: "" })).rejects.toThrow(/the query is empty: .+E_BAD_QUERY/);
		await expect(exec("event_read", { sessionId: basic.sessionId, entryId: "nope" })).rejects.toThrow(/E_NOT_FOUND/);
	});

	test("one child serves every call; a dead child is replaced on the next call", async () => {
		await exec("event_search", { query: "step" });
		const first = holder().server!.pid;
		await exec("event_search", { query: "step" });
		expect(holder().server!.pid).toBe(first);
		process.kill(first!, "SIGKILL");
		await until(() => holder().server!.closed !== null);
		const res = await exec("event_search", { query: "ECONNREFUSED" });
		expect(res.details.hits.length).toBeGreaterThan(0);
		expect(holder().server!.pid).not.toBe(first);
	});

	test("the child also serves the command line: a `pi-events search` beside it is run by it", async () => {
		await exec("event_search", { query: "step" });
		const env = { ...process.env, PI_EVENTS_DEBUG: "1" } as Record<string, string>;
		delete env.PI_EVENTS_SERVER;
		// The socket is ready shortly after the handshake (it listens before MCP starts).
		let proc = Bun.spawnSync([realBin, "search", "ECONNREFUSED", "--json", "--no-sync"], { cwd: "/", env, stdout: "pipe", stderr: "pipe" });
		for (let i = 0; i < 50 && !proc.stderr.toString().includes("run by the server"); i++) {
			await Bun.sleep(20);
			proc = Bun.spawnSync([realBin, "search", "ECONNREFUSED", "--json", "--no-sync"], { cwd: "/", env, stdout: "pipe", stderr: "pipe" });
		}
		expect(proc.stderr.toString()).toContain("run by the server");
		expect(proc.exitCode).toBe(0);
		// Scoped by the command's own cwd (/: no workspace of the fixtures), as in its own process.
		const own = Bun.spawnSync([realBin, "search", "ECONNREFUSED", "--json", "--no-sync"], {
			cwd: "/",
			env: { ...env, PI_EVENTS_SERVER: "off" },
			stdout: "pipe",
			stderr: "pipe",
		});
		expect(JSON.parse(proc.stdout.toString()).hits).toEqual(JSON.parse(own.stdout.toString()).hits);
	});

	test("session_shutdown stops the child", async () => {
		await exec("event_search", { query: "step" });
		const pid = holder().server!.pid;
		expect(alive(pid)).toBeTrue();
		await fire("session_shutdown");
		expect(holder().server).toBeNull();
		await until(() => !alive(pid));
	});
});

describe("against a misbehaving server", () => {
	test("the call carries arguments (undefined dropped) and the caller; PI_EVENTS_ARGS is passed through", async () => {
		await use(fakeBin, { PI_EVENTS_ARGS: "--index /x/index.db  --sessions-dir /y" });
		const res = await exec("event_search", { query: "hello", limit: undefined, cwd: "/work/demo/app" }, { id: "call_meta" });
		expect(res.details.echo.name).toBe("event_search");
		expect(res.details.echo.arguments).toEqual({ query: "hello", cwd: "/work/demo/app" });
		expect(res.details.echo._meta["pi-events/caller"]).toEqual({
			cwd: "/work/demo/app",
			sessionId: CURRENT,
			sessionFile: `/tmp/nowhere/${CURRENT}.jsonl`,
			toolCallId: "call_meta",
		});
		expect(res.details.argv).toEqual(["serve", "--stdio", "--socket", "--index", "/x/index.db", "--sessions-dir", "/y"]);
		// The legacy handshake came first.
		const frames = logged();
		expect(frames[0]!.method).toBe("initialize");
		expect(frames[0]!.params.protocolVersion).toBe("2025-11-25");
		expect(frames[1]!.method).toBe("notifications/initialized");

		await use(fakeBin, { PI_EVENTS_ARGS: '["--index", "/with space/index.db"]' });
		const json = await exec("event_search", { query: "hello" });
		expect(json.details.argv).toEqual(["serve", "--stdio", "--socket", "--index", "/with space/index.db"]);
	});

	test("a binary older than --socket: the call is answered by one started without it, and so are the next", async () => {
		await use(fakeBin, { FAKE_NO_SOCKET: "1" });
		const res = await exec("event_search", { query: "hello" });
		expect(res.details.argv).toEqual(["serve", "--stdio"]);
		const pid = holder().server!.pid;
		const again = await exec("event_search", { query: "hello" });
		expect(again.details.argv).toEqual(["serve", "--stdio"]);
		expect(holder().server!.pid).toBe(pid);
		// PI_EVENTS_SERVER=off asks for no socket either.
		delete (holder() as { noSocket?: boolean }).noSocket;
		await use(fakeBin, { PI_EVENTS_SERVER: "off" });
		expect((await exec("event_search", { query: "hello" })).details.argv).toEqual(["serve", "--stdio"]);
	});

	test("turn_end and agent_end send the sync notification only while a server runs", async () => {
		await use(fakeBin);
		writeFileSync(fakeLog, "");
		await fire("turn_end");
		expect(holder().server).toBeNull();
		await exec("event_search", { query: "hello" });
		await fire("turn_end");
		await fire("agent_end");
		await until(() => logged().filter((f) => f.method === "notifications/pi-events/sync").length === 2);
	});

	test("JSON-RPC errors and isError results become thrown Errors", async () => {
		await use(fakeBin);
		await expect(exec("event_search", { query: "rpc-error" })).rejects.toThrow("pi-events: Internal error (JSON-RPC -32603)");
		await expect(exec("event_search", { query: "is-error" })).rejects.toThrow("event_search failed: simulated [E_USAGE]");
		// Neither kills the server.
		expect(holder().server!.closed).toBeNull();
	});

	test("a crash fails the call with the server's stderr, and the next call respawns", async () => {
		await use(fakeBin);
		await exec("event_search", { query: "hello" });
		const first = holder().server!.pid;
		await expect(exec("event_search", { query: "die" })).rejects.toThrow(/exited \(code 3\): fake server: simulated crash/);
		const res = await exec("event_search", { query: "hello" });
		expect(res.details.echo.arguments.query).toBe("hello");
		expect(holder().server!.pid).not.toBe(first);
	});

	test("a call times out; the wedged server is replaced", async () => {
		await use(fakeBin, { PI_EVENTS_TIMEOUT_MS: "300" });
		await exec("event_search", { query: "hello" });
		const first = holder().server!.pid;
		const t0 = performance.now();
		await expect(exec("event_search", { query: "hang" })).rejects.toThrow("pi-events tools/call timed out after 300 ms");
		expect(performance.now() - t0).toBeLessThan(2000);
		await until(() => !alive(first));
		expect((await exec("event_search", { query: "hello" })).details.echo.arguments.query).toBe("hello");
	});

	test("an abort rejects at once and tells the server to cancel", async () => {
		await use(fakeBin);
		writeFileSync(fakeLog, "");
		await exec("event_search", { query: "hello" });
		const pid = holder().server!.pid;
		const controller = new AbortController();
		setTimeout(() => controller.abort(), 50);
		await expect(exec("event_search", { query: "hang" }, { signal: controller.signal })).rejects.toThrow(/aborted/);
		await until(() => logged().some((f) => f.method === "notifications/cancelled"));
		const hung = logged().find((f) => f.params?.arguments?.query === "hang")!;
		expect(logged().find((f) => f.method === "notifications/cancelled")!.params.requestId).toBe(hung.id!);
		// An already-aborted signal never reaches the server.
		const done = new AbortController();
		done.abort();
		await expect(exec("event_search", { query: "hello" }, { signal: done.signal })).rejects.toThrow(/aborted/);
		expect(holder().server!.pid).toBe(pid);
	});

	test("a handshake that never completes fails the call; the next call starts over", async () => {
		await use(fakeBin, { PI_EVENTS_TIMEOUT_MS: "300", FAKE_NO_INIT: "1" });
		await expect(exec("event_search", { query: "hello" })).rejects.toThrow("pi-events initialize timed out after 300 ms");
		delete process.env.FAKE_NO_INIT;
		expect((await exec("event_search", { query: "hello" })).details.echo.arguments.query).toBe("hello");
	});

	test("a missing binary gives an actionable error", async () => {
		await use(join(layout.root, "definitely-not-here"));
		await expect(exec("event_search", { query: "hello" })).rejects.toThrow(/pi-events binary not found .*PI_EVENTS_BIN/);
	});

	test("a binary that cannot be found is said once, at the first session start with a UI", async () => {
		await use(join(layout.root, "definitely-not-here"));
		const notes: string[] = [];
		const start = (hasUI: boolean) =>
			Promise.all(
				(handlers.get("session_start") ?? []).map((h) => h({ type: "session_start" }, { ...ctx(), hasUI, ui: { notify: (m: string) => notes.push(m) } })),
			);
		await start(false);
		expect(notes).toEqual([]);
		await start(true);
		await start(true);
		expect(notes).toHaveLength(1);
		expect(notes[0]).toMatch(/tools are inactive: binary not found \(.*definitely-not-here, from PI_EVENTS_BIN\)\. \/events status/);
		expect(holder().server).toBeNull();
		delete (globalThis as Record<symbol, unknown>)[Symbol.for("pi-events/extension-warned")];
		await use(realBin);
		await start(true);
		expect(notes).toHaveLength(1);
	});

	test("/events status says why the tools are inactive: a missing binary, a second copy of the extension", async () => {
		await use(join(layout.root, "definitely-not-here"));
		// A second copy loaded from elsewhere stays inactive (no tools, no command) and is named in the status.
		const loadedKey = Symbol.for("pi-events/extension-loaded");
		const globals = globalThis as Record<symbol, unknown>;
		const first = globals[loadedKey];
		globals[loadedKey] = { path: "/elsewhere/pi-events.ts" };
		const second = new Map<string, unknown>();
		piEvents({ registerTool: (t: Tool) => second.set(t.name, t), registerCommand: (n: string) => second.set(n, n), on: () => {} } as unknown as ExtensionAPI);
		globals[loadedKey] = first;
		expect(second.size).toBe(0);
		const theme = { fg: (_c: string, t: string) => t, bold: (t: string) => t };
		const call = (name: string, args: Record<string, unknown>) => exec(name, args).then((r) => ({ text: r.content[0].text, structured: r.details }));
		const lines = (await statusLines(ctx() as never, "/here/pi-events.ts", theme, call)).join("\n");
		expect(lines).toContain("extension  active /here/pi-events.ts");
		expect(lines).toMatch(/inactive copy \(installed twice\): .*pi-events\.ts; remove one/);
		expect(lines).toContain("root       /work/demo/app");
		expect(lines).toMatch(/server {5}.*definitely-not-here \(from PI_EVENTS_BIN\)/);
		expect(lines).toMatch(/tools {6}inactive: pi-events binary not found/);
		expect(lines).toMatch(/index {6}unknown: /);
	});
});
