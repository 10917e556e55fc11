/**
 * The search surface, one table of cases run twice against the compiled binary: as
 * `pi-events <command>` (JSON and text output) and as the MCP tool through `serve --stdio`. Each
 * case names the CLI arguments and the tool call that mean the same thing, and one check runs on
 * both answers (the CLI's JSON and the tool's structuredContent have the same shape), plus an
 * optional check of both text renderings.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cleanupTempDirs } from "../helpers/temp.ts";
import type { RawServer } from "../server/harness.ts";
import { cliOutcome, IDS, makeWorld, mcpOutcome, type Outcome, runBinary, startServer, type World } from "./world.ts";

interface Case {
	name: string;
	cli: (w: World) => string[];
	tool: (w: World) => [name: string, args: Record<string, unknown>];
	/** Checks the structured answer (both runners); absent when `error` is expected. */
	check?: (json: any, w: World) => void;
	/** Checks the text rendering (both runners). */
	text?: (text: string, runner: "cli" | "mcp", w: World) => void;
	/** Checks what accompanies the text (CLI: its stderr; MCP: the tool text). */
	notes?: (notes: string) => void;
	/** The call fails: this matches the CLI's stderr and the tool's error text. */
	error?: RegExp;
}

const keys = (json: any) => (json.hits as { sessionId: string; entryId: string }[]).map((h) => `${h.sessionId.slice(0, 8)}/${h.entryId}`);

const CASES: Case[] = [
	{
		name: "a hit's snippet is plain text; highlights are [start, end) offsets into it",
		cli: () => ["search", "quokka"],
		tool: () => ["event_search", { query: "quokka" }],
		check: (json) => {
			const [hit] = json.hits;
			expect(hit.snippet).toBe("rename the «quokka» label to quokka-final (keep the \\«escape\\» too)");
			expect(hit.highlights.map(([s, e]: [number, number]) => hit.snippet.slice(s, e))).toEqual(["quokka", "quokka"]);
		},
		// Marks are « »; the source's own « » are escaped with a backslash (and a backslash before one doubled).
		text: (text) => expect(text).toContain("rename the \\««quokka»\\» label to «quokka»-final (keep the \\\\\\«escape\\\\\\» too)"),
	},
	{
		name: "text output leaves out the session file path (JSON keeps sessionFile)",
		cli: () => ["search", "flakytest"],
		tool: () => ["event_search", { query: "flakytest" }],
		check: (json, w) => {
			expect(json.hits.length).toBeGreaterThan(0);
			for (const h of json.hits) expect(h.sessionFile.startsWith(w.sessions)).toBe(true);
		},
		text: (text, _runner, w) => {
			expect(text).not.toContain(w.sessions);
			expect(text).toContain(IDS.flaky);
		},
	},
	{
		name: "ten hits render in at most about 4 KB of text while the structured answer is complete",
		cli: () => ["search", "verbose", "--limit", "10"],
		tool: () => ["event_search", { query: "verbose", limit: 10 }],
		check: (json) => {
			expect(json.hits.length).toBe(10);
			for (const h of json.hits) {
				expect(h.snippet.length).toBeGreaterThan(200);
				expect(typeof h.sessionFile).toBe("string");
				expect(typeof h.cwd).toBe("string");
			}
		},
		text: (text) => {
			console.log(`10 hits as text: ${Buffer.byteLength(text)} bytes`);
			expect(Buffer.byteLength(text)).toBeLessThanOrEqual(4096);
		},
	},
	{
		name: "a relative --file path resolves against the authorization root, not the caller's cwd",
		cli: () => ["search", "app.yaml", "--file", "src/config/app.yaml"],
		tool: () => ["event_search", { query: "app.yaml", files: ["src/config/app.yaml"] }],
		check: (json) => expect(keys(json)).toEqual([`${IDS.files.slice(0, 8)}/fi-a1`]),
	},
	{
		name: "--group session: one hit per session, its best event, with how many others matched",
		cli: () => ["search", "flakytest", "--group", "session"],
		tool: () => ["event_search", { query: "flakytest", groupBy: "session" }],
		check: (json) => {
			const bySession = Object.fromEntries(json.hits.map((h: any) => [h.sessionId, h.otherMatchingEvents]));
			expect(bySession).toEqual({ [IDS.flaky]: 5, [IDS.flakyTwo]: 1 });
			expect(json.coverage).toMatchObject({ estimatedMatches: 8, estimatedSessions: 2, matchesExact: true, truncated: false });
		},
		text: (text) => expect(text).toContain("(+5 more in this session)"),
	},
	{
		name: "--sort newest: the most recent matches first",
		cli: () => ["search", "flakytest", "--sort", "newest", "--limit", "3"],
		tool: () => ["event_search", { query: "flakytest", sort: "newest", limit: 3 }],
		check: (json) => {
			expect(keys(json)).toEqual(["f1a4e000/f2-a1", "f1a4e000/f2-u1", "f1a4e000/fl-a9"]);
			expect(json.hits.map((h: any) => h.sessionId)).toEqual([IDS.flakyTwo, IDS.flakyTwo, IDS.flaky]);
		},
	},
	{
		name: "--sort oldest: the earliest matches first",
		cli: () => ["search", "flakytest", "--sort", "oldest", "--limit", "2"],
		tool: () => ["event_search", { query: "flakytest", sort: "oldest", limit: 2 }],
		check: (json) => expect(keys(json)).toEqual(["f1a4e000/fl-u1", "f1a4e000/fl-r0"]),
	},
	{
		name: "--group session with --sort newest: each session's newest match, newest session first",
		cli: () => ["search", "flakytest", "--group", "session", "--sort", "newest"],
		tool: () => ["event_search", { query: "flakytest", groupBy: "session", sort: "newest" }],
		check: (json) => expect(keys(json)).toEqual(["f1a4e000/f2-a1", "f1a4e000/fl-a9"]),
	},
	{
		name: "counts are of what the filters allow; truncated only when the limit cut hits",
		cli: () => ["search", "flakytest", "--error", "--limit", "2"],
		tool: () => ["event_search", { query: "flakytest", isError: true, limit: 2 }],
		check: (json) => {
			expect(json.hits.length).toBe(2);
			expect(json.coverage).toMatchObject({ estimatedMatches: 4, matchesExact: true, estimatedSessions: 1, truncated: true, filterOnly: false });
		},
		// The text says so too (CLI: on stderr with the freshness line; MCP: in the tool text).
		notes: (notes) => expect(notes).toContain("more than shown: 4 matching events in 1 session (raise the limit to see more)"),
	},
	{
		name: "nothing cut: truncated is false even though unfiltered matches are more",
		cli: () => ["search", "flakytest", "--error", "--limit", "4"],
		tool: () => ["event_search", { query: "flakytest", isError: true, limit: 4 }],
		check: (json) => {
			expect(json.hits.length).toBe(4);
			expect(json.coverage).toMatchObject({ estimatedMatches: 4, matchesExact: true, truncated: false });
		},
	},
	{
		name: "a bad --sort is a usage error",
		cli: () => ["search", "flakytest", "--sort", "sideways"],
		tool: () => ["event_search", { query: "flakytest", sort: "sideways" }],
		error: /sort/,
	},
	// Filter-only search.
	{
		name: "an empty query with a narrowing filter lists the matching events, newest first",
		cli: () => ["search", "--error"],
		tool: () => ["event_search", { isError: true }],
		check: (json) => {
			expect(keys(json)).toEqual(["f1a4e000/fl-r3", "f1a4e000/fl-r2", "f1a4e000/fl-r1", "f1a4e000/fl-r0"]);
			expect(json.hits[0].snippet).toBe("FAIL flakytest run 3: expected 200, got 500");
			expect(json.hits[0].highlights).toEqual([]);
			expect(json.coverage).toMatchObject({ mode: "full", estimatedMatches: 4, matchesExact: true, truncated: false, filterOnly: true });
		},
	},
	{
		name: "filter-only: every abandoned reply, not 1 of them",
		cli: () => ["search", "", "--branch", "alternate"],
		tool: () => ["event_search", { query: "", branchStates: ["alternate"] }],
		check: (json) => expect(keys(json)).toEqual(["b4a2c000/br-a2", "b4a2c000/br-a1"]),
	},
	{
		name: "filter-only with --group session and a limit: counts and truncation stay honest",
		cli: () => ["search", "--kind", "user.text", "--group", "session", "--limit", "2"],
		tool: () => ["event_search", { kinds: ["user.text"], groupBy: "session", limit: 2 }],
		check: (json) => {
			expect(json.hits.map((h: any) => h.sessionId)).toEqual([IDS.sharedA, IDS.sharedB]);
			expect(json.coverage).toMatchObject({ truncated: true });
			expect(json.coverage.estimatedSessions).toBeGreaterThan(2);
		},
	},
	{
		name: "an empty query without a narrowing filter is still E_BAD_QUERY (a cwd does not narrow)",
		cli: (w) => ["search", "", "--cwd", w.project],
		tool: (w) => ["event_search", { query: "", cwd: w.project }],
		error: /the query is empty.*E_BAD_QUERY|the query is empty/,
	},
	// The session list.
	{
		name: "sessions: the sessions in scope, most recently active first, with their first request",
		cli: () => ["sessions"],
		tool: () => ["event_sessions", {}],
		check: (json) => {
			const ids = json.sessions.map((s: any) => s.sessionId);
			expect(ids).toEqual([IDS.sharedA, IDS.sharedB, IDS.long, IDS.flakyTwo, IDS.files, IDS.quoted, IDS.flaky, IDS.branchy]);
			expect(json.total).toBe(8);
			expect(json.truncated).toBe(false);
			const two = json.sessions.find((s: any) => s.sessionId === IDS.flakyTwo);
			expect(two).toMatchObject({
				name: null,
				firstTimestamp: "2026-11-05T10:00:00.000Z",
				lastTimestamp: "2026-11-05T10:02:00.000Z",
				entryCount: 2,
				firstUserMessage: "is flakytest fixed now?",
			});
			expect(json.sessions.find((s: any) => s.sessionId === IDS.long).firstUserMessage).toBeNull();
		},
		text: (text, _runner, w) => {
			expect(text).toContain("is flakytest fixed now?");
			expect(text).toContain(IDS.flakyTwo);
			expect(text).not.toContain(w.sessions);
		},
	},
	{
		name: "sessions --since and --limit",
		cli: () => ["sessions", "--since", "2026-11-05", "--limit", "2"],
		tool: () => ["event_sessions", { since: "2026-11-05", limit: 2 }],
		check: (json) => {
			expect(json.sessions.map((s: any) => s.sessionId)).toEqual([IDS.sharedA, IDS.sharedB]);
			expect(json).toMatchObject({ total: 4, truncated: true });
		},
	},
	// Conversation-only neighbours.
	{
		name: "read --only conversation counts neighbours among user and assistant text only",
		cli: () => ["read", IDS.flaky, "fl-a9", "--before", "2", "--only", "conversation"],
		tool: () => ["event_read", { sessionId: IDS.flaky, entryId: "fl-a9", before: 2, only: "conversation" }],
		check: (json) => {
			expect(json.neighbours.before.map((e: any) => e.entryId)).toEqual(["fl-u1"]);
			expect(json.neighbours.only).toBe("conversation");
		},
		text: (text) => expect(text).toContain("conversation only"),
	},
	{
		name: "read without --only counts every entry (the default is unchanged)",
		cli: () => ["read", IDS.flaky, "fl-a9", "--before", "2"],
		tool: () => ["event_read", { sessionId: IDS.flaky, entryId: "fl-a9", before: 2 }],
		check: (json) => expect(json.neighbours.before.map((e: any) => e.entryId)).toEqual(["fl-a3", "fl-r3"]),
	},
	{
		name: "read --only conversation in branch order skips tool calls and results along the path",
		cli: () => ["read", IDS.flaky, "fl-a9", "--before", "1", "--order", "branch", "--only", "conversation"],
		tool: () => ["event_read", { sessionId: IDS.flaky, entryId: "fl-a9", before: 1, order: "branch", only: "conversation" }],
		check: (json) => expect(json.neighbours.before.map((e: any) => e.entryId)).toEqual(["fl-u1"]),
	},
	// Session id prefixes.
	{
		name: "read accepts a unique 8-character prefix of a session id",
		cli: () => ["read", IDS.quoted.slice(0, 8), "q-u1"],
		tool: () => ["event_read", { sessionId: IDS.quoted.slice(0, 8), entryId: "q-u1" }],
		check: (json) => expect(json.event.sessionId).toBe(IDS.quoted),
	},
	{
		name: "trace accepts a unique prefix",
		cli: () => ["trace", IDS.files.slice(0, 10), "fi-a1"],
		tool: () => ["event_trace", { sessionId: IDS.files.slice(0, 10), entryId: "fi-a1" }],
		check: (json) => expect(json.target.sessionId).toBe(IDS.files),
	},
	{
		name: "--session accepts a unique prefix",
		cli: () => ["search", "quokka", "--session", IDS.quoted.slice(0, 8)],
		tool: () => ["event_search", { query: "quokka", sessionId: IDS.quoted.slice(0, 8) }],
		check: (json) => expect(keys(json)).toEqual(["9a0e7e00/q-u1"]),
	},
	{
		name: "an ambiguous prefix is an error listing only the candidates in scope",
		cli: () => ["read", "5a4ed000", "sh-aaaa"],
		tool: () => ["event_read", { sessionId: "5a4ed000", entryId: "sh-aaaa" }],
		error: new RegExp(`ambiguous in your scope: ${IDS.sharedA}, ${IDS.sharedB}(?![^\\n]*${IDS.sharedOut})`),
	},
	{
		name: "a prefix matching only a session outside the scope fails like one matching nothing",
		cli: () => ["read", IDS.outOnly.slice(0, 8), "sh-0000"],
		tool: () => ["event_read", { sessionId: IDS.outOnly.slice(0, 8), entryId: "sh-0000" }],
		error: new RegExp(`^(pi-events: |event_read failed: )no event "sh-0000" in session "${IDS.outOnly.slice(0, 8)}" in your scope`),
	},
	{
		name: "a prefix shorter than 8 characters is not expanded",
		cli: () => ["read", IDS.quoted.slice(0, 7), "q-u1"],
		tool: () => ["event_read", { sessionId: IDS.quoted.slice(0, 7), entryId: "q-u1" }],
		error: /no event "q-u1" in session "9a0e7e0" in your scope/,
	},
];

let world: World;
let server: RawServer;

beforeAll(async () => {
	world = makeWorld();
	const first = runBinary(world, ["index", "--json"]);
	if (first.exitCode !== 0) throw new Error(`index failed: ${first.stderr}`);
	server = startServer(world);
});

afterAll(() => {
	server?.kill();
	cleanupTempDirs();
});

function verify(c: Case, out: Outcome, runner: string): void {
	if (c.error) {
		expect({ runner, exitCode: out.exitCode }).toEqual({ runner, exitCode: 2 });
		expect(out.error).toMatch(c.error);
		return;
	}
	if (out.exitCode === 2) throw new Error(`${runner} failed: ${out.error}`);
	c.check?.(out.json, world);
	c.text?.(out.text, runner as "cli" | "mcp", world);
	c.notes?.(out.notes);
}

for (const c of CASES) {
	describe(c.name, () => {
		test("CLI", () => verify(c, cliOutcome(world, c.cli(world)), "cli"));
		test("MCP", async () => {
			const [name, args] = c.tool(world);
			verify(c, await mcpOutcome(world, server, name, args), "mcp");
		});
	});
}

describe("CLI only", () => {
	test("--paths shows each hit's session file and line", () => {
		const r = runBinary(world, ["search", "quokka", "--paths"]);
		expect(r.exitCode).toBe(0);
		expect(r.stdout).toContain(`${world.sessions}/${IDS.quoted}.jsonl:2`);
	});
});
