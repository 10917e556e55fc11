/**
 * Authorization: the pure path rules (isWithin, normalizeAbsolute), the caller's root
 * (resolveRoot: explicit root, Git worktree root via a `.git` dir or file, else the cwd), which
 * sessions a real index reveals for a root (prefix collisions, trailing slashes, `..`, relative
 * and missing cwds, symlinks into and out of the root, case and Unicode-normalisation variants,
 * LIKE wildcards in the root), and current-session exclusion with its invocation cutoff.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chownSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join, posix } from "node:path";
import { isWithin, normalizeAbsolute, type Scope, sessionInScope } from "../../src/auth/scope.ts";
import { resolveRoot } from "../../src/config.ts";
import { PiEventsError } from "../../src/errors.ts";
import { makeGitDir, makeLinkedGitDir, makeRepo } from "../helpers/git.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { assistantEntry, buildIndex, ids, oneMessageSession, run, type TestIndex, toolResultEntry, userEntry, writeSession } from "../query/helpers.ts";

afterAll(cleanupTempDirs);

describe("normalizeAbsolute", () => {
	test.each([
		["/a/b", "/a/b"],
		["/a/b/", "/a/b"],
		["/a/b///", "/a/b"],
		["//a//b", "/a/b"],
		["/a/./b", "/a/b"],
		["/a/b/.", "/a/b"],
		["/a/b/../c", "/a/c"],
		["/a/b/..", "/a"],
		["/..", "/"],
		["/../a", "/a"],
		["/", "/"],
		["//", "/"],
		["/a/b/c/../../..", "/"],
	])("%s → %s", (input, expected) => {
		expect(normalizeAbsolute(input)).toBe(expected);
	});

	test("equals posix.normalize without trailing slashes on every path of up to 7 characters from / . a é", () => {
		const alphabet = ["/", ".", "a", "\u00e9"];
		let paths = ["/"];
		let checked = 0;
		for (let length = 1; length <= 7; length++) {
			for (const p of paths) {
				const expected = posix.normalize(p).replace(/(.)\/+$/, "$1");
				if (normalizeAbsolute(p) !== expected) expect({ p, got: normalizeAbsolute(p) }).toEqual({ p, got: expected });
				checked++;
			}
			paths = paths.flatMap((p) => alphabet.map((c) => p + c));
		}
		expect(checked).toBe((4 ** 7 - 1) / 3);
	});

	test.each([["a/b"], ["./a"], ["../a"], [""], ["~/x"], ["."], ["C:\\x"]])("relative %s → null", (input) => {
		expect(normalizeAbsolute(input)).toBeNull();
	});
});

describe("isWithin", () => {
	test.each([
		// [path, root, within]
		["/a/b", "/a/b", true],
		["/a/b/c", "/a/b", true],
		["/a/b/c/d", "/a/b", true],
		["/a/bc", "/a/b", false],
		["/a/b-extra", "/a/b", false],
		["/a/b.d", "/a/b", false],
		["/a", "/a/b", false],
		["/a/c", "/a/b", false],
		["/a/b/", "/a/b", true],
		["/a/b", "/a/b/", true],
		["/a/b//c", "/a/b", true],
		["/a//b", "/a/b", true],
		["/a/b/./c", "/a/b", true],
		["/a/b/c/..", "/a/b", true],
		["/a/b/..", "/a/b", false],
		["/a/b/../bc", "/a/b", false],
		["/a/b/../../a/b/x", "/a/b", true],
		["/a/c/../b/x", "/a/b", true],
		["/x/y", "/", true],
		["/", "/", true],
		["/a/b", "/a/b/c", false],
		["/A/B", "/a/b", false],
		["/a/B/c", "/a/b", false],
		["/a/cafe\u0301", "/a/caf\u00e9", false],
		["/a/caf\u00e9/x", "/a/cafe\u0301", false],
		["/a/b%/c", "/a/b%", true],
		["/a/bx/c", "/a/b_", false],
		["/a/bx/c", "/a/b%", false],
	])("%s within %s → %s", (path, root, expected) => {
		expect(isWithin(path, root)).toBe(expected);
	});

	test.each([["a/b"], ["b"], ["./a/b"], ["../a/b"], [""]])("relative path %s is never within anything", (path) => {
		expect(isWithin(path, "/")).toBe(false);
		expect(isWithin(path, "/a/b")).toBe(false);
	});

	test("null is never within, a relative root admits nothing", () => {
		expect(isWithin(null, "/")).toBe(false);
		expect(isWithin("/a/b", "a")).toBe(false);
		expect(isWithin("a/b", "a")).toBe(false);
	});

	test("sessionInScope: null roots admit everything, [] admits nothing, several roots are a union", () => {
		expect(sessionInScope({ roots: null, current: null }, null)).toBe(true);
		expect(sessionInScope({ roots: [], current: null }, "/a")).toBe(false);
		const scope: Scope = { roots: ["/a/b", "/x"], current: null };
		expect(sessionInScope(scope, "/a/b/c")).toBe(true);
		expect(sessionInScope(scope, "/x/y")).toBe(true);
		expect(sessionInScope(scope, "/a/bc")).toBe(false);
		expect(sessionInScope(scope, null)).toBe(false);
	});
});

describe("resolveRoot", () => {
	const base = realpathSync(makeTempDir("pi-events-root-"));
	const repo = join(base, "repo");
	const worktree = join(base, "worktree");
	const nestedWt = join(repo, "sub", "wt");
	const plain = join(base, "plain", "deep");
	makeRepo(repo);
	// The Git directories the linked worktrees' .git files name (a gitdir must be one Git accepts).
	for (const wt of ["wt", "wt2"]) makeLinkedGitDir(join(repo, ".git"), wt);
	mkdirSync(join(repo, "a", "b"), { recursive: true });
	mkdirSync(join(worktree, "src", "lib"), { recursive: true });
	writeFileSync(join(worktree, ".git"), `gitdir: ${join(repo, ".git", "worktrees", "wt")}\n`);
	mkdirSync(join(nestedWt, "x"), { recursive: true });
	writeFileSync(join(nestedWt, ".git"), "gitdir: ../../.git/worktrees/wt2\n");
	mkdirSync(plain, { recursive: true });
	symlinkSync(join(repo, "a"), join(base, "link-to-repo-a"));

	test("the nearest ancestor with a .git directory", () => {
		expect(resolveRoot(join(repo, "a", "b"), null)).toBe(repo);
		expect(resolveRoot(repo, null)).toBe(repo);
	});

	test("a .git file naming a missing or non-Git directory does not count", () => {
		const planted = join(base, "planted");
		mkdirSync(join(planted, "inner"), { recursive: true });
		mkdirSync(join(planted, "empty"), { recursive: true });
		for (const content of ["gitdir: /nonexistent\n", "gitdir: empty\n", "junk\n"]) {
			writeFileSync(join(planted, ".git"), content);
			expect(resolveRoot(join(planted, "inner"), null)).toBe(join(planted, "inner"));
		}
	});

	test("a .git directory Git would not accept does not count (empty; HEAD alone; no objects or refs)", () => {
		const outer = makeRepo(join(base, "outer-repo"));
		const inner = join(outer, "planted", "inner");
		mkdirSync(inner, { recursive: true });
		const dotGit = join(outer, "planted", ".git");
		mkdirSync(dotGit, { recursive: true });
		// The walk goes on past it, as Git's does: the enclosing real repository is the root.
		expect(resolveRoot(inner, null)).toBe(outer);
		writeFileSync(join(dotGit, "HEAD"), "ref: refs/heads/main\n");
		expect(resolveRoot(inner, null)).toBe(outer);
		mkdirSync(join(dotGit, "objects"));
		expect(resolveRoot(inner, null)).toBe(outer);
		mkdirSync(join(dotGit, "refs"));
		expect(resolveRoot(inner, null)).toBe(join(outer, "planted"));
		writeFileSync(join(dotGit, "HEAD"), "junk\n");
		expect(resolveRoot(inner, null)).toBe(outer);
	});

	// Ownership can only be given away by root (chown); as another account the case cannot be made.
	const asRoot = process.geteuid?.() === 0;
	const NOBODY = 65534;

	test.skipIf(!asRoot)("a repository owned by another account does not count, and stops the walk (Git: dubious ownership)", () => {
		const outer = makeRepo(join(base, "owned-outer"));
		const theirs = join(outer, "theirs");
		const inner = join(theirs, "inner");
		mkdirSync(inner, { recursive: true });
		makeRepo(theirs);
		expect(resolveRoot(inner, null)).toBe(theirs);
		// Their .git directory: not a root, and the walk stops (Git refuses to go on, so the cwd is the root).
		chownSync(join(theirs, ".git"), NOBODY, NOBODY);
		expect(resolveRoot(inner, null)).toBe(inner);
		chownSync(join(theirs, ".git"), 0, 0);
		// Their worktree directory holding my .git: the same.
		chownSync(theirs, NOBODY, NOBODY);
		expect(resolveRoot(inner, null)).toBe(inner);
		chownSync(theirs, 0, 0);
		expect(resolveRoot(inner, null)).toBe(theirs);
	});

	test.skipIf(!asRoot)("a .git file naming a Git directory owned by another account does not count", () => {
		const dir = join(base, "points-at-theirs");
		const inner = join(dir, "inner");
		mkdirSync(inner, { recursive: true });
		const gitDir = makeGitDir(join(base, "their-git-dir"));
		writeFileSync(join(dir, ".git"), `gitdir: ${gitDir}\n`);
		expect(resolveRoot(inner, null)).toBe(dir);
		chownSync(gitDir, NOBODY, NOBODY);
		expect(resolveRoot(inner, null)).toBe(inner);
		chownSync(gitDir, 0, 0);
		// The .git file itself planted by another account.
		chownSync(join(dir, ".git"), NOBODY, NOBODY);
		expect(resolveRoot(inner, null)).toBe(inner);
	});

	test("a .git FILE (linked worktree) counts", () => {
		expect(resolveRoot(join(worktree, "src", "lib"), null)).toBe(worktree);
		expect(resolveRoot(worktree, null)).toBe(worktree);
	});

	test("the nearest one wins: a worktree inside a repository", () => {
		expect(resolveRoot(join(nestedWt, "x"), null)).toBe(nestedWt);
		expect(resolveRoot(join(repo, "sub"), null)).toBe(repo);
	});

	test("outside Git: the canonical cwd itself", () => {
		expect(resolveRoot(plain, null)).toBe(plain);
		expect(resolveRoot(`${plain}/`, null)).toBe(plain);
		expect(resolveRoot(`${plain}/../deep`, null)).toBe(plain);
	});

	test("a cwd reached through a symlink resolves to the real repository root", () => {
		expect(resolveRoot(join(base, "link-to-repo-a"), null)).toBe(repo);
	});

	test("an explicit absolute root wins over Git and is canonicalised", () => {
		expect(resolveRoot(join(repo, "a", "b"), join(repo, "a"))).toBe(join(repo, "a"));
		expect(resolveRoot(plain, `${repo}/a/b/../`)).toBe(join(repo, "a"));
		expect(resolveRoot(plain, join(base, "link-to-repo-a"))).toBe(join(repo, "a"));
	});

	test("an explicit relative root is an error", () => {
		for (const rel of ["repo", "./repo", "../x", "~/x"]) {
			let err: unknown;
			try {
				resolveRoot(base, rel);
			} catch (e) {
				err = e;
			}
			expect(err).toBeInstanceOf(PiEventsError);
			expect((err as PiEventsError).code).toBe("E_USAGE");
		}
	});
});

describe("search authorization over a real index", () => {
	// base/Proj_café is the root: it has a LIKE wildcard (_) and a non-ASCII letter (é, NFC).
	const base = realpathSync(makeTempDir("pi-events-auth-"));
	const root = join(base, "Proj_caf\u00e9");
	const outside = join(base, "outside");
	const sessions = join(base, "sessions");

	/** word → [cwd or undefined, visible under root?] */
	const CASES: Record<string, [string | undefined, boolean]> = {
		wroot: [root, true],
		wchild: [join(root, "child"), true],
		wgrandchild: [join(root, "child", "deeper"), true],
		wmissingdir: [join(root, "never-created"), true],
		wextra: [`${root}-extra`, false],
		wextrachild: [`${root}-extra/child`, false],
		wsibling: [`${root}x`, false],
		wtrailing: [`${root}/`, true],
		wtrailingchild: [`${root}/child//`, true],
		wdoubleslash: [`${root}//child`, true],
		wdotin: [`${root}/./child/../child`, true],
		wdotdotin: [`${outside}/../Proj_caf\u00e9/child`, true],
		wdotdotout: [`${root}/child/../../outside`, false],
		wdotdotparent: [`${root}/..`, false],
		wrelative: ["Proj_caf\u00e9/child", false],
		wdotrelative: ["./child", false],
		wempty: ["", false],
		wnocwd: [undefined, false],
		wsymin: [join(base, "link-into-root"), true],
		wsyminchild: [join(base, "link-into-root", "deeper"), true],
		wsymout: [join(root, "link-out"), false],
		wsymoutchild: [join(root, "link-out", "inner-child"), false],
		wwildcard: [join(base, "ProjXcaf\u00e9", "child"), false],
		wcaseroot: [join(base, "proj_caf\u00e9"), false],
		wcaseupper: [join(base, "PROJ_CAF\u00c9"), false],
		wcasechild: [join(base, "proj_caf\u00e9", "child"), false],
		wcaseupperchild: [join(base, "PROJ_CAF\u00e9", "child"), false],
		wnfdroot: [join(base, "Proj_cafe\u0301"), false],
		wnfdchild: [join(base, "Proj_cafe\u0301", "child"), false],
		woutside: [outside, false],
		wslash: ["/", false],
	};

	let idx: TestIndex;
	const scope: Scope = { roots: [root], current: null };

	beforeAll(() => {
		for (const d of [
			join(root, "child", "deeper"),
			`${root}-extra/child`,
			`${root}x`,
			join(outside, "inner", "inner-child"),
			join(base, "ProjXcaf\u00e9", "child"),
			join(base, "proj_caf\u00e9", "child"),
			join(base, "PROJ_CAF\u00c9"),
			join(base, "PROJ_CAF\u00e9", "child"),
			join(base, "Proj_cafe\u0301", "child"),
		]) {
			mkdirSync(d, { recursive: true });
		}
		// A symlink outside the root that points into it, and one under the root that points out.
		symlinkSync(join(root, "child"), join(base, "link-into-root"));
		symlinkSync(join(outside, "inner"), join(root, "link-out"));
		Object.entries(CASES).forEach(([word, [cwd]], i) => {
			const id = `0000bbbb-0000-4000-8000-${String(i).padStart(12, "0")}`;
			writeSession(sessions, oneMessageSession(id, cwd, `authword ${word}`), word);
		});
		idx = buildIndex([sessions]);
	});
	afterAll(() => idx?.close());

	const wordsFound = (s: Scope) =>
		run(idx.db, "authword", {}, { scope: s })
			.hits.map((h) => h.snippet.split(" ")[1]!)
			.sort();

	test("the root (names with _ and é) exists as a real directory and is canonical", () => {
		expect(realpathSync(root)).toBe(root);
		expect(resolveRoot(join(root, "child"), root)).toBe(root);
	});

	test("every session is indexed", () => {
		expect(wordsFound({ roots: null, current: null })).toEqual(Object.keys(CASES).sort());
	});

	for (const [word, [cwd, visible]] of Object.entries(CASES)) {
		test(`${word}: cwd ${JSON.stringify(cwd)} is ${visible ? "visible" : "hidden"}`, () => {
			const found = wordsFound(scope);
			if (visible) expect(found).toContain(word);
			else expect(found).not.toContain(word);
		});
	}

	test("exactly the expected set is visible", () => {
		const expected = Object.entries(CASES)
			.filter(([, [, v]]) => v)
			.map(([w]) => w)
			.sort();
		expect(wordsFound(scope)).toEqual(expected);
	});

	test("search and exact-read authorization agree for every session", () => {
		const rows = idx.db.query("SELECT session_id, cwd_real FROM sessions").all() as { session_id: string; cwd_real: string | null }[];
		const searchable = new Set(run(idx.db, "authword", {}, { scope }).hits.map((h) => h.sessionId));
		for (const r of rows) {
			expect({ session: r.session_id, cwd: r.cwd_real, visible: searchable.has(r.session_id) }).toEqual({
				session: r.session_id,
				cwd: r.cwd_real,
				visible: sessionInScope(scope, r.cwd_real),
			});
		}
	});

	test("every hit's canonical cwd lies within the root", () => {
		for (const h of run(idx.db, "authword", {}, { scope }).hits) {
			const real = idx.db.query("SELECT cwd_real FROM sessions WHERE session_id = ?1").get(h.sessionId) as { cwd_real: string };
			expect(isWithin(real.cwd_real, root)).toBe(true);
		}
	});

	test("a root of / admits every absolute cwd but never a relative or missing one", () => {
		const found = wordsFound({ roots: ["/"], current: null });
		expect(found).not.toContain("wrelative");
		expect(found).not.toContain("wdotrelative");
		expect(found).not.toContain("wnocwd");
		expect(found).not.toContain("wempty");
		expect(found).toContain("woutside");
		expect(found).toContain("wslash");
		expect(found).toContain("wcasechild");
	});

	test("no roots admit nothing; several roots are a union", () => {
		expect(run(idx.db, "authword", {}, { scope: { roots: [], current: null } }).hits).toEqual([]);
		const both = wordsFound({ roots: [join(root, "child"), `${root}-extra`], current: null });
		expect(both).toContain("wchild");
		expect(both).toContain("wextra");
		expect(both).toContain("wextrachild");
		expect(both).not.toContain("wroot");
	});

	test("filters cannot widen the scope: cwdPrefix and sessionIds outside the root find nothing", () => {
		expect(run(idx.db, "authword", { cwdPrefix: `${root}-extra` }, { scope }).hits).toEqual([]);
		const extraId = (idx.db.query("SELECT session_id FROM sessions WHERE cwd = ?1").get(`${root}-extra`) as { session_id: string }).session_id;
		expect(run(idx.db, "authword", { sessionIds: [extraId] }, { scope }).hits).toEqual([]);
	});
});

describe("current-session exclusion and the invocation cutoff", () => {
	const base = realpathSync(makeTempDir("pi-events-current-"));
	const root = join(base, "ws");
	const sessions = join(base, "sessions");
	const X = "0000cccc-0000-4000-8000-000000000001";
	const Y = "0000cccc-0000-4000-8000-000000000002";
	const Z = "0000cccc-0000-4000-8000-000000000003"; // outside the root
	const N = "0000cccc-0000-4000-8000-000000000004"; // no tool calls at all
	const t = (s: number) => `2026-10-02T10:00:${String(s).padStart(2, "0")}.000Z`;
	let xFile = "";
	let idx: TestIndex;

	beforeAll(() => {
		mkdirSync(root, { recursive: true });
		xFile = writeSession(sessions, {
			id: X,
			cwd: root,
			entries: [
				userEntry("x-u1", null, t(1), "cutoffword alpha"), // seq 0
				{ type: "session_info", id: "x-n1", parentId: "x-u1", timestamp: t(1), name: "Early name" }, // seq 1
				assistantEntry("x-a1", "x-n1", t(2), "cutoffword beta", [{ id: "tc1", name: "bash", arguments: { command: "ls cutoffword" } }]), // seq 2
				toolResultEntry("x-r1", "x-a1", t(3), "tc1", "bash", "cutoffword gamma"), // seq 3
				assistantEntry("x-a2", "x-r1", t(4), "cutoffword delta", [
					{ id: "tc2a", name: "read", arguments: { path: "cutoffword.txt" } },
					{ id: "tc2", name: "event_search", arguments: { query: "cutoffword" } },
				]), // seq 4: the invoking call
				toolResultEntry("x-r2a", "x-a2", t(5), "tc2a", "read", "cutoffword epsilon"), // seq 5
				toolResultEntry("x-r2", "x-r2a", t(6), "tc2", "event_search", "cutoffword zeta"), // seq 6
				assistantEntry("x-a3", "x-r2", t(7), "cutoffword eta"), // seq 7: no tool calls
				{ type: "session_info", id: "x-n2", parentId: "x-a3", timestamp: t(8), name: "Renamed later" }, // seq 8
			],
		});
		writeSession(sessions, oneMessageSession(Y, join(root, "sub"), "cutoffword other"));
		writeSession(sessions, oneMessageSession(Z, join(base, "elsewhere"), "cutoffword outside"));
		writeSession(sessions, {
			id: N,
			cwd: root,
			entries: [userEntry("n-u1", null, t(1), "cutoffword plain"), assistantEntry("n-a1", "n-u1", t(2), "cutoffword reply")],
		});
		idx = buildIndex([sessions]);
	});
	afterAll(() => idx?.close());

	const current = (c: Partial<NonNullable<Scope["current"]>>): Scope => ({
		roots: [root],
		current: { sessionId: null, sessionFile: null, toolCallId: null, ...c },
	});
	const found = (scope: Scope, sessionIds?: string[]) =>
		ids(run(idx.db, "cutoffword", sessionIds ? { sessionIds } : {}, { scope, includeDerived: true })).sort();
	const xs = (...entries: string[]) => entries.map((e) => `${X}/${e}`).sort();

	test("without a current session everything in the root is visible", () => {
		const all = found({ roots: [root], current: null });
		expect(all).toEqual([...xs("x-u1", "x-a1", "x-r1", "x-a2", "x-r2a", "x-r2", "x-a3"), `${Y}/u-0000cc`, `${N}/n-u1`, `${N}/n-a1`].sort());
	});

	test("the current session is excluded by default", () => {
		expect(found(current({ sessionId: X, toolCallId: "tc2" }))).toEqual([`${Y}/u-0000cc`, `${N}/n-u1`, `${N}/n-a1`].sort());
		expect(found(current({ sessionId: X }))).toEqual([`${Y}/u-0000cc`, `${N}/n-u1`, `${N}/n-a1`].sort());
	});

	test("targeted by sessionIds: only events before the entry holding the invoking tool call", () => {
		expect(found(current({ sessionId: X, toolCallId: "tc2" }), [X])).toEqual(xs("x-u1", "x-a1", "x-r1"));
		expect(found(current({ sessionId: X, toolCallId: "tc2a" }), [X])).toEqual(xs("x-u1", "x-a1", "x-r1"));
		expect(found(current({ sessionId: X, toolCallId: "tc1" }), [X])).toEqual(xs("x-u1"));
	});

	test("without a toolCallId the last assistant entry with tool calls is the cutoff", () => {
		expect(found(current({ sessionId: X }), [X])).toEqual(xs("x-u1", "x-a1", "x-r1"));
	});

	test("an unknown toolCallId hides the whole session (fail closed)", () => {
		expect(found(current({ sessionId: X, toolCallId: "not-indexed-yet" }), [X])).toEqual([]);
	});

	test("a current session with no tool calls at all, targeted without a toolCallId, shows nothing", () => {
		expect(found(current({ sessionId: N }), [N])).toEqual([]);
		expect(found(current({ sessionId: N }))).toEqual(
			[`${X}/x-u1`, `${X}/x-a1`, `${X}/x-r1`, `${X}/x-a2`, `${X}/x-r2a`, `${X}/x-r2`, `${X}/x-a3`, `${Y}/u-0000cc`].sort(),
		);
	});

	test("targeting the current session with other sessions: cutoff for it, everything for the others", () => {
		expect(found(current({ sessionId: X, toolCallId: "tc2" }), [X, Y])).toEqual([...xs("x-u1", "x-a1", "x-r1"), `${Y}/u-0000cc`].sort());
	});

	test("the cutoff never applies to other sessions", () => {
		expect(found(current({ sessionId: X, toolCallId: "tc1" }), [Y])).toEqual([`${Y}/u-0000cc`]);
	});

	test("targeting does not bypass the root", () => {
		expect(found(current({ sessionId: Z }), [Z])).toEqual([]);
		expect(found({ roots: [root], current: null }, [Z])).toEqual([]);
	});

	test("identification by session file only (PI_SESSION_FILE)", () => {
		expect(found(current({ sessionFile: xFile, toolCallId: "tc2" }))).toEqual([`${Y}/u-0000cc`, `${N}/n-u1`, `${N}/n-a1`].sort());
		expect(found(current({ sessionFile: xFile, toolCallId: "tc2" }), [X])).toEqual(xs("x-u1", "x-a1", "x-r1"));
		expect(found(current({ sessionFile: xFile }), [X])).toEqual(xs("x-u1", "x-a1", "x-r1"));
		expect(found(current({ sessionFile: xFile, toolCallId: "nope" }), [X])).toEqual([]);
	});

	test("an unindexed session file excludes nothing", () => {
		expect(found(current({ sessionFile: join(sessions, "unknown.jsonl") }))).toContain(`${X}/x-u1`);
	});

	test("the session id wins over the session file when both are given", () => {
		const yFile = join(sessions, `${Y}.jsonl`);
		expect(found(current({ sessionId: X, sessionFile: yFile, toolCallId: "tc2" }))).toEqual([`${Y}/u-0000cc`, `${N}/n-u1`, `${N}/n-a1`].sort());
	});

	test("hits from the targeted current session carry its name as of the cutoff", () => {
		const hits = run(idx.db, "cutoffword", { sessionIds: [X] }, { scope: current({ sessionId: X, toolCallId: "tc2" }) }).hits;
		expect(hits.length).toBe(3);
		for (const h of hits) expect(h.sessionName).toBe("Early name");
		expect(run(idx.db, "renamed later", { sessionIds: [X] }, { scope: current({ sessionId: X, toolCallId: "tc2" }) }).hits).toEqual([]);
		expect(ids(run(idx.db, "early name", { sessionIds: [X] }, { scope: current({ sessionId: X, toolCallId: "tc2" }) }))).toEqual([`${X}/x-n1`]);
		// Not the current session: the latest name.
		const plain = run(idx.db, "cutoffword", { sessionIds: [X] }, { scope: { roots: [root], current: null } }).hits;
		for (const h of plain) expect(h.sessionName).toBe("Renamed later");
	});

	test("an unscoped caller still gets the current-session exclusion", () => {
		const scope: Scope = { roots: null, current: { sessionId: X, sessionFile: null, toolCallId: "tc2" } };
		expect(found(scope)).not.toContain(`${X}/x-u1`);
		expect(found(scope, [X])).toEqual(xs("x-u1", "x-a1", "x-r1"));
	});
});
