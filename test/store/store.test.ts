/**
 * store/ on its own: the read-side queries (events.ts), the caller lookups (caller.ts), the search
 * SQL (search.ts), the status queries (status.ts), deletion by the writer (write.ts), and the
 * classification of database failures by result code (db.ts). Real indexes built from real
 * session files in temp dirs; the SQL is checked by what it returns.
 */
import type { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { scopedMatch } from "../../src/auth/scope-tokens.ts";
import { parseQuery } from "../../src/query/fts.ts";
import { invocationCutoff, sessionIdOfFile } from "../../src/store/caller.ts";
import { describeDbError, isDatabaseError, openIndex, SCHEMA_COMPATIBLE_FROM, SCHEMA_UPGRADES, SCHEMA_VERSION } from "../../src/store/db.ts";
import { EventStore } from "../../src/store/events.ts";
import { countMatches, eventsWithFailedCalls, matchedPerEvent, rankFragments, type SqlFilters } from "../../src/store/search.ts";
import { cwdOfIndexedFile, indexCounts, indexedSize, lastSync } from "../../src/store/status.ts";
import { IndexWriter } from "../../src/store/write.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { assistantEntry, buildIndex, type Entry, oneMessageSession, type TestIndex, toolResultEntry, userEntry, writeSession } from "../query/helpers.ts";

afterAll(cleanupTempDirs);

const A = "0000aaaa-5707-4000-8000-000000000001";
const B = "0000aaaa-5707-4000-8000-000000000002";
const CHILD = "0000aaaa-5707-4000-8000-000000000003";
const t = (s: number) => `2026-10-03T10:00:${String(s).padStart(2, "0")}.000Z`;

let base: string;
let sessions: string;
let fileA: string;
let copyOfA: string;
let fileB: string;
let idx: TestIndex;
let store: EventStore;

/** Session A: a user turn, a call of `read` (relative path) that fails, a fork (two children of a1), a label, a rename, an orphan. */
function sessionA(): Entry[] {
	return [
		userEntry("u1", null, t(1), "storeword first question"),
		assistantEntry("a1", "u1", t(2), "storeword reading", [{ id: "call-1", name: "read", arguments: { path: "src/app.ts" } }]),
		toolResultEntry("r1", "a1", t(3), "call-1", "read", "storeword no such file", true),
		userEntry("u2", "a1", t(4), "storeword another branch"),
		{ type: "label", id: "l1", parentId: "u2", timestamp: t(5), targetId: "u1", label: "start" },
		{ type: "session_info", id: "n1", parentId: "l1", timestamp: t(6), name: "Store test" },
		assistantEntry("a2", "n1", t(7), "storeword second call", [{ id: "call-2", name: "bash", arguments: { command: "ls" } }]),
		{ type: "session_info", id: "n2", parentId: "a2", timestamp: t(8), name: "Renamed after" },
		userEntry("o1", "missing-parent", t(9), "storeword orphan"),
	];
}

beforeAll(() => {
	base = makeTempDir("pi-events-store-");
	sessions = join(base, "sessions");
	const cwd = join(base, "ws");
	fileA = writeSession(sessions, { id: A, cwd, entries: sessionA() }, "a");
	// The same session id in a second, shorter file (an /export + /import copy): the longer one comes first.
	copyOfA = writeSession(sessions, { id: A, cwd, entries: sessionA().slice(0, 2) }, "a-copy");
	fileB = writeSession(sessions, oneMessageSession(B, join(base, "other"), "storeword elsewhere"), "b");
	writeSession(sessions, { id: CHILD, cwd, entries: [userEntry("u1", null, t(1), "storeword first question")] }, "child");
	// Make CHILD a fork child of A: its header names A's file as parentSession.
	const childPath = join(sessions, "child.jsonl");
	const lines = readFileSync(childPath, "utf8").split("\n");
	const header = JSON.parse(lines[0]!);
	header.parentSession = fileA;
	lines[0] = JSON.stringify(header);
	writeFileSync(childPath, lines.join("\n"));
	idx = buildIndex([sessions]);
	store = new EventStore(idx.db);
});
afterAll(() => idx?.close());

const keyOf = (path: string) =>
	(idx.db.query("SELECT s.session_key AS k FROM sessions s JOIN files f ON f.file_key = s.file_key WHERE f.path = ?1").get(path) as { k: number }).k;

describe("events.ts: EventStore read queries", () => {
	test("sessionsById lists every file holding the id, the one with the most entries first", () => {
		expect(store.sessionsById(A).map((s) => s.path)).toEqual([fileA, copyOfA]);
		expect(store.sessionsById("no-such-session")).toEqual([]);
	});

	test("event, eventsBySeq, children and roots (several roots: an orphan counts)", () => {
		const k = keyOf(fileA);
		expect(store.event(k, "a1")?.seq).toBe(1);
		expect(store.event(k, "nope")).toBeNull();
		expect(store.eventsBySeq(k, 1, 3).map((e) => e.entry_id)).toEqual(["a1", "r1", "u2"]);
		expect(store.children(k, "a1").map((e) => e.entry_id)).toEqual(["r1", "u2"]);
		expect(store.roots(k).map((e) => e.entry_id)).toEqual(["u1", "o1"]);
	});

	test("pointingAt, callerOf and resultsFor follow recorded pointers and tool-call ids", () => {
		const k = keyOf(fileA);
		expect(store.pointingAt(k, "u1").map((e) => e.entry_id)).toEqual(["l1"]);
		expect(store.callerOf(k, "call-1")?.entry_id).toBe("a1");
		expect(store.callerOf(k, "call-unknown")).toBeNull();
		expect(store.resultsFor(k, "call-1").map((e) => e.entry_id)).toEqual(["r1"]);
	});

	test("fragments and file evidence (a relative recorded path also gets its absolute form)", () => {
		const k = keyOf(fileA);
		const a1 = store.event(k, "a1")!;
		expect(store.fragments(a1.event_key).map((f) => f.fragment_id)).toEqual(["assistant.text#0", "tool.call#1"]);
		expect(store.files(a1.event_key)).toEqual([{ path: "src/app.ts", op: "read", absolutePath: join(base, "ws", "src", "app.ts") }]);
	});

	test("factsBefore: the name and last entry as they were before an append position", () => {
		const k = keyOf(fileA);
		expect(store.factsBefore(k, 6)).toEqual({ name: "Store test", leaf: "n1" });
		expect(store.factsBefore(k, 5)).toEqual({ name: null, leaf: "l1" });
		expect(store.factsBefore(k, 0)).toEqual({ name: null, leaf: null });
	});

	test("sessionByRealPath and childrenOfFile resolve fork lineage by canonical file path", () => {
		expect(store.sessionByRealPath(fileA)?.session_id).toBe(A);
		expect(store.childrenOfFile(fileA).map((s) => s.session_id)).toEqual([CHILD]);
		expect(store.childrenOfFile(fileB)).toEqual([]);
	});
});

describe("caller.ts: the current session's file and cutoff", () => {
	test("sessionIdOfFile by path; unknown files are null", () => {
		expect(sessionIdOfFile(idx.db, fileA)).toBe(A);
		expect(sessionIdOfFile(idx.db, join(base, "nowhere.jsonl"))).toBeNull();
	});

	test("with a tool-call id: the entry holding that call; not indexed: 0 (fail closed)", () => {
		expect(invocationCutoff(idx.db, A, fileA, "call-2")).toBe(6);
		expect(invocationCutoff(idx.db, A, fileA, "call-1")).toBe(1);
		expect(invocationCutoff(idx.db, A, fileA, "not-yet")).toBe(0);
	});

	test("without one: the last assistant entry with tool calls", () => {
		expect(invocationCutoff(idx.db, A, fileA, null)).toBe(6);
	});

	test("only the caller's own file counts; with only the id, the smallest cutoff of its files", () => {
		// The copy holds a1 (call-1) at seq 1 and no call-2.
		expect(invocationCutoff(idx.db, A, copyOfA, null)).toBe(1);
		expect(invocationCutoff(idx.db, A, copyOfA, "call-2")).toBe(0);
		expect(invocationCutoff(idx.db, A, null, null)).toBe(1);
		// A file that is not indexed hides the whole session.
		expect(invocationCutoff(idx.db, A, join(base, "nowhere.jsonl"), null)).toBe(0);
	});
});

describe("search.ts: the search SQL", () => {
	const all: SqlFilters = { roots: null, excludeSessionIds: [], cutoff: null };
	const sessionOf = (eventKey: number) =>
		(
			idx.db.query("SELECT s.session_id AS id FROM events e JOIN sessions s ON s.session_key = e.session_key WHERE e.event_key = ?1").get(eventKey) as {
				id: string;
			}
		).id;

	test("countMatches counts matching fragments up to the cap", () => {
		const match = parseQuery("storeword").match;
		const total = countMatches(idx.db, match, 1000);
		expect(total).toBeGreaterThan(5);
		expect(countMatches(idx.db, match, 3)).toBe(3);
		expect(countMatches(idx.db, parseQuery("zzznothing").match, 10)).toBe(0);
	});

	test("the scope as tokens in the MATCH and as SQL beside it select the same fragments", () => {
		const user = parseQuery("storeword").match;
		const filters: SqlFilters = { roots: [join(base, "ws")], excludeSessionIds: [CHILD], cutoff: null };
		const tokens = scopedMatch(user, { roots: filters.roots, excludeSessionIds: filters.excludeSessionIds })!;
		const viaTokens = rankFragments(idx.db, tokens, filters, 1000).map((r) => r.frag_key);
		const viaSql = rankFragments(idx.db, user, filters, 1000, { sessionLevel: true }).map((r) => r.frag_key);
		expect(viaSql.sort()).toEqual(viaTokens.sort());
		const ranked = rankFragments(idx.db, tokens, filters, 1000);
		expect(ranked.length).toBeGreaterThan(0);
		expect(new Set(ranked.map((r) => sessionOf(r.event_key)))).toEqual(new Set([A]));
		expect(new Set(rankFragments(idx.db, user, all, 1000).map((r) => sessionOf(r.event_key)))).toEqual(new Set([A, B, CHILD]));
	});

	test("the cutoff leaves out the current session's events from its position on, and only its own", () => {
		const user = parseQuery("storeword").match;
		const cut: SqlFilters = { roots: null, excludeSessionIds: [], cutoff: { sessionId: A, seq: 2 } };
		const seqs = rankFragments(idx.db, user, cut, 1000).map(
			(r) =>
				idx.db.query("SELECT e.seq, s.session_id FROM events e JOIN sessions s USING (session_key) WHERE e.event_key = ?1").get(r.event_key) as {
					seq: number;
					session_id: string;
				},
		);
		expect(seqs.filter((e) => e.session_id === A).every((e) => e.seq < 2)).toBe(true);
		expect(seqs.some((e) => e.session_id === B)).toBe(true);
	});

	test("matchedPerEvent counts the matching fragments of each event", () => {
		const a1 = store.event(keyOf(fileA), "a1")!;
		const u1 = store.event(keyOf(fileA), "u1")!;
		const counts = matchedPerEvent(idx.db, parseQuery("storeword").match, [a1.event_key, u1.event_key]);
		expect(counts.get(u1.event_key)).toBe(1);
		// a1's text matches; its tool call (read src/app.ts) does not.
		expect(counts.get(a1.event_key)).toBe(1);
		// "reading" also matches the word form "read": the text and the call of `read` both.
		expect(matchedPerEvent(idx.db, parseQuery("reading").match, [a1.event_key]).get(a1.event_key)).toBe(2);
		expect(matchedPerEvent(idx.db, parseQuery("reading").match, [a1.event_key], ["tool.call"]).get(a1.event_key)).toBe(1);
	});

	test("eventsWithFailedCalls: a call whose result failed; a result after the cutoff does not count", () => {
		const a1 = store.event(keyOf(fileA), "a1")!;
		const a2 = store.event(keyOf(fileA), "a2")!;
		expect([...eventsWithFailedCalls(idx.db, [a1.event_key, a2.event_key])]).toEqual([a1.event_key]);
		expect([...eventsWithFailedCalls(idx.db, [a1.event_key], { sessionId: A, seq: 2 })]).toEqual([]);
		expect([...eventsWithFailedCalls(idx.db, [a1.event_key], { sessionId: A, seq: 3 })]).toEqual([a1.event_key]);
	});
});

describe("status.ts", () => {
	test("counts, indexed size, last sync and the cwd of an indexed file", () => {
		const counts = indexCounts(idx.db);
		expect(counts.sessions).toBe(4);
		expect(counts.files).toBe(4);
		expect(counts.events).toBe(9 + 2 + 1 + 1);
		expect(indexedSize(idx.db, fileB)).toBe(Bun.file(fileB).size);
		expect(indexedSize(idx.db, join(base, "nowhere.jsonl"))).toBeNull();
		expect(lastSync(idx.db)?.complete).toBe(true);
		expect(cwdOfIndexedFile(idx.db, fileB)).toBe(join(base, "other"));
	});
});

describe("write.ts: deleting a file", () => {
	test("removes its session, events, fragments, file evidence and full-text postings", () => {
		const own = buildIndex([sessions]);
		try {
			const writer = new IndexWriter(own.db);
			const before = countMatches(own.db, parseQuery("storeword").match, 1000);
			const fileKey = (own.db.query("SELECT file_key AS k FROM files WHERE path = ?1").get(fileA) as { k: number }).k;
			const sessionKey = writer.sessionKeyOf(fileKey)!;
			const inSession = (
				own.db
					.query("SELECT count(*) AS n FROM fragments f CROSS JOIN fts WHERE fts.rowid = f.frag_key AND f.session_key = ?1 AND fts MATCH ?2")
					.get(sessionKey, parseQuery("storeword").match) as { n: number }
			).n;
			expect(inSession).toBeGreaterThan(0);
			own.db.transaction(() => writer.deleteFile(fileKey)).immediate();
			const left = (sql: string) => (own.db.query(sql).get(sessionKey) as { n: number }).n;
			expect(left("SELECT count(*) AS n FROM sessions WHERE session_key = ?1")).toBe(0);
			expect(left("SELECT count(*) AS n FROM events WHERE session_key = ?1")).toBe(0);
			expect(left("SELECT count(*) AS n FROM fragments WHERE session_key = ?1")).toBe(0);
			expect(countMatches(own.db, parseQuery("storeword").match, 1000)).toBe(before - inSession);
			// Words only the deleted file held are gone from the full-text index.
			expect(countMatches(own.db, parseQuery("orphan").match, 10)).toBe(0);
			expect(countMatches(own.db, parseQuery('"another branch"').match, 10)).toBe(0);
		} finally {
			own.close();
		}
	});
});

describe("db.ts: failures classified by result code, never by message text", () => {
	const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { name: "SQLiteError", code });

	test.each([
		["SQLITE_FULL", "the disk is full"],
		["SQLITE_IOERR_WRITE", "an I/O error on the index file"],
		["SQLITE_READONLY_DBMOVED", "the index location is read-only"],
		["SQLITE_BUSY_SNAPSHOT", "the index is locked by another process"],
		["SQLITE_CORRUPT_VTAB", "the index file is damaged (delete it; it is rebuilt from the sessions)"],
		["SQLITE_NOTADB", "the file is not a pi-events index"],
		["SQLITE_CANTOPEN", "the file cannot be opened"],
		["SQLITE_CONSTRAINT_UNIQUE", "a database error (SQLITE_CONSTRAINT_UNIQUE)"],
	])("%s → %s, whatever the message says", (code, meaning) => {
		expect(describeDbError(sqliteError(code, "database or disk is full, readonly, locked"))).toBe(meaning);
		expect(isDatabaseError(sqliteError(code, ""))).toBe(true);
	});

	test("an error without a SQLite code is described by its own message, even one that sounds like SQLite", () => {
		const plain = new Error("database or disk is full");
		expect(describeDbError(plain)).toBe("database or disk is full");
		expect(isDatabaseError(plain)).toBe(false);
		expect(isDatabaseError(Object.assign(new Error("x"), { code: "ENOSPC" }))).toBe(false);
	});

	test("a real file that is not a database is refused with the code's meaning", () => {
		const dir = makeTempDir("pi-events-notdb-");
		const path = join(dir, "index.db");
		writeFileSync(path, "not a database ".repeat(400));
		expect(() => openIndex(path)).toThrow("the file is not a pi-events index");
	});

	test("an index one additive step behind is brought up to date in place: its rows kept, its schema that of a new index", () => {
		const sessions = makeTempDir("pi-events-upgrade-src-");
		for (let i = 0; i < 3; i++) writeSession(sessions, oneMessageSession(`0000000${i}-0000-4000-8000-000000000000`, `/work/p${i}`, `upgradeword ${i}`));
		// A session of several turns, with an abandoned branch: the turns 22 adds are computed on upgrade.
		copyFileSync(
			join(import.meta.dir, "../../fixtures/sessions/pi/2026-11-03T10-00-00-000Z_01a1a0d9-f100-7328-bb28-2bee6eb7a29c.jsonl"),
			join(sessions, "branched.jsonl"),
		);
		const built = buildIndex([sessions]);
		const turnsOf = (db: Database) => db.query("SELECT session_key, seq, turn_seq FROM events ORDER BY session_key, seq").all();
		const turns = turnsOf(built.db);
		expect(turns.filter((r) => (r as { turn_seq: number | null }).turn_seq !== null).length).toBeGreaterThan(5);
		/** The events table as it was before 22: no turn_seq, no index of a turn's answers. */
		const before22 = (db: Database) => {
			db.run("DROP INDEX events_turn_answers");
			db.run("ALTER TABLE events DROP COLUMN turn_seq");
		};
		const path = join(built.dir, "index.db");
		const schemaOf = (db: Database) =>
			(db.query("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name").all() as { name: string; sql: string }[]).map(
				(r) => `${r.name}: ${r.sql.replace(/\s+/g, " ")}`,
			);
		const current = schemaOf(built.db);
		const first = built.db.query("SELECT session_key, first_ts_ms FROM sessions ORDER BY session_key").all();
		expect(first.every((r) => typeof (r as { first_ts_ms: unknown }).first_ts_ms === "number")).toBe(true);
		/** The sessions table as it was before 19: no first_ts_ms, the indexes without it (as 17 and 18 had them, unless `sessionIndexes` is false). */
		const before19 = (db: Database, sessionIndexes = true) => {
			db.run("DROP INDEX sessions_by_first");
			db.run("DROP INDEX sessions_by_cwd");
			db.run("DROP INDEX sessions_by_activity");
			db.run("ALTER TABLE sessions DROP COLUMN first_ts_ms");
			if (!sessionIndexes) return;
			db.run("CREATE INDEX sessions_by_activity ON sessions(last_ts_ms DESC, session_id, session_key, cwd_real, created, fragment_count)");
			db.run("CREATE INDEX sessions_by_cwd ON sessions(cwd_real, last_ts_ms, session_id, created, fragment_count)");
		};
		// The schema as version 16 had it: no cwd index, the activity index without the cwd (17), no index of calls that run pi-events (18).
		built.db.run("DROP INDEX events_with_derived_calls");
		before19(built.db, false);
		before22(built.db);
		built.db.run("CREATE INDEX sessions_by_activity ON sessions(last_ts_ms DESC, session_id)");
		built.db.run("PRAGMA user_version = 16");
		built.close();
		expect(SCHEMA_UPGRADES[16]).toBeDefined();
		expect(() => openIndex(path, { readonly: true })).toThrow(`has schema 16, expected ${SCHEMA_VERSION}: run \`pi-events index\``);
		const upgraded = openIndex(path);
		try {
			expect(upgraded.query("PRAGMA user_version").get()).toEqual({ user_version: SCHEMA_VERSION });
			expect(schemaOf(upgraded)).toEqual(current);
			expect(upgraded.query("SELECT count(*) AS n FROM sessions").get()).toEqual({ n: 4 });
			expect(upgraded.query("SELECT count(*) AS n FROM fts WHERE fts MATCH 'upgradeword'").get()).toEqual({ n: 3 });
			// The column 19 added, computed from the events as a sync writes it.
			expect(upgraded.query("SELECT session_key, first_ts_ms FROM sessions ORDER BY session_key").all()).toEqual(first);
			// The column 22 added, computed in SQL as a sync computes it.
			expect(turnsOf(upgraded)).toEqual(turns);
		} finally {
			upgraded.close();
		}
		/** Open the index as pi-events does, run `use`, close it. */
		const opened = (use: (db: Database) => void) => {
			const db = openIndex(path);
			try {
				use(db);
			} finally {
				db.close();
			}
		};
		// Version 17: the index of calls that run pi-events is missing, and 19's column.
		opened((db) => {
			db.run("DROP INDEX events_with_derived_calls");
			before19(db);
			before22(db);
			db.run("PRAGMA user_version = 17");
		});
		opened((db) => {
			expect(db.query("PRAGMA user_version").get()).toEqual({ user_version: SCHEMA_VERSION });
			expect(schemaOf(db)).toEqual(current);
			expect(db.query("SELECT count(*) AS n FROM sessions").get()).toEqual({ n: 4 });
		});
		// Version 18: only 19's column and its indexes are missing.
		opened((db) => {
			before19(db);
			before22(db);
			db.run("PRAGMA user_version = 18");
		});
		opened((db) => {
			expect(db.query("PRAGMA user_version").get()).toEqual({ user_version: SCHEMA_VERSION });
			expect(schemaOf(db)).toEqual(current);
			expect(db.query("SELECT session_key, first_ts_ms FROM sessions ORDER BY session_key").all()).toEqual(first);
		});
		// Version 21: only the turns are missing.
		opened((db) => {
			before22(db);
			db.run("PRAGMA user_version = 21");
		});
		opened((db) => {
			expect(db.query("PRAGMA user_version").get()).toEqual({ user_version: SCHEMA_VERSION });
			expect(schemaOf(db)).toEqual(current);
			expect(turnsOf(db)).toEqual(turns);
		});
		// Older than any step: rebuilt, as before.
		opened((db) => db.run("PRAGMA user_version = 15"));
		opened((db) => {
			expect(db.query("SELECT count(*) AS n FROM sessions").get()).toEqual({ n: 0 });
			expect(schemaOf(db)).toEqual(current);
		});
	});

	test("an index of a newer version is used as it is when it says this version's code may, and rebuilt when not", () => {
		const sessions = makeTempDir("pi-events-newer-src-");
		writeSession(sessions, oneMessageSession("00000009-0000-4000-8000-000000000000", "/work/p", "newerword"));
		const built = buildIndex([sessions]);
		const path = join(built.dir, "index.db");
		const compatibleFrom = built.db.query("SELECT value FROM meta WHERE key = 'schema_compatible_from'").get();
		expect(compatibleFrom).toEqual({ value: String(SCHEMA_COMPATIBLE_FROM) });
		// As a newer pi-events would leave it: a higher version, still usable by this one.
		built.db.run(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
		built.db.run("UPDATE meta SET value = ?1 WHERE key = 'schema_compatible_from'", [String(SCHEMA_VERSION)]);
		built.close();
		for (const readonly of [true, false]) {
			const db = openIndex(path, { readonly });
			try {
				expect(db.query("PRAGMA user_version").get()).toEqual({ user_version: SCHEMA_VERSION + 1 });
				expect(db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH 'newerword'").get()).toEqual({ n: 1 });
				expect(indexCounts(db).schema).toBe(SCHEMA_VERSION + 1);
			} finally {
				db.close();
			}
		}
		// A newer version that this code may not use: refused read-only, rebuilt otherwise.
		const newer = openIndex(path);
		newer.run("UPDATE meta SET value = ?1 WHERE key = 'schema_compatible_from'", [String(SCHEMA_VERSION + 1)]);
		newer.close();
		expect(() => openIndex(path, { readonly: true })).toThrow(`has schema ${SCHEMA_VERSION + 1}, expected ${SCHEMA_VERSION}`);
		const rebuilt = openIndex(path);
		try {
			expect(rebuilt.query("PRAGMA user_version").get()).toEqual({ user_version: SCHEMA_VERSION });
			expect(rebuilt.query("SELECT count(*) AS n FROM sessions").get()).toEqual({ n: 0 });
		} finally {
			rebuilt.close();
		}
	});

	test("an index with another schema version is rebuilt, not reused", () => {
		const dir = makeTempDir("pi-events-schema-");
		const path = join(dir, "index.db");
		const first = openIndex(path);
		first.run("INSERT INTO meta (key, value) VALUES ('marker', '1')");
		first.run("PRAGMA user_version = 1");
		first.close();
		const reopened = openIndex(path);
		try {
			expect(reopened.query("SELECT count(*) AS n FROM meta WHERE key = 'marker'").get()).toEqual({ n: 0 });
		} finally {
			reopened.close();
		}
	});
});
