/**
 * Search SQL: FTS5 candidates ranked by weighted BM25 inside the statement that performs the
 * MATCH, joined to events and sessions where the authorization scope and every filter apply, so
 * nothing outside the scope is ever read into the process. Optionally restricted to a rowid
 * window to bound the cost of very common terms.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import { likeEscape } from "../auth/scope.ts";
import type { BranchState, SelectionState, SemanticKind } from "../model.ts";

/**
 * Per-kind multipliers on BM25 (higher ranks higher). What a person typed and the commands and
 * paths an agent used are the strongest known-item evidence; summaries restate other events and
 * tool/bash output is long and noisy, so they are damped rather than excluded.
 */
export const KIND_WEIGHTS: Record<SemanticKind, number> = {
	"session.name": 1.5,
	"user.text": 1.3,
	"bash.command": 1.2,
	"tool.call": 1.1,
	"assistant.text": 1.0,
	"custom.message": 0.8,
	"summary.compaction": 0.7,
	"summary.branch": 0.7,
	"tool.result": 0.75,
	"bash.output": 0.75,
};

/** BM25 column weights: the visible text counts fully, derived split tokens (aux) less. */
const BM25 = "bm25(fts, 1.0, 0.5)";

export interface SqlFilters {
	/** Canonical roots (null: unscoped). */
	roots: string[] | null;
	/** Sessions hidden entirely (the current session when not targeted). */
	excludeSessionIds: string[];
	/** The current session when targeted explicitly: only seq < cutoffSeq is eligible. */
	cutoff: { sessionId: string; seq: number } | null;
	sessionIds?: string[];
	cwdPrefix?: string;
	eventTypes?: string[];
	kinds?: SemanticKind[];
	roles?: string[];
	tools?: string[];
	sinceMs?: number;
	untilMs?: number;
	isError?: boolean;
	branchStates?: BranchState[];
	selectionStates?: SelectionState[];
	/** Absolute paths or path prefixes the event touched. */
	files?: string[];
}

export interface CandidateRow {
	frag_key: number;
	score: number;
	fragment_id: string;
	kind: SemanticKind;
	event_key: number;
	entry_id: string;
	event_type: string;
	role: string | null;
	tool_name: string | null;
	ts_ms: number | null;
	is_error: number | null;
	exit_code: number | null;
	branch_state: BranchState;
	context_role: string;
	selection_state: SelectionState;
	line: number;
	seq: number;
	parent_id: string | null;
	byte_offset: number;
	byte_length: number;
	content_hash: string;
	version: number;
	session_id: string;
	cwd: string | null;
	session_name: string | null;
	session_file: string;
}

const kindCase = `CASE f.kind ${Object.entries(KIND_WEIGHTS)
	.map(([k, w]) => `WHEN '${k}' THEN ${w}`)
	.join(" ")} ELSE 1.0 END`;

/** Build the WHERE clause for the filters; returns SQL and its bindings (positional). */
export function filterSql(f: SqlFilters): { sql: string; params: SQLQueryBindings[] } {
	const where: string[] = [];
	const params: SQLQueryBindings[] = [];
	const inList = (column: string, values: readonly (string | number)[]) => {
		where.push(`${column} IN (${values.map(() => "?").join(", ")})`);
		params.push(...values);
	};
	if (f.roots !== null) {
		if (f.roots.length === 0) where.push("0");
		else {
			where.push(`(${f.roots.map(() => "(s.cwd_real = ? OR s.cwd_real LIKE ? ESCAPE '\\')").join(" OR ")})`);
			for (const root of f.roots) params.push(root, root === "/" ? "/%" : `${likeEscape(root)}/%`);
		}
	}
	if (f.excludeSessionIds.length > 0) {
		where.push(`s.session_id NOT IN (${f.excludeSessionIds.map(() => "?").join(", ")})`);
		params.push(...f.excludeSessionIds);
	}
	if (f.cutoff) {
		where.push("(s.session_id != ? OR e.seq < ?)");
		params.push(f.cutoff.sessionId, f.cutoff.seq);
	}
	if (f.sessionIds?.length) inList("s.session_id", f.sessionIds);
	if (f.cwdPrefix) {
		where.push("(s.cwd_real = ? OR s.cwd_real LIKE ? ESCAPE '\\')");
		params.push(f.cwdPrefix, f.cwdPrefix === "/" ? "/%" : `${likeEscape(f.cwdPrefix)}/%`);
	}
	if (f.eventTypes?.length) inList("e.event_type", f.eventTypes);
	if (f.kinds?.length) inList("f.kind", f.kinds);
	if (f.roles?.length) inList("e.role", f.roles);
	if (f.tools?.length) inList("e.tool_name", f.tools);
	if (f.sinceMs !== undefined) {
		where.push("e.ts_ms >= ?");
		params.push(f.sinceMs);
	}
	if (f.untilMs !== undefined) {
		where.push("e.ts_ms < ?");
		params.push(f.untilMs);
	}
	if (f.isError !== undefined) where.push(f.isError ? "e.is_error = 1" : "(e.is_error = 0 OR e.is_error IS NULL)");
	if (f.branchStates?.length) inList("e.branch_state", f.branchStates);
	if (f.selectionStates?.length) inList("e.selection_state", f.selectionStates);
	if (f.files?.length) {
		where.push(
			`EXISTS (SELECT 1 FROM event_files ef WHERE ef.event_key = e.event_key AND (${f.files.map(() => "ef.path = ? OR ef.path LIKE ? ESCAPE '\\'").join(" OR ")}))`,
		);
		for (const p of f.files) params.push(p, `${likeEscape(p.replace(/\/+$/, ""))}/%`);
	}
	return { sql: where.length > 0 ? where.join(" AND ") : "1", params };
}

export function searchCandidates(
	db: Database,
	match: string,
	filters: SqlFilters,
	limit: number,
	window: { lo: number; hi: number } | null,
): CandidateRow[] {
	const { sql: where, params } = filterSql(filters);
	const windowSql = window ? " AND fts.rowid BETWEEN ? AND ?" : "";
	const sql = `
		WITH m AS (
		  SELECT fts.rowid AS frag_key, ${BM25} AS rank FROM fts WHERE fts MATCH ?${windowSql}
		)
		SELECT m.frag_key, m.rank * ${kindCase} AS score, f.fragment_id, f.kind, e.event_key, e.entry_id, e.event_type, e.role,
		  e.tool_name, e.ts_ms, e.is_error, e.exit_code, e.branch_state, e.context_role, e.selection_state, e.line,
		  e.seq, e.parent_id, e.byte_offset, e.byte_length, e.content_hash, s.version, s.session_id, s.cwd, s.name AS session_name, fl.path AS session_file
		FROM m
		JOIN fragments f ON f.frag_key = m.frag_key
		JOIN events e ON e.event_key = f.event_key
		JOIN sessions s ON s.session_key = e.session_key
		JOIN files fl ON fl.file_key = s.file_key
		WHERE ${where}
		ORDER BY score ASC, e.ts_ms DESC, s.session_id ASC, e.entry_id ASC, f.fragment_id ASC
		LIMIT ?`;
	const bindings: SQLQueryBindings[] = [match];
	if (window) bindings.push(window.lo, window.hi);
	bindings.push(...params, limit);
	return db.query(sql).all(...bindings) as CandidateRow[];
}

/** Number of fragments matching the expression (cheap: no ranking, no joins). */
export function countMatches(db: Database, match: string): number {
	return (db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH ?1").get(match) as { n: number }).n;
}

export function maxFragmentKey(db: Database): number {
	const row = db.query("SELECT max(frag_key) AS m FROM fragments").get() as { m: number | null };
	return row.m ?? 0;
}

/** Resolve the current session's invocation cutoff: the append position of the invoking entry. */
export function invocationCutoff(db: Database, sessionId: string, toolCallId: string | null): number {
	if (toolCallId) {
		const row = db
			.query(
				`SELECT min(e.seq) AS seq FROM events e JOIN sessions s ON s.session_key = e.session_key
				 WHERE s.session_id = ?1 AND e.call_ids IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(e.call_ids) WHERE value = ?2)`,
			)
			.get(sessionId, toolCallId) as { seq: number | null };
		// Fail closed: an invoking call that is not indexed yet hides the whole session.
		return row.seq ?? 0;
	}
	// Without a tool-call id (the bash tool), the invoking entry is the last assistant message that made tool calls.
	const row = db
		.query(
			`SELECT max(e.seq) AS seq FROM events e JOIN sessions s ON s.session_key = e.session_key
			 WHERE s.session_id = ?1 AND e.role = 'assistant' AND e.call_ids IS NOT NULL`,
		)
		.get(sessionId) as { seq: number | null };
	return row.seq ?? 0;
}

export function sessionIdOfFile(db: Database, path: string): string | null {
	const row = db
		.query("SELECT s.session_id FROM sessions s JOIN files f ON f.file_key = s.file_key WHERE f.path = ?1")
		.get(path) as { session_id: string } | null;
	return row?.session_id ?? null;
}
