/**
 * A tool result appended after its call was indexed asks the index whether that call ran
 * pi-events (IndexWriter.isDerivedCall). It must be a seek on the index of such calls, which are
 * rare, not a walk over the session's events: in a 9,850-event session the walk took 11–13 ms warm
 * and 75 ms cold, for every tool result a sync appended. The answer must stay right both ways.
 */
import { afterAll, expect, test } from "bun:test";
import { appendFileSync } from "node:fs";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { assistantEntry, buildIndex, toolResultEntry, userEntry, writeSession } from "../query/helpers.ts";

afterAll(cleanupTempDirs);

test("an appended tool result is judged an echo of pi-events by a seek on the calls that run it", () => {
	const dir = makeTempDir("pi-events-derived-plan-");
	const id = "0000eeee-0000-4000-8000-000000000001";
	const file = writeSession(dir, {
		id,
		cwd: "/work/app",
		entries: [
			userEntry("u1", null, "2026-10-01T10:00:01.000Z", "look for the deploy notes"),
			assistantEntry("a1", "u1", "2026-10-01T10:00:02.000Z", null, [
				{ id: "call-search", name: "event_search", arguments: { query: "deploy" } },
				{ id: "call-bash", name: "bash", arguments: { command: "ls" } },
			]),
		],
	});
	const index = buildIndex([dir]);
	const seen: string[] = [];
	const query = index.db.query.bind(index.db);
	index.db.query = ((sql: string) => {
		seen.push(sql);
		return query(sql);
	}) as typeof index.db.query;

	// The results come in a later sync, after their calls were indexed.
	for (const e of [
		toolResultEntry("r1", "a1", "2026-10-01T10:00:03.000Z", "call-search", "event_search", "3 hits about the deploy"),
		toolResultEntry("r2", "r1", "2026-10-01T10:00:04.000Z", "call-bash", "bash", "README.md deploy.md"),
	]) {
		appendFileSync(file, `${JSON.stringify(e)}\n`);
	}
	expect(index.sync().sessions.appended).toBe(1);

	const derived = index.db
		.query(
			"SELECT e.entry_id AS id, f.derived FROM events e JOIN fragments f ON f.event_key = e.event_key WHERE e.entry_id IN ('r1', 'r2') ORDER BY e.entry_id",
		)
		.all();
	expect(derived).toEqual([
		{ id: "r1", derived: 1 },
		{ id: "r2", derived: 0 },
	]);

	const sql = seen.find((s) => s.includes("derived_calls IS NOT NULL"));
	expect(sql).toBeDefined();
	const plan = (index.db.query(`EXPLAIN QUERY PLAN ${sql}`).all(1, "call-bash") as { detail: string }[]).map((r) => r.detail).join(" | ");
	expect(plan).toContain("USING INDEX events_with_derived_calls");
	index.close();
});
