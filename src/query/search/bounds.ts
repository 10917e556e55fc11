/**
 * Every cost bound of a search, each with the measurement that justifies it. An agent calls
 * search unsupervised over a history that only grows: these keep one call's cost bounded by a
 * window of the history, not by the history. Figures are from the bench corpora (1 GB, 5 GB) and
 * docs/performance.md.
 */

/**
 * Above this many in-scope matching fragments, rank only the newest RECENT_MATCHES: BM25 costs
 * about 1 µs per matching fragment (measured), so ranking everything for a very common term
 * would cost tens of milliseconds per call, and an agent calls this unsupervised.
 */
export const FULL_RANK_LIMIT = 4_000;
/**
 * How many of a very common query's newest matches are ranked. Reading them is most of such a
 * query's cost (a phrase of common words checks positions in each: about 5 µs a match at 1 GB),
 * and beyond a few hundred, more of them change little in a top ten chosen by kind and evidence.
 */
export const RECENT_MATCHES = 500;
/**
 * A very common query with --since searches the sessions active since then one by one when they
 * are at most this many (each is one short walk of the postings in its span).
 */
export const SINCE_SESSIONS = 100;
/**
 * A very common query with --until searches the sessions last active before then one by one
 * (candidates-parts.ts untilMatches), reading at most this many sessions and UNTIL_EVENTS events
 * of the time index to find its newest matches; past either bound (filters that reject most of
 * them), it walks the matches. With a time range and a filter checked on each match, at most this
 * many sessions in the range are read (sessionsMatches).
 */
export const UNTIL_SESSIONS = 200;
export const UNTIL_EVENTS = 50_000;
/**
 * Only a scope of at least this many sessions reads the time index; a smaller one walks its own
 * matches, which its scope tokens already narrow. Decided from the scope's own size, never from
 * other workspaces' history. At 5 GB, roots of 170–800 sessions took 15–45 ms walking their
 * matches against 35–100 through the time index; roots of 2,100 and 3,700 sessions 23–47 and
 * 26–66 ms walking against 26–31 and 7–17.
 */
export const UNTIL_MIN_SESSIONS = 1_000;
/** After this many sessions, one that holds too few matches to reach RECENT_MATCHES within the bound stops early. */
export const UNTIL_TRIAL_SESSIONS = 25;
/**
 * A very common query with --file searches the sessions with events touching those files, each
 * from its first to its last such fragment, when at most this many file rows touch them; a more
 * common path (a project directory) is searched in the newest sessions' window, as a filter
 * checked on each match is.
 */
export const FILE_ROWS = 5_000;
/**
 * When at most this many sessions touch the path, every match in them is read (an exact answer);
 * with more, the most recently active until twice the limit pass (a file of 241 sessions read one
 * by one took 68–110 ms at 5 GB, 4.3 s with the index out of the page cache).
 */
export const FILE_SESSIONS = 50;
/**
 * Up to this many matches of the unscoped terms, rank them unscoped and filter the scope in SQL:
 * intersecting with a wide scope's tokens inside FTS5 can cost more than the query itself.
 */
export const UNSCOPED_RANK_LIMIT = 8_000;
/**
 * A query term is common when even its rarest word is held by more than this many in-scope
 * fragments. FTS5 finds fragments holding several words (a phrase, an AND) by walking the
 * postings they share, so a query of common terms only costs little when it matches much (the
 * capped count stops early); with few joint matches (a rare phrase of common words) it would walk
 * them all: O(history).
 */
export const COMMON_TERM_FRAGMENTS = 5_000;
/**
 * A query whose terms are all common is searched only in the newest (with `--sort oldest`, the
 * oldest) in-scope sessions holding at least this many fragments: its cost is then bounded by
 * this window, not by the history.
 */
export const SEARCH_WINDOW_FRAGMENTS = 20_000;
/**
 * The window starts at this many fragments and doubles while it holds fewer than twice the
 * limit's matches (up to SEARCH_WINDOW_FRAGMENTS): a phrase of common words that is frequent
 * stops early, a rare one is looked for further back. Walking a window costs about 0.4 µs a
 * fragment at 1 GB (a phrase checks positions of words that are everywhere).
 */
export const FIRST_WINDOW_FRAGMENTS = 2_500;
/**
 * How many windows (the first, then doubled) the newest matches of a very common query are looked
 * for in, from rowids alone: FTS5 walks a long posting list backwards far slower than forwards (at
 * 5 GB the newest 500 fragments holding `the` took 15–20 ms backwards against 0.5–0.8 ms forwards
 * from where they start).
 */
export const NEWEST_WINDOWS = 7;
/** How many top fragments get the signals of query/relevance.ts (rerank.ts). */
export const RERANK_CANDIDATES = 30;
/**
 * Proximity needs the fragment's words: one verified read of its source line each (about 20–50
 * µs for a line of a few KB). Lines longer than this, and reads past the budget, go without (they
 * keep the other signals), so one search never parses megabytes of tool output.
 */
export const PROXIMITY_LINE_BYTES = 8 * 1024;
/** Proximity is computed for this many of the candidates, the best after the cheap signals. */
export const PROXIMITY_CANDIDATES = 12;
export const PROXIMITY_BUDGET_BYTES = 32 * 1024;
/**
 * Most fragments of in-scope sessions a filter-only search examines. It visits sessions from the
 * most recently active (oldest first: the earliest started), reading each one's fragments that
 * the filters allow through its session index, and stops as soon as no unvisited session can
 * change the answer, or past this budget (then it says so: coverage.mode "recent").
 */
export const FILTER_SCAN_BUDGET = 40_000;

/** When a query counts as made of common terms only, and how large the window it is searched in. */
export interface SearchBounds {
	commonTermFragments: number;
	windowFragments: number;
	/** The window's first size, doubled while it holds fewer than twice the limit's matches. */
	firstWindowFragments?: number;
	/** Above this many matches, only the newest RECENT_MATCHES are ranked (FULL_RANK_LIMIT). */
	fullRankLimit?: number;
	/** How many sessions a very common query with --until reads before it walks the matches instead (UNTIL_SESSIONS). */
	untilSessions?: number;
	/** The fewest sessions a scope needs for a very common query with --until to read the time index (UNTIL_MIN_SESSIONS). */
	untilMinSessions?: number;
	/** The most file rows a --file path may have for its sessions to be searched one by one (FILE_ROWS). */
	fileRows?: number;
	/** The most sessions touching a --file path whose every match is read (FILE_SESSIONS). */
	fileSessions?: number;
	/** The most sessions active since --since that are all searched one by one (SINCE_SESSIONS). */
	sinceSessions?: number;
}

/** The bounds of one search: the request's, the defaults for the rest. */
export function searchBounds(given: Partial<SearchBounds> = {}): Required<SearchBounds> {
	return {
		commonTermFragments: given.commonTermFragments ?? COMMON_TERM_FRAGMENTS,
		windowFragments: given.windowFragments ?? SEARCH_WINDOW_FRAGMENTS,
		firstWindowFragments: given.firstWindowFragments ?? FIRST_WINDOW_FRAGMENTS,
		fullRankLimit: given.fullRankLimit ?? FULL_RANK_LIMIT,
		untilSessions: given.untilSessions ?? UNTIL_SESSIONS,
		untilMinSessions: given.untilMinSessions ?? UNTIL_MIN_SESSIONS,
		fileRows: given.fileRows ?? FILE_ROWS,
		fileSessions: given.fileSessions ?? FILE_SESSIONS,
		sinceSessions: given.sinceSessions ?? SINCE_SESSIONS,
	};
}
