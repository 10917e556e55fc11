/**
 * The common-words window (store/search.ts sessionWindow): the newest (oldest) N fragments of the
 * admitted sessions, cut inside a session larger than the window, always at an event boundary.
 * Real session files, indexed.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { sessionWindow } from "../../src/store/search.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { assistantEntry, buildIndex, type TestIndex, userEntry, writeSession } from "../query/helpers.ts";

const CWD = "/work/window-test";
const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 10, minute)).toISOString();
let idx: TestIndex;

beforeAll(() => {
	const dir = join(makeTempDir("pi-events-window-"), "sessions");
	// Older and small: 5 user messages (one fragment each).
	const small = Array.from({ length: 5 }, (_, i) => userEntry(`u${i}`, i === 0 ? null : `u${i - 1}`, at(i), `question ${i}`));
	writeSession(dir, { id: "0000eeee-0000-4000-8000-000000000001", cwd: CWD, timestamp: at(0), entries: small }, `${at(0).replaceAll(":", "-")}_a`);
	// Newer and larger than the window: 40 assistant messages of text and two tool calls (three fragments each).
	const big = Array.from({ length: 40 }, (_, i) =>
		assistantEntry(`a${i}`, i === 0 ? null : `a${i - 1}`, at(100 + i), `answer ${i}`, [
			{ id: `c${i}x`, name: "bash", arguments: { command: `echo ${i} x` } },
			{ id: `c${i}y`, name: "bash", arguments: { command: `echo ${i} y` } },
		]),
	);
	writeSession(dir, { id: "0000eeee-0000-4000-8000-000000000002", cwd: CWD, timestamp: at(100), entries: big }, `${at(100).replaceAll(":", "-")}_b`);
	idx = buildIndex([dir]);
});

afterAll(() => {
	idx?.close();
	cleanupTempDirs();
});

const all = { sql: "1", params: [] };
/** Fragments in the range, and whether every event with a fragment in it has all of them there. */
function inRange(range: { from?: number; to?: number }): { fragments: number; wholeEvents: boolean; entries: string[] } {
	const rows = idx.db
		.query(
			`SELECT f.frag_key, f.event_key, e.entry_id, (SELECT count(*) FROM fragments g WHERE g.event_key = f.event_key) AS total
			 FROM fragments f JOIN events e ON e.event_key = f.event_key WHERE f.frag_key >= ? AND f.frag_key <= ? ORDER BY f.frag_key`,
		)
		.all(range.from ?? 0, range.to ?? Number.MAX_SAFE_INTEGER) as { event_key: number; entry_id: string; total: number }[];
	const per = new Map<number, number>();
	for (const r of rows) per.set(r.event_key, (per.get(r.event_key) ?? 0) + 1);
	return {
		fragments: rows.length,
		wholeEvents: rows.every((r) => per.get(r.event_key) === r.total),
		entries: [...new Set(rows.map((r) => r.entry_id))],
	};
}

test("a session larger than the window is cut inside, at the start of the event the count ends in", () => {
	const range = sessionWindow(idx.db, all, 10, "newest")!;
	expect(range.to).toBeUndefined();
	// The newest 10 fragments end inside a36 (three fragments an event): the window holds a36–a39 whole.
	const got = inRange(range);
	expect(got.entries).toEqual(["a36", "a37", "a38", "a39"]);
	expect(got.fragments).toBe(12);
	expect(got.wholeEvents).toBe(true);
});

test("oldest first: whole older sessions, then the oldest events of the larger one up to the end of the event the count ends in", () => {
	const range = sessionWindow(idx.db, all, 10, "oldest")!;
	expect(range.from).toBeUndefined();
	const got = inRange(range);
	// 5 user messages, then a0 (3) and a1 (the 10th fragment is its second of three): a1 whole.
	expect(got.entries).toEqual(["u0", "u1", "u2", "u3", "u4", "a0", "a1"]);
	expect(got.fragments).toBe(11);
	expect(got.wholeEvents).toBe(true);
});

test("a window the sessions cannot fill is null; one they fill exactly ends at a session edge", () => {
	expect(sessionWindow(idx.db, all, 126, "newest")).toBeNull();
	const exact = sessionWindow(idx.db, all, 125, "newest")!;
	expect(inRange(exact).fragments).toBe(125);
	expect(inRange(sessionWindow(idx.db, all, 120, "newest")!).entries[0]).toBe("a0");
});
