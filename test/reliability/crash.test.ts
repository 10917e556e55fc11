/**
 * Crash safety: `pi-events index` is killed with SIGKILL at seeded random moments on a generated
 * corpus, while the corpus changes between kills (appends, branches, big appends, torn tails and
 * pi's "\n" repair, truncation, pi's in-place rewrite, replacement by rename, new, deleted and
 * moved sessions) and the index is sometimes deleted to start cold again. The kill delay adapts to
 * the expected work of the run, so kills land during cold indexing, appends and rebuilds.
 *
 * After EACH kill: the index opens, PRAGMA integrity_check and FTS5's integrity-check pass, and
 * one more sync reaches exactly the state of a clean rebuild of the same files (dumpIndex equal),
 * checked half of the time on the crashed original and half of the time on a byte copy, leaving
 * the original crashed for the next run (crashes pile up on crash states). Runs that finish before
 * the kill must exit 0 with the clean state. The session files are byte-identical across each run.
 *
 * PI_EVENTS_RELIABILITY_SEED=N changes the seed; PI_EVENTS_RELIABILITY_LONG=1 runs a 40 MB corpus
 * (several commit batches per cold run) and 200 kills.
 */
import { afterAll, expect, test } from "bun:test";
import { closeSync, copyFileSync, existsSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { syncIndex } from "../../src/sync/sync.ts";
import { openIndex } from "../../src/store/db.ts";
import { cleanupTempDirs, dumpIndex, type IndexDump, makeTempDir, snapshotTree } from "../helpers/temp.ts";
import { type MutationKind, Mutator, REBUILDING } from "./mutate.ts";
import {
	checkIndexFile,
	checkIntegrity,
	cleanDump,
	dumpDiff,
	generateCorpus,
	indexArgs,
	LONG,
	makeWorld,
	Rng,
	runCliAsync,
	seedFromEnv,
	sleep,
	spawnCli,
} from "./util.ts";

afterAll(cleanupTempDirs);

const SEED = seedFromEnv(20261130);
const TARGET_KILLS = LONG ? 200 : 50;
const CORPUS = LONG ? "40MB" : "8MB";
/**
 * Stop early (and fail on the kill count) rather than run over the CI budget. The default run
 * takes about 55 s on an idle 2-core machine; the budget leaves room for a loaded one, so the kill
 * count only fails when something is really slower, not when a neighbour is busy.
 */
const BUDGET_MS = LONG ? 30 * 60_000 : 150_000;

type Phase = "cold" | "append" | "rebuild";

function removeIndex(path: string): void {
	for (const s of ["", "-wal", "-shm", "-journal"]) rmSync(`${path}${s}`, { force: true });
}

/** A cheap fingerprint of how far an index got (to classify what a kill interrupted). */
function progressPrint(db: ReturnType<typeof openIndex>): string {
	const files = db.query("SELECT path, size, ino, durable_end, status FROM files ORDER BY path").all();
	const events = db.query("SELECT count(*) AS n FROM events").get() as { n: number };
	const last = db.query("SELECT value FROM meta WHERE key = 'last_sync'").get() as { value: string } | null;
	return JSON.stringify([files, events.n, last?.value ?? null]);
}

test(
	`SIGKILL at random moments: the index always opens, passes integrity checks, and one more sync equals a clean rebuild`,
	async () => {
		const started = performance.now();
		const rng = new Rng(SEED);
		const world = makeWorld();
		generateCorpus(world, CORPUS, SEED);
		const mutator = new Mutator(rng, world.sessions, 1.5 * 1024 * 1024 * Number.parseInt(CORPUS, 10));
		const scratch = makeTempDir("pi-events-crash-copy-");

		// Startup cost of one run (process start to first work) and indexing throughput.
		const probe = makeWorld();
		const startups: number[] = [];
		for (let i = 0; i < 3; i++) startups.push((await runCliAsync(probe, indexArgs(probe))).ms);
		const startupMs = startups.sort((a, b) => a - b)[1]!;
		const t = performance.now();
		let clean: IndexDump = cleanDump(world.sourceDirs);
		const bytesPerMs = Math.max(5_000, mutator.totalBytes() / (performance.now() - t));

		let kills = 0;
		let completed = 0;
		let attempts = 0;
		const killsBy: Record<Phase, number> = { cold: 0, append: 0, rebuild: 0 };
		const progress = { none: 0, partial: 0, finished: 0 };
		const mutations: Partial<Record<MutationKind, number>> = {};
		let pendingBytes = mutator.totalBytes(); // the first run is cold
		let phase: Phase = "cold";
		/** Adapts the kill window so that about half of the runs are killed. */
		let scale = 1;
		const spent = { mutate: 0, run: 0, check: 0, verify: 0 };
		let lastPrint: string | null = null; // the crashed original's progress print (from its copy)
		const failures: string[] = [];

		while (kills < TARGET_KILLS && performance.now() - started < BUDGET_MS && failures.length === 0) {
			attempts++;
			// Change the corpus between runs (not before the first, cold one).
			let t0 = performance.now();
			if (attempts > 1 && rng.chance(0.6)) {
				let rebuilding = false;
				for (let i = 0, n = rng.range(1, 4); i < n; i++) {
					const m = mutator.mutate();
					mutations[m.kind] = (mutations[m.kind] ?? 0) + 1;
					pendingBytes += m.bytes;
					if (REBUILDING.has(m.kind)) rebuilding = true;
				}
				clean = cleanDump(world.sourceDirs);
				if (phase !== "cold") phase = rebuilding ? "rebuild" : "append";
			}
			if (attempts > 1 && rng.chance(0.08)) {
				removeIndex(world.indexPath);
				lastPrint = null;
				pendingBytes = mutator.totalBytes();
				phase = "cold";
			}
			const before = snapshotTree(world.sessions);
			spent.mutate += performance.now() - t0;
			t0 = performance.now();

			// Kill somewhere in [0, startup) now and then, mostly within the estimated work window.
			const workMs = pendingBytes / bytesPerMs + 10;
			const delay = rng.chance(0.1) ? rng.next() * startupMs : startupMs * 0.8 + rng.next() * (workMs * scale + 15);
			const proc = spawnCli(world, indexArgs(world, ["--json"]));
			const stdout = new Response(proc.stdout).text();
			const stderr = new Response(proc.stderr).text();
			await sleep(delay);
			const killed = proc.exitCode === null;
			if (killed) proc.kill("SIGKILL");
			await proc.exited;
			const [out, err] = await Promise.all([stdout, stderr]);
			spent.run += performance.now() - t0;
			t0 = performance.now();

			if (proc.signalCode !== "SIGKILL") {
				// The run finished before the kill: it must have succeeded and reached the clean state.
				completed++;
				scale *= 0.85;
				if (proc.exitCode !== 0) {
					failures.push(`run ${attempts} (not killed) exited ${proc.exitCode}: ${err}`);
					break;
				}
				const report = JSON.parse(out) as { problems: string[] };
				if (report.problems.length > 0) failures.push(`run ${attempts}: problems ${JSON.stringify(report.problems)}`);
				const db = openIndex(world.indexPath);
				try {
					checkIntegrity(db, `run ${attempts} (completed)`);
					const diff = dumpDiff(dumpIndex(db), clean);
					if (diff) failures.push(`run ${attempts} (completed): ${diff}`);
					lastPrint = progressPrint(db);
				} finally {
					db.close();
				}
				pendingBytes = 0;
				phase = "append";
				spent.check += performance.now() - t0;
				continue;
			}

			kills++;
			scale *= 1.05;
			killsBy[phase]++;
			const after = snapshotTree(world.sessions);
			if (!Bun.deepEquals(before, after)) failures.push(`kill ${kills}: the session files changed during the run`);

			// Half of the time check a byte copy of the crash state and leave the original crashed for
			// the next run (crashes pile up on crash states); else recover the original itself.
			const onCopy = rng.chance(0.5);
			const label = `kill ${kills} (run ${attempts}, ${phase}, after ${delay.toFixed(0)} ms, checked on ${onCopy ? "a copy" : "the original"})`;
			let path = world.indexPath;
			if (onCopy) {
				path = join(scratch, `kill-${kills}.db`);
				removeIndex(path);
				for (const s of ["", "-wal", "-journal"]) if (existsSync(`${world.indexPath}${s}`)) copyFileSync(`${world.indexPath}${s}`, `${path}${s}`);
			}
			let db: ReturnType<typeof openIndex>;
			try {
				db = openIndex(path);
			} catch (e) {
				failures.push(`${label}: the index does not open: ${e instanceof Error ? e.message : e}`);
				break;
			}
			try {
				checkIntegrity(db, `${label}, crashed`);
				const print = progressPrint(db);
				const lastSync = (p: string | null) => (p ? (JSON.parse(p) as unknown[])[2] : null);
				if (print === lastPrint) progress.none++;
				else if (lastSync(print) !== lastSync(lastPrint)) progress.finished++;
				else progress.partial++;
				const report = syncIndex(db, { sourceDirs: world.sourceDirs });
				if (report.problems.length > 0) failures.push(`${label}: the sync after the crash reported ${JSON.stringify(report.problems)}`);
				checkIntegrity(db, `${label}, synced`);
				const diff = dumpDiff(dumpIndex(db), clean);
				if (diff) failures.push(`${label}: one more sync does not reach a clean rebuild:\n${diff}`);
				if (onCopy) lastPrint = print;
				else {
					lastPrint = progressPrint(db);
					pendingBytes = 0;
					phase = "append";
				}
			} catch (e) {
				failures.push(`${label}: ${e instanceof Error ? e.message : e}`);
			} finally {
				db.close();
				if (onCopy) removeIndex(path);
			}
			spent.verify += performance.now() - t0;
		}

		// Finally the crashed original itself: one uninterrupted run reaches the clean state.
		const final = await runCliAsync(world, indexArgs(world, ["--json"]));
		expect(final.exitCode).toBe(0);
		const db = openIndex(world.indexPath);
		try {
			checkIntegrity(db, "final");
			const diff = dumpDiff(dumpIndex(db), cleanDump(world.sourceDirs));
			if (diff) failures.push(`final run on the crashed original: ${diff}`);
		} finally {
			db.close();
		}

		const seconds = ((performance.now() - started) / 1000).toFixed(1);
		console.log(
			`crash: ${kills} kills survived in ${seconds} s (seed ${SEED}, corpus ${CORPUS}, ${attempts} runs, ${completed} finished before the kill; ` +
				`kills during cold indexing ${killsBy.cold}, appends ${killsBy.append}, rebuilds ${killsBy.rebuild}; ` +
				`index left unchanged ${progress.none}, partly advanced ${progress.partial}, sync finished ${progress.finished}; ` +
				`mutations ${JSON.stringify(mutations)}; startup ${startupMs.toFixed(0)} ms; time ${JSON.stringify(spent, (_k, v) => (typeof v === "number" ? Math.round(v) : v))})`,
		);
		expect(failures).toEqual([]);
		expect(kills).toBeGreaterThanOrEqual(TARGET_KILLS);
		expect(killsBy.cold).toBeGreaterThan(0);
		expect(killsBy.append + killsBy.rebuild).toBeGreaterThan(0);
	},
	LONG ? 30 * 60_000 : BUDGET_MS + 30_000,
);

test("the crash checks can fail: a lost event, a lost posting and a damaged page are all detected", () => {
	const world = makeWorld();
	generateCorpus(world, "1MB", SEED);
	const db = openIndex(world.indexPath);
	try {
		syncIndex(db, { sourceDirs: world.sourceDirs });
		checkIntegrity(db, "intact");
		const clean = cleanDump(world.sourceDirs);
		expect(dumpDiff(dumpIndex(db), clean)).toBeNull();
		db.run("DELETE FROM fts WHERE rowid = (SELECT max(frag_key) FROM fragments)");
		expect(dumpDiff(dumpIndex(db), clean)).toContain("table fts");
		db.run("DELETE FROM events WHERE event_key = (SELECT max(event_key) FROM events)");
		expect(dumpDiff(dumpIndex(db), clean)).toContain("table events");
		db.run("PRAGMA wal_checkpoint(TRUNCATE)");
		const { rootpage } = db.query("SELECT rootpage FROM sqlite_master WHERE name = 'events_by_seq'").get() as { rootpage: number };
		const { page_size } = db.query("PRAGMA page_size").get() as { page_size: number };
		db.close();
		// Zero an index b-tree page: integrity_check (or opening) must notice.
		const fd = openSync(world.indexPath, "r+");
		writeSync(fd, Buffer.alloc(page_size), 0, page_size, (rootpage - 1) * page_size);
		closeSync(fd);
	} finally {
		db.close();
	}
	expect(() => checkIndexFile(world.indexPath, "damaged")).toThrow();
});
