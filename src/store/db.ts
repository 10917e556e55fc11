/**
 * The one place the SQLite read model is opened. Sets every pragma, owns the DDL, and treats a
 * schema-version mismatch as "rebuild": the index is disposable, pi's session files are the truth.
 */
import { constants, Database, type Statement } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import { PiEventsError } from "../errors.ts";
import { GAP_TOKEN } from "../project/text.ts";
import { MAX_TURN_ENTRIES } from "../project/turn.ts";
import { ddlFor, type FullTextVariant, fullTextVariantFor } from "./sqlite-compat.ts";
import { prepareIndexFiles } from "./access.ts";
import { markUnsynced, removeStaleMarkers, settleLeftMarkers, settleUnsynced } from "./unsynced.ts";

/**
 * Bump on any change to the DDL below or to what the projector stores. A change that only adds
 * (an index) also gets an entry in SCHEMA_UPGRADES, so that an index built before it is brought
 * up to date in place instead of rebuilt.
 */
export const SCHEMA_VERSION = 22;

/**
 * The oldest schema version whose code can read and write an index of this version as it is:
 * 17, 18 and 20 only added indexes, which SQLite keeps up to date whoever writes; 19 added a column
 * (sessions.first_ts_ms) that older code leaves NULL in the sessions it writes, which this code
 * reads as "not known" (see NO_EVENT_TIME); 21 changed which events are echoes (derived), and
 * older code marks the events it writes by its own rule, as it did before. 22 added events.turn_seq, which older
 * code would leave NULL in the events it writes (their hits would lose their turn): only 22's code
 * may write it. Recorded in the index, so that this code can use an index
 * of a newer version that says it still may (rather than rebuild it, and a newer binary rebuild it
 * again: two versions of pi-events used in turn).
 */
export const SCHEMA_COMPATIBLE_FROM = 22;

/**
 * sessions.first_ts_ms of a session none of whose events has a time. NULL there means not known:
 * the row was written by a pi-events before schema 19, and the next sync that appends to the
 * session computes it.
 */
export const NO_EVENT_TIME = Number.MAX_SAFE_INTEGER;

/**
 * Additive steps, by the version they start from: statements that bring an index of that version
 * to the next one from what it already holds (new indexes; a column computed from its rows).
 * Anything else (a version with no step here) means a rebuild. The DDL below already holds every step.
 */
export const SCHEMA_UPGRADES: Readonly<Record<number, string>> = {
	16: `DROP INDEX IF EXISTS sessions_by_activity;
		CREATE INDEX sessions_by_activity ON sessions(last_ts_ms DESC, session_id, session_key, cwd_real, created, fragment_count);
		CREATE INDEX IF NOT EXISTS sessions_by_cwd ON sessions(cwd_real, last_ts_ms, session_id, created, fragment_count);`,
	17: "CREATE INDEX IF NOT EXISTS events_with_derived_calls ON events(session_key) WHERE derived_calls IS NOT NULL;",
	18: `ALTER TABLE sessions ADD COLUMN first_ts_ms INTEGER;
		UPDATE sessions SET first_ts_ms = coalesce((SELECT min(ts_ms) FROM events e WHERE e.session_key = sessions.session_key), 9007199254740991);
		DROP INDEX IF EXISTS sessions_by_activity;
		CREATE INDEX sessions_by_activity ON sessions(last_ts_ms DESC, session_id, session_key, cwd_real, created, fragment_count, first_ts_ms);
		DROP INDEX IF EXISTS sessions_by_cwd;
		CREATE INDEX sessions_by_cwd ON sessions(cwd_real, last_ts_ms, session_id, created, fragment_count, first_ts_ms);
		CREATE INDEX IF NOT EXISTS sessions_by_first ON sessions(first_ts_ms, session_id, session_key, cwd_real, created, last_ts_ms, fragment_count);`,
	19: "CREATE INDEX IF NOT EXISTS events_alternate ON events(session_key) WHERE branch_state = 'alternate';",
	// 21: a shell command is an echo only when it runs nothing but pi-events, and event_sessions is
	// an echo too (project/echoes.ts). The files whose events the rule may now mark otherwise (a
	// call that ran pi-events, a user's `!pi-events` run, an event_sessions result) are marked as
	// changed, and the next sync checks every file (no full check on record), so it rebuilds them.
	20: `UPDATE files SET mtime_ms = -1, head_hash = '' WHERE file_key IN (
			SELECT s.file_key FROM sessions s WHERE s.session_key IN (
				SELECT session_key FROM events WHERE derived_calls IS NOT NULL
				UNION SELECT e.session_key FROM events e
				  WHERE e.role = 'bashExecution' AND EXISTS (SELECT 1 FROM fragments f WHERE f.event_key = e.event_key AND f.derived = 1)
				UNION SELECT session_key FROM events WHERE tool_name LIKE '%event\\_sessions' ESCAPE '\\'));
		DELETE FROM meta WHERE key IN ('last_full_check', 'idle_cursor');`,
	// 22: the turn of every event, from the tree as sync/classify.ts derives it (project/turn.ts
	// turnPromptPositions): a prompt is its own turn, any other entry has its parent's, at most
	// MAX_TURN_ENTRIES - 1 steps below the prompt; loops and unknown parents have none.
	21: `ALTER TABLE events ADD COLUMN turn_seq INTEGER;
		CREATE TEMP TABLE upgrade_turns AS WITH RECURSIVE walk(event_key, session_key, entry_id, turn, depth) AS (
		  SELECT event_key, session_key, entry_id, seq, 0 FROM events WHERE event_type = 'message' AND role = 'user'
		  UNION ALL
		  SELECT c.event_key, c.session_key, c.entry_id, walk.turn, walk.depth + 1 FROM walk
		  JOIN events c ON c.session_key = walk.session_key AND c.parent_id = walk.entry_id
		  WHERE NOT (c.event_type = 'message' AND c.role IS 'user') AND walk.depth + 1 < ${MAX_TURN_ENTRIES}
		) SELECT event_key, turn FROM walk;
		CREATE INDEX temp.upgrade_turns_by_event ON upgrade_turns(event_key);
		UPDATE events SET turn_seq = (SELECT turn FROM upgrade_turns u WHERE u.event_key = events.event_key);
		DROP TABLE temp.upgrade_turns;
		CREATE INDEX IF NOT EXISTS events_turn_answers ON events(session_key, turn_seq, seq) WHERE role = 'assistant';`,
};

export const SCHEMA_DDL = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
  file_key INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  real_path TEXT NOT NULL,
  source_dir TEXT NOT NULL,
  dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ms REAL NOT NULL,
  durable_end INTEGER NOT NULL,
  next_line INTEGER NOT NULL,
  head_hash TEXT NOT NULL, tail_hash TEXT NOT NULL,
  parser_state TEXT NOT NULL,
  status TEXT NOT NULL,
  problem TEXT,
  diagnostics INTEGER NOT NULL DEFAULT 0,
  indexed_at INTEGER NOT NULL
);
CREATE TABLE sessions (
  session_key INTEGER PRIMARY KEY,
  file_key INTEGER NOT NULL UNIQUE,
  session_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  cwd TEXT,
  cwd_real TEXT,
  created TEXT,
  parent_session TEXT,
  parent_real TEXT,
  name TEXT,
  entry_count INTEGER NOT NULL DEFAULT 0,
  fragment_count INTEGER NOT NULL DEFAULT 0,
  last_ts_ms INTEGER,
  leaf_entry TEXT
, first_ts_ms INTEGER);
-- first_ts_ms: the time of the session's oldest event (schema 19, written as ALTER TABLE adds it, so
-- that an upgraded index has this very schema); 2^53 - 1 when none has a time, NULL when not known
-- (a row an older pi-events wrote: NO_EVENT_TIME, store/db.ts). Not the header's time: a fork or a clone copies
-- entries with their original times, older than the file it copies them into.
CREATE INDEX sessions_by_id ON sessions(session_id);
-- Most recently active first, without a sort (filter-only search reads sessions in this order and stops early).
-- With all that a filter-only search and the session list read of a session: the scope rule is
-- checked, and a session listed, without reading its row (the key first: it ends the order).
CREATE INDEX sessions_by_activity ON sessions(last_ts_ms DESC, session_id, session_key, cwd_real, created, fragment_count, first_ts_ms);
CREATE INDEX sessions_by_parent ON sessions(parent_real);
-- A narrow scope's sessions, found by the prefix range of their cwd, with all that a filter-only search reads of them (store/listing.ts).
CREATE INDEX sessions_by_cwd ON sessions(cwd_real, last_ts_ms, session_id, created, fragment_count, first_ts_ms);
-- Oldest activity first: a filter-only search sorted oldest first reads sessions in this order and stops early.
CREATE INDEX sessions_by_first ON sessions(first_ts_ms, session_id, session_key, cwd_real, created, last_ts_ms, fragment_count);
CREATE INDEX files_by_real_path ON files(real_path);
-- Recently written sessions are found by their last seen mtime (sync/check.ts).
CREATE INDEX files_by_mtime ON files(mtime_ms);
-- Source directories whose listing matched the files table at listed_mtime (null: list again).
CREATE TABLE dirs (
  path TEXT PRIMARY KEY,
  source_dir TEXT NOT NULL,
  dev INTEGER NOT NULL, ino INTEGER NOT NULL,
  listed_mtime REAL,
  checked_at INTEGER NOT NULL
);
CREATE TABLE events (
  event_key INTEGER PRIMARY KEY,
  session_key INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  entry_id TEXT NOT NULL,
  id_derived INTEGER NOT NULL,
  parent_id TEXT,
  event_type TEXT NOT NULL,
  role TEXT,
  tool_name TEXT,
  tool_call_id TEXT,
  custom_type TEXT,
  ts_ms INTEGER,
  is_error INTEGER,
  exit_code INTEGER,
  target_id TEXT,
  call_ids TEXT,
  line INTEGER NOT NULL,
  byte_offset INTEGER NOT NULL,
  byte_length INTEGER NOT NULL,
  content_hash TEXT NOT NULL,
  meta TEXT,
  branch_state TEXT NOT NULL DEFAULT 'unknown',
  context_role TEXT NOT NULL,
  selection_state TEXT NOT NULL DEFAULT 'unknown',
  -- JSON array of this entry's tool-call ids that run pi-events (their results are derived too), or NULL.
  derived_calls TEXT, turn_seq INTEGER,
  UNIQUE (session_key, entry_id)
);
-- turn_seq (schema 22): the seq of the prompt whose turn holds the event (project/turn.ts), NULL before
-- a session's first prompt. Written beside the last column, as ALTER TABLE adds it, so that an upgraded index has this very schema.
CREATE INDEX events_by_seq ON events(session_key, seq);
CREATE INDEX events_by_parent ON events(session_key, parent_id);
CREATE INDEX events_by_call ON events(session_key, tool_call_id) WHERE tool_call_id IS NOT NULL;
CREATE INDEX events_by_time ON events(ts_ms);
-- Failed results only (a few per thousand events): filter-only search by --error reads them, not every fragment.
CREATE INDEX events_errors ON events(session_key) WHERE is_error = 1;
-- Calls that run pi-events (rare): whether an appended tool result echoes one is a seek, not a walk of
-- the session's events (IndexWriter.isDerivedCall: 11-13 ms warm in a 9,850-event session).
CREATE INDEX events_with_derived_calls ON events(session_key) WHERE derived_calls IS NOT NULL;
-- Entries on abandoned branches (few): whether a listed session has any is a seek (store/listing.ts
-- sessionSummaries; reading its events instead cost 20 sessions of 5,000 entries 23.6 ms).
CREATE INDEX events_alternate ON events(session_key) WHERE branch_state = 'alternate';
-- A turn's assistant messages, newest first: a hit's turn outcome is one short seek (query/turns.ts).
CREATE INDEX events_turn_answers ON events(session_key, turn_seq, seq) WHERE role = 'assistant';
CREATE TABLE fragments (
  frag_key INTEGER PRIMARY KEY,
  event_key INTEGER NOT NULL,
  session_key INTEGER NOT NULL,
  fragment_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  weight REAL NOT NULL,
  full_length INTEGER NOT NULL,
  bounded INTEGER NOT NULL,
  -- 1: an echo of pi-events itself (project/echoes.ts), excluded from search unless asked for.
  derived INTEGER NOT NULL DEFAULT 0,
  -- The event's time (events.ts_ms), copied so that ranking and time filters read no event row.
  ts_ms INTEGER
);
CREATE INDEX fragments_by_event ON fragments(event_key);
-- With the kind: a filter-only search by kind reads only those fragments of each session.
CREATE INDEX fragments_by_session ON fragments(session_key, kind);
-- path: absolute (resolved against the session cwd) for filtering; recorded: as the entry wrote it.
CREATE TABLE event_files (event_key INTEGER NOT NULL, path TEXT NOT NULL, recorded TEXT NOT NULL, op TEXT NOT NULL);
CREATE INDEX event_files_by_path ON event_files(path);
CREATE INDEX event_files_by_event ON event_files(event_key);
-- body: the fragment text; aux: camelCase parts and CJK characters; scope: hidden authorization tokens (auth/scope-tokens.ts);
-- forms: the distinct English stems of its words that differ from the word (project/stem.ts), for word-form matching.
CREATE VIRTUAL TABLE fts USING fts5(
  body, aux, scope, forms,
  content = '', contentless_delete = 1,
  tokenize = "unicode61 remove_diacritics 2 tokenchars '${GAP_TOKEN}'"
);
INSERT INTO fts(fts, rank) VALUES ('secure-delete', 1);
CREATE VIRTUAL TABLE fts_terms USING fts5vocab(fts, 'row');
`;

interface OpenOptions {
	readonly?: boolean;
	/**
	 * The connection of a command that answers once and exits (`search`, `sessions`, `read`,
	 * `trace`, `status`, `index`): a small page cache (ONE_SHOT_PAGE_CACHE_KIB). Without it, the
	 * large one a resident server (`serve`) wants.
	 */
	oneShot?: boolean;
}

/** SQLite's page cache (KiB) of a connection that keeps answering: its pages stay warm between calls. */
export const PAGE_CACHE_KIB = 65_536;

/**
 * SQLite's page cache (KiB) of a one-shot command. Every page a cache holds is memory the process
 * touches for the first time, a page fault (5–35 µs on this project's VM) on top of the read
 * itself; a small cache reuses its buffers, and re-reading a page it let go costs a `pread`
 * (2.6–3.9 µs). Interleaved whole processes at 1 GB, 64 MiB → 256 KiB: 1,000 matches 86 → 60 ms
 * (3,170 → 2,000 page faults), filtered 85 → 61, `the error` 72 → 64; no class slower, and 128
 * or 64 KiB no faster (docs/performance.md, "A one-shot command's page cache").
 */
const ONE_SHOT_PAGE_CACHE_KIB = 256;

/**
 * The page cache (KiB) of a one-shot search while it reads the matches of many sessions one at a
 * time (--until, --since, --file): each read is a full-text query of its own, which seeks the
 * word's postings in every segment of the index again, and the 256 KiB cache let those pages go
 * between sessions. At 5 GB, 200 sessions read for `the --until … --kind bash.command` took 67–102
 * ms with 256 KiB and 30–40 with 8 MiB.
 */
export const SPAN_READS_PAGE_CACHE_KIB = 8_192;

/**
 * A page cache of at least `kib` KiB for a while (never smaller than the one it has: a server's
 * stays large); the returned function puts it back.
 */
export function pageCacheAtLeast(db: Database, kib: number): () => void {
	const before = (db.query("PRAGMA cache_size").get() as { cache_size: number }).cache_size;
	// A negative cache_size is KiB, a positive one pages.
	const beforeKib = before < 0 ? -before : (before * (db.query("PRAGMA page_size").get() as { page_size: number }).page_size) / 1024;
	if (beforeKib >= kib) return () => {};
	db.run(`PRAGMA cache_size = ${-kib}`);
	return () => db.run(`PRAGMA cache_size = ${before}`);
}

/**
 * Set a connection's page cache to `kib` KiB for a while (long work in a one-shot command takes
 * the large cache, the cold-index pipeline a smaller one); the returned function puts it back.
 */
export function setPageCache(db: Database, kib: number): () => void {
	const before = (db.query("PRAGMA cache_size").get() as { cache_size: number }).cache_size;
	db.run(`PRAGMA cache_size = ${-kib}`);
	return () => db.run(`PRAGMA cache_size = ${before}`);
}

/**
 * Write without fsync for a while (a cold index: unsynced.ts says why and how it stays safe);
 * the returned function flushes the index files and puts `synchronous` back. Where no marker can
 * be left (not Linux, an in-memory index), nothing changes.
 */
export function withoutFsync(db: Database): () => void {
	const path = db.filename;
	if (!path || path === ":memory:" || isReadOnly(db) || !markUnsynced(path)) return () => {};
	db.run("PRAGMA synchronous = OFF");
	return () => {
		db.run("PRAGMA synchronous = NORMAL");
		settleUnsynced(path);
	};
}

/**
 * Wait at most `ms` for another process's write lock for a while (a query's sync: sync/freshness.ts);
 * the returned function puts the connection's own wait back.
 */
export function setBusyTimeout(db: Database, ms: number): () => void {
	const before = (db.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout;
	db.run(`PRAGMA busy_timeout = ${Math.max(0, Math.round(ms))}`);
	return () => db.run(`PRAGMA busy_timeout = ${before}`);
}

/**
 * Checkpoint the WAL every `pages` pages for a while (a cold index: sync.ts); the returned function
 * puts the interval back. A page written again before the checkpoint is copied into the database
 * once, not once per checkpoint it was written between.
 */
export function setWalCheckpointPages(db: Database, pages: number): () => void {
	const before = (db.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
	db.run(`PRAGMA wal_autocheckpoint = ${pages}`);
	return () => db.run(`PRAGMA wal_autocheckpoint = ${before}`);
}

/**
 * FTS5's own defaults for the settings a bulk load changes: `automerge` (how many segments of a
 * level are merged at once) and `hashsize` (bytes of postings held in memory before a segment is
 * written).
 */
const FULL_TEXT_DEFAULTS: Readonly<Record<string, number>> = { automerge: 4, hashsize: 1024 * 1024 };

/**
 * FTS5's settings for a bulk load, for a while (a cold index: sync.ts); the returned function
 * puts back what the index had, so later syncs and searches see the segments as FTS5 usually
 * leaves them. In a cold index, FTS5's insert is most of the writer's time, and much of it is
 * merging: every posting is rewritten once per level. Segments four times larger (a 4 MiB hash)
 * merged eight at a time (instead of four) rewrite each posting about half as often.
 */
export function withBulkFullText(db: Database, settings: { automerge: number; hashsize: number }): () => void {
	const rows = db.query("SELECT k, v FROM fts_config WHERE k IN ('automerge', 'hashsize')").all() as { k: string; v: number }[];
	const before = { ...FULL_TEXT_DEFAULTS, ...Object.fromEntries(rows.map((r) => [r.k, Number(r.v)])) };
	const set = (values: Record<string, number>) => {
		for (const [key, value] of Object.entries(values)) db.run("INSERT INTO fts(fts, rank) VALUES (?1, ?2)", [key, value]);
	};
	set(settings);
	return () => set(before);
}

/**
 * Fragment rowids are laid out by session: session k owns [k × FRAGMENT_KEY_SPAN, (k + 1) ×
 * FRAGMENT_KEY_SPAN), so a session's first or last fragment is a seek on the primary key.
 */
export const FRAGMENT_KEY_SPAN = 2 ** 24;

/** The rowid span a session's fragments are written in (inclusive bounds). */
export function fragmentKeySpan(sessionKey: number): { from: number; to: number } {
	return { from: sessionKey * FRAGMENT_KEY_SPAN, to: (sessionKey + 1) * FRAGMENT_KEY_SPAN - 1 };
}

/**
 * Open (creating if needed) the index at `path` (":memory:" for tests). A database with another
 * schema version is dropped and recreated. Throws E_INDEX with a readable message on failure.
 */
/**
 * How long opening waits for another process that is creating the index or switching it to WAL:
 * SQLite answers SQLITE_BUSY there without calling the busy handler (the four-process test saw
 * "the index is locked by another process" about one run in 30).
 */
const OPEN_BUSY_WAIT_MS = 10_000;

export function openIndex(path: string, options: OpenOptions = {}): Database {
	if (options.readonly || path === ":memory:") return openWith(path, options);
	try {
		return openWaitingForBusy(path, options);
	} catch (err) {
		// An existing index this process cannot write (a read-only mount, another user's file) still
		// answers: searches read it as it is, and a sync reports that it cannot update it.
		const failure = err instanceof PiEventsError ? failureOf(err.cause) : null;
		if (!existsSync(path) || (failure !== "readonly" && failure !== "cantopen")) throw err;
		try {
			return openReadOnlySnapshot(path, options.oneShot);
		} catch {
			throw err;
		}
	}
}

function openWaitingForBusy(path: string, options: OpenOptions): Database {
	const deadline = performance.now() + OPEN_BUSY_WAIT_MS;
	for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
		try {
			return openWith(path, options);
		} catch (err) {
			const busy = err instanceof PiEventsError && failureOf(err.cause) === "busy";
			if (!busy || performance.now() + pause > deadline) throw err;
			Bun.sleepSync(pause);
		}
	}
}

/**
 * Read-only, for an index nobody may write here. SQLite needs to create the `-shm` file to read a
 * WAL database normally; where it cannot, and no `-wal` holds unmerged commits, the file is read
 * as immutable (nothing can change it under a read-only mount).
 */
function openReadOnlySnapshot(path: string, oneShot?: boolean): Database {
	try {
		return openWith(path, { readonly: true, oneShot });
	} catch (err) {
		if (fileSize(`${path}-wal`) > 0) throw err;
		return openWith(`file:${encodeURI(path).replace(/[?#]/g, encodeURIComponent)}?immutable=1`, { readonly: true, oneShot, uri: true }, path);
	}
}

function fileSize(path: string): number {
	try {
		return statSync(path).size;
	} catch {
		return 0;
	}
}

/** How many prepared statements a connection keeps (more distinct statements than this start over). */
const KEPT_STATEMENTS = 512;

/**
 * Make `db.query` keep every statement it prepares. bun:sqlite's own cache holds about 20 per
 * connection: past that, each query() prepared its statement again (15–20 µs each, measured),
 * and one search uses up to 30 distinct statements, a server answering varied searches more.
 * Every module keeps calling `db.query`; statements are finalized when the connection closes.
 */
function keepStatements(db: Database): void {
	const kept = new Map<string, Statement>();
	const prepare = db.prepare.bind(db);
	const close = db.close.bind(db);
	db.query = ((sql: string) => {
		let statement = kept.get(sql);
		if (statement === undefined) {
			if (kept.size >= KEPT_STATEMENTS) kept.clear();
			statement = prepare(sql);
			kept.set(sql, statement);
		}
		return statement;
	}) as Database["query"];
	db.close = (throwOnError?: boolean) => {
		for (const statement of kept.values()) statement.finalize();
		kept.clear();
		close(throwOnError);
	};
}

/** Connections opened read-only (asked for, or the fallback for an index nobody may write here). */
const readOnlyConnections = new WeakSet<Database>();

/** Whether this connection cannot write: a sync through it must say so even when it has nothing to write. */
export function isReadOnly(db: Database): boolean {
	return readOnlyConnections.has(db);
}

function openWith(path: string, options: OpenOptions & { uri?: boolean }, shownPath = path): Database {
	let db: Database;
	try {
		// Private: the index holds every word of the history (access.ts).
		if (path !== ":memory:" && !options.readonly) prepareIndexFiles(path);
		db = options.uri
			? new Database(path, constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI)
			: options.readonly
				? new Database(path, { readonly: true, strict: true })
				: new Database(path, { create: true, readwrite: true, strict: true });
	} catch (err) {
		throw new PiEventsError("E_INDEX", `cannot open the index at ${shownPath}: ${reason(err)}`, { cause: err });
	}
	keepStatements(db);
	if (options.readonly) readOnlyConnections.add(db);
	try {
		db.run("PRAGMA busy_timeout = 10000");
		if (!options.readonly) {
			db.run("PRAGMA journal_mode = WAL");
			db.run("PRAGMA synchronous = NORMAL");
			db.run("PRAGMA secure_delete = ON");
		}
		db.run("PRAGMA temp_store = MEMORY");
		db.run(`PRAGMA cache_size = ${-(options.oneShot ? ONE_SHOT_PAGE_CACHE_KIB : PAGE_CACHE_KIB)}`);
		// No connection maps the index: SQLite reads the pages it needs. A map made whole processes
		// slower here and cold queries 2–4× slower: a fault on the map reads ahead around the page
		// (at 5 GB after dropping the page cache, `the` 39–61 against 16–23 ms, 1,000 matches
		// 432–738 against 170–191), a page fault costs 5–11 µs against 2.6–3.9 µs for a read,
		// tearing the map down at exit grows with the pages touched, and mapped pages count as
		// resident memory.
		db.run("PRAGMA mmap_size = 0");
		const variant = fullTextVariantFor(checkedSqliteVersion(db));
		const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
		const usable = usableHere(db, version);
		const upgradable = !usable && !options.readonly && upgradesFrom(version) !== null;
		const built = usable || upgradable ? builtVariant(db) : null;
		if (upgradable && built === variant) {
			upgradeSchema(db, variant);
		} else if (!usable || built !== variant) {
			if (options.readonly) {
				const why = !usable ? `has schema ${version}, expected ${SCHEMA_VERSION}` : `was built for another SQLite (${built} full-text table)`;
				// A stored-text index works on any SQLite with FTS5; only the other way round is refused.
				if (!usable || built === "contentless") {
					throw new PiEventsError("E_INDEX", `the index at ${shownPath} ${why}: run \`pi-events index\``);
				}
			} else {
				recreateSchema(db, variant);
			}
		}
		if (!options.readonly && !options.uri && path !== ":memory:") {
			// Writes made without fsync when the machine stopped may have left it inconsistent (unsynced.ts).
			const stale = settleLeftMarkers(path);
			if (stale.length > 0) {
				recreateSchema(db, variant, { force: true });
				removeStaleMarkers(path, stale);
			}
		}
	} catch (err) {
		db.close();
		if (err instanceof PiEventsError) throw err;
		throw new PiEventsError("E_INDEX", `cannot use the index at ${shownPath}: ${reason(err)}`, { cause: err });
	}
	return db;
}

/** sqlite_version(), after checking that this SQLite has FTS5 (a clear error, not a failing query later). */
function checkedSqliteVersion(db: Database): string {
	const version = (db.query("SELECT sqlite_version() AS v").get() as { v: string }).v;
	try {
		db.query("SELECT fts5_source_id()").get();
	} catch {
		throw new PiEventsError("E_INDEX", `this SQLite (${version}) has no FTS5, which pi-events needs for full-text search`);
	}
	return version;
}

/** The full-text variant the index was built with (indexes from before the variants: contentless). */
function builtVariant(db: Database): FullTextVariant {
	try {
		const row = db.query("SELECT value FROM meta WHERE key = 'fts_variant'").get() as { value: string } | null;
		return row && JSON.parse(row.value) === "stored" ? "stored" : "contentless";
	} catch {
		return "contentless";
	}
}

/** Whether this code may use an index of `version` as it is: its own, or a newer one compatible with it. */
function usableHere(db: Database, version: number): boolean {
	if (version === SCHEMA_VERSION) return true;
	if (version < SCHEMA_VERSION) return false;
	try {
		const row = db.query("SELECT value FROM meta WHERE key = 'schema_compatible_from'").get() as { value: string } | null;
		const from = row ? JSON.parse(row.value) : null;
		return typeof from === "number" && from <= SCHEMA_VERSION;
	} catch {
		return false;
	}
}

/** Record which versions' code may use this index (SCHEMA_COMPATIBLE_FROM). */
function recordCompatibility(db: Database): void {
	db.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_compatible_from', ?1)", [JSON.stringify(SCHEMA_COMPATIBLE_FROM)]);
}

/** The additive steps from `version` to SCHEMA_VERSION, in order; null when there is no such path (or nothing to do). */
function upgradesFrom(version: number): string[] | null {
	if (version >= SCHEMA_VERSION || version <= 0) return null;
	const steps: string[] = [];
	for (let v = version; v < SCHEMA_VERSION; v++) {
		const step = SCHEMA_UPGRADES[v];
		if (step === undefined) return null;
		steps.push(step);
	}
	return steps;
}

/** Bring an index of an older version up to SCHEMA_VERSION in place (upgradesFrom), or rebuild it when that is no longer possible. */
function upgradeSchema(db: Database, variant: FullTextVariant): void {
	let rebuild = false;
	db.transaction(() => {
		// Decide again under the write lock: another process may have upgraded or rebuilt it meanwhile.
		const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
		if (usableHere(db, version) && builtVariant(db) === variant) return;
		const steps = upgradesFrom(version);
		if (steps === null || builtVariant(db) !== variant) {
			rebuild = true;
			return;
		}
		for (const step of steps) db.run(step);
		recordCompatibility(db);
		db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
	}).immediate();
	if (rebuild) recreateSchema(db, variant);
}

/** Drop and recreate every table; unless `force`, only when the index still needs it. */
function recreateSchema(db: Database, variant: FullTextVariant, options: { force?: boolean } = {}): void {
	db.transaction(() => {
		// Decide again under the write lock: another process that opened the index at the same
		// time may have built the schema (and indexed into it) since this one read the version.
		const version = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
		if (!options.force && usableHere(db, version) && builtVariant(db) === variant) return;
		const objects = db
			.query("SELECT type, name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'fts_%'")
			.all() as { type: string; name: string }[];
		for (const o of objects) db.run(`DROP ${o.type === "view" ? "VIEW" : "TABLE"} IF EXISTS "${o.name}"`);
		db.run("DROP TABLE IF EXISTS fts_terms");
		db.run("DROP TABLE IF EXISTS fts");
		db.run(ddlFor(SCHEMA_DDL, variant));
		db.run("INSERT INTO meta (key, value) VALUES ('fts_variant', ?1)", [JSON.stringify(variant)]);
		recordCompatibility(db);
		db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
	}).immediate();
}

/**
 * What a failure of the database (or of opening its file) means, by its result code only, never
 * by message text (which differs between SQLite builds). Extended codes (SQLITE_IOERR_WRITE,
 * SQLITE_READONLY_DBMOVED, ...) count as their primary code.
 */
type DbFailure = "readonly" | "full" | "busy" | "notadb" | "cantopen" | "ioerr" | "corrupt";

const FAILURES: Record<string, DbFailure> = {
	SQLITE_READONLY: "readonly",
	SQLITE_FULL: "full",
	SQLITE_BUSY: "busy",
	SQLITE_LOCKED: "busy",
	SQLITE_NOTADB: "notadb",
	SQLITE_CANTOPEN: "cantopen",
	SQLITE_IOERR: "ioerr",
	SQLITE_CORRUPT: "corrupt",
};

const MEANINGS: Record<DbFailure, string> = {
	readonly: "the index location is read-only",
	full: "the disk is full",
	busy: "the index is locked by another process",
	notadb: "the file is not a pi-events index",
	cantopen: "the file cannot be opened",
	ioerr: "an I/O error on the index file",
	corrupt: "the index file is damaged (delete it; it is rebuilt from the sessions)",
};

/** The SQLite result code of an error (`SQLITE_…`), or null for anything else. */
function sqliteCode(err: unknown): string | null {
	const code = (err as { code?: unknown } | null)?.code;
	return typeof code === "string" && code.startsWith("SQLITE_") ? code : null;
}

function failureOf(err: unknown): DbFailure | null {
	const primary = sqliteCode(err)?.match(/^SQLITE_[A-Z]+/)?.[0];
	return primary ? (FAILURES[primary] ?? null) : null;
}

function reason(err: unknown): string {
	const failure = failureOf(err);
	if (failure) return MEANINGS[failure];
	const code = sqliteCode(err);
	if (code) return `a database error (${code})`;
	return err instanceof Error ? err.message : String(err);
}

export { reason as describeDbError };

/** Whether a database error is another connection's lock (SQLITE_BUSY or SQLITE_LOCKED, after the connection's wait). */
export function isBusyError(err: unknown): boolean {
	return failureOf(err) === "busy";
}

/** Errors of the database itself (full disk, I/O, read-only, damage), as opposed to one bad input. */
export function isDatabaseError(err: unknown): boolean {
	return (err instanceof Error && err.name === "SQLiteError") || sqliteCode(err) !== null;
}
