/**
 * Read-side queries that list rather than search: the sessions a condition admits (for the session
 * list, id prefixes and filter-only search) and the fragments of some sessions that the filters
 * allow. The session
 * condition is SQL on the sessions table `s`, supplied by the caller's authorization; nothing here
 * decides who may see what.
 */
import type { Database, SQLQueryBindings } from "bun:sqlite";
import type { CwdRange } from "../auth/scope-sql.ts";
import { inList } from "./in-list.ts";
import { filterSql, inSessionTimeRange, type RankedRow, type SqlFilters } from "./search.ts";

/** A condition on the sessions table `s` (the caller's scope, rendered by auth/scope-sql.ts), with its parameters. */
interface SessionCondition {
	sql: string;
	params: SQLQueryBindings[];
}

export interface SessionSummaryRow {
	session_key: number;
	session_id: string;
	name: string | null;
	cwd: string | null;
	cwd_real: string | null;
	created: string | null;
	last_ts_ms: number | null;
	first_ts_ms: number | null;
	entry_count: number;
	fragment_count: number;
	version: number;
	path: string;
	/** The canonical path of the header's parentSession (a fork's parent file), or null. */
	parent_real: string | null;
	/** 1 when the header names a parent session (made by pi's fork or a branched-session copy). */
	forked: number;
	/** 1 when some entry lies on an abandoned branch (off the path to the materialized leaf): a seek in events_alternate. */
	abandoned: number;
}

/** What a filter-only search reads of a session to decide whether, and in which order, to visit it. */
export type BrowseSessionRow = Pick<SessionSummaryRow, "session_key" | "session_id" | "cwd_real" | "created" | "last_ts_ms" | "first_ts_ms" | "fragment_count">;

/** Sessions read one at a time; `close` ends the read (call it, also when stopping early). */
export interface SessionCursor {
	next(): BrowseSessionRow | null;
	close(): void;
}

/**
 * Which sessions a filter-only search reads, and in which order: most recently active first
 * ("activity"), or oldest activity first ("first"); only those with an event at or after
 * `sinceMs` (their newest event) and before `untilMs` (their oldest event), when given.
 */
export interface BrowseOptions {
	order?: "activity" | "first";
	sinceMs?: number;
	untilMs?: number;
}

/** Half-open ranges of cwd_real that hold every session a condition admits (auth/scope-sql.ts cwdRanges). */
type CwdRanges = readonly CwdRange[];

/**
 * A scope whose cwd ranges hold at most this many admitted sessions has them read through the cwd
 * index and sorted; a wider one walks the activity index, where it finds its sessions densely
 * enough to stop early. At 5 GB (22,597 sessions), walking for a scope of 553 sessions, or of
 * none, read every session: 10–18 ms of a filter-only search, growing with history.
 */
export const RANGE_READ_MAX = 1000;

/** The condition, and the ranges when given (non-empty) as a condition served by the sessions_by_cwd index. */
function withinRanges(where: SessionCondition, ranges: CwdRanges | null): SessionCondition {
	if (ranges === null) return where;
	return {
		sql: `(${ranges.map(() => "(s.cwd_real >= ? AND s.cwd_real < ?)").join(" OR ")}) AND ${where.sql}`,
		params: [...ranges.flatMap((r) => [r.from, r.to]), ...where.params],
	};
}

/**
 * Whether the condition admits at least `count` sessions, reading at most that many: through the
 * sessions_by_cwd index when `ranges` are given (a superset of the admitted sessions' cwds).
 */
export function admitsAtLeast(db: Database, where: SessionCondition, ranges: CwdRanges | null, count: number): boolean {
	if (ranges !== null && ranges.length === 0) return count <= 0;
	const within = withinRanges(where, ranges);
	const { n } = db.query(`SELECT count(*) AS n FROM (SELECT 1 FROM sessions s WHERE ${within.sql} LIMIT ?)`).get(...within.params, count) as { n: number };
	return n >= count;
}

const BROWSE_COLUMNS = "s.session_key, s.session_id, s.cwd_real, s.created, s.last_ts_ms, s.first_ts_ms, s.fragment_count";
/** Most recently active first (a session without a time last, as NULL sorts in SQLite), then by id and key. */
const ACTIVITY_ORDER = "ORDER BY s.last_ts_ms DESC, s.session_id, s.session_key";
/**
 * Oldest activity first, then by id and key: a session whose oldest time is not known (NULL)
 * before all, as SQLite sorts NULL and the sessions_by_first index holds it; one without any time
 * (NO_EVENT_TIME) after all.
 */
const FIRST_ORDER = "ORDER BY s.first_ts_ms, s.session_id, s.session_key";

/**
 * The ranges, when they hold at most `max` admitted sessions (a bounded count: at most max + 1
 * index entries read); null when they hold more or when there are no ranges (no cwd clause);
 * empty when the rule admits nothing.
 */
function narrowRanges(db: Database, where: SessionCondition, ranges: CwdRanges | null, max: number): CwdRanges | null {
	if (ranges === null || ranges.length === 0) return ranges;
	const within = withinRanges(where, ranges);
	const { n } = db.query(`SELECT count(*) AS n FROM (SELECT 1 FROM sessions s WHERE ${within.sql} LIMIT ?)`).get(...within.params, max + 1) as {
		n: number;
	};
	return n > max ? null : ranges;
}

/**
 * The sessions the condition admits, in `options.order` (FIRST_ORDER, ACTIVITY_ORDER), with
 * only what a filter-only search needs, read one at a time. `ranges` (a superset of the admitted
 * sessions' cwds) lets a narrow scope read only its own sessions, through the sessions_by_cwd
 * index (which holds every column read here), and sort them. Otherwise, or when they hold more
 * than `rangeReadMax`, the read walks the sessions_by_activity (sessions_by_first) index, with no
 * sort: a filter-only search usually stops after a few. Both yield the same rows in the same order.
 */
export function browseSessionsWhere(
	db: Database,
	where: SessionCondition,
	ranges: CwdRanges | null = null,
	rangeReadMax = RANGE_READ_MAX,
	options: BrowseOptions = {},
): SessionCursor {
	const first = options.order === "first";
	const timed = inSessionTimeRange(where, options);
	const narrow = narrowRanges(db, where, ranges, rangeReadMax);
	if (narrow !== null) {
		// Sorted by SQLite in one statement; sorting inside a LIMITed subquery (to skip the count) cost it 4–7 ms however few the rows.
		const within = withinRanges(timed, narrow);
		const few =
			narrow.length === 0
				? []
				: (db
						.query(`SELECT ${BROWSE_COLUMNS} FROM sessions s WHERE ${within.sql} ${first ? FIRST_ORDER : ACTIVITY_ORDER}`)
						.all(...within.params) as BrowseSessionRow[]);
		let next = 0;
		return { next: () => few[next++] ?? null, close: () => {} };
	}
	// Its own statement, finalized on close: a cached one left mid-read would hold a read transaction open.
	const statement = db.prepare(`SELECT ${BROWSE_COLUMNS} FROM sessions s WHERE ${timed.sql} ${first ? FIRST_ORDER : ACTIVITY_ORDER}`);
	const rows = statement.iterate(...timed.params) as IterableIterator<BrowseSessionRow>;
	return {
		next: () => {
			const r = rows.next();
			return r.done ? null : r.value;
		},
		close: () => statement.finalize(),
	};
}

/** What the session list reads of every admitted session: enough to filter by time, order and count them. */
export type ListedSessionRow = Pick<SessionSummaryRow, "session_key" | "session_id" | "cwd_real" | "created" | "last_ts_ms">;

/**
 * Every session the condition admits, most recently active first (a session without a time last;
 * ties by id, then by file path), with only what the session list needs of each: columns that the
 * sessions_by_activity and sessions_by_cwd indexes hold, so that no session or file row is read
 * (the session list from `/` at 5 GB: 113–117 ms when it read every full row and file path, 24–32
 * ms now). With `ranges` (a superset of the admitted sessions' cwds), a narrow scope reads only
 * its own sessions, through the cwd index.
 */
export function listedSessionsWhere(db: Database, where: SessionCondition, ranges: CwdRanges | null = null, rangeReadMax = RANGE_READ_MAX): ListedSessionRow[] {
	const narrow = narrowRanges(db, where, ranges, rangeReadMax);
	if (narrow?.length === 0) return [];
	const within = withinRanges(where, narrow);
	const rows = db
		.query(`SELECT s.session_key, s.session_id, s.cwd_real, s.created, s.last_ts_ms FROM sessions s WHERE ${within.sql} ${ACTIVITY_ORDER}`)
		.all(...within.params) as ListedSessionRow[];
	orderTiesByPath(db, rows);
	return rows;
}

/**
 * Sessions with the same time and id (copies of one session: an /export + /import pair) in the
 * order of their file paths, as SQLite orders text (bytes of UTF-8); only their paths are read.
 */
function orderTiesByPath(db: Database, rows: ListedSessionRow[]): void {
	const path = db.query("SELECT fl.path FROM sessions s JOIN files fl ON fl.file_key = s.file_key WHERE s.session_key = ?1");
	for (let start = 0; start < rows.length; ) {
		let end = start + 1;
		while (end < rows.length && rows[end]!.session_id === rows[start]!.session_id && rows[end]!.last_ts_ms === rows[start]!.last_ts_ms) end++;
		if (end - start > 1) {
			const tied = rows.slice(start, end).map((row) => ({ row, path: Buffer.from((path.get(row.session_key) as { path: string } | null)?.path ?? "") }));
			tied.sort((x, y) => Buffer.compare(x.path, y.path) || x.row.session_key - y.row.session_key);
			rows.splice(start, end - start, ...tied.map((t) => t.row));
		}
		start = end;
	}
}

/** The full rows of these sessions (with their file paths), in the order given; a session no longer indexed is left out. */
export function sessionSummaries(db: Database, sessionKeys: readonly number[]): SessionSummaryRow[] {
	const row = db.query(
		`SELECT s.session_key, s.session_id, s.name, s.cwd, s.cwd_real, s.created, s.last_ts_ms, s.entry_count, s.fragment_count, s.version, fl.path,
		   s.parent_real, s.parent_session IS NOT NULL AS forked,
		   EXISTS (SELECT 1 FROM events e WHERE e.session_key = s.session_key AND e.branch_state = 'alternate') AS abandoned
		 FROM sessions s JOIN files fl ON fl.file_key = s.file_key WHERE s.session_key = ?1`,
	);
	return sessionKeys.map((key) => row.get(key) as SessionSummaryRow | null).filter((r): r is SessionSummaryRow => r !== null);
}

/** Distinct ids of admitted sessions that begin with `prefix` (at most `limit`), in id order. */
export function sessionIdsWithPrefix(db: Database, prefix: string, where: SessionCondition, limit: number): string[] {
	// A range on the id index: every string that begins with `prefix` sorts in [prefix, prefix + U+FFFF).
	const rows = db
		.query(
			`SELECT DISTINCT s.session_id FROM sessions s
			 WHERE s.session_id >= ? AND s.session_id < ? AND substr(s.session_id, 1, ?) = ? AND ${where.sql}
			 ORDER BY s.session_id LIMIT ?`,
		)
		.all(prefix, `${prefix}\uffff`, prefix.length, prefix, ...where.params, limit) as { session_id: string }[];
	return rows.map((r) => r.session_id);
}

/**
 * Every fragment of these sessions that the event and fragment filters allow, with its event's
 * time, scored by kind weight (for filter-only search: there are no terms to rank by).
 */
export function filteredFragmentsOfSessions(db: Database, sessionKeys: readonly number[], filters: SqlFilters): Required<RankedRow>[] {
	if (sessionKeys.length === 0) return [];
	const { where, params, needsEvents } = filterSql(filters);
	const keys = inList(sessionKeys);
	// Failed results are few: read them through events_errors, then their fragments (at 5 GB, 1 ms
	// against 20 ms through every fragment of 64 sessions).
	const from =
		filters.isError === true
			? `events e JOIN fragments f ON f.event_key = e.event_key WHERE e.session_key IN ${keys.sql}`
			: `fragments f${needsEvents ? " JOIN events e ON e.event_key = f.event_key" : ""} WHERE f.session_key IN ${keys.sql}`;
	return db
		.query(`SELECT f.frag_key, f.weight AS relevance, f.event_key, f.session_key, f.ts_ms FROM ${from} AND ${where}`)
		.all(...keys.params, ...params) as Required<RankedRow>[];
}
