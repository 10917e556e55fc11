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
	text?: (text: string, w: World) => void;
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
		text: (text, w) => {
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
			expect(json.coverage).toMatchObject({ estimatedMatches: 4, matchesExact: true, estimatedSessions: 1, truncated: true });
		},
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
	c.text?.(out.text, world);
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
