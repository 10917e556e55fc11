/**
 * Ranking few matches with the session rule beside the MATCH (gate.ts `scopeInSql`) must cost
 * O(candidates), not O(history): SQLite's plan reads one session row per candidate by its key.
 * The `IN (SELECT … FROM sessions)` form this replaced scanned every session in every search (a
 * wide scope at 5 GB: 11.7 ms against 0.24 for 99 candidates).
 */
import { expect, test } from "bun:test";
import { openIndex } from "../../src/store/db.ts";
import { rankFragments } from "../../src/store/search.ts";

test("the session rule beside the MATCH is a lookup per candidate, never a scan of sessions", () => {
	const db = openIndex(":memory:");
	const seen: string[] = [];
	const query = db.query.bind(db);
	db.query = ((sql: string) => {
		seen.push(sql);
		return query(sql);
	}) as typeof db.query;
	for (const roots of [["/"], ["/work/a", "/work/b"]]) {
		seen.length = 0;
		rankFragments(db, '"word"', { roots, excludeSessionIds: ["s1"], cutoff: null, excludeDerived: true }, 100, {
			sessionLevel: true,
			withTime: true,
			order: "oldest",
		});
		const sql = seen.find((s) => s.includes("FROM fts"))!;
		expect(sql).toContain("s.cwd_real");
		const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => "x");
		const plan = (db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join(" | ");
		expect(plan).toMatch(/SEARCH s\b.*INTEGER PRIMARY KEY/);
		expect(plan).not.toMatch(/SCAN s\b|LIST SUBQUERY/);
	}
	db.close();
});
