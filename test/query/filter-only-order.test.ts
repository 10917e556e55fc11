/**
 * A search by filters alone, newest or oldest first, with and without a time range: the hits are
 * the first events in that time order among every event the filters pass, the same as sorting all
 * of them (brute force over the events table). Sessions start at shuffled times and overlap; one
 * header time does not parse and one is missing; and two sessions are forks whose copied entries
 * keep their original times, older than the header (as pi's /fork and --fork write them), so a
 * session's header time bounds nothing: its events' times do (sessions.first_ts_ms).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type SearchFilters, search } from "../../src/query/search/search.ts";
import { Gate } from "../../src/gate/gate.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { assistantEntry, buildIndex, type Entry, type TestIndex, toolResultEntry, UNSCOPED, userEntry, writeSession } from "./helpers.ts";

const SESSIONS = 30;
const sid = (s: number) => `0000dddd-0000-4000-8000-${String(s).padStart(12, "0")}`;
// Start hours shuffled (a permutation of 0..29), so creation order, file order and time order differ.
const startHour = (s: number) => (s * 7) % SESSIONS;
// Each session's entries a few seconds off the others' (no two events at the same time: the order is the brute force's exactly).
const at = (s: number, minute: number) => new Date(Date.UTC(2026, 2, 1) + startHour(s) * 3_600_000 + minute * 60_000 + s * 1000).toISOString();

let index: TestIndex;

beforeAll(() => {
	const dir = join(makeTempDir("pi-events-filter-order-"), "sessions");
	for (let s = 0; s < SESSIONS; s++) {
		const entries: Entry[] = [];
		let parent: string | null = null;
		// Sessions last 3 hours, so they overlap: an older session's later events interleave a newer one's.
		for (let i = 0; i < 6; i++) {
			const call = `c${s}x${i}`;
			entries.push(userEntry(`u${s}x${i}`, parent, at(s, i * 30), `step ${i} of ${s}`));
			entries.push(assistantEntry(`a${s}x${i}`, `u${s}x${i}`, at(s, i * 30 + 1), null, [{ id: call, name: "bash", arguments: { command: `make ${i}` } }]));
			// Every third result of every other session fails.
			entries.push(toolResultEntry(`r${s}x${i}`, `a${s}x${i}`, at(s, i * 30 + 2), call, "bash", `output ${i}`, s % 2 === 0 && i % 3 === 1));
			parent = `r${s}x${i}`;
		}
		// Sessions 5 and 9 are forks made a day after their copied entries were written.
		const forked = s === 5 || s === 9;
		const timestamp = s === 11 ? "not a time" : s === 12 ? undefined : forked ? at(s, 24 * 60) : at(s, 0);
		const spec = { id: sid(s), cwd: "/work/order", timestamp, entries };
		const path = writeSession(dir, spec, `f${String(SESSIONS - s).padStart(2, "0")}_${sid(s)}`);
		if (s === 12) {
			// No header time at all: the header without its timestamp key.
			const [head, ...rest] = readFileSync(path, "utf8").split("\n");
			const header = JSON.parse(head!);
			delete header.timestamp;
			writeFileSync(path, [JSON.stringify(header), ...rest].join("\n"));
		}
	}
	index = buildIndex([dir]);
}, 60_000);

afterAll(() => {
	index?.close();
	cleanupTempDirs();
});

/** Every event the filter passes, by time (ties by entry id), as `sessionId/entryId`. */
function bruteForce(where: string, order: "ASC" | "DESC"): string[] {
	const rows = index.db
		.query(`SELECT s.session_id AS sid, e.entry_id AS eid, e.ts_ms AS ts FROM events e JOIN sessions s ON s.session_key = e.session_key WHERE ${where}`)
		.all() as { sid: string; eid: string; ts: number }[];
	rows.sort((a, b) => (order === "ASC" ? a.ts - b.ts : b.ts - a.ts));
	return rows.map((r) => `${r.sid}/${r.eid}`);
}

const UNTIL = Date.parse(at(0, 0)) + 15 * 3_600_000;
const SINCE = Date.parse(at(0, 0)) + 22 * 3_600_000;

/** Each session's first_ts_ms against its events' oldest time. */
function firstTimesMatchEvents(): void {
	const rows = index.db
		.query("SELECT s.session_id AS id, s.first_ts_ms AS first, (SELECT min(ts_ms) FROM events e WHERE e.session_key = s.session_key) AS oldest FROM sessions s")
		.all() as { id: string; first: number | null; oldest: number | null }[];
	expect(rows.length).toBe(SESSIONS);
	for (const r of rows) expect({ id: r.id, first: r.first }).toEqual({ id: r.id, first: r.oldest });
}

test("each session's first_ts_ms is its oldest event's time, after a cold index and after an append", () => {
	firstTimesMatchEvents();
	// An append whose entry is older than the session's first (clocks go wrong): the sync that appends it lowers first_ts_ms.
	const file = index.db.query("SELECT f.path AS path FROM files f JOIN sessions s ON s.file_key = f.file_key WHERE s.session_id = ?").get(sid(3)) as {
		path: string;
	};
	appendFileSync(
		file.path,
		`${JSON.stringify(userEntry("late-but-old", "r3x5", new Date(Date.UTC(2026, 1, 1)).toISOString(), "an entry stamped before the session"))}\n`,
	);
	const report = index.sync();
	expect(report.sessions.appended).toBe(1);
	firstTimesMatchEvents();
	const first = index.db.query("SELECT first_ts_ms AS t FROM sessions WHERE session_id = ?").get(sid(3)) as { t: number };
	expect(first.t).toBe(Date.UTC(2026, 1, 1));
});

describe("a search by filters alone", () => {
	const cases: [string, SearchFilters, string][] = [
		["failed results", { isError: true }, "e.is_error = 1"],
		["the assistant's messages", { roles: ["assistant"] }, "e.role = 'assistant'"],
		["failed results before a time", { isError: true, untilMs: UNTIL }, `e.is_error = 1 AND e.ts_ms < ${UNTIL}`],
		["the assistant's messages since a time", { roles: ["assistant"], sinceMs: SINCE }, `e.role = 'assistant' AND e.ts_ms >= ${SINCE}`],
		[
			"the assistant's messages in a range",
			{ roles: ["assistant"], sinceMs: UNTIL, untilMs: SINCE },
			`e.role = 'assistant' AND e.ts_ms >= ${UNTIL} AND e.ts_ms < ${SINCE}`,
		],
	];
	for (const [name, filters, where] of cases) {
		for (const sort of ["oldest", "newest"] as const) {
			test(`${name}, ${sort} first: the first events in time order, as sorting every one of them`, () => {
				const expected = bruteForce(where, sort === "oldest" ? "ASC" : "DESC");
				expect(expected.length).toBeGreaterThan(10);
				for (const limit of [1, 7, 10, 50]) {
					const r = search(new Gate(index.db, UNSCOPED), { query: "", filters, limit, sort });
					expect(r.coverage.mode).toBe("full");
					const got = r.hits.map((h) => `${h.sessionId}/${h.entryId}`);
					// Equal times never occur here, so the order is the brute force's exactly.
					expect(got).toEqual(expected.slice(0, limit));
				}
			});
		}
	}

	test("the forks' copied entries are found before their header time, and before the time range's end", () => {
		const forks = new Set([sid(5), sid(9)]);
		const r = search(new Gate(index.db, UNSCOPED), { query: "", filters: { roles: ["assistant"], untilMs: UNTIL }, limit: 50, sort: "oldest" });
		const fromForks = r.hits.filter((h) => forks.has(h.sessionId));
		expect(fromForks.length).toBeGreaterThan(0);
		const header = (s: number) => Date.parse(at(s, 24 * 60));
		for (const h of fromForks) expect(Date.parse(h.timestamp!)).toBeLessThan(Math.min(header(5), header(9), UNTIL));
	});
});

describe("sessions whose oldest time is not known (written by a pi-events before schema 19)", () => {
	test("are read first when oldest first and kept within --until: the answers are still every event's first in time order", () => {
		// As an older writer leaves them: the forks and a few others.
		index.db.run(`UPDATE sessions SET first_ts_ms = NULL WHERE session_id IN (?, ?, ?, ?)`, [sid(5), sid(9), sid(0), sid(17)]);
		for (const [filters, where] of [
			[{ roles: ["assistant"] }, "e.role = 'assistant'"],
			[{ roles: ["assistant"], untilMs: UNTIL }, `e.role = 'assistant' AND e.ts_ms < ${UNTIL}`],
			[{ isError: true, sinceMs: UNTIL }, `e.is_error = 1 AND e.ts_ms >= ${UNTIL}`],
		] as [SearchFilters, string][]) {
			for (const sort of ["oldest", "newest"] as const) {
				const expected = bruteForce(where, sort === "oldest" ? "ASC" : "DESC");
				for (const limit of [1, 10, 50]) {
					const r = search(new Gate(index.db, UNSCOPED), { query: "", filters, limit, sort });
					expect(r.hits.map((h) => `${h.sessionId}/${h.entryId}`)).toEqual(expected.slice(0, limit));
				}
			}
		}
	});

	test("the next sync that appends to such a session computes it", () => {
		const file = index.db.query("SELECT f.path AS path FROM files f JOIN sessions s ON s.file_key = f.file_key WHERE s.session_id = ?").get(sid(5)) as {
			path: string;
		};
		appendFileSync(file.path, `${JSON.stringify(userEntry("later", "r5x5", at(5, 24 * 60 + 5), "a later entry"))}\n`);
		expect(index.sync().sessions.appended).toBe(1);
		const row = index.db
			.query(
				"SELECT s.first_ts_ms AS first, (SELECT min(ts_ms) FROM events e WHERE e.session_key = s.session_key) AS oldest FROM sessions s WHERE session_id = ?",
			)
			.get(sid(5)) as { first: number | null; oldest: number };
		expect(row.first).toBe(row.oldest);
		expect(row.first).toBe(Date.parse(at(5, 0)));
	});
});
