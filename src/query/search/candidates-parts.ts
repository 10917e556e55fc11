/**
 * Candidates of a very common query (more matches than are ranked in full) whose filters say
 * which part of the history can hold its matches: read in that part only, session span by session
 * span, instead of walking every match of its words.
 */
import type { RankedRow, RowidRange, ScopedSearch } from "../../gate/gate.ts";
import type { ParsedQuery } from "../fts.ts";
import { RECENT_MATCHES, UNTIL_EVENTS, UNTIL_TRIAL_SESSIONS } from "./bounds.ts";
import type { Found } from "./found.ts";
import { matchesIn, readWindow, windowMatches } from "./candidates-window.ts";
import { hasCategoricalFilter, type SearchPlan } from "./plan.ts";

type Order = (a: RankedRow, b: RankedRow) => number;

/**
 * The matches in the part of the history that the filters point at; null when no filter does, or
 * the part is too large (then the caller walks the matches until the filters pass enough of them):
 * - --since: only the sessions active since then, when at most `sinceSessions`;
 * - --file: only the sessions with events touching those files, when at most `fileRows` file rows do;
 * - --until (or a --since that too many sessions are active since): the sessions last active
 *   before then, from the time index (untilMatches).
 */
export function matchesInParts(scoped: ScopedSearch, parsed: ParsedQuery, plan: SearchPlan): Found | null {
	const { sinceMs, untilMs, files } = plan.filters;
	const { bounds, sort } = plan;
	const order = sort === "oldest" ? "oldest" : "newest";
	const sinceSpans = sinceMs !== undefined ? scoped.activeSince(sinceMs, bounds.sinceSessions) : null;
	const fileSpans = sinceSpans === null && files?.length ? scoped.fileSpans(files, bounds.fileRows, order) : null;
	const spans = sinceSpans ?? fileSpans;
	if (spans !== null && (fileSpans === null || fileSpans.length <= bounds.fileSessions)) {
		// Every match the filters allow is in these spans.
		const rows = scoped.withSpanReads(() => spans.flatMap((range) => matchesIn(scoped, range, "oldest", false)));
		return keepRead(rows, true, bounds.fullRankLimit, byIndex(plan));
	}
	if (fileSpans !== null) {
		// Many sessions touch the path (each read seeks the word's postings in every segment: a file
		// of 241 sessions took 68–110 ms, 4.3 s with the index out of the page cache): the most
		// recently active of them until twice the limit pass, as for any filter checked on each match.
		const read = fileSpans.slice(0, bounds.untilSessions);
		return scoped.withSpanReads(() => sessionsMatches(scoped, read, read.length === fileSpans.length, plan));
	}
	if (files?.length && sinceMs === undefined && untilMs === undefined) {
		// More than `fileRows` file rows touch the path (a project directory): it passes matches all
		// through the history, so it is searched as a filter checked on each match is, in the newest
		// (oldest) sessions' window. Walking the word's matches for it read much more (at 5 GB, `the
		// --file` a directory of 16,552 file rows: 94 ms, in the window 19).
		const window = readWindow(scoped, parsed, bounds, sort, plan.limit);
		if (window !== null) return windowMatches(window.rows);
	}
	return matchesInTimeRange(scoped, plan);
}

/** Index order: newest first, or with `--sort oldest` oldest first. */
function byIndex(plan: SearchPlan): Order {
	return plan.sort === "oldest" ? (a, b) => a.frag_key - b.frag_key : (a, b) => b.frag_key - a.frag_key;
}

/** A time range, with or without a filter checked on each match (a path is one too). */
function matchesInTimeRange(scoped: ScopedSearch, plan: SearchPlan): Found | null {
	const { sinceMs, untilMs, files } = plan.filters;
	const { bounds, sort } = plan;
	if ((sinceMs !== undefined || untilMs !== undefined) && (hasCategoricalFilter(plan.filters) || !!files?.length)) {
		// A filter checked on each match, and more history in the time range than is searched one
		// session at a time: the sessions that can hold a match there, most recently active first (with
		// --sort oldest, oldest first), until twice the limit pass, as the window is read without a
		// time filter. Walking the word's matches for it read the whole history (at 5 GB, `the --until
		// … --tool edit` 250–310 ms; `the --since` five months before the end `--kind bash.command`,
		// which nothing passes, 250–270 ms; in a workspace of 800 sessions 170–200 ms).
		const order = sort === "oldest" ? "oldest" : "newest";
		const spans = scoped.sessionsInRange({ sinceMs, untilMs, order, count: bounds.untilSessions });
		return scoped.withSpanReads(() => sessionsMatches(scoped, spans, spans.length < bounds.untilSessions, plan));
	}
	if (untilMs === undefined || sort === "oldest" || !scoped.admitsSessions(bounds.untilMinSessions)) return null;
	return scoped.withSpanReads(() => untilMatches(scoped, untilMs, sinceMs, bounds.fullRankLimit, bounds.untilSessions));
}

/**
 * The matches of these sessions' spans, read one session at a time until twice the limit are
 * found: those, all to be scored (mode "recent"); when `everySession` and every span was read,
 * every match there is was found (keepRead).
 */
function sessionsMatches(scoped: ScopedSearch, spans: readonly RowidRange[], everySession: boolean, plan: SearchPlan): Found {
	const rows: RankedRow[] = [];
	let sessions = 0;
	for (const range of spans) {
		rows.push(...matchesIn(scoped, range, "oldest", false));
		sessions++;
		if (rows.length >= 2 * plan.limit) break;
	}
	if (everySession && sessions === spans.length) return keepRead(rows, true, plan.bounds.fullRankLimit, byIndex(plan));
	// Fewer than the sessions in range were read: every match found is scored, the rest were not looked at.
	return { rows, mode: "recent", rankedShare: null, toScore: true, wholeEvents: true };
}

/**
 * Matches read from parts of the history: all to be scored when they are every match there is and
 * at most `fullRankLimit` (the answer is then complete), else the first RECENT_MATCHES in `order`
 * by kind weight, as any very common query is ranked.
 */
function keepRead(rows: RankedRow[], everyMatch: boolean, fullRankLimit: number, order: Order): Found {
	if (everyMatch && rows.length <= fullRankLimit) return { rows, mode: "full", rankedShare: 1, toScore: true };
	rows.sort(order);
	return { rows: rows.slice(0, RECENT_MATCHES), mode: "recent", rankedShare: null, toScore: false };
}

/**
 * The matches of a very common query with --until, from the sessions whose newest activity before
 * then is newest, one session at a time, until RECENT_MATCHES of them are found: those, newest
 * first (keepRead). When the time range runs out first, every match was found. Null when
 * `maxSessions` sessions or UNTIL_EVENTS of their events were read before that, or when the
 * matches found so far say it would be (filters that reject most matches): the caller walks the
 * matches instead. (With a filter checked on each match, matchesInTimeRange reads sessionsInRange.)
 */
function untilMatches(scoped: ScopedSearch, untilMs: number, sinceMs: number | undefined, fullRankLimit: number, maxSessions: number): Found | null {
	const walk = { stopped: false };
	const rows: RankedRow[] = [];
	let sessions = 0;
	let enough = false;
	for (const range of scoped.activeBefore(untilMs, sinceMs, UNTIL_EVENTS, walk)) {
		for (const row of matchesIn(scoped, range, "oldest", false)) rows.push(row);
		if (rows.length >= RECENT_MATCHES) {
			enough = true;
			break;
		}
		if (++sessions >= maxSessions) return null;
		// At this rate the bound comes first: walk the matches now rather than after reading up to it.
		if (sessions >= UNTIL_TRIAL_SESSIONS && rows.length * maxSessions < RECENT_MATCHES * sessions) return null;
	}
	if (walk.stopped) return null;
	return keepRead(rows, !enough, fullRankLimit, (a, b) => (b.ts_ms ?? 0) - (a.ts_ms ?? 0) || b.frag_key - a.frag_key);
}
