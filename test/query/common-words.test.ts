/**
 * The bounded path for queries made of common words only (a rare phrase of common words, an AND
 * of common words with few joint matches): searched in the newest (or oldest) in-scope sessions
 * holding a window of fragments, with honest coverage, and an answer that depends on nothing
 * outside the scope. Real session files, indexed; the bounds are scaled down (search's `bounds`)
 * so that a small index exercises them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { RECENT_MATCHES, type SearchBounds, type SearchFilters, search } from "../../src/query/search/search.ts";
import { noHitsHint } from "../../src/present/render.ts";
import { Gate } from "../../src/gate/gate.ts";
import { parseQuery } from "../../src/query/fts.ts";
import type { Scope } from "../../src/auth/scope.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { assistantEntry, buildIndex, type Entry, ids, type TestIndex, toolResultEntry, UNSCOPED, userEntry, writeSession } from "./helpers.ts";

const A = "/work/demo/common-a";
const B = "/work/demo/common-b";
const SESSIONS = 40;
const PER_SESSION = 30; // 1,200 fragments in A; every one holds alpha, beta and gamma
const BOUNDS: SearchBounds = { commonTermFragments: 200, windowFragments: 300 };
const inA: Scope = { roots: [A], current: null };

const sid = (ws: string, s: number) => `0000${ws}-0000-4000-8000-${String(s).padStart(12, "0")}`;
const at = (s: number, i: number) => new Date(Date.UTC(2026, 0, 1) + s * 3_600_000 + i * 1000).toISOString();

/** Text of entry i of session s: the three common words in their usual order, never "gamma alpha beta". */
function text(s: number, i: number): string {
	const extra = i % 2 === 0 ? "delta" : "epsilon";
	return `alpha beta gamma ${extra} filler ${i} of ${s}`;
}

/** A's sessions; `withB`: B's sessions interleaved (one after each of A's), with the same words. */
function writeCorpus(dir: string, withB: boolean): void {
	for (let s = 0; s < SESSIONS; s++) {
		const entries = [];
		let parent: string | null = null;
		for (let i = 0; i < PER_SESSION; i++) {
			// The rare phrase of common words: once in the oldest session, once in the newest; and
			// the rare AND ("delta epsilon" in one fragment) likewise.
			let t = text(s, i);
			if (i === 7 && (s === 0 || s === SESSIONS - 1)) t = `gamma alpha beta reversed once in session ${s}`;
			if (i === 9 && (s === 0 || s === SESSIONS - 1)) t = `alpha beta gamma delta epsilon both in session ${s}`;
			entries.push(userEntry(`a${s}x${i}`, parent, at(s, i), t));
			parent = `a${s}x${i}`;
		}
		// File names in time order: sessions are indexed in creation order.
		writeSession(dir, { id: sid("aaaa", s), cwd: A, timestamp: at(s, 0), entries }, `${at(s, 0).replaceAll(":", "-")}_${sid("aaaa", s)}`);
		if (withB) {
			const other = Array.from({ length: PER_SESSION }, (_, i) =>
				userEntry(`b${s}x${i}`, i === 0 ? null : `b${s}x${i - 1}`, at(s, i + 100), `gamma alpha beta delta epsilon in b ${s} ${i}`),
			);
			writeSession(dir, { id: sid("bbbb", s), cwd: B, timestamp: at(s, 100), entries: other }, `${at(s, 100).replaceAll(":", "-")}_${sid("bbbb", s)}`);
		}
	}
}

/**
 * An index of SESSIONS sessions in A, each PER_SESSION user messages with the common words
 * (ids `<p><s>x<i>`), then what `extra(s, last)` adds after the last of them; ids `<ws>` sessions.
 */
function indexWithExtras(tempPrefix: string, p: string, ws: string, extra: (s: number, last: string) => Entry[]): TestIndex {
	const dir = join(makeTempDir(tempPrefix), "sessions");
	for (let s = 0; s < SESSIONS; s++) {
		const entries: Entry[] = [];
		let parent: string | null = null;
		for (let i = 0; i < PER_SESSION; i++) {
			entries.push(userEntry(`${p}${s}x${i}`, parent, at(s, i), text(s, i)));
			parent = `${p}${s}x${i}`;
		}
		entries.push(...extra(s, parent!));
		writeSession(dir, { id: sid(ws, s), cwd: A, timestamp: at(s, 0), entries }, `${at(s, 0).replaceAll(":", "-")}_${sid(ws, s)}`);
	}
	return buildIndex([dir]);
}

let onlyA: TestIndex;
let both: TestIndex;

beforeAll(() => {
	const dirA = join(makeTempDir("pi-events-common-a-"), "sessions");
	writeCorpus(dirA, false);
	onlyA = buildIndex([dirA]);
	const dirAB = join(makeTempDir("pi-events-common-ab-"), "sessions");
	writeCorpus(dirAB, true);
	both = buildIndex([dirAB]);
}, 60_000);

afterAll(() => {
	onlyA?.close();
	both?.close();
	cleanupTempDirs();
});

const find = (
	db: TestIndex["db"],
	query: string,
	opts: { scope?: Scope; sort?: "newest" | "oldest"; bounds?: Partial<SearchBounds> | null; filters?: SearchFilters } = {},
) =>
	search(new Gate(db, opts.scope ?? UNSCOPED), {
		query,
		filters: opts.filters ?? {},
		limit: 20,
		sort: opts.sort,
		bounds: opts.bounds === null ? undefined : (opts.bounds ?? BOUNDS),
	});

describe("a query of common words only", () => {
	test("the words are common and hold the rare phrase twice (the premise)", () => {
		for (const w of ["alpha", "beta", "gamma"]) {
			const n = (onlyA.db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH ?").get(w) as { n: number }).n;
			expect(n).toBeGreaterThan(BOUNDS.commonTermFragments);
		}
		// Without bounds (the index is far smaller than the default window) both are found, ranked in full.
		const full = find(onlyA.db, '"gamma alpha beta"', { bounds: null });
		expect(full.coverage.mode).toBe("full");
		expect(full.coverage.rankedShare).toBe(1);
		expect(ids(full).sort()).toEqual([`${sid("aaaa", 0)}/a0x7`, `${sid("aaaa", SESSIONS - 1)}/a${SESSIONS - 1}x7`].sort());
	});

	test("a rare phrase of common words is searched in the newest window only, and says so", () => {
		const r = find(onlyA.db, '"gamma alpha beta"');
		expect(ids(r)).toEqual([`${sid("aaaa", SESSIONS - 1)}/a${SESSIONS - 1}x7`]);
		expect(r.coverage.mode).toBe("recent");
		expect(r.coverage.matchesExact).toBe(false);
		expect(r.coverage.rankedShare).toBeNull();
		expect(r.coverage.estimatedMatches).toBe(1);
	});

	test("sorting oldest first searches the oldest window", () => {
		const r = find(onlyA.db, '"gamma alpha beta"', { sort: "oldest" });
		expect(ids(r)).toEqual([`${sid("aaaa", 0)}/a0x7`]);
		expect(r.coverage.mode).toBe("recent");
	});

	test("an AND of common words with few joint matches is bounded the same way", () => {
		const r = find(onlyA.db, "delta epsilon");
		expect(ids(r)).toEqual([`${sid("aaaa", SESSIONS - 1)}/a${SESSIONS - 1}x9`]);
		expect(r.coverage.mode).toBe("recent");
		expect(r.coverage.rankedShare).toBeNull();
	});

	test("a common phrase with one selective word is ranked in full (its cost is bounded by that word)", () => {
		const r = find(onlyA.db, '"beta gamma" reversed');
		expect(r.coverage.mode).toBe("full");
		expect(r.coverage.rankedShare).toBe(1);
		expect(ids(r)).toHaveLength(0);
		const hit = find(onlyA.db, '"gamma alpha" reversed');
		expect(hit.coverage.mode).toBe("full");
		expect(ids(hit)).toHaveLength(2);
	});

	test("a phrase only in older sessions: the empty answer is explained within the window searched", () => {
		const r = find(onlyA.db, '"reversed once in session 0" alpha beta gamma', { bounds: { ...BOUNDS, commonTermFragments: 0 } });
		expect(r.hits).toHaveLength(0);
		expect(r.coverage.mode).toBe("recent");
		expect(r.coverage.emptyBecause).toBe("terms");
		expect(r.coverage.unmatchedTerms).toEqual(["reversed once in session 0"]);
	});

	test("the window is drawn from in-scope sessions: another workspace's newer sessions change nothing", () => {
		for (const query of ['"gamma alpha beta"', "delta epsilon"]) {
			for (const sort of [undefined, "newest", "oldest"] as const) {
				const alone = find(onlyA.db, query, { scope: inA, sort });
				const beside = find(both.db, query, { scope: inA, sort });
				expect(ids(beside)).toEqual(ids(alone));
				expect(beside.hits.map((h) => h.score)).toEqual(alone.hits.map((h) => h.score));
				expect({ ...beside.coverage }).toEqual({ ...alone.coverage });
				expect(alone.coverage.mode).toBe("recent");
			}
		}
		// Unscoped, B's many matches of the phrase are found (and are common enough to rank the newest).
		const all = find(both.db, '"gamma alpha beta"');
		expect(all.hits.some((h) => h.sessionId.startsWith("0000bbbb"))).toBe(true);
	});

	test("the window grows while it holds few matches: a rare phrase of common words is found in the oldest session", () => {
		// 30 fragments a session: the first window holds the two newest of A's sessions, then doubles.
		const bounds = { commonTermFragments: 200, windowFragments: 1_200, firstWindowFragments: 60 };
		const r = find(onlyA.db, '"gamma alpha beta"', { bounds });
		expect(r.coverage.mode).toBe("recent");
		expect(ids(r).sort()).toEqual([`${sid("aaaa", 0)}/a0x7`, `${sid("aaaa", SESSIONS - 1)}/a${SESSIONS - 1}x7`]);
		// Without growing (the first window is the whole bound), only the newest is found.
		const fixed = find(onlyA.db, '"gamma alpha beta"', { bounds: { ...bounds, windowFragments: 60 } });
		expect(ids(fixed)).toEqual([`${sid("aaaa", SESSIONS - 1)}/a${SESSIONS - 1}x7`]);
	});

	test("the window stops growing once it holds twice the limit's matches: a frequent phrase reads only the newest sessions", () => {
		const r = find(onlyA.db, '"alpha beta gamma"', { bounds: { commonTermFragments: 200, windowFragments: 1_200, firstWindowFragments: 60 } });
		expect(r.coverage.mode).toBe("recent");
		expect(r.hits).toHaveLength(20);
		// The first window (the two newest sessions) held enough: no hit from an older session.
		const newest = new Set([sid("aaaa", SESSIONS - 1), sid("aaaa", SESSIONS - 2)]);
		expect(r.hits.every((h) => newest.has(h.sessionId))).toBe(true);
		expect(r.coverage.estimatedMatches).toBeLessThanOrEqual(2 * PER_SESSION);
	});

	test("more than RECENT_MATCHES matches in the window: the newest are ranked, as for any very common query", () => {
		// B's sessions hold the phrase in every fragment: a window of 2,400 fragments holds about 1,200 of them.
		const r = find(both.db, '"gamma alpha beta"', { bounds: { ...BOUNDS, windowFragments: 2_400 } });
		expect(r.coverage.mode).toBe("recent");
		expect(r.coverage.rankedShare).toBeNull();
		expect(r.coverage.estimatedMatches).toBeLessThanOrEqual(RECENT_MATCHES);
		expect(r.hits).toHaveLength(20);
		// The newest session is B's last; its matches are among the hits.
		expect(r.hits.some((h) => h.sessionId === sid("bbbb", SESSIONS - 1))).toBe(true);
	});
	test("the newest matches of a very common word are the same read forwards from where they start as read backwards", () => {
		// Every fragment holds alpha; delta is in half of A's and all of B's. Past fullRankLimit only the
		// newest RECENT_MATCHES are ranked: found in windows of 150, 300, 600 fragments, or (a first
		// window larger than the index) read backwards over the whole posting list.
		for (const scope of [UNSCOPED, inA]) {
			for (const query of ["alpha", "delta"]) {
				const forwards = find(both.db, query, { scope, bounds: { ...BOUNDS, fullRankLimit: 100, firstWindowFragments: 150 } });
				const backwards = find(both.db, query, { scope, bounds: { ...BOUNDS, fullRankLimit: 100, firstWindowFragments: 1_000_000 } });
				expect(forwards.coverage.mode).toBe("recent");
				expect(forwards.coverage.estimatedMatches).toBe(RECENT_MATCHES);
				expect({ ...forwards, elapsedMs: 0 }).toEqual({ ...backwards, elapsedMs: 0 });
			}
		}
	});
});

describe("a common word with a filter checked on each match", () => {
	const sessionOf = (hitId: string) => hitId.split("/")[0]!;
	const newestSessions = (n: number) => Array.from({ length: n }, (_, i) => sid("aaaa", SESSIONS - 1 - i));

	test("a kind, role or error filter: searched in the newest window only, and says so", () => {
		// Every fragment is a user's text: the role filter passes them all, so the window's first
		// sessions already hold enough, and only the newest sessions answer.
		const byRole = find(onlyA.db, "alpha", { filters: { roles: ["user"] } });
		expect(byRole.coverage.mode).toBe("recent");
		expect(byRole.coverage.matchesExact).toBe(false);
		expect(byRole.hits.length).toBe(20);
		const windowSessions = new Set(newestSessions(Math.ceil(BOUNDS.windowFragments / PER_SESSION) + 1));
		for (const h of ids(byRole)) expect(windowSessions.has(sessionOf(h))).toBe(true);
		// Without bounds (a small index) the same request walks every match: all 1,200 counted.
		const full = find(onlyA.db, "alpha", { filters: { roles: ["user"] }, bounds: null });
		expect(full.coverage.mode).toBe("full");
		expect(full.coverage.estimatedMatches).toBe(SESSIONS * PER_SESSION);
	});

	test("a filter that leaves nothing in the window: empty, explained as the filters', in the newest sessions", () => {
		const r = find(onlyA.db, "alpha", { filters: { kinds: ["assistant.text"] } });
		expect(r.hits).toEqual([]);
		expect(r.coverage.mode).toBe("recent");
		expect(r.coverage.emptyBecause).toBe("filters");
		const hint = noHitsHint(r.coverage, { exact: false, exactFlag: "--exact", derivedFlag: "--include-derived" });
		expect(hint).toContain("only the newest sessions were searched");
	});

	test("with a time, session or cwd filter every match is kept: those ask for a part of the history", () => {
		const oldest = sid("aaaa", 0);
		const cases: SearchFilters[] = [
			{ roles: ["user"], untilMs: Date.parse(at(0, PER_SESSION)) },
			{ roles: ["user"], sessionIds: [oldest] },
			{ roles: ["user"], cwdPrefix: A },
		];
		for (const filters of cases) {
			const r = find(onlyA.db, "alpha", { filters, sort: "newest" });
			expect(r.coverage.mode).toBe("full");
			expect(r.coverage.matchesExact).toBe(true);
		}
		// The oldest session's matches are found although the newest window does not hold it.
		const old = find(onlyA.db, "alpha", { filters: { roles: ["user"], sessionIds: [oldest] } });
		expect(old.hits.length).toBe(20);
		for (const h of ids(old)) expect(sessionOf(h)).toBe(oldest);
	});
});

describe("a very common word with --since", () => {
	const since = Date.parse(at(SESSIONS - 3, 0));
	const many: Partial<SearchBounds> = { ...BOUNDS, fullRankLimit: 100 };
	const unlimited: Partial<SearchBounds> = { ...BOUNDS, fullRankLimit: 100_000 };

	test("only the sessions active since then are searched, and the answer is the complete ranking", () => {
		// 1,200 matches: more than fullRankLimit, so without the sessions' spans only the newest
		// would be taken by kind weight; the three newest sessions hold all 90 that pass.
		const r = find(onlyA.db, "alpha", { filters: { sinceMs: since }, bounds: many });
		const complete = find(onlyA.db, "alpha", { filters: { sinceMs: since }, bounds: unlimited });
		expect(complete.coverage.mode).toBe("full");
		expect(r.coverage).toEqual(complete.coverage);
		expect(r.coverage.estimatedMatches).toBe(3 * PER_SESSION);
		expect(r.coverage.matchesExact).toBe(true);
		expect(r.hits).toEqual(complete.hits);
		for (const h of ids(r)) expect(newestThree.has(h.split("/")[0]!)).toBe(true);
	});

	test("a time after every session: nothing to search, explained as the filters'", () => {
		const r = find(onlyA.db, "alpha", { filters: { sinceMs: Date.parse("2030-01-01T00:00:00Z") }, bounds: many });
		expect(r.hits).toEqual([]);
		expect(r.coverage.mode).toBe("full");
		expect(r.coverage.emptyBecause).toBe("filters");
	});

	const newestThree = new Set([sid("aaaa", SESSIONS - 1), sid("aaaa", SESSIONS - 2), sid("aaaa", SESSIONS - 3)]);
});

describe("a very common word with --until", () => {
	const many: Partial<SearchBounds> = { ...BOUNDS, fullRankLimit: 100, untilMinSessions: 1 };
	const unlimited: Partial<SearchBounds> = { ...BOUNDS, fullRankLimit: 100_000 };
	const sessionOfHit = (h: string) => h.split("/")[0]!;

	test("the sessions last active before then run out first: every match found, the complete ranking", () => {
		// 1,200 matches (more than fullRankLimit); the three oldest sessions hold the 90 before then.
		const until = Date.parse(at(3, 0));
		const r = find(onlyA.db, "alpha", { filters: { untilMs: until }, bounds: many });
		const complete = find(onlyA.db, "alpha", { filters: { untilMs: until }, bounds: unlimited });
		expect(complete.coverage.mode).toBe("full");
		expect(r.coverage).toEqual(complete.coverage);
		expect(r.coverage.estimatedMatches).toBe(3 * PER_SESSION);
		expect(r.hits).toEqual(complete.hits);
		const oldestThree = new Set([0, 1, 2].map((s) => sid("aaaa", s)));
		for (const h of ids(r)) expect(oldestThree.has(sessionOfHit(h))).toBe(true);
	});

	test("more than RECENT_MATCHES before then: the newest of them, all before then, from the sessions last active before then", () => {
		const until = Date.parse(at(30, 0));
		const r = find(onlyA.db, "alpha", { filters: { untilMs: until }, bounds: many, sort: "newest" });
		expect(r.coverage.mode).toBe("recent");
		expect(r.coverage.estimatedMatches).toBe(RECENT_MATCHES);
		// Sessions 29 down to 13 hold the newest 510 matches before then; the newest first is session 29's last entry.
		expect(r.hits[0]!.timestamp).toBe(at(29, PER_SESSION - 1));
		for (const h of r.hits) expect(Date.parse(h.timestamp!)).toBeLessThan(until);
		const newest = new Set(Array.from({ length: 17 }, (_, i) => sid("aaaa", 29 - i)));
		for (const h of ids(r)) expect(newest.has(sessionOfHit(h))).toBe(true);
	});

	test("only sessions in scope are read: another workspace's sessions, interleaved in time, change nothing", () => {
		const until = Date.parse(at(30, 0));
		const r = find(both.db, "alpha", { filters: { untilMs: until }, bounds: many, scope: inA, sort: "newest" });
		const alone = find(onlyA.db, "alpha", { filters: { untilMs: until }, bounds: many, scope: inA, sort: "newest" });
		expect(r.coverage.mode).toBe("recent");
		expect(ids(r)).toEqual(ids(alone));
		for (const h of ids(r)) expect(sessionOfHit(h).startsWith("0000aaaa")).toBe(true);
	});

	test("a scope of fewer sessions than the bound walks its own matches, whatever other workspaces hold", () => {
		const until = Date.parse(at(30, 0));
		// A holds 40 sessions: with a bound of 41 its matches are walked (newest by index order, kind
		// weight first); with 40, the time index is read. B's 40 sessions, in the same index, count for neither.
		for (const db of [onlyA.db, both.db]) {
			// The decision counts A's sessions only.
			const scoped = new Gate(db, inA).search(parseQuery("alpha").match, { untilMs: until }, {})!;
			expect(scoped.admitsSessions(40)).toBe(true);
			expect(scoped.admitsSessions(41)).toBe(false);
			const walked = find(db, "alpha", { filters: { untilMs: until }, bounds: { ...many, untilMinSessions: 41 }, scope: inA, sort: "newest" });
			const timed = find(db, "alpha", { filters: { untilMs: until }, bounds: { ...many, untilMinSessions: 40 }, scope: inA, sort: "newest" });
			expect(walked.coverage.mode).toBe("recent");
			expect(timed.coverage.mode).toBe("recent");
			for (const h of [...ids(walked), ...ids(timed)]) expect(sessionOfHit(h).startsWith("0000aaaa")).toBe(true);
			expect(ids(walked)).toEqual(
				ids(find(onlyA.db, "alpha", { filters: { untilMs: until }, bounds: { ...many, untilMinSessions: 41 }, scope: inA, sort: "newest" })),
			);
			expect(ids(timed)).toEqual(
				ids(find(onlyA.db, "alpha", { filters: { untilMs: until }, bounds: { ...many, untilMinSessions: 40 }, scope: inA, sort: "newest" })),
			);
		}
	});

	test("past the bound of sessions read, the matches are walked as before: the answer is still complete", () => {
		const until = Date.parse(at(1, 0));
		const r = find(onlyA.db, "alpha", { filters: { untilMs: until }, bounds: { ...many, untilSessions: 1 } });
		expect(r.coverage.mode).toBe("full");
		expect(r.coverage.estimatedMatches).toBe(PER_SESSION);
		expect(r.hits.length).toBe(20);
		for (const h of ids(r)) expect(sessionOfHit(h)).toBe(sid("aaaa", 0));
	});
});

describe("a very common word with --until and a filter checked on each match", () => {
	// 40 sessions of 30 user messages with alpha, and one assistant message with alpha in each.
	let index: TestIndex;
	beforeAll(() => {
		index = indexWithExtras("pi-events-common-until-kind-", "k", "cccc", (s, last) => [
			assistantEntry(`k${s}a`, last, at(s, 40), `alpha answered in session ${s}`),
		]);
	}, 60_000);
	afterAll(() => index?.close());

	const many: Partial<SearchBounds> = { ...BOUNDS, fullRankLimit: 100, untilMinSessions: 1 };
	const until = Date.parse(at(30, 0));
	const filters: SearchFilters = { kinds: ["assistant.text"], untilMs: until };
	const kindOf = (db: TestIndex["db"], hit: { sessionId: string; entryId: string }) =>
		(db.query("SELECT f.kind FROM fragments f JOIN events e ON e.event_key = f.event_key WHERE e.entry_id = ?").get(hit.entryId) as { kind: string }).kind;

	test("the sessions last active before then are read until twice the limit pass, and those are ranked: not a walk of the history", () => {
		// 1,200 user matches and 30 assistant ones before then (one a session): walking alpha's
		// matches for them would read the whole history; the newest sessions before then hold them.
		const r = search(new Gate(index.db, UNSCOPED), { query: "alpha", filters, limit: 5, bounds: many });
		expect(r.coverage.mode).toBe("recent");
		expect(r.coverage.matchesExact).toBe(false);
		expect(r.coverage.rankedShare).toBeNull();
		expect(r.coverage.estimatedMatches).toBe(10);
		expect(r.hits.length).toBe(5);
		const newestTen = new Set(Array.from({ length: 10 }, (_, i) => sid("cccc", 29 - i)));
		for (const h of r.hits) {
			expect(newestTen.has(h.sessionId)).toBe(true);
			expect(Date.parse(h.timestamp!)).toBeLessThan(until);
			expect(kindOf(index.db, h)).toBe("assistant.text");
		}
	});

	test("when the time range runs out first, every match before then was read: complete", () => {
		const r = search(new Gate(index.db, UNSCOPED), { query: "alpha", filters: { ...filters, untilMs: Date.parse(at(3, 0)) }, limit: 5, bounds: many });
		expect(r.coverage.mode).toBe("full");
		expect(r.coverage.matchesExact).toBe(true);
		expect(r.coverage.estimatedMatches).toBe(3);
		expect(new Set(r.hits.map((h) => h.sessionId))).toEqual(new Set([0, 1, 2].map((s) => sid("cccc", s))));
	});

	test("with --since and more sessions active since then than are searched one by one: the most recently active, until twice the limit pass", () => {
		const since = Date.parse(at(10, 0));
		const r = search(new Gate(index.db, UNSCOPED), {
			query: "alpha",
			filters: { kinds: ["assistant.text"], sinceMs: since },
			limit: 5,
			bounds: { ...many, sinceSessions: 2 },
		});
		expect(r.coverage.mode).toBe("recent");
		// Sessions 39 down to 30 hold the first ten that pass (one each); walking alpha's matches found all 30 since then.
		expect(r.coverage.estimatedMatches).toBe(10);
		const newestTen = new Set(Array.from({ length: 10 }, (_, i) => sid("cccc", SESSIONS - 1 - i)));
		for (const h of r.hits) {
			expect(newestTen.has(h.sessionId)).toBe(true);
			expect(kindOf(index.db, h)).toBe("assistant.text");
		}
		// When the bound of sessions holds every session active since then, every match is found.
		const all = search(new Gate(index.db, UNSCOPED), {
			query: "alpha",
			filters: { kinds: ["assistant.text"], sinceMs: Date.parse(at(37, 0)) },
			limit: 5,
			bounds: { ...many, sinceSessions: 2 },
		});
		expect(all.coverage.mode).toBe("full");
		expect(all.coverage.estimatedMatches).toBe(3);
	});

	test("sorted oldest first: the sessions whose oldest event is oldest, until twice the limit pass", () => {
		const r = search(new Gate(index.db, UNSCOPED), { query: "alpha", filters, limit: 5, bounds: many, sort: "oldest" });
		expect(r.coverage.mode).toBe("recent");
		expect(r.coverage.estimatedMatches).toBe(10);
		// The oldest first: sessions 0 to 4's answers, in time order.
		expect(r.hits.map((h) => h.sessionId)).toEqual([0, 1, 2, 3, 4].map((s) => sid("cccc", s)));
		for (const h of r.hits) expect(kindOf(index.db, h)).toBe("assistant.text");
	});

	test("a filter nothing passes stops at the bound of sessions read: empty, explained as the filters', in the newest sessions", () => {
		const r = find(index.db, "alpha", { filters: { kinds: ["bash.command"], untilMs: until }, bounds: { ...many, untilSessions: 5 } });
		expect(r.hits).toEqual([]);
		expect(r.coverage.mode).toBe("recent");
		expect(r.coverage.emptyBecause).toBe("filters");
		const hint = noHitsHint(r.coverage, { exact: false, exactFlag: "--exact", derivedFlag: "--include-derived" });
		expect(hint).toContain("only the newest sessions were searched");
	});
});

describe("a very common word with --file", () => {
	const TOUCHED = [6, 21];
	let index: TestIndex;
	beforeAll(() => {
		index = indexWithExtras("pi-events-common-file-", "f", "ffff", (s, last) => {
			if (!TOUCHED.includes(s)) return [];
			// One read of the file in the middle of the session: the call and its result mention alpha.
			const call = `call${s}`;
			return [
				assistantEntry(`f${s}c`, last, at(s, 40), "alpha: reading the target", [{ id: call, name: "read", arguments: { path: "src/target.ts" } }]),
				toolResultEntry(`f${s}r`, `f${s}c`, at(s, 41), call, "read", `alpha target contents of ${s}`),
				userEntry(`f${s}z`, `f${s}r`, at(s, 42), text(s, 99)),
			];
		});
	}, 60_000);
	afterAll(() => index?.close());

	const many: Partial<SearchBounds> = { ...BOUNDS, fullRankLimit: 100 };
	const unlimited: Partial<SearchBounds> = { ...BOUNDS, fullRankLimit: 100_000 };

	test("only the sessions whose events touch the file are searched, and the answer is the complete ranking", () => {
		const filters: SearchFilters = { files: [`${A}/src/target.ts`] };
		const r = find(index.db, "alpha", { filters, bounds: many });
		const complete = find(index.db, "alpha", { filters, bounds: unlimited });
		expect(complete.coverage.mode).toBe("full");
		expect(complete.hits.length).toBeGreaterThanOrEqual(TOUCHED.length);
		expect(r.coverage).toEqual(complete.coverage);
		expect(r.hits).toEqual(complete.hits);
		for (const h of r.hits) expect(TOUCHED.map((s) => sid("ffff", s))).toContain(h.sessionId);
		// A directory above the file: the same events.
		const byDir = find(index.db, "alpha", { filters: { files: [`${A}/src/`] }, bounds: many });
		expect(byDir.hits).toEqual(complete.hits);
	});

	test("a file no event touched: nothing to search, explained as the filters'", () => {
		const r = find(index.db, "alpha", { filters: { files: [`${A}/src/other.ts`] }, bounds: many });
		expect(r.hits).toEqual([]);
		expect(r.coverage.mode).toBe("full");
		expect(r.coverage.emptyBecause).toBe("filters");
		// A sibling whose name extends the file's is not under it.
		expect(find(index.db, "alpha", { filters: { files: [`${A}/src/target`] }, bounds: many }).hits).toEqual([]);
	});
});

describe("a very common word with --file of a path many events touch", () => {
	// Every session reads a file under src/: more file rows touch src/ than the bound allows.
	let index: TestIndex;
	beforeAll(() => {
		index = indexWithExtras("pi-events-common-dir-", "d", "dddd", (s, last) => {
			const call = `call${s}`;
			return [
				assistantEntry(`d${s}c`, last, at(s, 40), "alpha: reading it", [{ id: call, name: "read", arguments: { path: `src/file${s}.ts` } }]),
				toolResultEntry(`d${s}r`, `d${s}c`, at(s, 41), call, "read", `alpha contents of file ${s}`),
			];
		});
	}, 60_000);
	afterAll(() => index?.close());

	const bounds: Partial<SearchBounds> = { ...BOUNDS, fullRankLimit: 100, fileRows: 10 };
	const filters: SearchFilters = { files: [`${A}/src/`] };

	test("it is searched in the newest sessions' window, as a filter checked on each match is: not a walk of the history", () => {
		const touching = (index.db.query("SELECT count(*) AS n FROM event_files").get() as { n: number }).n;
		expect(touching).toBeGreaterThan(10);
		const r = search(new Gate(index.db, UNSCOPED), { query: "alpha", filters, limit: 5, bounds });
		expect(r.coverage.mode).toBe("recent");
		expect(r.coverage.matchesExact).toBe(false);
		expect(r.hits.length).toBe(5);
		// The window (the newest sessions holding 300 fragments: 10 of 32) holds 10 events that pass
		// (each session's read); walking alpha's matches for the filter found all 40.
		expect(r.coverage.estimatedMatches).toBe(10);
		const newest = new Set(Array.from({ length: 10 }, (_, i) => sid("dddd", SESSIONS - 1 - i)));
		for (const h of r.hits) {
			expect(newest.has(h.sessionId)).toBe(true);
			expect(h.entryId.endsWith("c")).toBe(true);
			expect(h.matchedFragments).toBe(1);
		}
	});

	test("when more sessions touch it than are read whole, the most recently active until twice the limit pass", () => {
		const r = search(new Gate(index.db, UNSCOPED), { query: "alpha", filters, limit: 5, bounds: { ...bounds, fileRows: 1000, fileSessions: 5 } });
		expect(r.coverage.mode).toBe("recent");
		// One read a session: sessions 39 down to 30; reading every session touching src/ found all 40.
		expect(r.coverage.estimatedMatches).toBe(10);
		const newest = new Set(Array.from({ length: 10 }, (_, i) => sid("dddd", SESSIONS - 1 - i)));
		for (const h of r.hits) expect(newest.has(h.sessionId)).toBe(true);
		// Oldest first: sessions 0 to 9.
		const oldest = search(new Gate(index.db, UNSCOPED), {
			query: "alpha",
			filters,
			limit: 5,
			sort: "oldest",
			bounds: { ...bounds, fileRows: 1000, fileSessions: 5 },
		});
		expect(oldest.hits.map((h) => h.sessionId)).toEqual([0, 1, 2, 3, 4].map((s) => sid("dddd", s)));
	});

	test("with the bound above its rows, every session touching it is searched: complete", () => {
		const r = search(new Gate(index.db, UNSCOPED), { query: "alpha", filters, limit: 5, bounds: { ...bounds, fileRows: 1000 } });
		expect(r.coverage.mode).toBe("full");
		expect(r.coverage.estimatedMatches).toBe(SESSIONS);
	});
});

describe("a very common word read one range at a time leaves pi-events' own echoes out", () => {
	// Every session runs `pi-events search alpha` through bash: its command and output are echoes.
	let index: TestIndex;
	beforeAll(() => {
		index = indexWithExtras("pi-events-common-echo-", "e", "eeee", (s, last) => {
			const call = `echo${s}`;
			return [
				assistantEntry(`e${s}c`, last, at(s, 40), null, [{ id: call, name: "bash", arguments: { command: "pi-events search alpha --all" } }]),
				toolResultEntry(`e${s}r`, `e${s}c`, at(s, 41), call, "bash", `1. alpha found in session ${s}`),
			];
		});
	}, 60_000);
	afterAll(() => index?.close());

	const bounds: Partial<SearchBounds> = { ...BOUNDS, fullRankLimit: 100, untilMinSessions: 1 };
	const cases: [string, SearchFilters][] = [
		["the window (no time filter)", { kinds: ["bash.command", "tool.result"] }],
		["the sessions before --until", { kinds: ["bash.command", "tool.result"], untilMs: Date.parse(at(SESSIONS, 0)) }],
		["the sessions since --since", { kinds: ["bash.command", "tool.result"], sinceMs: Date.parse(at(1, 0)) }],
	];
	for (const [name, filters] of cases) {
		test(`${name}: no echo among the hits; with includeDerived they come back`, () => {
			const r = search(new Gate(index.db, UNSCOPED), { query: "alpha", filters, limit: 5, bounds });
			expect(r.hits).toEqual([]);
			const withEchoes = search(new Gate(index.db, UNSCOPED), { query: "alpha", filters, limit: 5, bounds, includeDerived: true });
			expect(withEchoes.hits.length).toBe(5);
			for (const h of withEchoes.hits) expect(["c", "r"]).toContain(h.entryId.slice(-1));
		});
	}
});
