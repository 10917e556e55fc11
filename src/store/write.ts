/**
 * Writes to the read model: insert projected events with their fragments and file evidence,
 * delete a session wholesale, record file fingerprints and session facts. Callers own the
 * transaction boundaries (one per session change), so a failure never leaves half a session.
 */
import type { Database } from "bun:sqlite";
import { isAbsolute, resolve } from "node:path";
import type { TreeState } from "../model.ts";
import type { Classification } from "../project/tree.ts";
import type { ProjectedEvent } from "../project/projector.ts";
import { derivedScopeColumn, scopeColumn } from "../auth/scope-tokens.ts";
import { fullTextColumns } from "../project/fulltext.ts";
import { WordForms } from "../project/stem.ts";
import { fragmentWeight } from "../project/weights.ts";
import { fragmentKeySpan, NO_EVENT_TIME, setBusyTimeout } from "./db.ts";

export interface FileRow {
	file_key: number;
	path: string;
	/** The path with symlinks resolved (how the current session and fork parents are matched). */
	real_path: string;
	source_dir: string;
	dev: number;
	ino: number;
	size: number;
	mtime_ms: number;
	durable_end: number;
	next_line: number;
	head_hash: string;
	tail_hash: string;
	parser_state: string;
	status: "indexed" | "rejected" | "failed";
	problem: string | null;
	diagnostics: number;
	indexed_at: number;
}

export interface TreeRow {
	event_key: number;
	seq: number;
	/** The append position of the turn's prompt (sync/classify.ts). */
	turn_seq: number | null;
	entry_id: string;
	parent_id: string | null;
	event_type: string;
	role: string | null;
	target_id: string | null;
	branch_state: string;
	selection_state: string;
	meta: string | null;
}

/** What every fragment of a session needs to know about its session. */
export interface SessionScope {
	sessionId: string;
	/** Recorded cwd (relative file-evidence paths are resolved against it when absolute). */
	cwd: string | null;
	/** Canonical absolute cwd, or null when the recorded cwd is relative or missing. */
	cwdReal: string | null;
}

export type FileObservation = Pick<FileRow, "file_key" | "path" | "source_dir" | "dev" | "ino" | "size" | "mtime_ms">;

type FileFacts = Omit<FileRow, "file_key">;

interface SessionFacts {
	sessionId: string;
	version: number;
	cwd: string | null;
	cwdReal: string | null;
	created: string | null;
	parentSession: string | null;
	/** parentSession resolved (against the cwd when relative) and canonicalized, if it can be. */
	parentReal: string | null;
}

/** Context role depends only on what the entry is, so it is fixed at insert time. */
function contextRoleOf(eventType: string, role: string | null): TreeState["contextRole"] {
	switch (eventType) {
		case "message":
			return role === "system" ? "control" : "conversation";
		case "custom_message":
			return "conversation";
		case "compaction":
		case "branch_summary":
			return "summary";
		case "model_change":
		case "thinking_level_change":
		case "context_edit":
			return "control";
		default:
			return "metadata";
	}
}

const SQL_INSERT_EVENT = `INSERT INTO events (session_key, seq, entry_id, id_derived, parent_id, event_type, role, tool_name, tool_call_id,
			  custom_type, ts_ms, is_error, exit_code, target_id, call_ids, line, byte_offset, byte_length, content_hash, meta, context_role, derived_calls,
			  branch_state, selection_state, turn_seq)
			 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25)`;
const SQL_INSERT_FRAGMENT =
	"INSERT INTO fragments (frag_key, event_key, session_key, fragment_id, kind, weight, full_length, bounded, derived, ts_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
const SQL_INSERT_FTS = "INSERT INTO fts (rowid, body, aux, scope, forms) VALUES (?1, ?2, ?3, ?4, ?5)";
const SQL_INSERT_FILE = "INSERT INTO event_files (event_key, path, recorded, op) VALUES (?1, ?2, ?3, ?4)";
const SQL_UPDATE_FILE_BY_PATH = `UPDATE files SET source_dir = ?2, dev = ?3, ino = ?4, size = ?5, mtime_ms = ?6, durable_end = ?7, next_line = ?8, head_hash = ?9,
			   tail_hash = ?10, parser_state = ?11, status = ?12, problem = ?13, diagnostics = ?14, indexed_at = ?15, real_path = ?16
			 WHERE path = ?1`;
const SQL_INSERT_FILE_ROW = `INSERT INTO files (path, source_dir, dev, ino, size, mtime_ms, durable_end, next_line, head_hash, tail_hash, parser_state, status, problem, diagnostics, indexed_at, real_path)
			 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)`;
const SQL_UPDATE_SESSION_BY_FILE = `UPDATE sessions SET session_id = ?2, version = ?3, cwd = ?4, cwd_real = ?5, created = ?6, parent_session = ?7, parent_real = ?8
			 WHERE file_key = ?1`;
const SQL_INSERT_SESSION_ROW = `INSERT INTO sessions (file_key, session_id, version, cwd, cwd_real, created, parent_session, parent_real)
			 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)`;

/**
 * A session's summary facts, tallied from its events in file order as they are written: what
 * refreshSessionSummary computes from the events table (entry and fragment counts, the oldest
 * and newest event times, the last entry, the last name a session_info or title_change gave).
 */
export class SessionTally {
	entries = 0;
	fragments = 0;
	firstTs: number | null = null;
	lastTs: number | null = null;
	leaf: string | null = null;
	name: string | null = null;

	add(events: readonly ProjectedEvent[]): void {
		for (const e of events) {
			this.entries++;
			this.fragments += e.fragments.length;
			const ts = e.timestampMs;
			if (ts !== null) {
				if (this.firstTs === null || ts < this.firstTs) this.firstTs = ts;
				if (this.lastTs === null || ts > this.lastTs) this.lastTs = ts;
			}
			this.leaf = e.entryId;
			if (e.eventType === "session_info" || e.eventType === "title_change") this.name = typeof e.meta.name === "string" ? e.meta.name : null;
		}
	}
}

export class IndexWriter {
	private readonly forms = new WordForms();

	/**
	 * Its statements are prepared on first use, and kept by the connection (`db.query`,
	 * store/db.ts): a sync or a search's freshness check makes a writer, and most of them write
	 * nothing (preparing all eight up front cost 0.25–0.4 ms of a new process).
	 */
	constructor(private readonly db: Database) {}

	/**
	 * Insert projected events. Relative file-evidence paths are resolved against the session's
	 * (absolute) cwd so `--file` filters match however the tool call spelled the path.
	 */
	insertEvents(
		sessionKey: number,
		events: ProjectedEvent[],
		session: SessionScope,
		states?: readonly (Classification & { turnSeq: number | null })[],
	): { fragments: number } {
		const cwd = session.cwd;
		const scope = scopeColumn(session.cwdReal, session.sessionId);
		const derivedScope = derivedScopeColumn(scope);
		let fragments = 0;
		let nextFragKey = this.nextFragmentKey(sessionKey);
		const insertEvent = this.db.query(SQL_INSERT_EVENT);
		const insertFragment = this.db.query(SQL_INSERT_FRAGMENT);
		const insertFts = this.db.query(SQL_INSERT_FTS);
		const insertFile = this.db.query(SQL_INSERT_FILE);
		// Tool calls of this batch, and which of them run pi-events: their results are echoes too.
		const callsHere = new Set<string>();
		const derivedCalls = new Set<string>();
		for (const [i, e] of events.entries()) {
			for (const id of e.callIds) callsHere.add(id);
			for (const id of e.derivedCallIds) derivedCalls.add(id);
			const resultOfDerived =
				e.toolCallId !== null &&
				e.role === "toolResult" &&
				(callsHere.has(e.toolCallId) ? derivedCalls.has(e.toolCallId) : this.isDerivedCall(sessionKey, e.toolCallId));
			const meta = Object.keys(e.meta).length > 0 ? JSON.stringify(e.meta) : null;
			const result = insertEvent.run(
				sessionKey,
				e.seq,
				e.entryId,
				e.idDerived ? 1 : 0,
				e.parentId,
				e.eventType,
				e.role,
				e.toolName,
				e.toolCallId,
				e.customType,
				e.timestampMs,
				e.isError === null ? null : e.isError ? 1 : 0,
				e.exitCode,
				e.targetId,
				e.callIds.length > 0 ? JSON.stringify(e.callIds) : null,
				e.locator.line,
				e.locator.offset,
				e.locator.length,
				e.locator.hash,
				meta,
				contextRoleOf(e.eventType, e.role),
				e.derivedCallIds.length > 0 ? JSON.stringify(e.derivedCallIds) : null,
				states?.[i]?.branchState ?? "unknown",
				states?.[i]?.selectionState ?? "unknown",
				states?.[i]?.turnSeq ?? null,
			);
			const eventKey = Number(result.lastInsertRowid);
			for (const f of e.fragments) {
				const fragKey = nextFragKey++;
				const derived = f.derived || resultOfDerived;
				insertFragment.run(
					fragKey,
					eventKey,
					sessionKey,
					f.fragmentId,
					f.kind,
					fragmentWeight(f.kind, e.isError),
					f.fullLength,
					f.bounded ? 1 : 0,
					derived ? 1 : 0,
					e.timestampMs,
				);
				// A cold index computes the columns off this thread (sync/prepare.ts); otherwise here.
				const columns = f.columns ?? fullTextColumns(this.forms, e, f);
				insertFts.run(fragKey, f.indexText, columns.aux, derived ? derivedScope : scope, columns.forms);
				fragments++;
			}
			for (const file of e.files) {
				const path = cwd && isAbsolute(cwd) && !isAbsolute(file.path) ? resolve(cwd, file.path) : file.path;
				insertFile.run(eventKey, path, file.path, file.op);
			}
		}
		return { fragments };
	}

	/** Whether an already indexed entry of the session made this tool call by running pi-events (appends across syncs). */
	private isDerivedCall(sessionKey: number, callId: string): boolean {
		const row = this.db
			.query(
				`SELECT 1 AS x FROM events e WHERE e.session_key = ?1 AND e.derived_calls IS NOT NULL
				 AND EXISTS (SELECT 1 FROM json_each(e.derived_calls) WHERE value = ?2) LIMIT 1`,
			)
			.get(sessionKey, callId);
		return row !== null;
	}

	/**
	 * Fragment keys (the FTS rowids) are `sessionKey × 2^24 + n`, so each session owns one
	 * contiguous rowid range: a search can rank one session's matches with a rowid range.
	 */
	private nextFragmentKey(sessionKey: number): number {
		// A seek on the primary key inside the session's span (fragments_by_session is ordered by kind first).
		const span = fragmentKeySpan(sessionKey);
		const row = this.db.query("SELECT max(frag_key) AS m FROM fragments WHERE frag_key BETWEEN ?1 AND ?2").get(span.from, span.to) as { m: number | null };
		return row.m === null ? span.from : row.m + 1;
	}

	/** Remove every row of a session (events, fragments, FTS postings, file evidence). */
	deleteSessionRows(sessionKey: number): void {
		const db = this.db;
		db.run("DELETE FROM fts WHERE rowid IN (SELECT frag_key FROM fragments WHERE session_key = ?1)", [sessionKey]);
		db.run("DELETE FROM fragments WHERE session_key = ?1", [sessionKey]);
		db.run("DELETE FROM event_files WHERE event_key IN (SELECT event_key FROM events WHERE session_key = ?1)", [sessionKey]);
		db.run("DELETE FROM events WHERE session_key = ?1", [sessionKey]);
	}

	deleteSession(sessionKey: number): void {
		this.deleteSessionRows(sessionKey);
		this.db.run("DELETE FROM sessions WHERE session_key = ?1", [sessionKey]);
	}

	deleteFile(fileKey: number): void {
		const session = this.db.query("SELECT session_key FROM sessions WHERE file_key = ?1").get(fileKey) as { session_key: number } | null;
		if (session) this.deleteSession(session.session_key);
		this.db.run("DELETE FROM files WHERE file_key = ?1", [fileKey]);
	}

	/**
	 * Insert or update the row of a file; returns its file_key. An UPDATE, then an INSERT when no
	 * row was there, never one statement with RETURNING (or an upsert's RETURNING): such a statement
	 * opens a statement savepoint, and a savepoint makes FTS5 write out its pending postings as a new
	 * segment. Once per file, that was thousands of tiny segments to merge in a cold index.
	 */
	upsertFile(facts: FileFacts): number {
		const values = [
			facts.path,
			facts.source_dir,
			facts.dev,
			facts.ino,
			facts.size,
			facts.mtime_ms,
			facts.durable_end,
			facts.next_line,
			facts.head_hash,
			facts.tail_hash,
			facts.parser_state,
			facts.status,
			facts.problem,
			facts.diagnostics,
			facts.indexed_at,
			facts.real_path,
		] as const;
		const updated = this.db.query(SQL_UPDATE_FILE_BY_PATH).run(...values);
		if (updated.changes === 0) return Number(this.db.query(SQL_INSERT_FILE_ROW).run(...values).lastInsertRowid);
		return (this.db.query("SELECT file_key FROM files WHERE path = ?1").get(facts.path) as { file_key: number }).file_key;
	}

	/** Mark a file's observation without touching its indexed rows (e.g. a changed file that failed to parse). */
	setFileProblem(fileKey: number, status: FileRow["status"], problem: string | null): void {
		this.db.run("UPDATE files SET status = ?2, problem = ?3 WHERE file_key = ?1", [fileKey, status, problem]);
	}

	/** Insert or update the session row of a file; returns its session_key (no RETURNING: see upsertFile). */
	upsertSession(fileKey: number, s: SessionFacts): number {
		const values = [fileKey, s.sessionId, s.version, s.cwd, s.cwdReal, s.created, s.parentSession, s.parentReal] as const;
		const updated = this.db.query(SQL_UPDATE_SESSION_BY_FILE).run(...values);
		if (updated.changes === 0) return Number(this.db.query(SQL_INSERT_SESSION_ROW).run(...values).lastInsertRowid);
		return (this.db.query("SELECT session_key FROM sessions WHERE file_key = ?1").get(fileKey) as { session_key: number }).session_key;
	}

	/** Changes whenever another connection commits (SQLite's PRAGMA data_version). */
	dataVersion(): number {
		return (this.db.query("PRAGMA data_version").get() as { data_version: number }).data_version;
	}

	/** The observation of every file, keyed by path (one query: the no-op sync compares stats in memory). */
	loadFiles(): Map<string, FileObservation> {
		const rows = this.db.query("SELECT file_key, path, source_dir, dev, ino, size, mtime_ms FROM files").all() as FileObservation[];
		const map = new Map<string, FileObservation>();
		for (const r of rows) map.set(r.path, r);
		return map;
	}

	loadObservation(path: string): FileObservation | null {
		return (
			(this.db.query("SELECT file_key, path, source_dir, dev, ino, size, mtime_ms FROM files WHERE path = ?1").get(path) as FileObservation | null) ?? null
		);
	}

	loadFile(path: string): FileRow | null {
		return (this.db.query("SELECT * FROM files WHERE path = ?1").get(path) as FileRow | null) ?? null;
	}

	sessionKeyOf(fileKey: number): number | null {
		const row = this.db.query("SELECT session_key FROM sessions WHERE file_key = ?1").get(fileKey) as { session_key: number } | null;
		return row ? row.session_key : null;
	}

	entryExists(sessionKey: number, entryId: string): boolean {
		return this.db.query("SELECT 1 FROM events WHERE session_key = ?1 AND entry_id = ?2").get(sessionKey, entryId) !== null;
	}

	/** The facts tree classification needs, in append order. */
	loadTreeRows(sessionKey: number): TreeRow[] {
		return this.db
			.query(
				`SELECT event_key, seq, turn_seq, entry_id, parent_id, event_type, role, target_id, branch_state, selection_state,
				   CASE WHEN event_type IN ('branch_summary', 'context_edit') THEN meta END AS meta
				 FROM events WHERE session_key = ?1 ORDER BY seq`,
			)
			.all(sessionKey) as TreeRow[];
	}

	/** Whether an entry appended before position `seq` names this id as its parent (a forward reference). */
	hasEarlierChildNamed(sessionKey: number, entryId: string, seq: number): boolean {
		return this.db.query("SELECT 1 FROM events WHERE session_key = ?1 AND parent_id = ?2 AND seq < ?3 LIMIT 1").get(sessionKey, entryId, seq) !== null;
	}

	/** Tree rows from append position `fromSeq` on. */
	loadTreeRowsTail(sessionKey: number, fromSeq: number): TreeRow[] {
		return this.db
			.query(
				`SELECT event_key, seq, turn_seq, entry_id, parent_id, event_type, role, target_id, branch_state, selection_state,
				   CASE WHEN event_type IN ('branch_summary', 'context_edit') THEN meta END AS meta
				 FROM events WHERE session_key = ?1 AND seq >= ?2 ORDER BY seq`,
			)
			.all(sessionKey, fromSeq) as TreeRow[];
	}

	/** The last appended event of a session (the materialized leaf) and its states. */
	leafRow(sessionKey: number): { entry_id: string; branch_state: string; turn_seq: number | null } | null {
		return (
			(this.db.query("SELECT entry_id, branch_state, turn_seq FROM events WHERE session_key = ?1 ORDER BY seq DESC LIMIT 1").get(sessionKey) as {
				entry_id: string;
				branch_state: string;
				turn_seq: number | null;
			} | null) ?? null
		);
	}

	updateTreeState(eventKey: number, branchState: string, selectionState: string, turnSeq: number | null): void {
		this.db.run("UPDATE events SET branch_state = ?2, selection_state = ?3, turn_seq = ?4 WHERE event_key = ?1", [
			eventKey,
			branchState,
			selectionState,
			turnSeq,
		]);
	}

	/** Checkpoint and truncate the WAL without waiting; false when readers kept it from completing. */
	checkpoint(): boolean {
		const restoreWait = setBusyTimeout(this.db, 0);
		try {
			const row = this.db.query("PRAGMA wal_checkpoint(TRUNCATE)").get() as { busy: number; log: number; checkpointed: number } | null;
			return row !== null && row.busy === 0 && row.log === 0;
		} catch {
			return false;
		} finally {
			restoreWait();
		}
	}

	/** Merge the full-text index into one segment, dropping the tokens of deleted rows. */
	optimizeFullText(): void {
		this.db.run("INSERT INTO fts(fts) VALUES ('optimize')");
	}

	/**
	 * One step towards a single full-text segment: FTS5 writes about `pages` pages of merged
	 * segments (a negative 'merge' merges across levels, as 'optimize' does). False when it found
	 * nothing left to merge: FTS5 then changes fewer than 2 rows (its documented test).
	 */
	mergeFullTextStep(pages: number): boolean {
		const before = this.changes();
		this.db.query("INSERT INTO fts(fts, rank) VALUES ('merge', ?1)").run(-Math.abs(pages));
		return this.changes() - before >= 2;
	}

	/** The size of index.db in bytes (pages in use; the WAL not counted). */
	indexBytes(): number {
		const pages = (this.db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
		const free = (this.db.query("PRAGMA freelist_count").get() as { freelist_count: number }).freelist_count;
		const size = (this.db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
		return (pages - free) * size;
	}

	/** Run `work` in one write transaction (BEGIN IMMEDIATE), or inside the one already open. */
	inTransaction<T>(work: () => T): T {
		return this.db.transaction(work).immediate();
	}

	/** Rows this connection has inserted, updated or deleted since it opened (SQLite's total_changes()). */
	changes(): number {
		return (this.db.query("SELECT total_changes() AS n").get() as { n: number }).n;
	}

	deleteMeta(key: string): void {
		this.db.run("DELETE FROM meta WHERE key = ?1", [key]);
	}

	getMeta(key: string): unknown {
		const row = this.db.query("SELECT value FROM meta WHERE key = ?1").get(key) as { value: string } | null;
		return row ? JSON.parse(row.value) : null;
	}

	setMeta(key: string, value: unknown): void {
		this.db.run("INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [key, JSON.stringify(value)]);
	}

	/** Update the summary facts for appended events without rescanning the session. */
	summarizeAppend(sessionKey: number, added: ProjectedEvent[]): void {
		let fragments = 0;
		let lastTs: number | null = null;
		let firstTs: number | null = null;
		let name: string | undefined;
		for (const e of added) {
			fragments += e.fragments.length;
			if (e.timestampMs !== null && (lastTs === null || e.timestampMs > lastTs)) lastTs = e.timestampMs;
			if (e.timestampMs !== null && (firstTs === null || e.timestampMs < firstTs)) firstTs = e.timestampMs;
			if (e.eventType === "session_info" || e.eventType === "title_change") name = e.meta.name ?? "";
		}
		this.db.run(
			`UPDATE sessions SET entry_count = entry_count + ?2, fragment_count = fragment_count + ?3,
			   last_ts_ms = CASE WHEN ?4 IS NULL THEN last_ts_ms WHEN last_ts_ms IS NULL OR ?4 > last_ts_ms THEN ?4 ELSE last_ts_ms END,
			   first_ts_ms = CASE WHEN first_ts_ms IS NULL THEN coalesce((SELECT min(ts_ms) FROM events WHERE session_key = ?1), ?9)
			     WHEN ?8 IS NOT NULL AND ?8 < first_ts_ms THEN ?8 ELSE first_ts_ms END,
			   leaf_entry = ?5, name = CASE WHEN ?6 = 1 THEN ?7 ELSE name END
			 WHERE session_key = ?1`,
			[sessionKey, added.length, fragments, lastTs, added[added.length - 1]!.entryId, name === undefined ? 0 : 1, name ?? null, firstTs, NO_EVENT_TIME],
		);
	}

	/**
	 * Write a session's summary facts from a tally of all its events (a file written whole): the
	 * values refreshSessionSummary would read back, without reading the events again (at 1 GB its
	 * five scans of each new session's events took 0.6 s of a cold index's writer).
	 */
	writeSessionSummary(sessionKey: number, tally: SessionTally): void {
		this.db
			.query(
				`UPDATE sessions SET entry_count = ?2, fragment_count = ?3, first_ts_ms = ?4, last_ts_ms = ?5, leaf_entry = ?6, name = ?7
				 WHERE session_key = ?1`,
			)
			.run(sessionKey, tally.entries, tally.fragments, tally.firstTs ?? NO_EVENT_TIME, tally.lastTs, tally.leaf, tally.name);
	}

	/** Recompute the per-session summary facts from its events. */
	refreshSessionSummary(sessionKey: number): void {
		this.db.run(
			`UPDATE sessions SET
			   entry_count = (SELECT count(*) FROM events WHERE session_key = ?1),
			   fragment_count = (SELECT count(*) FROM fragments WHERE session_key = ?1),
			   last_ts_ms = (SELECT max(ts_ms) FROM events WHERE session_key = ?1),
			   first_ts_ms = coalesce((SELECT min(ts_ms) FROM events WHERE session_key = ?1), ${NO_EVENT_TIME}),
			   leaf_entry = (SELECT entry_id FROM events WHERE session_key = ?1 ORDER BY seq DESC LIMIT 1),
			   name = (SELECT json_extract(meta, '$.name') FROM events WHERE session_key = ?1 AND event_type IN ('session_info', 'title_change') ORDER BY seq DESC LIMIT 1)
			 WHERE session_key = ?1`,
			[sessionKey],
		);
	}
}
