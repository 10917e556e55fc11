/**
 * A one-shot command's connection has a small page cache (src/store/db.ts); a sync that reads
 * enough new bytes gives it the large one while it works and puts the small one back, also when
 * the worker pipeline shrank it in between. A resident server's connection keeps the large one.
 * A search that reads many sessions one at a time takes a larger one while it reads them.
 */
import { afterAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { JIT_WORTH_BYTES } from "../../src/jit.ts";
import type { SourceDir } from "../../src/source/discover.ts";
import { openIndex, SPAN_READS_PAGE_CACHE_KIB } from "../../src/store/db.ts";
import { Gate } from "../../src/gate/gate.ts";
import { parseQuery } from "../../src/query/fts.ts";
import { search } from "../../src/query/search/search.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { oneMessageSession, UNSCOPED, userEntry, writeSession } from "../query/helpers.ts";

afterAll(cleanupTempDirs);

const sid = (n: number) => `0000cccc-0000-4000-8000-${String(n).padStart(12, "0")}`;
const cacheKib = (db: Database) => -(db.query("PRAGMA cache_size").get() as { cache_size: number }).cache_size;

function setup() {
	const dir = makeTempDir("pi-events-cache-");
	const sessions = join(dir, "sessions", "--work-app--");
	const sources: SourceDir[] = [{ path: join(sessions, ".."), origin: "flag" }];
	return { index: join(dir, "index.db"), sessions, sources };
}

/** The page cache seen while the sync works on its files (the progress callback runs inside it). */
function syncSeeing(db: Database, sources: SourceDir[], pipeline: "never" | "always" = "never"): number[] {
	const seen: number[] = [];
	const report = syncIndex(db, { sourceDirs: sources, pipeline, onProgress: () => seen.push(cacheKib(db)) });
	expect(report.sessions.new + report.sessions.appended).toBeGreaterThan(0);
	return seen;
}

test("a one-shot connection keeps a small cache for a small sync and gets the large one for long work", () => {
	const { index, sessions, sources } = setup();
	const db = openIndex(index, { oneShot: true });
	expect(cacheKib(db)).toBe(256);

	const small = writeSession(sessions, oneMessageSession(sid(1), "/work/app", "a short note about the deploy"));
	expect(syncSeeing(db, sources)).toEqual([256]);
	expect(cacheKib(db)).toBe(256);

	// A new file past the long-work threshold: the large cache while it is written, then the small one.
	writeSession(sessions, oneMessageSession(sid(2), "/work/app", "many words ".repeat(Math.ceil(JIT_WORTH_BYTES / 11) + 100)));
	expect(syncSeeing(db, sources)).toEqual([65_536]);
	expect(cacheKib(db)).toBe(256);

	// An append counts its growth: a small one stays small, a long one is long work.
	appendFileSync(small, `${JSON.stringify(userEntry("u-more", `u-${sid(1).slice(0, 6)}`, "2026-10-01T10:00:09.000Z", "one more line"))}\n`);
	expect(syncSeeing(db, sources)).toEqual([256]);
	appendFileSync(small, `${JSON.stringify(userEntry("u-long", `u-${sid(1).slice(0, 6)}`, "2026-10-01T10:00:10.000Z", "x ".repeat(JIT_WORTH_BYTES)))}\n`);
	expect(syncSeeing(db, sources)).toEqual([65_536]);
	expect(cacheKib(db)).toBe(256);
	db.close();

	// The index those syncs wrote answers like one written with the large cache throughout.
	const { index: other } = setup();
	const resident = openIndex(other);
	syncIndex(resident, { sourceDirs: sources, pipeline: "never" });
	const count = (d: Database) => d.query("SELECT count(*) AS n FROM fragments").get();
	const reopened = openIndex(index, { oneShot: true });
	expect(count(reopened)).toEqual(count(resident));
	reopened.close();
	resident.close();
});

test("the worker pipeline's smaller cache and the long-work cache are both put back", () => {
	const { index, sessions, sources } = setup();
	const db = openIndex(index, { oneShot: true });
	for (let n = 10; n < 14; n++) {
		writeSession(sessions, oneMessageSession(sid(n), "/work/app", `session ${n} `.repeat(Math.ceil(JIT_WORTH_BYTES / 10))));
	}
	const seen = syncSeeing(db, sources, "always");
	// While the worker prepares files the writer runs with 32 MiB (sync.ts), never with the small cache.
	expect(new Set(seen)).toEqual(new Set([32_768]));
	expect(cacheKib(db)).toBe(256);
	db.close();
});

test("a resident server's connection (the default) keeps the large cache", () => {
	const { index, sessions, sources } = setup();
	const db = openIndex(index);
	expect(cacheKib(db)).toBe(65_536);
	writeSession(sessions, oneMessageSession(sid(20), "/work/app", "many words ".repeat(Math.ceil(JIT_WORTH_BYTES / 11) + 100)));
	expect(syncSeeing(db, sources)).toEqual([65_536]);
	expect(cacheKib(db)).toBe(65_536);
	db.close();
});

test("a search reading many sessions one at a time has a larger cache while it reads them, then the small one again; a server's stays large", () => {
	const { index, sessions, sources } = setup();
	writeSession(sessions, oneMessageSession(sid(30), "/work/app", "a note about the deploy"));
	const writer = openIndex(index);
	syncIndex(writer, { sourceDirs: sources, pipeline: "never" });
	writer.close();
	for (const [oneShot, during, after] of [
		[true, SPAN_READS_PAGE_CACHE_KIB, 256],
		[false, 65_536, 65_536],
	] as const) {
		const db = openIndex(index, { oneShot });
		const scoped = new Gate(db, UNSCOPED).search(parseQuery("deploy").match, {}, {})!;
		expect(scoped.withSpanReads(() => cacheKib(db))).toBe(during);
		expect(cacheKib(db)).toBe(after);
		// Also when the reads throw.
		expect(() =>
			scoped.withSpanReads(() => {
				throw new Error("read failed");
			}),
		).toThrow("read failed");
		expect(cacheKib(db)).toBe(after);
		// A search with --until (it reads the sessions before then one at a time) leaves the cache as it was.
		const r = search(new Gate(db, UNSCOPED), {
			query: "deploy",
			filters: { untilMs: Date.parse("2030-01-01T00:00:00Z") },
			limit: 5,
			bounds: { fullRankLimit: 0, untilMinSessions: 1 },
		});
		expect(r.hits.length).toBe(1);
		expect(cacheKib(db)).toBe(after);
		db.close();
	}
});
