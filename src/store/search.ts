/**
 * Search SQL: FTS5 candidates ranked by weighted BM25 inside the statement that performs the
 * MATCH, joined to events and sessions where the authorization scope and every filter apply, so
 * nothing outside the scope is ever read into the process. Optionally restricted to a rowid
 * window to bound the cost of very common terms.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { BranchState, SelectionState, SemanticKind } from "../model.ts";
export { KIND_WEIGHTS } from "../project/weights.ts";

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
	session_key: number;
	session_id: string;
	cwd: string | null;
	session_name: string | null;
	session_file: string;
}

interface SqlPart {
	sql: string[];
	params: SQLQueryBindings[];
}

/**
 * The filters as SQL, split by what they need: conditions on sessions become one
 * `f.session_key IN (…)` set (evaluated once, then a cheap lookup per match); conditions on
 * events need the events join, which is added only when such a filter is present.
 */
export function filterSql(f: SqlFilters): { where: string; params: SQLQueryBindings[]; needsEvents: boolean } {
	const session: SqlPart = { sql: [], params: [] };
	const rest: SqlPart = { sql: [], params: [] };
	let needsEvents = false;
	const inList = (part: SqlPart, column: string, values: readonly (string | number)[]) => {
		part.sql.push(`${column} IN (${values.map(() => "?").join(", ")})`);
		part.params.push(...values);
	};
	const under = (part: SqlPart, roots: readonly string[]) => {
		// instr() compares bytes exactly; LIKE would fold ASCII case and admit /Work for /work.
		part.sql.push(`(${roots.map(() => "(s.cwd_real = ? OR instr(s.cwd_real, ?) = 1)").join(" OR ")})`);
		for (const root of roots) part.params.push(root, root === "/" ? "/" : `${root}/`);
	};
	if (f.roots !== null) {
		if (f.roots.length === 0) session.sql.push("0");
		else under(session, f.roots);
	}
	if (f.excludeSessionIds.length > 0) {
		session.sql.push(`s.session_id NOT IN (${f.excludeSessionIds.map(() => "?").join(", ")})`);
		session.params.push(...f.excludeSessionIds);
	}
	if (f.sessionIds?.length) inList(session, "s.session_id", f.sessionIds);
	if (f.cwdPrefix) under(session, [f.cwdPrefix]);

	const ev = (fn: () => void) => {
		needsEvents = true;
		fn();
	};
	if (f.cutoff) {
		const { seq, sessionId } = f.cutoff;
		ev(() => {
			rest.sql.push("NOT (e.seq >= ? AND f.session_key IN (SELECT session_key FROM sessions WHERE session_id = ?))");
			rest.params.push(seq, sessionId);
		});
	}
	if (f.kinds?.length) inList(rest, "f.kind", f.kinds);
	const { eventTypes, roles, tools, sinceMs, untilMs, isError, branchStates, selectionStates, files } = f;
	if (eventTypes?.length) ev(() => inList(rest, "e.event_type", eventTypes));
	if (roles?.length) ev(() => inList(rest, "e.role", roles));
	if (tools?.length) ev(() => inList(rest, "e.tool_name", tools));
	if (sinceMs !== undefined)
		ev(() => {
			rest.sql.push("e.ts_ms >= ?");
			rest.params.push(sinceMs);
		});
	if (untilMs !== undefined)
		ev(() => {
			rest.sql.push("e.ts_ms < ?");
			rest.params.push(untilMs);
		});
	if (isError !== undefined) ev(() => rest.sql.push(isError ? "e.is_error = 1" : "(e.is_error = 0 OR e.is_error IS NULL)"));
	if (branchStates?.length) ev(() => inList(rest, "e.branch_state", branchStates));
	if (selectionStates?.length) ev(() => inList(rest, "e.selection_state", selectionStates));
	if (files?.length) {
		rest.sql.push(
			`EXISTS (SELECT 1 FROM event_files ef WHERE ef.event_key = f.event_key AND (${files.map(() => "ef.path = ? OR instr(ef.path, ?) = 1").join(" OR ")}))`,
		);
		for (const p of files) rest.params.push(p, `${p.replace(/\/+$/, "")}/`);
	}
	const where: string[] = [];
	const params: SQLQueryBindings[] = [];
	if (session.sql.length > 0) {
		where.push(`f.session_key IN (SELECT s.session_key FROM sessions s WHERE ${session.sql.join(" AND ")})`);
		params.push(...session.params);
	}
	where.push(...rest.sql);
	params.push(...rest.params);
	return { where: where.length > 0 ? where.join(" AND ") : "1", params, needsEvents };
}

export interface RankedRow {
	frag_key: number;
	score: number;
	event_key: number;
}

/**
 * Rank matching fragments: BM25 in the statement that performs the MATCH, times the kind
 * weight, filtered, best first. Only what the filters need is joined; details come later.
 */
export function rankFragments(
	db: Database,
	match: string,
	filters: SqlFilters,
	limit: number,
	window: { lo: number; hi: number } | null,
	/** Only fragments with exactly this score (to resolve ties at a cut). */
	scoreEquals?: number,
): RankedRow[] {
	const { where, params, needsEvents } = filterSql(filters);
	const windowSql = window ? " AND fts.rowid BETWEEN ? AND ?" : "";
	const sql = `
		SELECT m.frag_key, m.rank * f.weight AS score, f.event_key
		FROM (SELECT fts.rowid AS frag_key, ${BM25} AS rank FROM fts WHERE fts MATCH ?${windowSql}) m
		JOIN fragments f ON f.frag_key = m.frag_key
		${needsEvents ? "JOIN events e ON e.event_key = f.event_key" : ""}
		WHERE ${where}${scoreEquals !== undefined ? ` AND m.rank * f.weight = ?` : ""}
		ORDER BY score ASC, m.frag_key DESC
		LIMIT ?`;
	const bindings: SQLQueryBindings[] = [match];
	if (window) bindings.push(window.lo, window.hi);
	bindings.push(...params);
	if (scoreEquals !== undefined) bindings.push(scoreEquals);
	bindings.push(limit);
	return db.query(sql).all(...bindings) as RankedRow[];
}

/** Everything a hit shows, for a handful of ranked fragments (in ranked order). */
export function hydrate(db: Database, ranked: RankedRow[]): CandidateRow[] {
	if (ranked.length === 0) return [];
	const rows = db
		.query(
			`SELECT f.frag_key, f.fragment_id, f.kind, e.event_key, e.entry_id, e.event_type, e.role, e.tool_name, e.ts_ms, e.is_error,
			   e.exit_code, e.branch_state, e.context_role, e.selection_state, e.line, e.seq, e.parent_id, e.byte_offset, e.byte_length,
			   e.content_hash, s.version, s.session_key, s.session_id, s.cwd, s.name AS session_name, fl.path AS session_file
			 FROM fragments f
			 JOIN events e ON e.event_key = f.event_key
			 JOIN sessions s ON s.session_key = e.session_key
			 JOIN files fl ON fl.file_key = s.file_key
			 WHERE f.frag_key IN (${ranked.map(() => "?").join(", ")})`,
		)
		.all(...ranked.map((r) => r.frag_key)) as Omit<CandidateRow, "score">[];
	const byKey = new Map(rows.map((r) => [r.frag_key, r]));
	const out: CandidateRow[] = [];
	for (const r of ranked) {
		const row = byKey.get(r.frag_key);
		if (row) out.push({ ...row, score: r.score });
	}
	return out;
}

/** How many fragments of each of these events match (fragments first: FTS probed by rowid). */
export function matchedPerEvent(db: Database, match: string, eventKeys: number[], kinds?: readonly string[]): Map<number, number> {
	if (eventKeys.length === 0) return new Map();
	// Only the kind filter differs between fragments of one event; the others hold for all of them.
	const kindSql = kinds?.length ? ` AND f.kind IN (${kinds.map(() => "?").join(", ")})` : "";
	const rows = db
		.query(
			`SELECT f.event_key, count(*) AS n FROM fragments f CROSS JOIN fts
			 WHERE fts.rowid = f.frag_key AND f.event_key IN (${eventKeys.map(() => "?").join(", ")})${kindSql} AND fts MATCH ?
			 GROUP BY f.event_key`,
		)
		.all(...eventKeys, ...(kinds ?? []), match) as { event_key: number; n: number }[];
	return new Map(rows.map((r) => [r.event_key, r.n]));
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
		.query("SELECT s.session_id FROM sessions s JOIN files f ON f.file_key = s.file_key WHERE f.path = ?1 OR f.real_path = ?1 LIMIT 1")
		.get(path) as { session_id: string } | null;
	return row?.session_id ?? null;
}
