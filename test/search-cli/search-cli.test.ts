/**
 * `pi-events search` as a process: an isolated HOME / pi agent dir / XDG dirs in a temp dir,
 * copies of the fixtures via --sessions-dir. JSON fields, exit codes (0 hits, 1 none, 2 error),
 * stream discipline, default scoping from the cwd (Git worktree root, else the cwd), --root,
 * --all, the current session from PI_SESSION_ID / PI_SESSION_FILE, and --no-sync freshness.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import {
	type AgentLayout,
	cleanupTempDirs,
	type CliResult,
	isolatedEnv,
	LEGACY_FIXTURES,
	MAIN,
	PI_FIXTURES,
	piFixture,
	runCli,
	makeAgentLayout,
} from "../helpers/temp.ts";
import { makeRepo } from "../helpers/git.ts";
import { assistantEntry, oneMessageSession, toolResultEntry, userEntry, writeSession } from "../query/helpers.ts";

afterAll(cleanupTempDirs);

const basic = piFixture("basic");
const B = (entryId: string) => `${basic.sessionId}/${entryId}`;

let layout: AgentLayout;
let sessionsCopy: string;

/** Copy every pi fixture (flat) into a fresh directory; returns it. */
function copyFixtures(into: string): string {
	mkdirSync(into, { recursive: true });
	for (const name of readdirSync(PI_FIXTURES)) if (name.endsWith(".jsonl")) copyFileSync(join(PI_FIXTURES, name), join(into, name));
	return into;
}

function search(args: string[], opts: { env?: Record<string, string>; cwd?: string; sessionsDir?: string } = {}): CliResult {
	// --sessions-dir first: anything after a `--` in args is query text.
	return runCli(layout, ["search", "--sessions-dir", opts.sessionsDir ?? sessionsCopy, ...args], { env: opts.env, cwd: opts.cwd });
}

const hitKeys = (r: CliResult) => (r.json().hits as { sessionId: string; entryId: string }[]).map((h) => `${h.sessionId}/${h.entryId}`).sort();

beforeAll(() => {
	layout = makeAgentLayout();
	sessionsCopy = copyFixtures(join(layout.root, "fixture-sessions"));
	// Pre-build the index once so later calls only do incremental no-op syncs.
	const first = runCli(layout, ["index", "--sessions-dir", sessionsCopy, "--json"]);
	if (first.exitCode !== 0) throw new Error(`index failed: ${first.stderr}`);
});

describe("--json output", () => {
	test("hits carry the documented fields; freshness and coverage are reported", () => {
		const r = search(["ECONNREFUSED", "--all", "--json"]);
		expect(r.exitCode).toBe(0);
		const out = r.json();
		expect(out.hits.length).toBe(3);
		for (const h of out.hits) {
			expect(typeof h.sessionId).toBe("string");
			expect(typeof h.entryId).toBe("string");
			expect(typeof h.fragmentId).toBe("string");
			expect(typeof h.eventType).toBe("string");
			expect(typeof h.semanticKind).toBe("string");
			expect(h.role === null || typeof h.role === "string").toBe(true);
			expect(h.toolName === null || typeof h.toolName === "string").toBe(true);
			expect(typeof h.timestamp).toBe("string");
			expect(Number.isNaN(Date.parse(h.timestamp))).toBe(false);
			expect(h.cwd).toBe("/work/demo/app");
			expect(h.sessionFile).toBe(join(sessionsCopy, basic.file));
			expect(typeof h.snippet).toBe("string");
			expect(h.snippet).toContain("ECONNREFUSED");
			expect(h.snippet.slice(h.highlights[0][0], h.highlights[0][1])).toBe("ECONNREFUSED");
			expect(typeof h.score).toBe("number");
			expect(h.isError === null || typeof h.isError === "boolean").toBe(true);
			expect(["selected", "alternate", "unknown"]).toContain(h.branchState);
			expect(["conversation", "summary", "control", "metadata"]).toContain(h.contextRole);
			expect(["direct", "summarized", "not-selected", "not-applicable", "unknown"]).toContain(h.selectionState);
		}
		const write = out.hits.find((h: any) => h.entryId === basic.notes.writeErrorResult);
		expect(write).toMatchObject({
			sessionId: basic.sessionId,
			fragmentId: "tool.result#0",
			eventType: "message",
			semanticKind: "tool.result",
			role: "toolResult",
			toolName: "write",
			timestamp: "2026-11-02T09:00:35.996Z",
			isError: true,
			branchState: "selected",
			contextRole: "conversation",
			selectionState: "direct",
		});
		expect(out.freshness).toMatchObject({ synced: true, pendingFiles: 0, missingFiles: 0, problems: [] });
		expect(typeof out.freshness.syncMs).toBe("number");
		expect(typeof out.freshness.newDiagnostics).toBe("number");
		expect(typeof out.freshness.lastSyncAt).toBe("string");
		expect(out.coverage).toEqual({
			mode: "full",
			estimatedMatches: 3,
			matchesExact: true,
			estimatedSessions: 1,
			truncated: false,
			rankedShare: 1,
			filterOnly: false,
			ignoredTerms: [],
			emptyBecause: null,
			unmatchedTerms: [],
		});
	});

	test("stdout is exactly one JSON document; --json with no hits still prints it and exits 1", () => {
		const r = search(["zzqqxx-no-such-word", "--all", "--json"]);
		expect(r.exitCode).toBe(1);
		expect(r.json().hits).toEqual([]);
		expect(r.json().coverage.mode).toBe("full");
	});

	test("ignored terms are reported", () => {
		const ok = search(["--all", "--json", "--", "ECONNREFUSED", "--", "'"]);
		expect(ok.exitCode).toBe(0);
		expect(ok.json().coverage.ignoredTerms).toEqual(["--", "'"]);
		// `--` ends the flags: everything after it is query text, even --all.
		const r = search(["--json", "--root", "/work/demo/app", "--", "ECONNREFUSED", "--all"]);
		expect(r.exitCode).toBe(1);
	});
});

describe("text output and exit codes", () => {
	test("hits on stdout, freshness on stderr, exit 0", () => {
		const r = search(["ECONNREFUSED", "--all"]);
		expect(r.exitCode).toBe(0);
		expect(r.stdout).toContain("«ECONNREFUSED»");
		expect(r.stdout).toContain(basic.sessionId);
		expect(r.stdout).not.toContain("synced");
		expect(r.stderr).toContain("synced");
	});

	test("no hits: exit 1, nothing on stdout, a message on stderr", () => {
		const r = search(["zzqqxx-no-such-word", "--all"]);
		expect(r.exitCode).toBe(1);
		expect(r.stdout).toBe("");
		expect(r.stderr).toContain("no hits");
	});

	test("a query starting with -- after the -- separator", () => {
		const r = search(["--all", "--json", "--", "--frozen-lockfile"]);
		expect(r.exitCode).toBe(0);
		expect(hitKeys(r)).toEqual([B(basic.notes.bashExecution)]);
	});

	const errors: [string, string[], RegExp][] = [
		["missing query", ["--all"], /QUERY|query/],
		["empty query", ["", "--all"], /empty/],
		["blank query", ["   ", "--all"], /empty/],
		["nothing searchable", ["*", "--all"], /letters or digits/],
		["too long", ["x".repeat(2001), "--all"], /2001/],
		["--limit 0", ["x", "--all", "--limit", "0"], /--limit/],
		["--limit 101", ["x", "--all", "--limit", "101"], /--limit/],
		["--limit abc", ["x", "--all", "--limit", "abc"], /--limit/],
		["--limit 1.5", ["x", "--all", "--limit", "1.5"], /--limit/],
		["unknown flag", ["x", "--all", "--bogus"], /unknown option --bogus/],
		["unknown flag with value", ["x", "--all", "--kinds=tool.call"], /unknown option --kinds/],
		["bad --since", ["x", "--all", "--since", "yesterday"], /since/],
		["bad --until", ["x", "--all", "--until", "3 days"], /until/],
		["since after until", ["x", "--all", "--since", "1d", "--until", "2d"], /since must be earlier/],
		["bad --kind", ["x", "--all", "--kind", "tool.bogus"], /kind: unknown value "tool.bogus"/],
		["bad --branch", ["x", "--all", "--branch", "current"], /branch/],
		["bad --selection", ["x", "--all", "--selection", "active"], /selection/],
		["relative --root", ["x", "--root", "relative/dir"], /--root must be an absolute path/],
		["--file without a value", ["x", "--all", "--file"], /--file/],
	];
	test.each(errors)("%s: exit 2, a message on stderr, nothing on stdout", (_name, args, message) => {
		for (const json of [false, true]) {
			const r = search(json ? [...args, "--json"] : args);
			expect(r.exitCode).toBe(2);
			expect(r.stdout).toBe("");
			expect(r.stderr).toMatch(/^pi-events: /);
			expect(r.stderr).toMatch(message);
			// Never a stack trace or SQL internals.
			expect(r.stderr).not.toMatch(/SQLite|sqlite|at .*\.ts:\d+/);
		}
	});

	test("a good --limit bounds the hits", () => {
		const r = search(["the", "--all", "--json", "--limit", "3"]);
		expect(r.exitCode).toBe(0);
		expect(r.json().hits.length).toBe(3);
		expect(search(["the", "--all", "--json", "--limit=100"]).json().hits.length).toBeGreaterThan(10);
		expect(search(["the", "--all", "--json"]).json().hits.length).toBe(10);
	});

	test("filter flags reach the search", () => {
		expect(hitKeys(search(["ECONNREFUSED", "--all", "--json", "--error"]))).toEqual([B(basic.notes.writeErrorResult)]);
		expect(hitKeys(search(["ECONNREFUSED", "--all", "--json", "--no-error"]))).toEqual(
			[B(basic.notes.assistantAfterBash), B(basic.notes.finalAssistant)].sort(),
		);
		expect(hitKeys(search(["ECONNREFUSED", "--all", "--json", "--role", "toolResult"]))).toEqual([B(basic.notes.writeErrorResult)]);
		expect(hitKeys(search(["exit code 137", "--all", "--json", "--tool", "bash"]))).toEqual([B(basic.notes.bashToolResult)]);
		expect(hitKeys(search(["bun install", "--all", "--json", "--kind", "bash.output"]))).toEqual([B(basic.notes.bashExecution)]);
		expect(hitKeys(search(["staging", "--all", "--json", "--type", "custom_message"]))).toEqual([B(basic.notes.customMessage)]);
		expect(search(["ECONNREFUSED", "--all", "--json", "--since", "2026-11-03"]).exitCode).toBe(1);
		expect(search(["ECONNREFUSED", "--all", "--json", "--session", basic.sessionId]).json().hits.length).toBe(3);
	});
});

describe("scoping", () => {
	const cwds = (r: CliResult) => new Set((r.json().hits as { cwd: string }[]).map((h) => h.cwd));

	test("by default the scope is the cwd: a temp dir sees none of /work/demo/*", () => {
		const r = search(["the", "--json", "--limit", "100"], { cwd: layout.root });
		expect(r.exitCode).toBe(1);
		expect(r.json().hits).toEqual([]);
		const text = search(["ECONNREFUSED"], { cwd: layout.home });
		expect(text.exitCode).toBe(1);
		expect(text.stdout).toBe("");
	});

	test("--root /work/demo/app: app and app/packages/api, never app-extra", () => {
		const r = search(["the", "--json", "--limit", "100", "--root", "/work/demo/app"]);
		expect(r.exitCode).toBe(0);
		expect(cwds(r)).toEqual(new Set(["/work/demo/app", "/work/demo/app/packages/api"]));
		const trailing = search(["the", "--json", "--limit", "100", "--root", "/work/demo/app/"]);
		expect(cwds(trailing)).toEqual(new Set(["/work/demo/app", "/work/demo/app/packages/api"]));
	});

	test("--root /work/demo/app-extra sees only app-extra", () => {
		expect(cwds(search(["the", "--json", "--limit", "100", "--root", "/work/demo/app-extra"]))).toEqual(new Set(["/work/demo/app-extra"]));
	});

	test("--all sees every workspace", () => {
		expect(cwds(search(["the", "--json", "--limit", "100", "--all"]))).toEqual(
			new Set(["/work/demo/app", "/work/demo/app/packages/api", "/work/demo/app-extra", "/work/demo/other"]),
		);
	});

	test("--cwd narrows inside the scope but never widens it", () => {
		expect(cwds(search(["the", "--json", "--limit", "100", "--all", "--cwd", "/work/demo/app/packages/api"]))).toEqual(
			new Set(["/work/demo/app/packages/api"]),
		);
		const r = search(["the", "--json", "--limit", "100", "--root", "/work/demo/app", "--cwd", "/work/demo/app-extra"]);
		expect(r.exitCode).toBe(1);
	});

	test("the default root is the Git worktree root containing the cwd", () => {
		const repo = join(layout.root, "repo");
		makeRepo(repo);
		mkdirSync(join(repo, "pkg", "deep"), { recursive: true });
		mkdirSync(join(layout.root, "not-a-repo"), { recursive: true });
		const dir = join(layout.root, "repo-sessions");
		writeSession(dir, oneMessageSession("0000ffff-0000-4000-8000-000000000001", join(repo, "pkg"), "clirepoword inside"));
		writeSession(dir, oneMessageSession("0000ffff-0000-4000-8000-000000000002", `${repo}-other`, "clirepoword sibling"));
		const fromDeep = search(["clirepoword", "--json"], { cwd: join(repo, "pkg", "deep"), sessionsDir: dir });
		expect(fromDeep.exitCode).toBe(0);
		expect(hitKeys(fromDeep)).toEqual(["0000ffff-0000-4000-8000-000000000001/u-0000ff"]);
		const fromElsewhere = search(["clirepoword", "--json"], { cwd: join(layout.root, "not-a-repo"), sessionsDir: dir });
		expect(fromElsewhere.exitCode).toBe(1);
	});
});

describe("the current session", () => {
	test("PI_SESSION_ID excludes that session", () => {
		const without = search(["ECONNREFUSED", "--json", "--root", "/work/demo/app"]);
		expect(without.exitCode).toBe(0);
		const r = search(["ECONNREFUSED", "--json", "--root", "/work/demo/app"], { env: { PI_SESSION_ID: basic.sessionId } });
		expect(r.exitCode).toBe(1);
		expect(r.json().hits).toEqual([]);
		// Other sessions stay visible.
		const other = search(["step", "--json", "--root", "/work/demo/app"], { env: { PI_SESSION_ID: basic.sessionId } });
		expect(other.exitCode).toBe(0);
		expect((other.json().hits as { sessionId: string }[]).some((h) => h.sessionId === basic.sessionId)).toBe(false);
	});

	test("--session on the current session: only events before the last assistant entry with tool calls", () => {
		const r = search(["ECONNREFUSED", "--json", "--root", "/work/demo/app", "--session", basic.sessionId], {
			env: { PI_SESSION_ID: basic.sessionId },
		});
		expect(r.exitCode).toBe(0);
		expect(hitKeys(r)).toEqual([B(basic.notes.writeErrorResult)]);
	});

	test("--tool-call-id sets the cutoff at the invoking call", () => {
		const r = search(["src/auth/session.ts", "--json", "--root", "/work/demo/app", "--session", basic.sessionId, "--tool-call-id", basic.notes.editCall], {
			env: { PI_SESSION_ID: basic.sessionId },
		});
		expect(hitKeys(r)).toEqual([B(basic.notes.firstUser), B(basic.notes.assistantRead)].sort());
		const unknown = search(["src/auth/session.ts", "--json", "--root", "/work/demo/app", "--session", basic.sessionId, "--tool-call-id", "nope"], {
			env: { PI_SESSION_ID: basic.sessionId },
		});
		expect(unknown.exitCode).toBe(1);
	});

	test("PI_SESSION_FILE alone identifies the current session", () => {
		const r = search(["ECONNREFUSED", "--json", "--root", "/work/demo/app"], { env: { PI_SESSION_FILE: join(sessionsCopy, basic.file) } });
		expect(r.exitCode).toBe(1);
		const targeted = search(["ECONNREFUSED", "--json", "--root", "/work/demo/app", "--session", basic.sessionId], {
			env: { PI_SESSION_FILE: join(sessionsCopy, basic.file) },
		});
		expect(hitKeys(targeted)).toEqual([B(basic.notes.writeErrorResult)]);
	});

	test("--current-session flag works like PI_SESSION_ID", () => {
		const r = search(["ECONNREFUSED", "--json", "--root", "/work/demo/app", "--current-session", basic.sessionId]);
		expect(r.exitCode).toBe(1);
	});
});

describe("freshness", () => {
	test("--no-sync reports a new session file as pending and does not index it; a sync then finds it", () => {
		const dir = copyFixtures(join(layout.root, "fresh-sessions"));
		const first = search(["ECONNREFUSED", "--all", "--json"], { sessionsDir: dir });
		expect(first.exitCode).toBe(0);
		expect(first.json().freshness.pendingFiles).toBe(0);

		const X = "0000ffff-0000-4000-8000-0000000000aa";
		writeSession(dir, {
			id: X,
			cwd: "/work/demo/app",
			entries: [
				userEntry("n-u1", null, "2026-11-20T10:00:00.000Z", "freshnessword arrives later"),
				assistantEntry("n-a1", "n-u1", "2026-11-20T10:00:02.000Z", null, [{ id: "nc1", name: "bash", arguments: { command: "echo freshnessword" } }]),
				toolResultEntry("n-r1", "n-a1", "2026-11-20T10:00:03.000Z", "nc1", "bash", "freshnessword"),
			],
		});
		const stale = search(["freshnessword", "--all", "--json", "--no-sync"], { sessionsDir: dir });
		expect(stale.exitCode).toBe(1);
		const f = stale.json().freshness;
		expect(f.synced).toBe(false);
		expect(f.pendingFiles).toBe(1);
		expect(typeof f.lastSyncAt).toBe("string");
		const staleText = search(["freshnessword", "--all", "--no-sync"], { sessionsDir: dir });
		expect(staleText.stderr).toContain("1 changed session file not indexed yet");

		const synced = search(["freshnessword", "--all", "--json"], { sessionsDir: dir });
		expect(synced.exitCode).toBe(0);
		expect(synced.json().freshness).toMatchObject({ synced: true, pendingFiles: 0 });
		expect(hitKeys(synced)).toEqual([`${X}/n-a1`, `${X}/n-r1`, `${X}/n-u1`]);
		expect(search(["freshnessword", "--all", "--json", "--no-sync"], { sessionsDir: dir }).json().freshness.pendingFiles).toBe(0);
	});

	test("a legacy malformed file is reported as new diagnostics, not an error", () => {
		const dir = join(layout.root, "legacy-sessions");
		mkdirSync(dir, { recursive: true });
		copyFileSync(join(LEGACY_FIXTURES, "malformed-middle.jsonl"), join(dir, "malformed-middle.jsonl"));
		const r = search(["after-malformed-marker", "--all", "--json"], { sessionsDir: dir });
		expect(r.exitCode).toBe(0);
		expect(r.json().freshness.newDiagnostics).toBeGreaterThan(0);
	});
});

describe("output without Node streams (cli/out.ts)", () => {
	test("a reader that closes the pipe before the answer: the process ends quietly, with its exit code", async () => {
		const proc = Bun.spawn([process.execPath, MAIN, "search", "--sessions-dir", sessionsCopy, "ECONNREFUSED", "--all", "--json"], {
			cwd: layout.root,
			env: isolatedEnv(layout),
			stdout: "pipe",
			stderr: "pipe",
		});
		await proc.stdout.cancel();
		const code = await proc.exited;
		const stderr = await new Response(proc.stderr).text();
		expect(code).toBe(0);
		expect(stderr).toBe("");
	});

	test("a large answer arrives whole through a pipe", () => {
		const r = search(["the", "--all", "--json", "--limit", "100"]);
		expect(r.exitCode).toBe(0);
		const out = r.json<{ hits: unknown[] }>();
		expect(out.hits.length).toBeGreaterThan(10);
		expect(r.stdout.endsWith("}\n")).toBe(true);
	});
});
