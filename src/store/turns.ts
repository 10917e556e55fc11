/**
 * The index's turn reads (events.turn_seq, schema 22): a hit's prompt and outcome, the turns of
 * ranked events and a turn's assistant texts. Callers (the gate) apply the scope and the cutoff.
 */
import type { Database } from "bun:sqlite";
import { inList } from "./in-list.ts";

/** An event of a hit's turn (its prompt or its outcome) with the locator of its text fragment. */
export interface TurnEventRow {
	event_key: number;
	entry_id: string;
	seq: number;
	parent_id: string | null;
	byte_offset: number;
	byte_length: number;
	content_hash: string;
	/** The text fragment shown as the preview (null: a prompt without text, an image alone). */
	fragment_id: string | null;
	frag_key: number | null;
}

const TURN_EVENT_COLUMNS = "e.event_key, e.entry_id, e.seq, e.parent_id, e.byte_offset, e.byte_length, e.content_hash, f.fragment_id, f.frag_key";

/** The prompt that starts a turn (the event at append position `turnSeq`) with its first text, if before `beforeSeq`. */
export function turnPrompt(db: Database, sessionKey: number, turnSeq: number, beforeSeq: number): TurnEventRow | null {
	return (
		(db
			.query(
				`SELECT ${TURN_EVENT_COLUMNS} FROM events e LEFT JOIN fragments f ON f.event_key = e.event_key AND f.kind = 'user.text'
				 WHERE e.session_key = ?1 AND e.seq = ?2 AND e.seq < ?3 ORDER BY f.frag_key LIMIT 1`,
			)
			.get(sessionKey, turnSeq, beforeSeq) as TurnEventRow | null) ?? null
	);
}

/**
 * A turn's outcome: its last assistant message with visible text (its last text block), before
 * `beforeSeq`. When the turn forks, the branch toward the materialized leaf (branch_state
 * "selected") wins; a turn with no entry on it (an abandoned branch) takes the latest appended.
 * One seek of events_turn_answers, then the turn's assistant messages, newest first.
 */
export function turnOutcome(db: Database, sessionKey: number, turnSeq: number, beforeSeq: number): TurnEventRow | null {
	return (
		(db
			.query(
				`SELECT ${TURN_EVENT_COLUMNS} FROM events e JOIN fragments f ON f.event_key = e.event_key AND f.kind = 'assistant.text'
				 WHERE e.session_key = ?1 AND e.turn_seq = ?2 AND e.role = 'assistant' AND e.seq < ?3
				 ORDER BY e.branch_state = 'selected' DESC, e.seq DESC, f.frag_key DESC LIMIT 1`,
			)
			.get(sessionKey, turnSeq, beforeSeq) as TurnEventRow | null) ?? null
	);
}

/** The turn of each of these events (its prompt's append position), by event key. */
export interface EventTurnRow {
	event_key: number;
	entry_id: string;
	session_key: number;
	session_id: string;
	cwd_real: string | null;
	turn_seq: number | null;
	seq: number;
	ts_ms: number | null;
}

export function turnsOfEvents(db: Database, eventKeys: readonly number[]): Map<number, EventTurnRow> {
	const out = new Map<number, EventTurnRow>();
	if (eventKeys.length === 0) return out;
	const keys = inList(eventKeys);
	const rows = db
		.query(
			`SELECT e.event_key, e.entry_id, e.session_key, s.session_id, s.cwd_real, e.turn_seq, e.seq, e.ts_ms FROM events e JOIN sessions s ON s.session_key = e.session_key
			 WHERE e.event_key IN ${keys.sql}`,
		)
		.all(...keys.params) as EventTurnRow[];
	for (const r of rows) out.set(r.event_key, r);
	return out;
}

/** A turn's assistant texts (not pi-events' echoes), before `beforeSeq`: what choosing its answer needs. */
export interface AnswerRow {
	event_key: number;
	frag_key: number;
	seq: number;
	length: number;
	selected: number;
	changes: number;
}

export function turnAnswerRows(db: Database, sessionKey: number, turnSeq: number, beforeSeq: number): AnswerRow[] {
	return db
		.query(
			`SELECT e.event_key, f.frag_key, e.seq, f.full_length AS length, e.branch_state = 'selected' AS selected,
			   EXISTS (SELECT 1 FROM event_files ef WHERE ef.event_key = e.event_key AND ef.op = 'changed') AS changes
			 FROM events e JOIN fragments f ON f.event_key = e.event_key AND f.kind = 'assistant.text' AND f.derived = 0
			 WHERE e.session_key = ?1 AND e.turn_seq = ?2 AND e.role = 'assistant' AND e.seq < ?3
			 ORDER BY e.seq LIMIT 200`,
		)
		.all(sessionKey, turnSeq, beforeSeq) as AnswerRow[];
}

/** The turn that follows another on its branch: its prompt's append position and the length of its text. */
export interface NextTurnRow {
	turn_seq: number;
	prompt_length: number;
}

/** How many events after a turn's prompt the next prompt on its branch is looked for (a bound on the scan). */
const NEXT_TURN_SCAN = 2000;

/**
 * The next turn on a turn's branch, before `beforeSeq`: the first prompt (of the NEXT_TURN_PROMPTS
 * appended after it, within NEXT_TURN_SCAN events) whose parent is in the turn, on the branch toward
 * the materialized leaf when one is.
 */
export function nextTurnRow(db: Database, sessionKey: number, turnSeq: number, beforeSeq: number): NextTurnRow | null {
	return (
		(db
			.query(
				`WITH later AS (
				   SELECT event_key, seq, parent_id, branch_state FROM events
				   WHERE session_key = ?1 AND seq > ?2 AND seq < MIN(?3, ?2 + ${NEXT_TURN_SCAN}) AND turn_seq = seq ORDER BY seq LIMIT ${NEXT_TURN_PROMPTS})
				 SELECT p.seq AS turn_seq, COALESCE((SELECT SUM(f.full_length) FROM fragments f WHERE f.event_key = p.event_key AND f.kind = 'user.text'), 0) AS prompt_length
				 FROM later p JOIN events q ON q.session_key = ?1 AND q.entry_id = p.parent_id
				 WHERE q.turn_seq = ?2 ORDER BY p.branch_state = 'selected' DESC, p.seq LIMIT 1`,
			)
			.get(sessionKey, turnSeq, beforeSeq) as NextTurnRow | null) ?? null
	);
}

const NEXT_TURN_PROMPTS = 20;

/** A prompt (its user.text) that holds a term: its turn is its own append position. */
export interface TermPromptRow {
	session_key: number;
	session_id: string;
	turn_seq: number;
	entry_id: string;
	ts_ms: number | null;
	frag_key: number;
}

/**
 * The prompts (not pi-events' echoes) among the fragments that match `match` (a scoped MATCH
 * expression); null when more than `scan` fragments match (a common term: the prompts among them
 * are not looked for). Two bounded reads: the count (at most `scan` + 1 rowids), then the prompts.
 */
export function termPromptRows(db: Database, match: string, scan: number): TermPromptRow[] | null {
	const { n } = db.query("SELECT COUNT(*) AS n FROM (SELECT 1 FROM fts WHERE fts MATCH ?1 LIMIT ?2)").get(match, scan + 1) as { n: number };
	if (n > scan) return null;
	return db
		.query(
			`SELECT f.session_key, s.session_id, e.turn_seq, e.entry_id, e.ts_ms, f.frag_key
			 FROM fts JOIN fragments f ON f.frag_key = fts.rowid JOIN events e ON e.event_key = f.event_key JOIN sessions s ON s.session_key = f.session_key
			 WHERE fts MATCH ?1 AND f.kind = 'user.text' AND f.derived = 0 AND e.turn_seq = e.seq`,
		)
		.all(match) as TermPromptRow[];
}

/**
 * The rowids a turn's conversation spans, before `beforeSeq`: from its prompt's first fragment to
 * the last fragment of its last assistant message (tool calls and texts are in those; tool output,
 * appended after, is not conversation). Null when the prompt is not before `beforeSeq`.
 */
export function turnConversationSpan(db: Database, sessionKey: number, turnSeq: number, beforeSeq: number): { from: number; to: number } | null {
	if (turnSeq >= beforeSeq) return null;
	const from = db
		.query("SELECT MIN(f.frag_key) AS k FROM events e JOIN fragments f ON f.event_key = e.event_key WHERE e.session_key = ?1 AND e.seq = ?2")
		.get(sessionKey, turnSeq) as { k: number | null };
	const to = db
		.query(
			`SELECT MAX(f.frag_key) AS k FROM events e JOIN fragments f ON f.event_key = e.event_key
			 WHERE e.session_key = ?1 AND e.turn_seq = ?2 AND e.role = 'assistant' AND e.seq < ?3`,
		)
		.get(sessionKey, turnSeq, beforeSeq) as { k: number | null };
	if (from.k === null) return null;
	return { from: from.k, to: Math.max(from.k, to.k ?? from.k) };
}

/** Whether a conversational fragment of turn `turnSeq` within `span`, before `beforeSeq`, matches `match` (a scoped MATCH expression). */
export function conversationHolds(db: Database, match: string, span: { from: number; to: number }, turnSeq: number, beforeSeq: number): boolean {
	return (
		db
			.query(
				`SELECT 1 FROM fts JOIN fragments f ON f.frag_key = fts.rowid JOIN events e ON e.event_key = f.event_key
				 WHERE fts MATCH ?1 AND fts.rowid BETWEEN ?2 AND ?3 AND f.kind IN ${TURN_WINDOW_KINDS} AND f.derived = 0 AND e.turn_seq = ?4 AND e.seq < ?5 LIMIT 1`,
			)
			.get(match, span.from, span.to, turnSeq, beforeSeq) !== null
	);
}

/** Whether fragment `fragKey` matches `match` (one rowid seek). */
export function fragmentMatches(db: Database, fragKey: number, match: string): boolean {
	return db.query("SELECT 1 FROM fts WHERE fts MATCH ?1 AND rowid = ?2").get(match, fragKey) !== null;
}

/** A conversational fragment (prompt, assistant text, tool call) that holds a term, with its turn. */
export interface TermTurnRow {
	session_key: number;
	session_id: string;
	turn_seq: number;
	seq: number;
	entry_id: string;
	frag_key: number;
}

const TURN_WINDOW_KINDS = "('user.text', 'assistant.text', 'tool.call')";

/**
 * The conversational fragments (not pi-events' echoes) that match `match` (a scoped MATCH
 * expression), in a rowid range when given, at most `cap` + 1 of them (more: the caller treats the
 * term as common).
 */
export function termTurnRows(db: Database, match: string, cap: number, range?: { from: number; to: number }): TermTurnRow[] {
	const rangeSql = range ? " AND fts.rowid BETWEEN ?3 AND ?4" : "";
	const params: (string | number)[] = [match, cap + 1];
	if (range) params.push(range.from, range.to);
	return db
		.query(
			`SELECT f.session_key, s.session_id, e.turn_seq, e.seq, e.entry_id, f.frag_key
			 FROM fts JOIN fragments f ON f.frag_key = fts.rowid JOIN events e ON e.event_key = f.event_key JOIN sessions s ON s.session_key = f.session_key
			 WHERE fts MATCH ?1${rangeSql} AND f.kind IN ${TURN_WINDOW_KINDS} AND f.derived = 0 AND e.turn_seq IS NOT NULL
			 LIMIT ?2`,
		)
		.all(...params) as TermTurnRow[];
}
