/**
 * The stateless 2026-07-28 era through the official v2 SDK client (`@modelcontextprotocol/client`,
 * pinned to 2026-07-28, so no `initialize` handshake happens), against the compiled binary: the
 * tools list, each tool, bad input, an unknown tool and scope through the launch root.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { cleanupTempDirs, copyAllPiFixtures, isolatedEnv, makeAgentLayout, piFixture } from "../helpers/temp.ts";
import { compiledBinary } from "./harness.ts";

const branched = piFixture("branched");
const other = piFixture("multi-root"); // cwd /work/demo/other: outside the /work/demo/app root
let client: Client;

beforeAll(async () => {
	const bin = compiledBinary();
	const layout = makeAgentLayout();
	copyAllPiFixtures(layout.sessionsDir);
	const transport = new StdioClientTransport({
		command: bin,
		args: ["serve", "--stdio", "--root", "/work/demo/app"],
		env: isolatedEnv(layout, { NO_COLOR: "1" }),
		stderr: "pipe",
	});
	client = new Client({ name: "mcp-modern-test", version: "0.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
	await client.connect(transport);
});

afterAll(async () => {
	await client?.close();
	cleanupTempDirs();
});

test("the client negotiated the modern era (no initialize) and lists the four read-only tools", async () => {
	const { tools } = await client.listTools();
	expect(tools.map((t) => t.name)).toEqual(["event_search", "event_read", "event_trace", "event_sessions"]);
	for (const tool of tools) {
		expect(tool.inputSchema.type).toBe("object");
		expect(tool.outputSchema).toBeDefined();
		expect(tool.annotations?.readOnlyHint).toBe(true);
	}
});

test("event_search, event_read and event_trace answer with structured content", async () => {
	const search = await client.callTool({ name: "event_search", arguments: { query: "echo step" } });
	expect(search.isError).toBeFalsy();
	const hits = (search.structuredContent as { hits: { sessionId: string; entryId: string }[] }).hits;
	expect(hits.map((h) => [h.sessionId, h.entryId])).toContainEqual([branched.sessionId, branched.notes.E]);

	const read = await client.callTool({
		name: "event_read",
		arguments: { sessionId: branched.sessionId, entryId: branched.notes.E, order: "branch", before: 1 },
	});
	expect(read.isError).toBeFalsy();
	const r = read.structuredContent as { event: { entryId: string }; neighbours: { before: { entryId: string }[] } };
	expect(r.event.entryId).toBe(branched.notes.E);
	expect(r.neighbours.before.map((n) => n.entryId)).toEqual([branched.notes.B]);

	const trace = await client.callTool({ name: "event_trace", arguments: { sessionId: branched.sessionId, entryId: branched.notes.E } });
	expect(trace.isError).toBeFalsy();
	const t = trace.structuredContent as { parent: { entryId: string }; siblings: { entryId: string }[] };
	expect(t.parent.entryId).toBe(branched.notes.B);
	expect(t.siblings.map((s) => s.entryId)).toEqual([branched.notes.C]);
});

test("bad arguments are a tool error the model can act on; an unknown tool is a protocol error", async () => {
	const bad = await client.callTool({ name: "event_search", arguments: { query: "x", limit: 500 } });
	expect(bad.isError).toBe(true);
	expect(JSON.stringify(bad.content)).toContain("limit");
	await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow();
});

test("the launch root scopes every call: a session outside it is never a hit and reads like a missing one", async () => {
	const search = await client.callTool({ name: "event_search", arguments: { query: "step", limit: 50 } });
	const hits = (search.structuredContent as { hits: { sessionId: string; cwd: string }[] }).hits;
	expect(hits.length).toBeGreaterThan(0);
	expect(hits.every((h) => h.cwd === "/work/demo/app" || h.cwd.startsWith("/work/demo/app/"))).toBe(true);
	const outside = await client.callTool({ name: "event_read", arguments: { sessionId: other.sessionId, entryId: "nope" } });
	const missing = await client.callTool({ name: "event_read", arguments: { sessionId: "no-such-session", entryId: "nope" } });
	expect(outside.isError).toBe(true);
	expect(JSON.stringify(outside.content).replace(other.sessionId, "ID")).toBe(JSON.stringify(missing.content).replace("no-such-session", "ID"));
});
