/**
 * A filter-only search lists the admitted sessions most recently active first (store/listing.ts
 * browseSessionsWhere). A narrow scope reads them through the cwd index and sorts them; a wide one
 * walks the activity index. Both must yield the same sessions in the same order, and each must
 * read through its index: a scope with no session used to cost a read of every session.
 */
import { describe, expect, test } from "bun:test";
import type { SessionRule } from "../../src/auth/scope.ts";
import { cwdRanges, sessionRuleSql } from "../../src/auth/scope-sql.ts";
import { NO_EVENT_TIME, openIndex } from "../../src/store/db.ts";
import { type BrowseOptions, browseSessionsWhere, listedSessionsWhere, sessionSummaries } from "../../src/store/listing.ts";

/** An index whose sessions table holds `n` sessions over a few workspaces, with tied and missing times. */
function indexWithSessions(n: number) {
	const db = openIndex(":memory:");
	const cwds = ["/w/a", "/w/a/sub", "/w/a/sub/deep", "/w/a-b", "/w/a.c", "/w/ab", "/w/b", "/", "relative/a", null];
	const insert = db.prepare(
		"INSERT INTO sessions (session_key, file_key, session_id, version, cwd, cwd_real, last_ts_ms, created, fragment_count, first_ts_ms) VALUES (?, ?, ?, 3, ?, ?, ?, ?, ?, ?)",
	);
	for (let k = 1; k <= n; k++) {
		const cwd = cwds[(k * 7) % cwds.length]!;
		// Every 5th session has no time; times repeat (ties broken by id, then key); ids repeat across files.
		const ts = k % 5 === 0 ? null : 1_000 * ((k * 13) % 17);
		// The oldest event's time: before the newest, in another order than it (ties too); for a
		// session without a time, NO_EVENT_TIME, except every 11th: not known (an older pi-events wrote it).
		const first = k % 11 === 0 ? null : ts === null ? NO_EVENT_TIME : ts - 1_000 * ((k * 5) % 7);
		insert.run(k, k, `id-${(k * 31) % (n - 3)}`, cwd, cwd, ts, `2026-01-0${1 + (k % 9)}`, k % 4, first);
	}
	return db;
}

const RULES: Record<string, SessionRule> = {
	"one workspace": { roots: ["/w/a"], excludeSessionIds: [] },
	"two workspaces": { roots: ["/w/a/sub", "/w/b"], excludeSessionIds: ["id-3"] },
	"a workspace narrowed by a cwd filter": { roots: ["/w/a"], cwdPrefix: "/w/a/sub", excludeSessionIds: [] },
	"targeted sessions": { roots: ["/w"], sessionIds: ["id-1", "id-2", "id-40"], excludeSessionIds: [] },
	"the filesystem root": { roots: ["/"], excludeSessionIds: [] },
	"a workspace without sessions": { roots: ["/nowhere"], excludeSessionIds: [] },
	"no roots": { roots: [], excludeSessionIds: [] },
};

function listed(db: ReturnType<typeof openIndex>, rule: SessionRule, ranges: boolean, rangeReadMax: number, options: BrowseOptions = {}): number[] {
	const cursor = browseSessionsWhere(db, sessionRuleSql(rule), ranges ? cwdRanges(rule) : null, rangeReadMax, options);
	const keys: number[] = [];
	for (let s = cursor.next(); s !== null; s = cursor.next()) keys.push(s.session_key);
	cursor.close();
	return keys;
}

describe("both ways of listing a scope's sessions", () => {
	const db = indexWithSessions(400);
	const byActivity = db
		.query("SELECT session_key, session_id, last_ts_ms FROM sessions ORDER BY last_ts_ms IS NULL, last_ts_ms DESC, session_id, session_key")
		.all() as { session_key: number }[];
	for (const [name, rule] of Object.entries(RULES)) {
		test(`${name}: the same sessions in the same order, whichever index is read`, () => {
			const walked = listed(db, rule, false, 0);
			const ranged = listed(db, rule, true, Number.MAX_SAFE_INTEGER);
			expect(ranged).toEqual(walked);
			// Fewer than the bound allows: read by walking after all, still the same.
			expect(listed(db, rule, true, 1)).toEqual(walked);
			// And that order is activity order, newest first, a session without a time last.
			const admitted = new Set(walked);
			expect(walked).toEqual(byActivity.map((r) => r.session_key).filter((k) => admitted.has(k)));
		});
		test(`${name}: oldest activity first, and within a time range, the same sessions in the same order whichever index is read`, () => {
			for (const options of [
				{ order: "first" },
				{ order: "first", untilMs: 9_000 },
				{ order: "activity", sinceMs: 5_000, untilMs: 12_000 },
			] as BrowseOptions[]) {
				const walked = listed(db, rule, false, 0, options);
				expect(listed(db, rule, true, Number.MAX_SAFE_INTEGER, options)).toEqual(walked);
				expect(listed(db, rule, true, 1, options)).toEqual(walked);
				// The order and the range, by brute force over every session the rule admits.
				const admitted = new Set(listed(db, rule, false, 0));
				// Oldest first: a time not known first (it may be the oldest), none at all last.
				const order =
					options.order === "first"
						? "first_ts_ms IS NOT NULL, first_ts_ms, session_id, session_key"
						: "last_ts_ms IS NULL, last_ts_ms DESC, session_id, session_key";
				const all = db.query(`SELECT session_key, first_ts_ms, last_ts_ms FROM sessions ORDER BY ${order}`).all() as {
					session_key: number;
					first_ts_ms: number | null;
					last_ts_ms: number | null;
				}[];
				const inRange = all.filter(
					(r) =>
						admitted.has(r.session_key) &&
						(options.sinceMs === undefined || (r.last_ts_ms !== null && r.last_ts_ms >= options.sinceMs)) &&
						(options.untilMs === undefined || r.first_ts_ms === null || r.first_ts_ms < options.untilMs),
				);
				expect(walked).toEqual(inRange.map((r) => r.session_key));
			}
		});
	}
	test("`pi-events sessions`' list: the same sessions in the same order through the cwd index as without it, copies ordered by file path", () => {
		const db2 = indexWithSessions(120);
		// Every session gets a file; some get a copy (same id and time, as /export + /import makes)
		// whose path sorts first although it was indexed later, one of them only by UTF-8 bytes
		// (U+FF5A before an astral letter, unlike UTF-16).
		const file = db2.prepare(
			"INSERT INTO files (file_key, path, real_path, source_dir, dev, ino, size, mtime_ms, durable_end, next_line, head_hash, tail_hash, parser_state, status, indexed_at) VALUES (?1, ?2, ?2, '/s', 1, ?1, 1, 0, 0, 0, '', '', '', 'ok', 0)",
		);
		for (let k = 1; k <= 120; k++) file.run(k, `/s/${k % 3 === 0 ? "\u{1F600}" : "m"}-${k}.jsonl`);
		for (let k = 3; k <= 120; k += 9) {
			db2.run(
				"INSERT INTO sessions (session_key, file_key, session_id, version, cwd, cwd_real, last_ts_ms, created, fragment_count) SELECT session_key + 1000, file_key + 1000, session_id, version, cwd, cwd_real, last_ts_ms, created, fragment_count FROM sessions WHERE session_key = ?1",
				[k],
			);
			file.run(k + 1000, `/s/\uff5a-${k}.jsonl`);
		}
		const expected = (rule: SessionRule) =>
			(
				db2
					.query(
						`SELECT s.session_key, s.cwd_real, s.session_id FROM sessions s JOIN files fl ON fl.file_key = s.file_key WHERE ${sessionRuleSql(rule).sql} ORDER BY s.last_ts_ms IS NULL, s.last_ts_ms DESC, s.session_id, fl.path`,
					)
					.all(...sessionRuleSql(rule).params) as { session_key: number }[]
			).map((r) => r.session_key);
		let copiesSeen = 0;
		for (const rule of Object.values(RULES)) {
			const keys = (ranges: boolean, max: number) =>
				listedSessionsWhere(db2, sessionRuleSql(rule), ranges ? cwdRanges(rule) : null, max).map((s) => s.session_key);
			expect(keys(true, Number.MAX_SAFE_INTEGER)).toEqual(expected(rule));
			expect(keys(true, 0)).toEqual(expected(rule));
			expect(keys(false, 0)).toEqual(expected(rule));
			copiesSeen += keys(false, 0).filter((k) => k > 1000).length;
			// The full rows, in the order asked for.
			const some = keys(false, 0).slice(0, 5).reverse();
			expect(sessionSummaries(db2, some).map((s) => s.session_key)).toEqual(some);
		}
		expect(copiesSeen).toBeGreaterThan(5);
		db2.close();
	});
	test("the listed sessions are not all or none of them (the rules select)", () => {
		expect(listed(db, RULES["one workspace"]!, true, 1000).length).toBeGreaterThan(10);
		expect(listed(db, RULES["one workspace"]!, true, 1000).length).toBeLessThan(200);
	});
});

test("a narrow scope reads only its sessions through the cwd index; a wide one walks the activity index, reading no session row", () => {
	const db = indexWithSessions(60);
	const seen: string[] = [];
	for (const method of ["query", "prepare"] as const) {
		const original = db[method].bind(db);
		db[method] = ((sql: string) => {
			seen.push(sql);
			return original(sql);
		}) as never;
	}
	const planOf = (sql: string) => {
		const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => "x");
		return (db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join(" | ");
	};
	listed(db, RULES["one workspace"]!, true, 1000);
	const narrow = seen.filter((s) => s.includes("FROM sessions s"));
	expect(narrow.length).toBe(2);
	for (const sql of narrow) expect(planOf(sql)).toMatch(/SEARCH s USING COVERING INDEX sessions_by_cwd \(cwd_real>\? AND cwd_real<\?\)/);
	seen.length = 0;
	listed(db, RULES["the filesystem root"]!, true, 10);
	const wide = seen.filter((s) => s.includes("FROM sessions s"));
	// The bounded count through the cwd index, then the walk, which sorts nothing.
	expect(wide.length).toBe(2);
	expect(planOf(wide[1]!)).toMatch(/^SCAN s USING COVERING INDEX sessions_by_activity$/);
	// Oldest activity first: through their index, in its order, nothing sorted, also within a time range.
	for (const options of [{ order: "first" }, { order: "first", untilMs: 9_000 }] as BrowseOptions[]) {
		seen.length = 0;
		listed(db, RULES["the filesystem root"]!, true, 10, options);
		const oldest = seen.filter((s) => s.includes("FROM sessions s") && s.includes("ORDER BY"));
		expect(oldest.length).toBe(1);
		expect(planOf(oldest[0]!)).toMatch(/^SCAN s USING COVERING INDEX sessions_by_first$/);
	}
	// The session list of a wide scope: the same index, in its order, no row read and nothing sorted.
	seen.length = 0;
	listedSessionsWhere(db, sessionRuleSql(RULES["the filesystem root"]!), cwdRanges(RULES["the filesystem root"]!), 10);
	const list = seen.filter((s) => s.includes("FROM sessions s") && s.includes("ORDER BY"));
	expect(list.length).toBe(1);
	expect(planOf(list[0]!)).toMatch(/^SCAN s USING COVERING INDEX sessions_by_activity$/);
	seen.length = 0;
	listedSessionsWhere(db, sessionRuleSql(RULES["one workspace"]!), cwdRanges(RULES["one workspace"]!), 1000);
	const narrowList = seen.filter((s) => s.includes("FROM sessions s") && s.includes("ORDER BY"));
	expect(planOf(narrowList[0]!)).toMatch(/SEARCH s USING COVERING INDEX sessions_by_cwd \(cwd_real>\? AND cwd_real<\?\)/);
	db.close();
});
