/**
 * Read-side queries for exact reads and traces: sessions by id, events by identity, append and
 * tree neighbours, fragments, file evidence. Plain data out; authorization is the caller's
 * (query/access.ts) and is applied before anything leaves the process.
 */
import type { Database } from "bun:sqlite";

export interface SessionRow {
	session_key: number;
	session_id: string;
	version: number;
	cwd: string | null;
	cwd_real: string | null;
	created: string | null;
	parent_session: string | null;
	parent_real: string | null;
	name: string | null;
	entry_count: number;
	leaf_entry: string | null;
	path: string;
	real_path: string;
}

export interface EventRow {
	event_key: number;
	session_key: number;
	seq: number;
	entry_id: string;
	id_derived: number;
	parent_id: string | null;
	event_type: string;
	role: string | null;
	tool_name: string | null;
	tool_call_id: string | null;
	custom_type: string | null;
	ts_ms: number | null;
	is_error: number | null;
	exit_code: number | null;
	target_id: string | null;
	call_ids: string | null;
	line: number;
	byte_offset: number;
	byte_length: number;
	content_hash: string;
	meta: string | null;
	branch_state: string;
	context_role: string;
	selection_state: string;
}

export interface FragmentRow {
	frag_key: number;
	fragment_id: string;
	kind: string;
	full_length: number;
	bounded: number;
}

const SESSION_COLUMNS =
	"s.session_key, s.session_id, s.version, s.cwd, s.cwd_real, s.created, s.parent_session, s.parent_real, s.name, s.entry_count, s.leaf_entry, f.path, f.real_path";

/** Semantic kinds that make an event part of the conversation (read --only conversation). */
const CONVERSATION_KINDS = ["user.text", "assistant.text", "session.name", "summary.compaction", "summary.branch"] as const;
const CONVERSATIONAL = `EXISTS (SELECT 1 FROM fragments f WHERE f.event_key = e.event_key AND f.kind IN (${CONVERSATION_KINDS.map((k) => `'${k}'`).join(", ")}))`;

export class EventStore {
	constructor(private readonly db: Database) {}

	/** All indexed files holding this session id (an /export + /import pair shares one). */
	sessionsById(sessionId: string): SessionRow[] {
		return this.db
			.query(`SELECT ${SESSION_COLUMNS} FROM sessions s JOIN files f ON f.file_key = s.file_key WHERE s.session_id = ?1 ORDER BY s.entry_count DESC, f.path`)
			.all(sessionId) as SessionRow[];
	}

	/**
	 * The sessions with this id that satisfy `where` (a condition on `s`, the caller's scope rule),
	 * most entries first. With the rule in the statement, an id outside the scope and an id that
	 * does not exist cost the same: one index lookup, no row returned.
	 */
	sessionsByIdWhere(sessionId: string, where: { sql: string; params: (string | number)[] }): SessionRow[] {
		return this.db
			.query(
				`SELECT ${SESSION_COLUMNS} FROM sessions s JOIN files f ON f.file_key = s.file_key WHERE s.session_id = ? AND ${where.sql} ORDER BY s.entry_count DESC, f.path`,
			)
			.all(sessionId, ...where.params) as SessionRow[];
	}

	/** The session stored in the file at this canonical path. */
	sessionByRealPath(realPath: string): SessionRow | null {
		return (
			(this.db
				.query(`SELECT ${SESSION_COLUMNS} FROM sessions s JOIN files f ON f.file_key = s.file_key WHERE f.real_path = ?1 ORDER BY f.path LIMIT 1`)
				.get(realPath) as SessionRow | null) ?? null
		);
	}

	/** Sessions whose header names this canonical file as their parent (fork children). */
	childrenOfFile(realPath: string): SessionRow[] {
		return this.db
			.query(`SELECT ${SESSION_COLUMNS} FROM sessions s JOIN files f ON f.file_key = s.file_key WHERE s.parent_real = ?1 ORDER BY f.path`)
			.all(realPath) as SessionRow[];
	}

	/** Name and last entry as they were before append position `seq` (for the current session's cutoff). */
	factsBefore(sessionKey: number, seq: number): { name: string | null; leaf: string | null } {
		const name = this.db
			.query(
				`SELECT json_extract(meta, '$.name') AS name FROM events WHERE session_key = ?1 AND seq < ?2
				 AND event_type IN ('session_info', 'title_change') ORDER BY seq DESC LIMIT 1`,
			)
			.get(sessionKey, seq) as { name: string | null } | null;
		const leaf = this.db.query("SELECT entry_id FROM events WHERE session_key = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT 1").get(sessionKey, seq) as {
			entry_id: string;
		} | null;
		return { name: name?.name || null, leaf: leaf?.entry_id ?? null };
	}

	event(sessionKey: number, entryId: string): EventRow | null {
		return (this.db.query("SELECT * FROM events WHERE session_key = ?1 AND entry_id = ?2").get(sessionKey, entryId) as EventRow | null) ?? null;
	}

	eventsBySeq(sessionKey: number, fromSeq: number, toSeq: number): EventRow[] {
		return this.db.query("SELECT * FROM events WHERE session_key = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq").all(sessionKey, fromSeq, toSeq) as EventRow[];
	}

	children(sessionKey: number, entryId: string): EventRow[] {
		return this.db.query("SELECT * FROM events WHERE session_key = ?1 AND parent_id = ?2 ORDER BY seq").all(sessionKey, entryId) as EventRow[];
	}

	/** Entries with no resolvable parent (several roots and orphans are possible). */
	roots(sessionKey: number): EventRow[] {
		return this.db
			.query(
				`SELECT * FROM events e WHERE e.session_key = ?1 AND (e.parent_id IS NULL OR NOT EXISTS
				   (SELECT 1 FROM events p WHERE p.session_key = e.session_key AND p.entry_id = e.parent_id)) ORDER BY seq`,
			)
			.all(sessionKey) as EventRow[];
	}

	/** Events that point at this entry (labels, context edits, compaction boundaries, branch summaries). */
	pointingAt(sessionKey: number, entryId: string): EventRow[] {
		return this.db.query("SELECT * FROM events WHERE session_key = ?1 AND target_id = ?2 ORDER BY seq").all(sessionKey, entryId) as EventRow[];
	}

	/** The assistant event that made a tool call with this id. */
	callerOf(sessionKey: number, toolCallId: string): EventRow | null {
		return (
			(this.db
				.query(
					`SELECT * FROM events WHERE session_key = ?1 AND call_ids IS NOT NULL
					 AND EXISTS (SELECT 1 FROM json_each(call_ids) WHERE value = ?2) ORDER BY seq LIMIT 1`,
				)
				.get(sessionKey, toolCallId) as EventRow | null) ?? null
		);
	}

	resultsFor(sessionKey: number, toolCallId: string): EventRow[] {
		return this.db.query("SELECT * FROM events WHERE session_key = ?1 AND tool_call_id = ?2 ORDER BY seq").all(sessionKey, toolCallId) as EventRow[];
	}

	/** Whether an event has conversational text (user or assistant text, a session name, a summary). */
	isConversation(eventKey: number): boolean {
		return this.db.query(`SELECT 1 FROM events e WHERE e.event_key = ?1 AND ${CONVERSATIONAL}`).get(eventKey) !== null;
	}

	/** Up to `count` conversational events before (or after) append position `seq`, nearest first. */
	conversationBySeq(sessionKey: number, seq: number, direction: "before" | "after", count: number): EventRow[] {
		const sql =
			direction === "before"
				? `SELECT * FROM events e WHERE e.session_key = ?1 AND e.seq < ?2 AND ${CONVERSATIONAL} ORDER BY e.seq DESC LIMIT ?3`
				: `SELECT * FROM events e WHERE e.session_key = ?1 AND e.seq > ?2 AND ${CONVERSATIONAL} ORDER BY e.seq LIMIT ?3`;
		return this.db.query(sql).all(sessionKey, seq, count) as EventRow[];
	}

	/** The session's first user message event (append order), if any. */
	firstUserEvent(sessionKey: number): EventRow | null {
		return (this.db.query("SELECT * FROM events WHERE session_key = ?1 AND role = 'user' ORDER BY seq LIMIT 1").get(sessionKey) as EventRow | null) ?? null;
	}

	fragments(eventKey: number): FragmentRow[] {
		return this.db
			.query("SELECT frag_key, fragment_id, kind, full_length, bounded FROM fragments WHERE event_key = ?1 ORDER BY frag_key")
			.all(eventKey) as FragmentRow[];
	}

	/** File evidence as recorded, with the absolute path when the recorded one was relative. */
	files(eventKey: number): { path: string; op: string; absolutePath?: string }[] {
		const rows = this.db.query("SELECT recorded, path, op FROM event_files WHERE event_key = ?1 ORDER BY op, recorded").all(eventKey) as {
			recorded: string;
			path: string;
			op: string;
		}[];
		return rows.map((r) => (r.path === r.recorded ? { path: r.recorded, op: r.op } : { path: r.recorded, op: r.op, absolutePath: r.path }));
	}
}
