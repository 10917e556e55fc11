/**
 * A session's summary facts (entry and fragment counts, oldest and newest event times, last entry,
 * name) are tallied while its file is written (store/write.ts SessionTally), on the main thread and
 * through the cold-index worker. They must equal what refreshSessionSummary reads back from the
 * events table, for every session of the fixtures (pi's own files, legacy and broken shapes).
 */
import { expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import type { SourceDir } from "../../src/source/discover.ts";
import { openIndex } from "../../src/store/db.ts";
import { IndexWriter } from "../../src/store/write.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { userEntry, writeSession } from "../query/helpers.ts";

const FIXTURES = join(import.meta.dir, "..", "..", "fixtures", "sessions");
const SUMMARY = "SELECT session_id, entry_count, fragment_count, first_ts_ms, last_ts_ms, leaf_entry, name FROM sessions ORDER BY session_key";

function summaries(db: Database): unknown[] {
	return db.query(SUMMARY).all();
}

for (const pipeline of ["never", "always"] as const) {
	test(`tallied summaries equal the ones read back from the events (${pipeline === "always" ? "through the worker" : "on the main thread"})`, () => {
		const dir = makeTempDir("pi-events-summary-");
		const db = openIndex(join(dir, "index.db"));
		try {
			// And a fork's shape: entries copied with older times than the ones written after them, then renamed twice.
			const own = join(dir, "sessions");
			writeSession(own, {
				id: "0000eeee-0000-4000-8000-000000000001",
				cwd: "/work/fork",
				timestamp: "2026-05-02T00:00:00.000Z",
				entries: [
					userEntry("u1", null, "2026-05-02T10:00:00.000Z", "written at the fork"),
					userEntry("u2", "u1", "2026-04-01T09:00:00.000Z", "copied, older"),
					{ type: "session_info", id: "n1", parentId: "u2", timestamp: "2026-05-02T10:01:00.000Z", name: "first name" },
					userEntry("u3", "n1", "2026-05-01T08:00:00.000Z", "older again"),
					{ type: "session_info", id: "n2", parentId: "u3", timestamp: "2026-05-02T10:02:00.000Z", name: "  final   name " },
					{ type: "message", id: "u4", parentId: "n2", message: { role: "user", content: "no time at all" } },
				],
			});
			const sources: SourceDir[] = [
				{ path: join(FIXTURES, "pi"), origin: "flag" },
				{ path: join(FIXTURES, "legacy"), origin: "flag" },
				{ path: own, origin: "flag" },
			];
			const report = syncIndex(db, { sourceDirs: sources, pipeline });
			expect(report.sessions.new).toBeGreaterThan(15);
			const tallied = summaries(db);
			// Some sessions are named, some have entries without a time, every one has events.
			expect(tallied.some((s) => (s as { name: string | null }).name)).toBe(true);
			const fork = tallied.find((s) => (s as { session_id: string }).session_id === "0000eeee-0000-4000-8000-000000000001");
			expect(fork).toEqual({
				session_id: "0000eeee-0000-4000-8000-000000000001",
				entry_count: 6,
				fragment_count: expect.any(Number),
				first_ts_ms: Date.parse("2026-04-01T09:00:00.000Z"),
				last_ts_ms: Date.parse("2026-05-02T10:02:00.000Z"),
				leaf_entry: "u4",
				name: "final name",
			});
			const writer = new IndexWriter(db);
			for (const { session_key } of db.query("SELECT session_key FROM sessions").all() as { session_key: number }[]) {
				writer.refreshSessionSummary(session_key);
			}
			expect(summaries(db)).toEqual(tallied);
		} finally {
			db.close();
			cleanupTempDirs();
		}
	});
}
