/**
 * A pipelined cold index writes without fsync behind a durable marker (src/store/unsynced.ts):
 * while it works, `synchronous` is OFF and `<index>-unsynced/<pid>` names this boot; afterwards
 * both are gone. Opening the index settles markers left behind: one from an earlier boot means
 * the machine stopped mid-write, so the index is rebuilt; one of this boot whose process died is
 * flushed and removed; a live process's is left alone.
 */
import { afterAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SourceDir } from "../../src/source/discover.ts";
import { openIndex } from "../../src/store/db.ts";
import { currentBootId } from "../../src/store/unsynced.ts";
import { PIPELINE_BATCH_MS, syncIndex } from "../../src/sync/sync.ts";
import { cleanupTempDirs, dumpIndex, makeTempDir } from "../helpers/temp.ts";
import { checkIntegrity, cleanDump, dumpDiff } from "../reliability/util.ts";
import { oneMessageSession, writeSession } from "../query/helpers.ts";

afterAll(cleanupTempDirs);

const sid = (n: number) => `0000dddd-0000-4000-8000-${String(n).padStart(12, "0")}`;
const synchronous = (db: Database) => (db.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous;
const sessionCount = (db: Database) => (db.query("SELECT count(*) AS n FROM sessions").get() as { n: number }).n;
const boot = currentBootId();
// The marker needs Linux's boot id; elsewhere writes keep their fsyncs and there is nothing to test.
const linux = boot !== null ? test : test.skip;

function indexedHistory() {
	const dir = makeTempDir("pi-events-unsynced-");
	const sessions = join(dir, "sessions", "--work-app--");
	const sources: SourceDir[] = [{ path: join(sessions, ".."), origin: "flag" }];
	for (let i = 1; i <= 3; i++) writeSession(sessions, oneMessageSession(sid(i), "/work/app", `note ${i} about the deploy`));
	return { index: join(dir, "index.db"), markers: join(dir, "index.db-unsynced"), sources };
}

/** A history indexed once (its three sessions in the index), the connection closed. */
function syncedHistory() {
	const history = indexedHistory();
	const db = openIndex(history.index, { oneShot: true });
	syncIndex(db, { sourceDirs: history.sources });
	expect(sessionCount(db)).toBe(3);
	db.close();
	return history;
}

/** Leave a marker as a writing process would: `<markers>/<pid>` holding a boot id. */
function leaveMarker(markers: string, pid: number, bootId: string): void {
	mkdirSync(markers, { recursive: true });
	writeFileSync(join(markers, String(pid)), bootId);
}

/** A process id that no process holds: past the kernel's limit. */
function deadPid(): number {
	const max = Number(readFileSync("/proc/sys/kernel/pid_max", "latin1"));
	return max + 1;
}

linux("a pipelined sync writes without fsync behind this boot's marker, then flushes and removes it", () => {
	const { index, markers, sources } = indexedHistory();
	const db = openIndex(index, { oneShot: true });
	expect(synchronous(db)).toBe(1); // NORMAL
	const seen: { sync: number; marker: string | null }[] = [];
	const report = syncIndex(db, {
		sourceDirs: sources,
		pipeline: "always",
		onProgress: () => {
			const own = join(markers, String(process.pid));
			seen.push({ sync: synchronous(db), marker: existsSync(own) ? readFileSync(own, "latin1") : null });
		},
	});
	expect(report.sessions.new).toBe(3);
	expect(seen.length).toBe(3);
	for (const s of seen) expect(s).toEqual({ sync: 0, marker: boot });
	expect(synchronous(db)).toBe(1);
	expect(existsSync(markers)).toBe(false);
	db.close();
});

linux("a small sync on one thread keeps its fsyncs and leaves no marker", () => {
	const { index, markers, sources } = indexedHistory();
	const db = openIndex(index, { oneShot: true });
	const seen: number[] = [];
	syncIndex(db, { sourceDirs: sources, pipeline: "never", onProgress: () => seen.push(synchronous(db)) });
	expect(seen).toEqual([1, 1, 1]);
	expect(existsSync(markers)).toBe(false);
	db.close();
});

linux("a marker from an earlier boot: the index is rebuilt on opening, and the next sync indexes everything again", () => {
	const { index, markers, sources } = syncedHistory();
	leaveMarker(markers, process.pid, "00000000-1111-2222-3333-444444444444");
	const reopened = openIndex(index, { oneShot: true });
	expect(sessionCount(reopened)).toBe(0);
	expect(existsSync(markers)).toBe(false);
	const report = syncIndex(reopened, { sourceDirs: sources });
	expect(report.sessions.new).toBe(3);
	expect(sessionCount(reopened)).toBe(3);
	reopened.close();
});

linux("a marker of this boot whose process died is flushed and removed; the index stays", () => {
	const { index, markers } = syncedHistory();
	leaveMarker(markers, deadPid(), boot!);
	const reopened = openIndex(index, { oneShot: true });
	expect(sessionCount(reopened)).toBe(3);
	expect(existsSync(markers)).toBe(false);
	reopened.close();
});

linux("a marker of a live process is left alone, beside another process's stale one that is rebuilt away", () => {
	const { index, markers } = syncedHistory();
	leaveMarker(markers, process.pid, boot!);
	const reopened = openIndex(index, { oneShot: true });
	expect(sessionCount(reopened)).toBe(3);
	expect(readdirSync(markers)).toEqual([String(process.pid)]);
	reopened.close();

	leaveMarker(markers, deadPid(), "an earlier boot");
	const again = openIndex(index, { oneShot: true });
	expect(sessionCount(again)).toBe(0);
	expect(readdirSync(markers)).toEqual([String(process.pid)]);
	again.close();
});

linux(
	"a process killed while it writes without fsync: the next open flushes and removes its marker, the index is whole, and one more sync equals a clean rebuild",
	async () => {
		const dir = makeTempDir("pi-events-unsynced-kill-");
		const sessions = join(dir, "sessions", "--work-app--");
		const sources: SourceDir[] = [{ path: join(sessions, ".."), origin: "flag" }];
		// Enough work that the kill lands while the pipelined sync writes: 40 sessions of about 200 KB.
		for (let i = 1; i <= 40; i++) {
			writeSession(sessions, oneMessageSession(sid(100 + i), "/work/app", `session ${i} ${"words about the deploy and the parser ".repeat(5000)}`));
		}
		const index = join(dir, "index.db");
		const markers = join(dir, "index.db-unsynced");
		const script = `
		const { openIndex } = await import(${JSON.stringify(join(import.meta.dir, "../../src/store/db.ts"))});
		const { syncIndex } = await import(${JSON.stringify(join(import.meta.dir, "../../src/sync/sync.ts"))});
		const db = openIndex(${JSON.stringify(index)});
		syncIndex(db, { sourceDirs: ${JSON.stringify(sources)}, pipeline: "always", onProgress: () => Bun.sleepSync(100) });
	`;
		const child = Bun.spawn([process.execPath, "-e", script], { stdout: "ignore", stderr: "pipe" });
		const deadline = Date.now() + 20_000;
		while (!existsSync(join(markers, String(child.pid))) && Date.now() < deadline) await Bun.sleep(5);
		expect(existsSync(join(markers, String(child.pid)))).toBe(true);
		await Bun.sleep(PIPELINE_BATCH_MS + 800); // past the first commit, before the last file (40 × 100 ms)
		child.kill("SIGKILL");
		await child.exited;
		expect(readdirSync(markers)).toEqual([String(child.pid)]);

		const db = openIndex(index, { oneShot: true });
		expect(existsSync(markers)).toBe(false);
		const kept = sessionCount(db);
		expect(kept).toBeGreaterThan(0); // a dead process of this boot: its writes are kept, not rebuilt away
		expect(kept).toBeLessThan(40);
		checkIntegrity(db, "after the kill");
		syncIndex(db, { sourceDirs: sources });
		expect(dumpDiff(dumpIndex(db), cleanDump(sources))).toBeNull();
		db.close();
	},
);
