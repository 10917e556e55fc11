/**
 * The MCP server (`pi-events serve --stdio`) as a client sees it: the COMPILED binary, driven by
 * the official MCP SDK client (legacy era, initialize handshake) and by raw frames (the stateless
 * 2026-07-28 era, malformed and oversized frames, bursts, EOF), over a temp agent dir seeded with
 * the pi fixtures. Scope comes from the trusted `_meta["pi-events/caller"]`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { ReadParams, SearchParams, SessionsParams, TraceParams } from "../../extension/pi-events.ts";
import { type AgentLayout, cleanupTempDirs, copyAllPiFixtures, copyIntoSessions, isolatedEnv, makeAgentLayout, piFixture } from "../helpers/temp.ts";
import { compiledBinary, MODERN, modernMeta, RawServer } from "./harness.ts";

const APP = "/work/demo/app";
const OTHER = "/work/demo/other";
const CALLER = "pi-events/caller";

const basic = piFixture("basic");
const branched = piFixture("branched");

let bin: string;
let layout: AgentLayout;
let env: Record<string, string>;
let client: Client;
let transport: StdioClientTransport;
const raws: RawServer[] = [];

function raw(): RawServer {
	const server = new RawServer(bin, env);
	raws.push(server);
	return server;
}

type ToolResult = { content: { type: string; text: string }[]; structuredContent?: any; isError?: boolean };

async function call(name: string, args: Record<string, unknown>, caller: Record<string, unknown> = { cwd: APP }): Promise<ToolResult> {
	return (await client.callTool({ name, arguments: args, _meta: { [CALLER]: caller } })) as ToolResult;
}

const textOf = (r: ToolResult) => r.content.map((c) => c.text).join("\n");

beforeAll(async () => {
	bin = compiledBinary();
	layout = makeAgentLayout();
	copyAllPiFixtures(layout.sessionsDir);
	env = isolatedEnv(layout, { NO_COLOR: "1" });
	transport = new StdioClientTransport({ command: bin, args: ["serve", "--stdio"], env, stderr: "pipe" });
	client = new Client({ name: "mcp-test", version: "0.0.0" });
	await client.connect(transport);
});

afterAll(async () => {
	await client?.close();
	for (const r of raws) r.kill();
	cleanupTempDirs();
});

describe("legacy era (official SDK client)", () => {
	test("initialize negotiated the requested version and named the server", () => {
		expect(client.getServerVersion()?.name).toBe("pi-events");
		expect(client.getServerCapabilities()?.tools).toBeDefined();
		expect(client.getInstructions()).toContain("event_search");
	});

	test("tools/list: four read-only tools with input and output schemas", async () => {
		const { tools } = await client.listTools();
		expect(tools.map((t) => t.name)).toEqual(["event_search", "event_read", "event_trace", "event_sessions"]);
		for (const tool of tools) {
			expect(tool.description?.length).toBeGreaterThan(50);
			expect(tool.inputSchema.type).toBe("object");
			expect(tool.outputSchema?.type).toBe("object");
			expect(tool.annotations?.readOnlyHint).toBe(true);
			expect(tool.annotations?.openWorldHint).toBe(false);
		}
		// The query may be left out when a filter narrows the search.
		expect(tools[0]!.inputSchema.required).toBeUndefined();
	});

	test("the extension's TypeBox parameters mirror the server's input schemas exactly", async () => {
		const { tools } = await client.listTools();
		const mine: Record<string, unknown> = { event_search: SearchParams, event_read: ReadParams, event_trace: TraceParams, event_sessions: SessionsParams };
		for (const tool of tools) {
			const { $schema: _ignored, ...server } = tool.inputSchema as Record<string, unknown>;
			expect({ tool: tool.name, schema: JSON.parse(JSON.stringify(mine[tool.name])) }).toEqual({ tool: tool.name, schema: server });
		}
	});

	test("event_search finds fixture events; structuredContent validates against outputSchema", async () => {
		const res = await call("event_search", { query: "ECONNREFUSED" });
		expect(res.isError).toBeFalsy();
		const hits = res.structuredContent.hits as { sessionId: string; entryId: string; cwd: string }[];
		expect(hits.map((h) => h.entryId)).toContain(basic.notes.writeErrorResult);
		expect(hits.every((h) => h.sessionId === basic.sessionId)).toBeTrue();
		expect(textOf(res)).toContain(basic.notes.writeErrorResult);
		expect(textOf(res)).toContain("ECONNREFUSED");
	});

	test("event_read returns the exact event", async () => {
		const res = await call("event_read", { sessionId: basic.sessionId, entryId: basic.notes.writeErrorResult, before: 1, after: 1 });
		expect(res.isError).toBeFalsy();
		expect(res.structuredContent.event.entryId).toBe(basic.notes.writeErrorResult);
		expect(res.structuredContent.content.map((c: { text: string }) => c.text).join("\n")).toContain("ECONNREFUSED 127.0.0.1:5432");
		expect(res.structuredContent.neighbours.before).toHaveLength(1);
		expect(textOf(res)).toContain("ECONNREFUSED");
	});

	test("event_read view turn: the whole turn as a transcript, validated against the output schema; event-only arguments refused", async () => {
		const res = await call("event_read", { sessionId: basic.sessionId, entryId: basic.notes.readResult, view: "turn", maxBytes: 4096, turns: 1 });
		expect(res.isError).toBeFalsy();
		const turns = res.structuredContent.turns as { prompt: string; lines: { kind: string; entryId: string }[] }[];
		expect(turns.map((t) => t.prompt)).toEqual([basic.notes.firstUser, basic.notes.imageUser]);
		expect(turns[0]!.lines.some((l) => l.kind === "tool" && l.entryId === basic.notes.assistantRead)).toBeTrue();
		expect(textOf(res)).toContain(`-> ${basic.notes.writeErrorResult} ERROR`);
		expect(textOf(res)).toContain(`event_read {"sessionId":"${basic.sessionId}","entryId":`);
		const clash = await call("event_read", { sessionId: basic.sessionId, entryId: basic.notes.readResult, view: "turn", after: 2 });
		expect(clash.isError).toBeTrue();
		expect(textOf(clash)).toContain('after reads one event; it does not go with view "turn"');
	});

	test("event_trace shows the tree around an event", async () => {
		const res = await call("event_trace", { sessionId: branched.sessionId, entryId: branched.notes.B });
		expect(res.isError).toBeFalsy();
		const s = res.structuredContent;
		expect(s.target.entryId).toBe(branched.notes.B);
		expect(s.parent.entryId).toBe(branched.notes.A);
		expect(s.children.map((c: { entryId: string }) => c.entryId).sort()).toEqual([branched.notes.C, branched.notes.E].sort());
		expect(textOf(res).length).toBeGreaterThan(0);
	});

	test("a query that matches nothing is a normal, empty result", async () => {
		const res = await call("event_search", { query: "zzqx-no-such-term-anywhere" });
		expect(res.isError).toBeFalsy();
		expect(res.structuredContent.hits).toEqual([]);
		expect(textOf(res)).toContain(
			`No hits for "zzqx-no-such-term-anywhere" in sessions under /work/demo/app (working directory): nothing in your scope contains "zzqx-no-such-term-anywhere"`,
		);
		expect(res.structuredContent.scope).toEqual({ roots: [APP], rootSource: "cwd" });
	});

	test("bad input is an isError result naming the field", async () => {
		// An empty query needs a narrowing filter (filter-only search); without one it is E_BAD_QUERY.
		const empty = await call("event_search", { query: "" });
		expect(empty.isError).toBeTrue();
		expect(textOf(empty)).toMatch(/the query is empty: .+ \[E_BAD_QUERY\]/);

		const query = await call("event_search", { query: 42 });
		expect(query.isError).toBeTrue();
		expect(textOf(query)).toMatch(/invalid arguments for event_search: query: .+/);

		const limit = await call("event_search", { query: "step", limit: 500 });
		expect(limit.isError).toBeTrue();
		expect(textOf(limit)).toContain("limit");

		const extra = await call("event_search", { query: "step", bogus: 1 });
		expect(extra.isError).toBeTrue();
		expect(textOf(extra)).toContain("bogus");

		const missing = await call("event_read", { sessionId: basic.sessionId });
		expect(missing.isError).toBeTrue();
		expect(textOf(missing)).toContain("entryId");

		const since = await call("event_search", { query: "step", since: "last tuesday-ish" });
		expect(since.isError).toBeTrue();
		expect(textOf(since)).toContain("since");
	});

	test("an unknown tool is JSON-RPC error -32602", async () => {
		const err = await client.callTool({ name: "event_delete", arguments: {} }).then(
			() => null,
			(e: unknown) => e,
		);
		expect(err).toBeInstanceOf(McpError);
		expect((err as McpError).code).toBe(-32602);
		expect((err as McpError).message).toContain("Unknown tool: event_delete");
	});

	test("ping answers", async () => {
		expect(await client.ping()).toEqual({});
	});
});

describe("scope through _meta", () => {
	test("a caller in /work/demo/other never sees /work/demo/app sessions", async () => {
		const none = await call("event_search", { query: "ECONNREFUSED" }, { cwd: OTHER });
		expect(none.structuredContent.hits).toEqual([]);

		const own = await call("event_search", { query: "step", limit: 50 }, { cwd: OTHER });
		for (const hit of own.structuredContent.hits as { cwd: string }[]) expect(hit.cwd).toBe(OTHER);

		const fromApp = await call("event_search", { query: "step", limit: 50 }, { cwd: APP });
		const appSessions = new Set((fromApp.structuredContent.hits as { sessionId: string }[]).map((h) => h.sessionId));
		expect(appSessions.has(branched.sessionId)).toBeTrue();
		for (const hit of own.structuredContent.hits as { sessionId: string }[]) expect(appSessions.has(hit.sessionId)).toBeFalse();
	});

	test("event_sessions and event_search name the root; from a root with no sessions they say so and how to pick another, revealing nothing else", async () => {
		const app = await call("event_sessions", {}, { cwd: APP });
		expect(app.structuredContent.scope).toEqual({ roots: [APP], rootSource: "cwd" });
		expect(textOf(app).split("\n")[0]).toMatch(/^\d+ of \d+ sessions under \/work\/demo\/app \(working directory\), most recently active first/);
		const marked = (app.structuredContent.sessions as { sessionId: string; abandonedBranches: boolean }[]).find((x) => x.sessionId === branched.sessionId);
		expect(marked?.abandonedBranches).toBeTrue();
		const search = await call("event_search", { query: "ECONNREFUSED" }, { cwd: "/work/demo/nothing-here" });
		expect(search.structuredContent.coverage.emptyBecause).toBe("no-sessions");
		expect(search.structuredContent.scope).toEqual({ roots: ["/work/demo/nothing-here"], rootSource: "cwd" });
		expect(textOf(search)).toContain('No hits for "ECONNREFUSED": there are no sessions under /work/demo/nothing-here (working directory) at all');
		expect(textOf(search)).not.toContain(APP);
		const none = await call("event_sessions", {}, { cwd: "/work/demo/nothing-here" });
		expect(none.isError).toBeFalsy();
		expect(none.structuredContent).toMatchObject({ sessions: [], total: 0, emptyBecause: "no-sessions", scope: { roots: ["/work/demo/nothing-here"] } });
		const text = textOf(none);
		expect(text).toContain("There are no sessions under /work/demo/nothing-here (working directory) at all");
		expect(text).toContain("`root` in pi-events' config file");
		expect(text).not.toContain(APP);
	});

	test("a sibling directory with a shared prefix (/work/demo/app-extra) is outside /work/demo/app", async () => {
		const retry = piFixture("retry");
		const inside = await call("event_search", { query: "retry-error-marker" }, { cwd: "/work/demo/app-extra" });
		expect((inside.structuredContent.hits as { sessionId: string }[]).map((h) => h.sessionId)).toContain(retry.sessionId);
		const outside = await call("event_search", { query: "retry-error-marker" }, { cwd: APP });
		expect(outside.structuredContent.hits).toEqual([]);
	});

	test("reading or tracing an event outside the scope fails exactly like a missing one", async () => {
		const { sessionId } = basic;
		const entryId = basic.notes.writeErrorResult as string;
		const inScope = await call("event_read", { sessionId, entryId }, { cwd: APP });
		expect(inScope.isError).toBeFalsy();

		for (const tool of ["event_read", "event_trace"]) {
			const outside = await call(tool, { sessionId, entryId }, { cwd: OTHER });
			const missing = await call(tool, { sessionId, entryId: "deadbeef" }, { cwd: APP });
			const missingSession = await call(tool, { sessionId: "01a19b7c-0000-7000-8000-000000000000", entryId }, { cwd: APP });
			expect(outside.isError).toBeTrue();
			expect(missing.isError).toBeTrue();
			expect(missingSession.isError).toBeTrue();
			expect(outside.structuredContent).toBeUndefined();
			const template = (r: ToolResult, s: string, e: string) => textOf(r).replaceAll(JSON.stringify(s), "<S>").replaceAll(JSON.stringify(e), "<E>");
			expect(template(outside, sessionId, entryId)).toBe(template(missing, sessionId, "deadbeef"));
			expect(template(outside, sessionId, entryId)).toBe(template(missingSession, "01a19b7c-0000-7000-8000-000000000000", entryId));
			expect(textOf(outside)).toBe(`${tool} failed: no event "${entryId}" in session "${sessionId}" in your scope [E_NOT_FOUND]`);
		}
	});

	test("the current session is excluded from search, and cut off at the invoking call when named", async () => {
		const caller = { cwd: APP, sessionId: basic.sessionId, sessionFile: null, toolCallId: basic.notes.bashToolCall };
		// Without sessionId: the whole current session is hidden (ECONNREFUSED only occurs in it).
		const hidden = await call("event_search", { query: "ECONNREFUSED" }, caller);
		expect(hidden.structuredContent.hits).toEqual([]);
		// Named explicitly: only events before the assistant entry that made the invoking call.
		const named = await call("event_search", { query: "ECONNREFUSED", sessionId: basic.sessionId }, caller);
		expect((named.structuredContent.hits as { entryId: string }[]).map((h) => h.entryId)).toEqual([basic.notes.writeErrorResult]);
		const after = await call("event_search", { query: "137", sessionId: basic.sessionId }, caller);
		expect(after.structuredContent.hits).toEqual([]);
		// Exact reads follow the same cutoff.
		const before = await call("event_read", { sessionId: basic.sessionId, entryId: basic.notes.writeErrorResult }, caller);
		expect(before.isError).toBeFalsy();
		const past = await call("event_read", { sessionId: basic.sessionId, entryId: basic.notes.assistantAfterBash }, caller);
		expect(past.isError).toBeTrue();
		expect(textOf(past)).toContain("E_NOT_FOUND");
		// A different caller session sees it all.
		const other = await call("event_search", { query: "137", sessionId: basic.sessionId }, { cwd: APP, sessionId: branched.sessionId });
		expect(other.structuredContent.hits.length).toBeGreaterThan(0);
	});

	// KNOWN SERVER GAP (reported to the lead): the pre-call sync is rate-limited to once per 1.5 s, so
	// a call made right after a sync (e.g. the extension's turn_end sync, then a fast model) does
	// not see the invoking assistant entry; its toolCallId is then unknown and the cutoff fails
	// closed, hiding the whole current session even when named. Flip to test() once the server
	// syncs when the caller's session file has grown since the last sync.
	test("naming the current session right after a sync still shows its earlier events", async () => {
		const fresh = makeAgentLayout();
		const file = copyIntoSessions(fresh.sessionsDir, branched.path, { cwd: APP });
		const s = new RawServer(bin, isolatedEnv(fresh));
		raws.push(s);
		const warm = await s.request("tools/call", { name: "event_search", arguments: { query: "step" }, _meta: modernMeta({ cwd: APP }) });
		expect(warm.result.structuredContent.hits.length).toBeGreaterThan(0);
		// pi appends the assistant entry that makes the call, then runs the tool at once.
		const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
		const message = {
			role: "assistant",
			content: [{ type: "toolCall", id: "call_now", name: "event_search", arguments: { query: "step" } }],
			api: "x",
			provider: "x",
			model: "x",
			usage,
			stopReason: "toolUse",
			timestamp: Date.now(),
		};
		appendFileSync(file, `${JSON.stringify({ type: "message", id: "asst0001", parentId: branched.notes.F, timestamp: new Date().toISOString(), message })}\n`);
		const caller = { cwd: APP, sessionId: branched.sessionId, sessionFile: file, toolCallId: "call_now" };
		const own = await s.request("tools/call", { name: "event_search", arguments: { query: "step", sessionId: branched.sessionId }, _meta: modernMeta(caller) });
		expect(own.result.structuredContent.hits.length).toBeGreaterThan(0);
	});

	test("the current session can also be identified by its file", async () => {
		const file = `${layout.sessionsDir}/--work-demo-app--/${basic.file}`;
		const hidden = await call("event_search", { query: "ECONNREFUSED" }, { cwd: APP, sessionFile: file });
		expect(hidden.structuredContent.hits).toEqual([]);
	});
});

describe("modern era (2026-07-28, raw frames)", () => {
	test("server/discover, then stateless tools/list and tools/call without initialize", async () => {
		const s = raw();
		const discover = await s.request("server/discover", { _meta: modernMeta() });
		expect(discover.result.resultType).toBe("complete");
		expect(discover.result.supportedVersions).toContain(MODERN);
		expect(discover.result.capabilities.tools).toBeDefined();
		expect(discover.result._meta["io.modelcontextprotocol/serverInfo"].name).toBe("pi-events");

		const list = await s.request("tools/list", { _meta: modernMeta() });
		expect(list.result.resultType).toBe("complete");
		expect(list.result.ttlMs).toBeGreaterThanOrEqual(0);
		expect(["public", "private"]).toContain(list.result.cacheScope);
		expect(list.result.tools.map((t: { name: string }) => t.name)).toEqual(["event_search", "event_read", "event_trace", "event_sessions"]);

		const callRes = await s.request("tools/call", {
			name: "event_search",
			arguments: { query: "ECONNREFUSED" },
			_meta: modernMeta({ cwd: APP }),
		});
		expect(callRes.result.resultType).toBe("complete");
		expect(callRes.result.isError).toBe(false);
		expect(callRes.result.structuredContent.hits.length).toBeGreaterThan(0);

		const scoped = await s.request("tools/call", {
			name: "event_search",
			arguments: { query: "ECONNREFUSED" },
			_meta: modernMeta({ cwd: OTHER }),
		});
		expect(scoped.result.structuredContent.hits).toEqual([]);

		const bad = await s.request("tools/call", { name: "event_read", arguments: { sessionId: "x" }, _meta: modernMeta({ cwd: APP }) });
		expect(bad.result.isError).toBe(true);
		expect(bad.result.resultType).toBe("complete");
	});

	test("an unsupported modern version is -32022 with the supported list", async () => {
		const s = raw();
		const res = await s.request("tools/list", { _meta: { ...modernMeta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" } });
		expect(res.error?.code).toBe(-32022);
		expect(res.error?.data).toEqual({ supported: [MODERN], requested: "2099-01-01" });
	});

	test("a legacy request before initialize is -32602; unknown methods are -32601", async () => {
		const s = raw();
		const early = await s.request("tools/list", {});
		expect(early.error?.code).toBe(-32602);
		expect(early.error?.message).toContain("initialize");

		const unknownModern = await s.request("resources/list", { _meta: modernMeta() });
		expect(unknownModern.error?.code).toBe(-32601);

		await s.initialize();
		const unknown = await s.request("prompts/list", {});
		expect(unknown.error?.code).toBe(-32601);
		expect(unknown.error?.message).toContain("prompts/list");

		const unknownTool = await s.request("tools/call", { name: "nope", arguments: {} });
		expect(unknownTool.error?.code).toBe(-32602);
	});
});

describe("robustness", () => {
	test("malformed frames get JSON-RPC errors and do not break the loop", async () => {
		const s = raw();
		await s.initialize();
		s.write("this is not json\n");
		expect((await s.take((f) => f.error?.code === -32700)).id).toBeNull();
		s.write("[1,2,3]\n");
		expect((await s.take((f) => f.error?.code === -32600)).id).toBeNull();
		s.write('{"jsonrpc":"2.0","id":null,"method":"ping"}\n');
		expect((await s.take((f) => f.error?.code === -32600)).id).toBeNull();
		s.write('{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n');
		await s.take((f) => f.error?.code === -32600);
		s.write('{"jsonrpc":"2.0","id":7,"method":42}\n');
		expect((await s.take((f) => f.error?.code === -32600)).id).toBe(7);
		// A response-shaped message and a notification get no answer; blank lines and CRLF are fine.
		s.write('{"jsonrpc":"2.0","id":99,"result":{}}\n\n\r\n{"jsonrpc":"2.0","method":"notifications/whatever"}\n');
		// A frame split across writes, with a multi-byte character cut in half.
		const split = new TextEncoder().encode(
			`${JSON.stringify({ jsonrpc: "2.0", id: "split", method: "tools/call", params: { name: "event_search", arguments: { query: "数据库连接失败了" }, _meta: { [CALLER]: { cwd: APP } } } })}\n`,
		);
		const cut = split.indexOf(0xe6) + 1;
		s.write(split.subarray(0, cut));
		await Bun.sleep(20);
		s.write(split.subarray(cut));
		const res = await s.take((f) => f.id === "split");
		expect(res.result.structuredContent.hits.length).toBeGreaterThan(0);
		expect((await s.request("ping")).result).toEqual({});
		expect(s.unclaimed()).toEqual([]);
		expect(s.stdoutNonJson).toEqual([]);
	});

	test("a 2 MB frame is rejected without crashing; the next request works", async () => {
		const s = raw();
		await s.initialize();
		const huge = JSON.stringify({
			jsonrpc: "2.0",
			id: "huge",
			method: "tools/call",
			params: { name: "event_search", arguments: { query: "x".repeat(2 * 1024 * 1024) } },
		});
		// In pieces, as a pipe would deliver it.
		for (let i = 0; i < huge.length; i += 256 * 1024) s.write(huge.slice(i, i + 256 * 1024));
		s.write("\n");
		const tooLarge = await s.take((f) => f.error?.code === -32700);
		expect(tooLarge.id).toBeNull();
		expect(tooLarge.error?.message).toContain("too large");
		// The same in a single write, directly followed by a valid frame in the same chunk.
		s.write(`${huge}\n${JSON.stringify({ jsonrpc: "2.0", id: "after", method: "ping" })}\n`);
		await s.take((f) => f.error?.code === -32700);
		expect((await s.take((f) => f.id === "after")).result).toEqual({});
		const ok = await s.request("tools/call", { name: "event_search", arguments: { query: "ECONNREFUSED" }, _meta: { [CALLER]: { cwd: APP } } });
		expect(ok.result.isError).toBe(false);
		expect(s.proc.exitCode).toBeNull();
	});

	test("a burst of 50 concurrent requests is answered in full", async () => {
		const s = raw();
		await s.initialize();
		const queries = ["ECONNREFUSED", "step", "kumquat-offset-plan", "marker-tail", "parseSessionEntries"];
		let burst = "";
		for (let i = 0; i < 50; i++) {
			const method = i % 10 === 9 ? "tools/list" : "tools/call";
			const params =
				method === "tools/list" ? {} : { name: "event_search", arguments: { query: queries[i % queries.length] }, _meta: { [CALLER]: { cwd: APP } } };
			burst += `${JSON.stringify({ jsonrpc: "2.0", id: `b${i}`, method, params })}\n`;
		}
		s.write(burst);
		const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => s.take((f) => f.id === `b${i}`)));
		for (const a of answers) {
			expect(a.error).toBeUndefined();
			expect(a.result).toBeDefined();
		}
		// The SDK client concurrently, too.
		const viaSdk = await Promise.all(Array.from({ length: 50 }, (_, i) => call("event_search", { query: queries[i % queries.length]! })));
		expect(viaSdk.every((r) => !r.isError)).toBeTrue();
	});

	test("the server exits promptly when stdin closes", async () => {
		const s = raw();
		await s.initialize();
		s.closeStdin();
		const code = await Promise.race([s.proc.exited, Bun.sleep(5000).then(() => "timeout" as const)]);
		expect(code).toBe(0);
	});

	test("a sync notification is accepted and later calls still work", async () => {
		const s = raw();
		await s.initialize();
		s.send({ jsonrpc: "2.0", method: "notifications/pi-events/sync" });
		const res = await s.request("tools/call", { name: "event_search", arguments: { query: "ECONNREFUSED" }, _meta: { [CALLER]: { cwd: APP } } });
		expect(res.result.structuredContent.freshness.synced).toBe(true);
		expect(s.unclaimed()).toEqual([]);
	});
});

describe("latency", () => {
	test("200 sequential tools/call event_search round trips", async () => {
		const queries = ["ECONNREFUSED", "step", "marker-tail", "parseSessionEntries", "zzqx-nothing"];
		for (let i = 0; i < 10; i++) await call("event_search", { query: queries[i % queries.length]! }); // warm-up
		const times: number[] = [];
		for (let i = 0; i < 200; i++) {
			const t0 = performance.now();
			const res = await call("event_search", { query: queries[i % queries.length]! });
			times.push(performance.now() - t0);
			expect(res.isError).toBeFalsy();
		}
		times.sort((a, b) => a - b);
		const pct = (p: number) => times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)]!;
		console.log(`tools/call p50 ${pct(50).toFixed(2)} ms p95 ${pct(95).toFixed(2)} ms`);
	});
});
