/**
 * Search SQL: FTS5 candidates (scored later, by query/search/score.ts, never by bm25()), with the
 * authorization scope and every filter applied in the statement that performs the MATCH, so nothing
 * outside the scope is ever read into the process. Called only by the gate (gate/gate.ts), which
 * supplies the scope; query/ never calls it directly.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import { cutoffSql, sessionRuleSql } from "../auth/scope-sql.ts";
import { fragmentKeySpan } from "./db.ts";
import { inList } from "./in-list.ts";
import type { BranchState, SelectionState, SemanticKind } from "../model.ts";
export { KIND_WEIGHTS } from "../project/weights.ts";

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
	/** Leave out derived fragments (pi-events' own echoes); the MATCH excludes them too. */
	excludeDerived?: boolean;
}

export interface CandidateRow {
	frag_key: number;
	/** Higher is better: the ranked row's relevance. */
	relevance: number;
	fragment_id: string;
	kind: SemanticKind;
	derived: number;
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
	cwd_real: string | null;
	session_key: number;
	session_id: string;
	cwd: string | null;
	session_name: string | null;
	session_file: string;
	/** The append position of the prompt of the event's turn (null before a session's first prompt). */
	turn_seq: number | null;
}

interface SqlPart {
	sql: string[];
	params: SQLQueryBindings[];
}

/**
 * The event- and fragment-level filters as SQL, with the cutoff (auth/scope-sql.ts). The session
 * rule (roots, cwd, session ids, the excluded current session) is usually part of the MATCH
 * expression (auth/scope-tokens.ts); with `sessionLevel` it is added here instead, rendered from
 * the same rule. The events join is added only when an event filter needs it.
 */
export function filterSql(f: SqlFilters, sessionLevel = false): { where: string; params: SQLQueryBindings[]; needsEvents: boolean } {
	const rest: SqlPart = { sql: [], params: [] };
	let needsEvents = false;
	if (sessionLevel) {
		// The session rule as SQL (for ranking with an unscoped MATCH: see rankFragments' `sessionLevel`).
		const rule = sessionRuleSql({ roots: f.roots, cwdPrefix: f.cwdPrefix, sessionIds: f.sessionIds, excludeSessionIds: f.excludeSessionIds });
		if (rule.sql !== "1") {
			// Checked per candidate (by the session's key), never as `IN (SELECT … FROM sessions)`: SQLite
			// builds that list by scanning every session, O(history) in every search (a wide scope at
			// 5 GB: 11.7 against 0.24 ms for 99 candidates).
			rest.sql.push(`EXISTS (SELECT 1 FROM sessions s WHERE s.session_key = f.session_key AND ${rule.sql})`);
			rest.params.push(...rule.params);
		}
	}
	const among = (column: string, values: readonly (string | number)[]) => {
		const list = inList(values);
		rest.sql.push(`${column} IN ${list.sql}`);
		rest.params.push(...list.params);
	};
	const ev = (fn: () => void) => {
		needsEvents = true;
		fn();
	};
	const cutoff = cutoffSql(f.cutoff);
	if (cutoff) {
		ev(() => {
			rest.sql.push(cutoff.sql);
			rest.params.push(...cutoff.params);
		});
	}
	if (f.kinds?.length) among("f.kind", f.kinds);
	if (f.excludeDerived) rest.sql.push("f.derived = 0");
	const { eventTypes, roles, tools, sinceMs, untilMs, isError, branchStates, selectionStates, files } = f;
	if (eventTypes?.length) ev(() => among("e.event_type", eventTypes));
	if (roles?.length) ev(() => among("e.role", roles));
	if (tools?.length) ev(() => among("e.tool_name", tools));
	// The event's time is on the fragment too: a time filter reads no event row.
	if (sinceMs !== undefined) {
		rest.sql.push("f.ts_ms >= ?");
		rest.params.push(sinceMs);
	}
	if (untilMs !== undefined) {
		rest.sql.push("f.ts_ms < ?");
		rest.params.push(untilMs);
	}
	if (isError !== undefined) ev(() => rest.sql.push(isError ? "e.is_error = 1" : "(e.is_error = 0 OR e.is_error IS NULL)"));
	if (branchStates?.length) ev(() => among("e.branch_state", branchStates));
	if (selectionStates?.length) ev(() => among("e.selection_state", selectionStates));
	if (files?.length) {
		rest.sql.push(
			`EXISTS (SELECT 1 FROM event_files ef WHERE ef.event_key = f.event_key AND (${files.map(() => "ef.path = ? OR instr(ef.path, ?) = 1").join(" OR ")}))`,
		);
		for (const p of files) rest.params.push(p, underPath(p).from);
	}
	return { where: rest.sql.length > 0 ? rest.sql.join(" AND ") : "1", params: rest.params, needsEvents };
}

/**
 * The paths under `path` (the --file filter: the path itself, or any path under it), as the
 * prefix they start with (`from`) and the half-open range [from, to) they sort in: "0" follows
 * "/", so every path starting with "dir/" sorts before "dir0".
 */
function underPath(path: string): { from: string; to: string } {
	const dir = path.replace(/\/+$/, "");
	return { from: `${dir}/`, to: `${dir}0` };
}

export interface RankedRow {
	frag_key: number;
	/** Higher is better: the kind weight as read here, the relevance once scored (query/search/score.ts). */
	relevance: number;
	/** Kind weight and text length of the fragment (for scoring within the answer). */
	weight: number;
	length: number;
	event_key: number;
	session_key: number;
	/** Only when ranked `withTime`. */
	ts_ms?: number | null;
}

export interface RankOptions {
	/**
	 * "newest": the newest matches first (highest rowids), "oldest" the other end. Relevance is not
	 * computed here: SQLite's bm25() takes its statistics from the whole index, every workspace
	 * included; the caller scores the in-scope candidates itself (query/answer-score.ts). The
	 * relevance returned here is the kind weight.
	 */
	order?: "newest" | "oldest";
	/** The MATCH carries no scope tokens: apply the session rule in SQL, in the same statement. */
	sessionLevel?: boolean;
	/** Also return each event's time (for time order). */
	withTime?: boolean;
	/** Only fragments in this rowid range (a window of the newest or oldest sessions). */
	range?: RowidRange;
}

/** Fragment rowids from `from` to `to` (inclusive; either end open when absent). */
export interface RowidRange {
	from?: number;
	to?: number;
}

function rangeSql(range: RowidRange | undefined, column: string): { sql: string; params: number[] } {
	const sql: string[] = [];
	const params: number[] = [];
	if (range?.from !== undefined) {
		sql.push(`${column} >= ?`);
		params.push(range.from);
	}
	if (range?.to !== undefined) {
		sql.push(`${column} <= ?`);
		params.push(range.to);
	}
	return { sql: sql.map((c) => ` AND ${c}`).join(""), params };
}

/**
 * Matching fragments in index order, filtered, with what scoring needs (kind weight, length).
 * Only what the filters need is joined; details come later.
 */
export function rankFragments(db: Database, match: string, filters: SqlFilters, limit: number, options: RankOptions = {}): RankedRow[] {
	const { order = "newest", sessionLevel = false, withTime = false } = options;
	const { where, params, needsEvents } = filterSql(filters, sessionLevel);
	const range = rangeSql(options.range, "fts.rowid");
	const sql = `
		SELECT fts.rowid AS frag_key, f.weight AS relevance, f.weight, f.full_length AS length, f.event_key, f.session_key${withTime ? ", f.ts_ms" : ""}
		FROM fts
		JOIN fragments f ON f.frag_key = fts.rowid
		${needsEvents ? "JOIN events e ON e.event_key = f.event_key" : ""}
		WHERE fts MATCH ?${range.sql} AND ${where}
		ORDER BY fts.rowid ${order === "oldest" ? "ASC" : "DESC"}
		LIMIT ?`;
	return db.query(sql).all(match, ...range.params, ...params, limit) as RankedRow[];
}

/**
 * The semantic kind of each of these fragments (rerank's top candidates): ranking does not read
 * it, since turning a kind into a string for each of a thousand candidates cost a third of the read.
 */
export function fragmentKinds(db: Database, fragKeys: readonly number[]): Map<number, SemanticKind> {
	if (fragKeys.length === 0) return new Map();
	const keys = inList(fragKeys);
	const rows = db.query(`SELECT frag_key, kind FROM fragments WHERE frag_key IN ${keys.sql}`).all(...keys.params) as {
		frag_key: number;
		kind: SemanticKind;
	}[];
	return new Map(rows.map((r) => [r.frag_key, r.kind]));
}

/** Everything a hit shows, for a handful of ranked fragments (in ranked order). */
export function hydrate(db: Database, ranked: RankedRow[]): CandidateRow[] {
	if (ranked.length === 0) return [];
	const keys = inList(ranked.map((r) => r.frag_key));
	const rows = db
		.query(
			`SELECT f.frag_key, f.fragment_id, f.kind, f.derived, e.event_key, e.entry_id, e.event_type, e.role, e.tool_name, e.ts_ms, e.is_error,
			   e.exit_code, e.branch_state, e.context_role, e.selection_state, e.line, e.seq, e.parent_id, e.byte_offset, e.byte_length,
			   e.content_hash, e.turn_seq, s.version, s.cwd_real, s.session_key, s.session_id, s.cwd, s.name AS session_name, fl.path AS session_file
			 FROM fragments f
			 JOIN events e ON e.event_key = f.event_key
			 JOIN sessions s ON s.session_key = e.session_key
			 JOIN files fl ON fl.file_key = s.file_key
			 WHERE f.frag_key IN ${keys.sql}`,
		)
		.all(...keys.params) as Omit<CandidateRow, "relevance">[];
	const byKey = new Map(rows.map((r) => [r.frag_key, r]));
	const out: CandidateRow[] = [];
	for (const r of ranked) {
		const row = byKey.get(r.frag_key);
		if (row) out.push({ ...row, relevance: r.relevance });
	}
	return out;
}

/**
 * How many fragments of each of these events match. Most events have a single fragment (which
 * matched, or the event would not be a hit); only the others are probed in FTS5 by rowid.
 */
export function matchedPerEvent(db: Database, match: string, eventKeys: number[], kinds?: readonly string[], excludeDerived = false): Map<number, number> {
	const result = new Map<number, number>();
	if (eventKeys.length === 0) return result;
	// Only the kind filter and derivation differ between fragments of one event; the others hold for all of them.
	const kindList = inList(kinds ?? []);
	const kindSql = (kinds?.length ? ` AND f.kind IN ${kindList.sql}` : "") + (excludeDerived ? " AND f.derived = 0" : "");
	const keys = inList(eventKeys);
	const sizes = db
		.query(`SELECT f.event_key, count(*) AS n FROM fragments f WHERE f.event_key IN ${keys.sql}${kindSql} GROUP BY f.event_key`)
		.all(...keys.params, ...kindList.params) as { event_key: number; n: number }[];
	const several: number[] = [];
	for (const s of sizes) {
		if (s.n <= 1) result.set(s.event_key, 1);
		else several.push(s.event_key);
	}
	if (several.length === 0) return result;
	const severalList = inList(several);
	const rows = db
		.query(
			`SELECT f.event_key, count(*) AS n FROM fragments f CROSS JOIN fts
			 WHERE fts.rowid = f.frag_key AND f.event_key IN ${severalList.sql}${kindSql} AND fts MATCH ?
			 GROUP BY f.event_key`,
		)
		.all(...severalList.params, ...kindList.params, match) as { event_key: number; n: number }[];
	for (const r of rows) result.set(r.event_key, r.n);
	return result;
}

/**
 * Of these events, the ones holding a tool call whose result failed (same session, by call id).
 * Only candidates already in the caller's scope are asked about; a result at or after the cutoff
 * of the targeted current session does not count (it must not show, not even in ranking).
 * CROSS JOIN keeps the call ids outermost, so each is one seek on events_by_call; SQLite otherwise
 * walked every call of the session for each id (9 ms in a 13,000-fragment session).
 */
export function eventsWithFailedCalls(db: Database, eventKeys: readonly number[], cutoff: { sessionId: string; seq: number } | null = null): Set<number> {
	if (eventKeys.length === 0) return new Set();
	const beforeCutoff = cutoffSql(cutoff, "r", "r.session_key");
	const keys = inList(eventKeys);
	const rows = db
		.query(
			`SELECT e.event_key FROM events e
			 WHERE e.event_key IN ${keys.sql} AND e.call_ids IS NOT NULL
			   AND EXISTS (SELECT 1 FROM json_each(e.call_ids) j CROSS JOIN events r ON r.session_key = e.session_key AND r.tool_call_id = j.value WHERE r.is_error = 1${beforeCutoff ? ` AND ${beforeCutoff.sql}` : ""})`,
		)
		.all(...keys.params, ...(beforeCutoff?.params ?? [])) as { event_key: number }[];
	return new Set(rows.map((r) => r.event_key));
}

/**
 * Above this many fragments holding a token (anywhere in the index), its occurrences are not
 * walked: FTS5's `instance` vocabulary has no document filter, so counting a token in a few
 * candidates reads every position of it in the whole index (0.14–1.5 µs each: a word like
 * `the` or `error` costs hundreds of milliseconds at 1 GB, seconds at 5 GB).
 */
export const OCCURRENCE_WALK_LIMIT = 5_000;

/** The full-text table's columns, numbered (store/db.ts DDL order). */
const FTS_COLUMNS: Readonly<Record<string, number>> = { body: 0, aux: 1, scope: 2, forms: 3 };

/**
 * How often each of these index tokens occurs in each column of these fragments (FTS5's
 * `instance` vocabulary: positions, readable from a contentless table too). The caller passes
 * only tokens held by at most OCCURRENCE_WALK_LIMIT fragments (the gate decides, from counts it
 * shares with the rest of the search).
 */
export function termOccurrences(db: Database, fragKeys: readonly number[], tokens: readonly string[]): { doc: number; col: string; term: string; n: number }[] {
	if (fragKeys.length === 0 || tokens.length === 0) return [];
	db.run("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_instance USING fts5vocab(main, 'fts', 'instance')");
	// One token at a time (an equality the vocabulary table seeks to), counted here: filtering and
	// grouping in SQL cost three times the walk itself (2.5 against 0.7 ms for 973 candidates).
	const wanted = new Set(fragKeys);
	const statement = db.query("SELECT doc, col FROM temp.fts_instance WHERE term = ?");
	const out: { doc: number; col: string; term: string; n: number }[] = [];
	for (const term of tokens) {
		// Keyed by number (fragment × 4 + column), not by a string built per occurrence.
		const counts = new Map<number, { doc: number; col: string; term: string; n: number }>();
		for (const [doc, col] of statement.values(term) as [number, string][]) {
			if (!wanted.has(doc)) continue;
			const key = doc * 4 + (FTS_COLUMNS[col] ?? 3);
			const seen = counts.get(key);
			if (seen) seen.n++;
			else counts.set(key, { doc, col, term, n: 1 });
		}
		for (const c of counts.values()) out.push(c);
	}
	return out;
}

/**
 * A value that changes whenever the index may have changed: a commit by another connection
 * (`PRAGMA data_version`) or any change by this one (`total_changes()`).
 */
export function indexVersion(db: Database): string {
	const row = db.query("SELECT (SELECT data_version FROM pragma_data_version) AS v, total_changes() AS c").get() as { v: number; c: number };
	return `${row.v}:${row.c}`;
}

/**
 * Whether a MATCH carrying the scope's tokens (and the exclusion of echoes) says all these filters
 * say: no fragment or event filter and no cutoff, which only SQL can apply.
 */
export function matchCarriesFilters(f: SqlFilters): boolean {
	// Asked of filterSql itself, so a filter added there is never missed here.
	return filterSql({ ...f, excludeDerived: false }).where === "1";
}

/** Rowids of the fragments matching the expression in a range, ascending: the full-text index alone, no row read. */
export function matchingRowids(db: Database, match: string, range: RowidRange): number[] {
	const r = rangeSql(range, "rowid");
	return (db.query(`SELECT rowid FROM fts WHERE fts MATCH ?${r.sql} ORDER BY rowid ASC`).values(match, ...r.params) as [number][]).map((v) => v[0]);
}

/**
 * Number of fragments matching the expression, counting at most `cap` (cheap: no ranking, no
 * joins), optionally only in a rowid range (FTS5 seeks each token's postings to the range).
 */
export function countMatches(db: Database, match: string, cap: number, range?: RowidRange): number {
	const r = rangeSql(range, "rowid");
	return (db.query(`SELECT count(*) AS n FROM (SELECT 1 FROM fts WHERE fts MATCH ?${r.sql} LIMIT ?)`).get(match, ...r.params, cap) as { n: number }).n;
}

/**
 * The fragment key spans of the sessions the condition admits whose newest event is at or after
 * `sinceMs` (only they can hold a fragment that recent: a session's last_ts_ms is its newest
 * event's time), most recently active first; null when there are more than `cap`.
 */
export function activeSessionSpans(db: Database, where: { sql: string; params: SQLQueryBindings[] }, sinceMs: number, cap: number): RowidRange[] | null {
	const spans = sessionSpansInRange(db, where, { sinceMs, order: "newest", count: cap + 1 });
	return spans.length > cap ? null : spans;
}

/**
 * The fragment key spans of at most `count` sessions the condition admits that can hold an event
 * in the time range (their newest event at or after `sinceMs`, their oldest before `untilMs` or
 * not known), the most recently active first ("newest") or the one whose oldest event is oldest
 * first ("oldest": a session whose oldest time is not known first).
 */
export function sessionSpansInRange(
	db: Database,
	where: { sql: string; params: SQLQueryBindings[] },
	range: { sinceMs?: number; untilMs?: number; order: "newest" | "oldest"; count: number },
): RowidRange[] {
	const timed = inSessionTimeRange(where, range);
	const order = range.order === "newest" ? "s.last_ts_ms DESC" : "s.first_ts_ms";
	const keys = db
		.query(`SELECT s.session_key FROM sessions s WHERE ${timed.sql} ORDER BY ${order}, s.session_key LIMIT ?`)
		.values(...timed.params, range.count) as [number][];
	return keys.map(([key]) => fragmentKeySpan(key));
}

/**
 * A condition on the sessions table `s` narrowed to the sessions that can hold an event in the
 * time range: a session's events lie between its oldest and newest event times. A NULL newest
 * time means none has a time (in no range); a NULL oldest time, not known (a row an older
 * pi-events wrote: kept within any `untilMs`).
 */
export function inSessionTimeRange(
	where: { sql: string; params: SQLQueryBindings[] },
	range: { sinceMs?: number; untilMs?: number },
): { sql: string; params: SQLQueryBindings[] } {
	const sql = [where.sql];
	const params = [...where.params];
	if (range.sinceMs !== undefined) {
		sql.push("s.last_ts_ms >= ?");
		params.push(range.sinceMs);
	}
	if (range.untilMs !== undefined) {
		sql.push("(s.first_ts_ms IS NULL OR s.first_ts_ms < ?)");
		params.push(range.untilMs);
	}
	return { sql: sql.join(" AND "), params };
}

/**
 * For each session the condition admits that has events touching one of `files` (the path, or a
 * path under it, as the --file filter has it), the rowid span from its first to its last fragment
 * of such an event: every fragment the filter passes lies in one; the most recently active session
 * first (with `order` "oldest", the one whose oldest event is oldest). Null when more than `cap`
 * file rows of admitted sessions touch them.
 */
export function fileEventSpans(
	db: Database,
	where: { sql: string; params: SQLQueryBindings[] },
	files: readonly string[],
	cap: number,
	order: "newest" | "oldest" = "newest",
): RowidRange[] | null {
	// The same paths as filterSql's `ef.path = ? OR instr(ef.path, ?) = 1`, as ranges of the path index.
	const paths = files.map(() => "ef.path = ? OR (ef.path >= ? AND ef.path < ?)").join(" OR ");
	const params = files.flatMap((p) => {
		const under = underPath(p);
		return [p, under.from, under.to];
	});
	// Counted in admitted sessions only: which way the search goes depends on nothing outside the
	// condition. With no condition (an unscoped caller) no session needs reading: the path index
	// alone counts (at 5 GB, 5,001 rows of a directory: 30 ms in a new process with the joins).
	const anySession = where.sql === "1";
	const touching = db
		.query(
			anySession
				? `SELECT count(*) AS n FROM (SELECT 1 FROM event_files ef WHERE (${paths}) LIMIT ?)`
				: `SELECT count(*) AS n FROM (SELECT 1 FROM event_files ef JOIN events e ON e.event_key = ef.event_key
			 JOIN sessions s ON s.session_key = e.session_key WHERE (${paths}) AND ${where.sql} LIMIT ?)`,
		)
		.get(...params, ...where.params, cap + 1) as { n: number };
	if (touching.n > cap) return null;
	// The most recently active session first (oldest first: the one whose oldest event is oldest).
	const sessionOrder = order === "newest" ? "s.last_ts_ms DESC" : "s.first_ts_ms";
	const spans = db
		.query(
			`SELECT min(f.frag_key) AS from_key, max(f.frag_key) AS to_key FROM event_files ef
			 JOIN fragments f ON f.event_key = ef.event_key JOIN sessions s ON s.session_key = f.session_key
			 WHERE (${paths}) AND ${where.sql} GROUP BY f.session_key ORDER BY ${sessionOrder}, f.session_key`,
		)
		.all(...params, ...where.params) as { from_key: number; to_key: number }[];
	return spans.map((r) => ({ from: r.from_key, to: r.to_key }));
}

/**
 * The fragment key spans of the sessions the condition admits that hold an event before `untilMs`
 * (and at or after `sinceMs`, when given), the one whose newest such event is newest first: read
 * from the events' time index, one session at a time as the caller asks for more, until the time
 * range runs out or more than `maxEvents` of the admitted sessions' events were read (then
 * `walk.stopped`). Only admitted sessions' events are read and counted, so where the walk stops
 * depends on nothing outside the condition.
 */
export function* activeSpansBefore(
	db: Database,
	where: { sql: string; params: SQLQueryBindings[] },
	untilMs: number,
	sinceMs: number | undefined,
	maxEvents: number,
	walk: { stopped: boolean },
): Generator<RowidRange> {
	const seen = new Set<number>();
	let scanned = 0;
	// CROSS JOIN keeps the events' time index as the outer loop: newest first, no sort.
	const events = db.query(
		`SELECT e.session_key FROM events e CROSS JOIN sessions s ON s.session_key = e.session_key
		 WHERE e.ts_ms < ?${sinceMs === undefined ? "" : " AND e.ts_ms >= ?"} AND ${where.sql} ORDER BY e.ts_ms DESC`,
	);
	const params: SQLQueryBindings[] = sinceMs === undefined ? [untilMs] : [untilMs, sinceMs];
	for (const row of events.iterate(...params, ...where.params) as IterableIterator<{ session_key: number }>) {
		if (++scanned > maxEvents) {
			walk.stopped = true;
			return;
		}
		if (seen.has(row.session_key)) continue;
		seen.add(row.session_key);
		yield fragmentKeySpan(row.session_key);
	}
}

/**
 * The rowid range of the newest (or oldest) `fragments` fragments of the admitted sessions, in
 * index order, cut at an event boundary: whole sessions, then, from the session that reaches the
 * count, its newest (oldest) fragments up to the start (end) of the event the count ends in (a
 * session may hold more fragments than the whole window). Null when all admitted sessions together
 * hold fewer. Only admitted sessions are read, so the range depends on nothing outside the rule.
 */
export function sessionWindow(
	db: Database,
	where: { sql: string; params: SQLQueryBindings[] },
	fragments: number,
	order: "newest" | "oldest",
): RowidRange | null {
	const newest = order === "newest";
	const sessions = db.query(`SELECT s.session_key, s.fragment_count FROM sessions s WHERE ${where.sql} ORDER BY s.session_key ${newest ? "DESC" : "ASC"}`);
	let held = 0;
	let last: number | null = null;
	for (const row of sessions.iterate(...where.params) as IterableIterator<{ session_key: number; fragment_count: number }>) {
		if (held + row.fragment_count >= fragments) {
			last = row.session_key;
			break;
		}
		held += row.fragment_count;
	}
	if (last === null) return null;
	// Seeks on the primary key inside the session's span (store/db.ts): its newest (oldest) fragment,
	// then the one `fragments - held - 1` keys before (after) it (keys run on within a session).
	const span = fragmentKeySpan(last);
	const end = db.query(`SELECT ${newest ? "max" : "min"}(frag_key) AS k FROM fragments WHERE frag_key BETWEEN ? AND ?`).get(span.from, span.to) as {
		k: number | null;
	};
	if (end.k === null) return null;
	const reach = fragments - held - 1;
	const cut = (
		newest
			? db
					.query("SELECT event_key FROM fragments WHERE frag_key BETWEEN ? AND ? ORDER BY frag_key DESC LIMIT 1")
					.get(span.from, Math.max(span.from, end.k - reach))
			: db.query("SELECT event_key FROM fragments WHERE frag_key BETWEEN ? AND ? ORDER BY frag_key ASC LIMIT 1").get(Math.min(span.to, end.k + reach), span.to)
	) as { event_key: number } | null;
	if (cut === null) return null;
	// The whole event the cut falls in: a hit's matched fragments are all in the window.
	const edge = db.query(`SELECT ${newest ? "min" : "max"}(frag_key) AS k FROM fragments WHERE event_key = ?`).get(cut.event_key) as { k: number };
	return newest ? { from: edge.k } : { to: edge.k };
}
