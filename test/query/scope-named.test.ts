/**
 * The scope is named (issue 34, item 7): the session list and every empty search (with terms or
 * filters only) name the authorization root and how it was chosen, say plainly when the root holds
 * no session at all (and how to pick another, with nothing about sessions outside it); the list
 * marks sessions with abandoned branches and forks (their parent named only when it is in scope).
 * The root's source as resolveCaller decides it (flag, config, Git root, cwd). The CLI's text and JSON.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Scope } from "../../src/auth/scope.ts";
import { resolveCaller } from "../../src/gate/caller.ts";
import { noHitsLine, PICK_ROOT, renderSessions, sessionsHead } from "../../src/present/render.ts";
import { search } from "../../src/query/search/search.ts";
import { listSessions } from "../../src/query/sessions.ts";
import { type Setup, setupFixtures } from "../read-trace/setup.ts";
import { makeRepo } from "../helpers/git.ts";
import { type AgentLayout, cleanupTempDirs, makeAgentLayout, makeTempDir, runCli } from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

let s: Setup;
let layout: AgentLayout;
/** A session alone in its workspace (/work/demo/solo): the calling session in the tests below. */
const SOLO = "0badf0c0-0000-4000-8000-00000000501a";
beforeAll(() => {
	s = setupFixtures();
	const dir = join(s.sessions, "--work-demo-solo--");
	mkdirSync(dir, { recursive: true });
	const ts = "2026-11-20T09:00:00.000Z";
	writeFileSync(
		join(dir, "solo.jsonl"),
		`${[
			JSON.stringify({ type: "session", version: 3, id: SOLO, timestamp: ts, cwd: "/work/demo/solo" }),
			JSON.stringify({
				type: "message",
				id: "s1",
				parentId: null,
				timestamp: ts,
				message: { role: "user", content: [{ type: "text", text: "solo question" }] },
			}),
		].join("\n")}\n`,
	);
	s.sync();
	layout = makeAgentLayout();
});

const APP: Scope = { roots: ["/work/demo/app"], rootSource: "git", current: null };
const list = (scope: Scope, req: { sinceMs?: number } = {}) => listSessions(s.access(scope), { limit: 100, ...req });

describe("the session list names its scope", () => {
	test("the result carries the root and its source; the header names them", () => {
		const r = list(APP);
		expect(r.scope).toEqual({ roots: ["/work/demo/app"], rootSource: "git" });
		expect(r.emptyBecause).toBeNull();
		expect(sessionsHead(r, PICK_ROOT.cli)).toBe(`${r.sessions.length} of ${r.total} sessions under /work/demo/app (Git root), most recently active first`);
		expect(list({ roots: null, current: null }).scope).toEqual({ roots: null, rootSource: null });
	});

	test("a root with no sessions at all says so, shows how to pick another, and reveals nothing outside it", () => {
		const empty: Scope = { roots: ["/work/demo/nothing-here"], rootSource: "cwd", current: null };
		const r = list(empty);
		expect(r.sessions).toEqual([]);
		expect(r.total).toBe(0);
		expect(r.emptyBecause).toBe("no-sessions");
		const cli = sessionsHead(r, PICK_ROOT.cli);
		expect(cli).toBe(
			"there are no sessions under /work/demo/nothing-here (working directory) at all (only sessions started in the root or below are visible): pick another root with --root DIR, or use --all for every workspace",
		);
		expect(sessionsHead(r, PICK_ROOT.tool)).toContain("`root` in pi-events' config file");
		// No count or path of other workspaces' sessions.
		expect(`${cli}${JSON.stringify(r)}`).not.toMatch(/\/work\/demo\/(app|other)|[1-9]/);
	});

	test("a root that holds sessions, none in the time range, says that instead", () => {
		const r = list(APP, { sinceMs: Date.parse("2030-01-01") });
		expect(r.emptyBecause).toBe("time-range");
		expect(sessionsHead(r, PICK_ROOT.cli)).toBe("none of the sessions under /work/demo/app (Git root) was active in that time range: widen it");
	});
});

describe("empty searches name the scope", () => {
	const FORMS = { exact: false, exactFlag: "--exact", derivedFlag: "--include-derived", pick: PICK_ROOT.cli };
	const find = (scope: Scope, query: string, filters: Parameters<typeof search>[1]["filters"] = {}) => search(s.access(scope), { query, filters, limit: 10 });

	test("with terms: the root is named beside the reason", () => {
		const r = find(APP, "zzqq-nowhere");
		expect(r.scope).toEqual({ roots: ["/work/demo/app"], rootSource: "git" });
		expect(r.coverage.emptyBecause).toBe("terms");
		expect(noHitsLine("zzqq-nowhere", r.coverage, r.scope, FORMS)).toBe(
			'no hits for "zzqq-nowhere" in sessions under /work/demo/app (Git root): nothing in your scope contains "zzqq-nowhere" as typed (a term with a hyphen, digits or punctuation matches exactly: type its words apart for their other forms): check the spelling, try another word, or leave it out',
		);
	});

	test("filters only: the root is named, and the filters are what to loosen", () => {
		const r = find(APP, "", { isError: true, sinceMs: Date.parse("2030-01-01") });
		expect(r.coverage.emptyBecause).toBe("filters");
		expect(noHitsLine("", r.coverage, r.scope, FORMS)).toBe("no event matches the filters in sessions under /work/demo/app (Git root): loosen them");
	});

	test("a root with no sessions at all: said plainly, with how to pick another, and nothing outside it", () => {
		const empty: Scope = { roots: ["/work/demo/nothing-here"], rootSource: "cwd", current: null };
		for (const [query, filters] of [
			["ECONNREFUSED", {}],
			["", { isError: true }],
		] as const) {
			const r = find(empty, query, filters);
			expect(r.hits).toEqual([]);
			expect(r.coverage.emptyBecause).toBe("no-sessions");
			const line = noHitsLine(query, r.coverage, r.scope, FORMS);
			expect(line).toEndWith(
				"there are no sessions under /work/demo/nothing-here (working directory) at all (only sessions started in the root or below are visible): pick another root with --root DIR, or use --all for every workspace",
			);
			expect(`${line}${JSON.stringify(r)}`).not.toMatch(/\/work\/demo\/(app|other)/);
		}
	});

	test("the calling session alone in its root: left out of a search, the root holds none; named, it is searched", () => {
		const solo: Scope = { roots: ["/work/demo/solo"], rootSource: "git", current: { sessionId: SOLO, sessionFile: null, toolCallId: null } };
		expect(find(solo, "zzqq-nowhere").coverage.emptyBecause).toBe("no-sessions");
		expect(find(solo, "zzqq-nowhere", { sessionIds: [SOLO] }).coverage.emptyBecause).not.toBe("no-sessions");
		expect(list(solo).emptyBecause).toBe("no-sessions");
	});
});

describe("marks", () => {
	test("abandoned branches and forks, with the parent named only when it is in scope", () => {
		const byId = new Map(list(APP).sessions.map((x) => [x.sessionId, x]));
		const get = (name: string) => byId.get(s.fx(name).sessionId)!;
		expect(get("branched")).toMatchObject({ abandonedBranches: true, forked: false, parentSessionId: null });
		expect(get("basic")).toMatchObject({ abandonedBranches: false, forked: false, parentSessionId: null });
		expect(get("fork-child-forkfrom")).toMatchObject({ forked: true, parentSessionId: s.fx("fork-parent").sessionId });
		expect(get("fork-child-branched")).toMatchObject({ forked: true, parentSessionId: s.fx("fork-parent").sessionId });
		// The parent lives in /work/demo/other: the fork is marked, its parent not named.
		expect(get("fork-outside-root")).toMatchObject({ forked: true, parentSessionId: null });
		const text = renderSessions([get("branched"), get("fork-child-forkfrom"), get("fork-outside-root")], { color: false });
		expect(text).toContain("6 entries  [abandoned branches]");
		expect(text).toContain(`[abandoned branches, fork of ${s.fx("fork-parent").sessionId.slice(0, 8)}]`);
		expect(text).toMatch(/ \[fork\]/);
		// Seen from the parent's workspace, the same fork names it.
		const other = list({ roots: ["/work/demo/other", "/work/demo/app"], current: null }).sessions.find(
			(x) => x.sessionId === s.fx("fork-outside-root").sessionId,
		);
		expect(other?.parentSessionId).toBe(s.fx("fork-outside-parent").sessionId);
	});
});

describe("the root's source", () => {
	test("--root, the config file, the Git worktree root, the cwd", () => {
		const dir = makeTempDir("pi-events-root-source-");
		const repo = join(dir, "repo");
		makeRepo(repo);
		mkdirSync(join(repo, "sub"), { recursive: true });
		const plain = join(dir, "plain");
		mkdirSync(plain);
		const base = { configRoot: null, sessionId: null, sessionFile: null, toolCallId: null };
		expect(resolveCaller({ ...base, cwd: join(repo, "sub"), root: null }).rootSource).toBe("git");
		expect(resolveCaller({ ...base, cwd: plain, root: null }).rootSource).toBe("cwd");
		expect(resolveCaller({ ...base, cwd: plain, root: repo }).rootSource).toBe("flag");
		expect(resolveCaller({ ...base, cwd: plain, root: null, configRoot: repo }).rootSource).toBe("config");
		expect(resolveCaller({ ...base, cwd: plain, root: null, all: true })).toEqual({ roots: null, current: null });
	});
});

describe("the CLI", () => {
	const cli = (args: string[], cwd?: string) => runCli(layout, [...args, "--sessions-dir", s.sessions], { cwd });

	test("from a directory with no sessions: exit 1, the root named on stderr, JSON with scope and emptyBecause", () => {
		const cwd = makeTempDir("pi-events-empty-cwd-");
		const text = cli(["sessions"], cwd);
		expect(text.exitCode).toBe(1);
		expect(text.stdout).toBe("");
		expect(text.stderr).toContain(`pi-events: there are no sessions under ${cwd} (working directory) at all`);
		expect(text.stderr).toContain("--root DIR, or use --all");
		const json = cli(["sessions", "--json"], cwd).json();
		expect(json.scope).toEqual({ roots: [cwd], rootSource: "cwd" });
		expect(json.emptyBecause).toBe("no-sessions");
	});

	test("search from a directory with no sessions: exit 1, the root named on stderr; JSON with scope and emptyBecause", () => {
		const cwd = makeTempDir("pi-events-empty-cwd-");
		const text = cli(["search", "ECONNREFUSED"], cwd);
		expect(text.exitCode).toBe(1);
		expect(text.stdout).toBe("");
		expect(text.stderr).toContain(`pi-events: no hits for "ECONNREFUSED": there are no sessions under ${cwd} (working directory) at all`);
		const json = cli(["search", "ECONNREFUSED", "--json"], cwd).json();
		expect(json.scope).toEqual({ roots: [cwd], rootSource: "cwd" });
		expect(json.coverage.emptyBecause).toBe("no-sessions");
		const filtersOnly = cli(["search", "--error"], cwd);
		expect(filtersOnly.stderr).toContain(`pi-events: no event matches the filters: there are no sessions under ${cwd} (working directory) at all`);
	});

	test("a search with hits names the root it searched, and its hint to read a turn repeats --root only when it was given", () => {
		const r = cli(["search", "ECONNREFUSED", "--root", "/work/demo/app"]);
		expect(r.exitCode).toBe(0);
		expect(r.stderr).toMatch(/^pi-events: synced .*; searched sessions under \/work\/demo\/app \(--root\)$/m);
		const hint = r.stderr.match(/is answered\): pi-events (read \S+ \S+ --turn --turns 1 --root \/work\/demo\/app)\n/);
		expect(hint).not.toBeNull();
		// The hint runs as printed, from the same directory: the hit's turn and the one after it.
		const read = cli(hint![1]!.split(" "));
		expect(read.exitCode).toBe(0);
		expect(read.stdout).toMatch(/^=== turn( 1 of 2)?: prompt /m);
		expect(r.stderr.match(/--turn --turns 1/g)?.length).toBe(1);
	});

	test("with sessions: the first line names the root", () => {
		const r = cli(["sessions", "--root", "/work/demo/app", "--limit", "3"]);
		expect(r.exitCode).toBe(0);
		expect(r.stdout.split("\n")[0]).toMatch(/^3 of \d+ sessions under \/work\/demo\/app \(--root\), most recently active first:$/);
	});
});
