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
import piEvents, { ReadParams, SearchParams, ServerProcess, SessionsParams, serverCommand, TraceParams } from "../../extension/pi-events.ts";
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
});
