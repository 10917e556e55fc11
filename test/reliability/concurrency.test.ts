/**
 * Concurrency and hostile index locations: two `index` runs at once on one index, `serve`
 * answering searches while `index` runs, an index whose location cannot be written, and a full
 * disk for the index (a 1 MiB tmpfs when this sandbox may mount one, and always SQLite's
 * max_page_count through test/reliability/full-disk-cli.ts). Around every test: pi's session
 * directories are byte-identical before and after (every file hashed, every listing, inode and
 * timestamp compared), so pi's files are never written.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { afterAll } from "bun:test";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openIndex } from "../../src/store/db.ts";
import { cleanupTempDirs, dumpIndex, snapshotTree, type TreeSnapshot } from "../helpers/temp.ts";
import { Mutator } from "./mutate.ts";
import {
	checkIntegrity,
	checkIndexFile,
	cleanDump,
	dumpDiff,
	frameProblem,
	generateCorpus,
	indexArgs,
	LONG,
	makeWorld,
	Rng,
	runCliAsync,
	Serve,
	seedFromEnv,
	sleep,
	type World,
} from "./util.ts";

afterAll(cleanupTempDirs);

const SEED = seedFromEnv(777);
const FULL_DISK_CLI = join(import.meta.dir, "full-disk-cli.ts");

// ---------------------------------------------------------------------------------------------
// The read-only proof around every test
// ---------------------------------------------------------------------------------------------

const guarded: { dir: string; before: TreeSnapshot }[] = [];
/** Snapshot `dir` now; afterEach asserts it is byte-identical (unless the test changes it itself, then call again). */
function guard(dir: string): void {
	const i = guarded.findIndex((g) => g.dir === dir);
	if (i >= 0) guarded.splice(i, 1);
	guarded.push({ dir, before: snapshotTree(dir) });
}
beforeEach(() => {
	guarded.length = 0;
});
/** Assert every guarded directory is byte-identical to its snapshot now. */
function checkGuards(): void {
	for (const g of guarded) expect(snapshotTree(g.dir)).toEqual(g.before);
}
afterEach(() => {
	checkGuards();
	guarded.length = 0;
});

function corpusWorld(size: string, seed = SEED): World {
	const world = makeWorld();
	generateCorpus(world, size, seed);
	// A session in pi's own directory too (found without any flag).
	const piDir = join(world.layout.sessionsDir, "--work-pi-own--");
	mkdirSync(piDir, { recursive: true });
	writeFileSync(
		join(piDir, "2026-11-01T10-00-00-000Z_01b10000-0000-7000-8000-000000000001.jsonl"),
		`${JSON.stringify({ type: "session", version: 3, id: "01b10000-0000-7000-8000-000000000001", timestamp: "2026-11-01T10:00:00.000Z", cwd: "/work/pi-own" })}\n` +
			`${JSON.stringify({ type: "message", id: "aa000001", parentId: null, timestamp: "2026-11-01T10:00:01.000Z", message: { role: "user", content: "zqown question about the lockfile", timestamp: 1 } })}\n`,
	);
	return world;
}

function rmIndex(world: World): void {
	for (const s of ["", "-wal", "-shm"]) rmSync(`${world.indexPath}${s}`, { force: true });
}

function guardWorld(world: World): void {
	guard(world.sessions);
	guard(world.layout.agentDir);
}

/** The index equals a clean rebuild and passes SQLite's and FTS5's integrity checks. */
function expectCleanIndex(world: World, label: string): void {
	const db = openIndex(world.indexPath);
	try {
		checkIntegrity(db, label);
		const diff = dumpDiff(dumpIndex(db), cleanDump(world.sourceDirs));
		if (diff) throw new Error(`${label}: ${diff}`);
	} finally {
		db.close();
	}
}

/** A failure message a person can act on: `pi-events: ...`, no stack trace, no "internal error". */
function expectClearError(stderr: string, pattern: RegExp): void {
	const lines = stderr.split("\n").filter((l) => l.trim() !== "");
	expect(lines.length).toBeGreaterThan(0);
	for (const l of lines) expect(l).toStartWith("pi-events: ");
	expect(stderr).not.toMatch(/^\s+at /m);
	expect(stderr).not.toContain("internal error");
	expect(stderr).toMatch(pattern);
}

function canMount(): boolean {
	if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
	const probe = makeWorld().layout.root;
	const dir = join(probe, "probe-mnt");
	mkdirSync(dir);
	const ok = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stderr: "pipe" }).exitCode === 0;
	if (ok) Bun.spawnSync(["umount", dir]);
	return ok;
}
const MOUNT = canMount();

// ---------------------------------------------------------------------------------------------

describe("two index runs at once", () => {
	test(
		"both exit 0 (or one says clearly that the index is busy); the result equals a clean rebuild and passes integrity checks",
		async () => {
			const world = corpusWorld("6MB");
			const rng = new Rng(SEED);
			const mutator = new Mutator(rng, world.sessions, 10 * 1024 * 1024);
			const rounds = LONG ? 30 : 6;
			const outcomes: string[] = [];
			for (let round = 0; round < rounds; round++) {
				if (round > 0) {
					if (round % 3 === 0) {
						rmIndex(world);
					} else for (let i = 0; i < 4; i++) mutator.mutate();
				}
				guardWorld(world);
				const n = round % 2 === 0 ? 2 : 3;
				const runs = await Promise.all(
					Array.from({ length: n }, async (_, i) => {
						await sleep(i === 0 ? 0 : rng.int(40));
						return runCliAsync(world, indexArgs(world, ["--json"]));
					}),
				);
				for (const r of runs) {
					if (r.exitCode === 0) {
						outcomes.push("ok");
						// Acceptable: the compaction after a rebuild left to the next sync while the other run reads.
						const problems = (JSON.parse(r.stdout).problems as string[]).filter((p) => !/could not be compacted while another process reads it/.test(p));
						expect(problems).toEqual([]);
					} else {
						outcomes.push(`exit ${r.exitCode}`);
						expect(r.exitCode).toBe(2);
						expectClearError(r.stderr, /busy|locked/i);
					}
				}
				expect(runs.some((r) => r.exitCode === 0)).toBe(true);
				checkGuards();
				expectCleanIndex(world, `round ${round}`);
			}
			console.log(`concurrency: ${rounds} rounds of 2-3 simultaneous index runs: ${outcomes.filter((o) => o === "ok").length}/${outcomes.length} exited 0`);
		},
		LONG ? 600_000 : 40_000,
	);
});

describe("serve while index runs", () => {
	test(
		"searches keep being answered (no errors, no wedge) during a cold index and during rebuilds",
		async () => {
			const world = corpusWorld("10MB");
			guardWorld(world);
			const rng = new Rng(SEED + 1);
			const serve = new Serve(world, ["--root", "/work"]);
			await serve.initialize();
			const latencies: number[] = [];
			const problems: string[] = [];
			let running = true;
			const loop = (async () => {
				const queries = ["error", "lockfile migration", "zqplant1x", "zqown question", "build failed", "zqplant10x"];
				while (running) {
					const started = performance.now();
					const frame = await serve
						.call("event_search", { query: rng.pick(queries), limit: 10 }, 30_000)
						.catch((e: Error) => ({ error: { code: 0, message: e.message } }) as never);
					latencies.push(performance.now() - started);
					const p = frameProblem(frame);
					if (p) problems.push(p);
					await sleep(rng.int(20));
				}
			})();
			const mutator = new Mutator(rng, world.sessions, 14 * 1024 * 1024);
			let indexRuns = 0;
			for (let round = 0; round < (LONG ? 20 : 4); round++) {
				if (round > 0) {
					for (let i = 0; i < 6; i++) mutator.mutate(["rewrite", "replace", "big-append", "append", "truncate", "new", "delete"]);
					guardWorld(world);
				}
				const run = await runCliAsync(world, indexArgs(world, ["--json"]));
				indexRuns++;
				expect(run.exitCode).toBe(0);
				checkGuards();
			}
			running = false;
			await loop;
			const ping = await serve.request("ping", undefined, 5_000);
			expect(ping.result).toEqual({});
			const last = await serve.call("event_search", { query: "zqown question" });
			expect(frameProblem(last)).toBeNull();
			expect(await serve.close()).toBe(0);
			expectCleanIndex(world, "after serve + index");
			latencies.sort((a, b) => a - b);
			console.log(
				`concurrency: serve answered ${latencies.length} calls during ${indexRuns} index runs; latency p50 ${latencies[latencies.length >> 1]?.toFixed(0)} ms, max ${latencies.at(-1)?.toFixed(0)} ms`,
			);
			expect(problems).toEqual([]);
			expect(latencies.length).toBeGreaterThan(10);
			expect(latencies.at(-1)!).toBeLessThan(15_000);
			expect(serve.nonJson).toEqual([]);
		},
		LONG ? 600_000 : 40_000,
	);
});

describe("an index location that cannot be written", () => {
	test("parent is a regular file, or under /proc: exit 2, `pi-events: ...`, no stack trace (index, search, status, serve)", async () => {
		const world = corpusWorld("1MB");
		guardWorld(world);
		const aFile = join(world.layout.root, "not-a-dir");
		writeFileSync(aFile, "x");
		const places = [join(aFile, "index.db"), "/proc/pi-events-reliability/index.db"];
		for (const place of places) {
			// Verify the simulation: this location really cannot be created, even as root.
			expect(() => mkdirSync(join(place, ".."), { recursive: true })).toThrow();
			for (const args of [
				["index", "--index", place, "--sessions-dir", world.sessions],
				["search", "lockfile", "--all", "--index", place, "--sessions-dir", world.sessions],
				["status", "--index", place],
				["serve", "--stdio", "--index", place],
			]) {
				const r = await runCliAsync(world, args);
				expect(r.exitCode).toBe(2);
				expect(r.stdout).toBe("");
				expectClearError(r.stderr, /cannot (open|use) the index/);
				expect(r.stderr).toContain(place);
			}
		}
		expect(existsSync("/proc/pi-events-reliability")).toBe(false);
	});

	test.skipIf(!MOUNT)(
		"a read-only mount holding a valid index: index exits 2 with a clear message, search answers from it; writable again, the index is intact",
		async () => {
			const world = corpusWorld("1MB");
			guardWorld(world);
			const dir = join(world.indexPath, "..");
			expect((await runCliAsync(world, indexArgs(world))).exitCode).toBe(0);
			expect(Bun.spawnSync(["mount", "--bind", dir, dir]).exitCode).toBe(0);
			try {
				expect(Bun.spawnSync(["mount", "-o", "remount,ro,bind", dir]).exitCode).toBe(0);
				// The simulation really stops writes, even for root.
				expect(() => writeFileSync(join(dir, "probe"), "x")).toThrow();
				const index = await runCliAsync(world, indexArgs(world));
				expect(index.exitCode).toBe(2);
				expectClearError(index.stderr, /read-only/);
				// docs/cli.md: search still answers from what is indexed (issue 15 item 9).
				const search = await runCliAsync(world, ["search", "lockfile", "--all", "--json", "--index", world.indexPath, "--sessions-dir", world.sessions]);
				expect(search.exitCode).toBe(0);
				expect(JSON.parse(search.stdout).hits.length).toBeGreaterThan(0);
			} finally {
				Bun.spawnSync(["umount", dir]);
			}
			expectCleanIndex(world, "after the read-only mount");
		},
	);

	test.skipIf(process.getuid?.() === 0)("a directory without write permission (non-root only): exit 2 with a clear message", async () => {
		const world = corpusWorld("1MB");
		guardWorld(world);
		const dir = join(world.layout.root, "locked");
		mkdirSync(dir, { mode: 0o555 });
		expect(() => writeFileSync(join(dir, "probe"), "x")).toThrow();
		const r = await runCliAsync(world, ["index", "--index", join(dir, "index.db"), "--sessions-dir", world.sessions]);
		expect(r.exitCode).toBe(2);
		expectClearError(r.stderr, /cannot (open|use) the index/);
	});
});

describe("a full disk for the index", () => {
	/**
	 * A full disk may stop a sync at any write. docs/cli.md: "the sync stops with one clear error (exit
	 * 2) and the index keeps its last consistent state": a `pi-events: ...` message that says the
	 * disk is full, an index that passes integrity checks, and (checked by each test) a later sync
	 * with space that reaches a clean rebuild.
	 */
	const FULL = /disk is full|no space/i;
	function expectFullDiskHandled(r: { exitCode: number | null; stdout: string; stderr: string }, world: World, label: string): void {
		expect(r.exitCode).toBe(2);
		expect(r.stdout).toBe("");
		expectClearError(r.stderr, FULL);
		checkIndexFile(world.indexPath, label);
	}

	/**
	 * A search whose sync fails on a full disk: a clear error (exit 2), or an answer from the index
	 * (exit 0 with hits, 1 without) whose freshness says why it may be stale.
	 */
	function expectSearchOnFullDisk(r: { exitCode: number | null; stdout: string; stderr: string }, world: World): void {
		if (r.exitCode === 2) expectClearError(r.stderr, FULL);
		else {
			expect([0, 1]).toContain(r.exitCode ?? -1);
			const answer = JSON.parse(r.stdout) as { freshness: { problems: string[] } };
			expect(answer.freshness.problems.join("\n")).toMatch(FULL);
			if (r.stderr.trim() !== "") expectClearError(r.stderr, FULL);
		}
		checkIndexFile(world.indexPath, "search on a full disk");
	}

	test.skipIf(!MOUNT)("a 1 MiB tmpfs (index and search): a clear message, no corruption, and a later sync with space reaches a clean rebuild", async () => {
		const world = corpusWorld("6MB");
		guardWorld(world);
		const dir = join(world.indexPath, "..");
		mkdirSync(dir, { recursive: true });
		expect(Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir]).exitCode).toBe(0);
		try {
			const full = await runCliAsync(world, indexArgs(world, ["--json"]));
			rmIndex(world);
			const search = await runCliAsync(world, ["search", "lockfile", "--all", "--json", "--index", world.indexPath, "--sessions-dir", world.sessions]);
			const failures: string[] = [];
			for (const [label, r] of [
				["index", full],
				["search", search],
			] as const) {
				try {
					if (label === "index") expectFullDiskHandled(r, world, `${label} on a full disk`);
					else expectSearchOnFullDisk(r, world);
				} catch (e) {
					failures.push(`${label}: exit ${r.exitCode}, stderr ${JSON.stringify(r.stderr.slice(0, 300))}: ${e instanceof Error ? e.message.split("\n")[0] : e}`);
				}
			}
			// Space again: the same index syncs to a clean state.
			expect(Bun.spawnSync(["mount", "-o", "remount,size=256m", dir]).exitCode).toBe(0);
			const later = await runCliAsync(world, indexArgs(world, ["--json"]));
			expect(later.exitCode).toBe(0);
			expectCleanIndex(world, "after space came back");
			expect(failures).toEqual([]);
		} finally {
			Bun.spawnSync(["umount", dir]);
		}
	});

	test("SQLite's max_page_count (wrapper around the real CLI): a clear message, an honest report, no corruption, then a clean sync", async () => {
		const world = corpusWorld("6MB");
		guardWorld(world);
		const failures: string[] = [];
		for (const pages of [40, 120, 400]) {
			rmIndex(world);
			const env = { PI_EVENTS_TEST_MAX_PAGES: String(pages) };
			const proc = Bun.spawn([process.execPath, FULL_DISK_CLI, ...indexArgs(world, ["--json"])], {
				cwd: world.layout.root,
				env: { ...world.env, ...env },
				stdout: "pipe",
				stderr: "pipe",
			});
			const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
			await proc.exited;
			try {
				expectFullDiskHandled({ exitCode: proc.exitCode, stdout, stderr }, world, `max_page_count ${pages}`);
			} catch (e) {
				failures.push(
					`max_page_count ${pages}: exit ${proc.exitCode}, stderr ${JSON.stringify(stderr.slice(0, 200))}: ${e instanceof Error ? e.message.split("\n")[0] : e}`,
				);
			}

			// Straight through src/store/db.ts + syncIndex (its debug lines prove the limit was hit): the
			// report must not count sessions it did not store.
			rmIndex(world);
			const direct = Bun.spawnSync([process.execPath, FULL_DISK_CLI, world.indexPath, ...world.sourceDirs.map((d) => d.path)], {
				cwd: world.layout.root,
				env: { ...world.env, ...env, PI_EVENTS_TEST_DIRECT: "1" },
				stdout: "pipe",
				stderr: "pipe",
			});
			const out = direct.stdout.toString().trim().split("\n").at(-1)!;
			expect(direct.stdout.toString()).toMatch(/disk is full|SQLITE_FULL/);
			checkIndexFile(world.indexPath, `direct max_page_count ${pages}`);
			if (!out.startsWith("error:")) {
				const report = JSON.parse(out) as { sessions: { new: number }; problems: string[] };
				const db = openIndex(world.indexPath);
				const stored = (db.query("SELECT count(*) AS n FROM sessions").get() as { n: number }).n;
				db.close();
				if (report.sessions.new !== stored) {
					failures.push(
						`syncIndex with max_page_count ${pages}: the report says ${report.sessions.new} new sessions, the index holds ${stored} (first problem: ${report.problems[0]?.replace(/^.*\.jsonl: /, "")})`,
					);
				}
			} else if (!FULL.test(out)) {
				failures.push(`syncIndex with max_page_count ${pages}: unclear error ${out}`);
			}

			// With space: a clean state.
			const later = await runCliAsync(world, indexArgs(world, ["--json"]));
			expect(later.exitCode).toBe(0);
			expectCleanIndex(world, `after max_page_count ${pages}`);
		}
		expect(failures).toEqual([]);
	});
});
