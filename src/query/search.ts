/**
 * The search use case: parse the query, then, through the gate (which applies the caller's scope
 * and the current session's cutoff in every statement),
 * rank fragments (full BM25 when the terms are selective; newest-first windows under a time
 * budget when they are very common), coalesce fragments of one event into one hit with the
 * strongest fragment as evidence, and attach bounded snippets.
 */
import type { Database } from "bun:sqlite";
import type { Scope } from "../auth/scope.ts";
import {
	type CandidateRow,
	Gate,
	type RankedRow,
	type RowidRange,
	type ScopedSearch,
	type SearchFilters,
	type BrowseSessionRow,
	type ScopedBrowse,
} from "../gate/gate.ts";
import { PiEventsError } from "../errors.ts";
import type { BranchState, ContextRole, SelectionState, SemanticKind } from "../model.ts";
import { type Highlight, makeSnippet } from "./snippet.ts";
import { isoTime } from "../project/projector.ts";
import { ERROR_BOOST } from "../project/weights.ts";
import { alternativeTokens, type ParsedQuery, parseQuery } from "./fts.ts";
import { scoreFragments, shareOfBest } from "./answer-score.ts";
import { fragmentTexts } from "./source-text.ts";
import { type HitTurn, turnsOf } from "./turns.ts";
import { evidenceFactor, proseShare, proximityFactor, type SignalTerm, snippetTokens, TextWords, textSignals } from "./relevance.ts";
import { WordForms } from "../project/stem.ts";
import { SourceFiles } from "../source/read.ts";

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;
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
const SINCE_SESSIONS = 100;
/**
 * A very common query with --until searches the sessions last active before then one by one
 * (rankUntil), reading at most this many sessions and this many events of the time index to find
 * its newest matches; past either bound (filters that reject most of them), it walks the matches.
 * With a time range and a filter checked on each match, at most this many sessions in the range
 * are read (rankSessionsRead).
 */
const UNTIL_SESSIONS = 200;
const UNTIL_EVENTS = 50_000;
/**
 * Only a scope of at least this many sessions reads the time index; a smaller one walks its own
 * matches, which its scope tokens already narrow. Decided from the scope's own size, never from
 * other workspaces' history. At 5 GB, roots of 170–800 sessions took 15–45 ms walking their
 * matches against 35–100 through the time index; roots of 2,100 and 3,700 sessions 23–47 and
 * 26–66 ms walking against 26–31 and 7–17.
 */
const UNTIL_MIN_SESSIONS = 1_000;
/** After this many sessions, one that holds too few matches to reach RECENT_MATCHES within the bound stops early. */
const UNTIL_TRIAL_SESSIONS = 25;
/**
 * A very common query with --file searches the sessions with events touching those files, each
 * from its first to its last such fragment, when at most this many file rows touch them; a more
 * common path (a project directory) is searched in the newest sessions' window, as a filter
 * checked on each match is.
 */
const FILE_ROWS = 5_000;
/**
 * When at most this many sessions touch the path, every match in them is read (an exact answer);
 * with more, the most recently active until twice the limit pass.
 */
const FILE_SESSIONS = 50;
/** Up to this many matches of the unscoped terms, rank them unscoped and filter the scope in SQL. */
const UNSCOPED_RANK_LIMIT = 8_000;
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
const FIRST_WINDOW_FRAGMENTS = 2_500;

export type { SearchFilters };

export const SORT_ORDERS = ["relevance", "newest", "oldest"] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

interface SearchRequest {
	query: string;
	filters: SearchFilters;
	limit?: number;
	scope: Scope;
	/** Also search pi-events' own echoes (its tool calls and results, `pi-events` shell runs). */
	includeDerived?: boolean;
	/** Hit order (default relevance). */
	sort?: SortOrder;
	/** "session": one hit per session, its first event in the order, with otherMatchingEvents. */
	groupBy?: "session";
	/** Words match as typed only, no other word forms. */
	exact?: boolean;
	/** The cost bounds (tests use smaller ones on small indexes; defaults otherwise). */
	bounds?: Partial<SearchBounds>;
}

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

const notEmpty = (): Pick<SearchCoverage, "emptyBecause" | "unmatchedTerms"> => ({ emptyBecause: null, unmatchedTerms: [] });

/**
 * The candidates a search ranks, and what its coverage says of them. `wholeEvents`: they hold
 * every matching fragment of their events (all the matches of the parts of the history read were
 * ranked), so how many of each event matched is counted from them; otherwise the gate counts
 * (mode "full" implies it).
 */
type Ranking = { ranked: RankedRow[]; mode: SearchCoverage["mode"]; rankedShare: number | null; wholeEvents?: boolean };

export interface Hit {
	sessionId: string;
	entryId: string;
	fragmentId: string;
	eventType: string;
	semanticKind: SemanticKind;
	role: string | null;
	toolName: string | null;
	timestamp: string | null;
	cwd: string | null;
	sessionFile: string;
	sessionName: string | null;
	line: number;
	/** Plain text around the match (no marks). */
	snippet: string;
	/** Matched spans of `snippet`: [start, end) in UTF-16 code units. */
	highlights: Highlight[];
	/** Position in this answer, from 1. */
	rank: number;
	/**
	 * Relevance as a share of the best relevance among this answer's matches (1 for the best, 0 to
	 * 1). It depends on nothing outside the scope: comparable within one answer, not across answers.
	 */
	score: number;
	isError: boolean | null;
	exitCode: number | null;
	branchState: BranchState;
	contextRole: ContextRole;
	selectionState: SelectionState;
	/** True when the source file changed since indexing: the snippet is a notice, not text. */
	stale: boolean;
	/** How many fragments of this event matched. */
	matchedFragments: number;
	/** Grouped by session: how many other events of this session matched. */
	otherMatchingEvents?: number;
	/** An echo of pi-events itself (a call or result of its tools, a `pi-events` shell run): only with includeDerived. */
	derived: boolean;
	/**
	 * The turn the hit belongs to: the prompt that started it and its outcome (query/turns.ts), with
	 * bounded previews except for the hit's own event; null before a session's first prompt.
	 */
	turn: HitTurn | null;
}

export interface SearchCoverage {
	/**
	 * "full": every in-scope match was ranked; "recent": very common terms, only the newest
	 * RECENT_MATCHES were ranked, or a query of common words only, searched in the newest sessions
	 * holding SEARCH_WINDOW_FRAGMENTS fragments.
	 */
	mode: "full" | "recent";
	/** Matching events that the scope and every filter allow: exact in full mode, else a lower bound (those in the ranked window). */
	estimatedMatches: number;
	matchesExact: boolean;
	/** Sessions holding those events (same exactness). */
	estimatedSessions: number;
	/** True only when the limit cut hits: more matching events (sessions, when grouped) than returned. */
	truncated: boolean;
	/** Share of the in-scope matches that was ranked: 1 in full mode, null in recent mode (the count stops at FULL_RANK_LIMIT + 1). */
	rankedShare: number | null;
	/** No terms: a search by filters alone (newest first; "recent" then means only the most recently active sessions were read). */
	filterOnly: boolean;
	ignoredTerms: string[];
	/**
	 * Only when there are no hits, why (never a count, never about anything outside the scope):
	 * "terms": some terms occur nowhere in scope (`unmatchedTerms`), even as other word forms;
	 * "together": every term occurs, but never all in one fragment; "filters": the query matches,
	 * the filters leave nothing; "derived": only pi-events' own echoes match. Null when there are hits.
	 */
	emptyBecause: "terms" | "together" | "filters" | "derived" | null;
	/** The terms (as typed) that match nothing in scope; empty when there are hits. */
	unmatchedTerms: string[];
}

export interface SearchResult {
	hits: Hit[];
	coverage: SearchCoverage;
	elapsedMs: number;
}

export function search(db: Database, request: SearchRequest): SearchResult {
	const files = new SourceFiles();
	try {
		return searchWith(db, request, files);
	} finally {
		files.close();
	}
}

function searchWith(db: Database, request: SearchRequest, files: SourceFiles): SearchResult {
	const started = performance.now();
	const limit = request.limit ?? DEFAULT_LIMIT;
	if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
		throw new PiEventsError("E_USAGE", `limit must be an integer from 1 to ${MAX_LIMIT}`);
	}
	// Every read below goes through the gate, which puts the caller's scope into each statement.
	const gate = new Gate(db, request.scope);
	if (request.filters.sessionIds?.length) {
		// A unique prefix of a visible session id stands for the id.
		request = { ...request, filters: { ...request.filters, sessionIds: request.filters.sessionIds.map((id) => gate.resolveSessionId(id)) } };
	}
	if (request.query.trim() === "") {
		if (!narrows(request.filters)) {
			throw new PiEventsError("E_BAD_QUERY", `the query is empty: give words to search for, or at least one filter (${NARROWING_FLAGS})`);
		}
		return filterOnlySearch(gate, request, limit, started, files);
	}
	const parsed = parseQuery(request.query, { exact: request.exact });
	const scoped = gate.search(parsed.match, request.filters, { includeDerived: request.includeDerived });
	if (scoped === null) return nothingInScope(parsed, started);

	const sort = request.sort ?? "relevance";
	const grouped = request.groupBy === "session";
	// Only common terms, which may share few fragments: search the newest sessions' window only.
	const bounds: SearchBounds = { commonTermFragments: COMMON_TERM_FRAGMENTS, windowFragments: SEARCH_WINDOW_FRAGMENTS, ...request.bounds };
	// Counting in-scope matches is cheap (no ranking, no joins) and capped: it only decides how to rank.
	// In a window, the candidates are read at once (one walk of the window, not a count and then a
	// read); more than RECENT_MATCHES are a common query's, whose first RECENT_MATCHES in index order are
	// ranked by kind weight, as they would be without the window.
	const windowed = onlyCommonTerms(scoped, parsed, bounds.commonTermFragments, request.filters) ? searchWindow(scoped, parsed, bounds, sort, limit) : null;
	const range = windowed?.range ?? null;
	const inWindow = windowed?.rows ?? null;
	const fullRankLimit = bounds.fullRankLimit ?? FULL_RANK_LIMIT;
	const counted = inWindow?.length ?? scoped.count(fullRankLimit + 1);
	const complete = counted <= fullRankLimit;
	const { ranked, mode, rankedShare, wholeEvents } =
		inWindow !== null
			? rankWindow(scoped, parsed, inWindow)
			: ((complete ? null : rankInParts(scoped, parsed, request.filters, sort, bounds, fullRankLimit, limit)) ??
				rankCandidates(scoped, parsed, counted, complete, sort, bounds));

	// Signals BM25 cannot see (conversational evidence, proximity), from the top candidates' source text.
	const forms = new WordForms();
	const words = new TextWords();
	const texts = sort === "relevance" ? rerank(scoped, ranked, parsed.terms, forms, words, files) : new Map<number, string | null>();

	// One candidate per event (its best fragment), or per session (its first event in the order).
	const events = bestPerEvent(ranked);
	const sessionsMatched = new Map<number, number>();
	for (const e of events) sessionsMatched.set(e.session_key, (sessionsMatched.get(e.session_key) ?? 0) + 1);
	// By relevance, rerank left the fragments sorted, so each event's best fragment came first and
	// the events are already in order; by time they are sorted here.
	if (sort !== "relevance") events.sort(sort === "newest" ? byTime(-1) : byTime(1));
	const candidates = grouped ? firstPerSession(events) : events;
	// The gate checks every hydrated row once more against the rule (defence in depth).
	const rows = selectEvents(scoped, candidates, limit, sort === "relevance", grouped);
	const bodyOf = (row: CandidateRow): string | null => (texts.has(row.frag_key) ? (texts.get(row.frag_key) ?? null) : fragmentText(row, files));
	const coverage: SearchCoverage = {
		mode,
		estimatedMatches: events.length,
		matchesExact: mode === "full",
		estimatedSessions: sessionsMatched.size,
		truncated: candidates.length > rows.length,
		rankedShare,
		filterOnly: false,
		ignoredTerms: parsed.ignored,
		...(rows.length > 0 ? notEmpty() : explainEmpty(scoped, parsed, counted, range)),
	};
	// When every match (of the scope, or of the window) was ranked, the ranked fragments say how many
	// of each event matched; otherwise the gate counts them.
	const everyMatchRanked = wholeEvents ?? (inWindow === null ? mode === "full" : inWindow.length <= RECENT_MATCHES);
	const matched = everyMatchRanked ? fragmentsPerEvent(ranked) : scoped.matchedPerEvent(rows);
	// The best relevance among all candidates: a hit's score is its share of it.
	const best = events.reduce((max, e) => Math.max(max, -e.score), 0);
	const turns = turnsOf(scoped, rows, { terms: parsed.terms, forms, words, files });
	return {
		hits: rows.map((row, i) => {
			const hit = toHit(row, matched.get(row.event_key) ?? 1, bodyOf(row), parsed.terms, forms, words, i + 1, best);
			hit.turn = turns[i] ?? null;
			if (grouped) hit.otherMatchingEvents = (sessionsMatched.get(row.session_key) ?? 1) - 1;
			return hit;
		}),
		coverage,
		elapsedMs: performance.now() - started,
	};
}

/** The answer when the caller's scope admits no session at all. */
function nothingInScope(parsed: ParsedQuery, started: number): SearchResult {
	return {
		hits: [],
		coverage: {
			mode: "full",
			estimatedMatches: 0,
			matchesExact: true,
			estimatedSessions: 0,
			truncated: false,
			rankedShare: 1,
			filterOnly: false,
			ignoredTerms: parsed.ignored,
			emptyBecause: "terms",
			unmatchedTerms: parsed.terms.map((t) => t.text),
		},
		elapsedMs: performance.now() - started,
	};
}

/**
 * Whether the query needs several words in one fragment and every term is common in scope (its
 * alternatives' rarest words are held by more than `common` fragments): then counting its matches
 * may walk every fragment holding the words. Capped in-scope counts, one per word, each stopping
 * at `common` + 1.
 */
function onlyCommonTerms(scoped: ScopedSearch, parsed: ParsedQuery, common: number, filters: SearchFilters): boolean {
	// One word (in each alternative) is one posting list: the capped count stops early whatever it
	// holds, unless a filter checked on each match (not in the full-text index) passes few of them.
	const severalWords = parsed.terms.length > 1 || parsed.terms.some((t) => t.alternatives.some((a) => alternativeTokens(a).length > 1));
	if (!severalWords && !categoricalOnly(filters)) return false;
	// The gate counts each token once per search (termOccurrences reuses the counts).
	const count = (token: string) => scoped.tokenCount(token, common + 1);
	return parsed.terms.every((term) => {
		// A term matches no more fragments than the sum, over its alternatives, of each one's rarest word.
		let bound = 0;
		for (const alternative of term.alternatives) {
			const words = alternativeTokens(alternative);
			if (words.length === 0) continue;
			bound += Math.min(...words.map(count));
			if (bound > common) return true;
		}
		return false;
	});
}

/**
 * Whether the request's filters are all of the kind checked on each matching fragment whatever
 * its place in the history (kind, role, tool, event type, error, branch, selection), with at least
 * one: a common word so filtered is searched in a window of the newest sessions, as a phrase of
 * common words is (at 5 GB, `error --kind bash.command` walked all of the word's matches: 330 ms).
 * Not with a time, session, cwd or file filter: those ask for a part of the history that the
 * newest sessions may not hold, so those requests keep every match.
 */
function categoricalOnly(f: SearchFilters): boolean {
	const asksForPart = f.sinceMs !== undefined || f.untilMs !== undefined || !!f.sessionIds?.length || !!f.files?.length || f.cwdPrefix !== undefined;
	return !asksForPart && hasCategoricalFilter(f);
}

/** A filter checked on each matching fragment, whatever its place in the history. */
function hasCategoricalFilter(f: SearchFilters): boolean {
	return (
		!!f.kinds?.length ||
		!!f.roles?.length ||
		!!f.tools?.length ||
		!!f.eventTypes?.length ||
		f.isError !== undefined ||
		!!f.branchStates?.length ||
		!!f.selectionStates?.length
	);
}

/**
 * The matches of a query of common terms only in a window of the newest (sorting oldest first,
 * the oldest) in-scope sessions: FIRST_WINDOW_FRAGMENTS at first, doubled while it holds fewer
 * than twice `limit` matches, up to `bounds.windowFragments`; each widening reads only the
 * sessions it adds. Null when the whole scope holds fewer (then nothing is bounded).
 */
function searchWindow(
	scoped: ScopedSearch,
	parsed: ParsedQuery,
	bounds: SearchBounds,
	sort: SortOrder,
	limit: number,
): { range: RowidRange; rows: RankedRow[] } | null {
	const order = sort === "oldest" ? "oldest" : "newest";
	const most = bounds.windowFragments;
	if (scoped.window(most, order) === null) return null;
	let fragments = Math.min(bounds.firstWindowFragments ?? FIRST_WINDOW_FRAGMENTS, most);
	let range = scoped.window(fragments, order)!;
	// Single words only (no phrase, no word split in parts): their matches are cheap to list.
	const wordsOnly = parsed.terms.every((t) => t.alternatives.every((a) => alternativeTokens(a).length <= 1));
	const rows = matchesIn(scoped, range, order, wordsOnly);
	while (rows.length < 2 * limit && fragments < most) {
		fragments = Math.min(fragments * 2, most);
		const wider = scoped.window(fragments, order)!;
		rows.push(...matchesIn(scoped, addedPart(range, wider, order), order, wordsOnly));
		range = wider;
	}
	return { range, rows: rows.slice(0, RECENT_MATCHES + 1) };
}

/** The fragments a wider window adds to `range`: older than it (newer, sorting oldest first). */
function addedPart(range: RowidRange, wider: RowidRange, order: "newest" | "oldest"): RowidRange {
	return order === "newest" ? { from: wider.from, to: range.from! - 1 } : { from: range.to! + 1, to: wider.to };
}

/**
 * Every match in a rowid range (a part of a window, a session's span: the range bounds them: no
 * limit, or ascending order would lose the newest), newest first when `order` is "newest". Read in
 * ascending rowids and turned round: FTS5 walks the postings of a word held by a million
 * fragments backwards several times slower than forwards, however narrow the range (at 5 GB, 11
 * against 3 ms for `"function error the"`).
 */
function matchesIn(scoped: ScopedSearch, part: RowidRange, order: "newest" | "oldest", wordsOnly: boolean): RankedRow[] {
	if (order === "newest" && wordsOnly) {
		// Only the newest RECENT_MATCHES + 1 are kept: where they start is read from the postings
		// alone, and only their rows are read (at 1 GB, 1,900 matches of `the error` in the first
		// window). Not for phrases: checking positions is their cost, and it would be paid twice.
		const rowids = scoped.matchRowids(part);
		if (rowids !== null && rowids.length > RECENT_MATCHES + 1) part = { ...part, from: rowids[rowids.length - (RECENT_MATCHES + 1)]! };
	}
	const rows = scoped.rank(Number.MAX_SAFE_INTEGER, { order: "oldest", withTime: true, range: part });
	return order === "newest" ? rows.reverse() : rows;
}

/**
 * The in-scope matches read from a window of sessions (a query of common terms only), in index
 * order: all of them scored when they are at most RECENT_MATCHES, else the first RECENT_MATCHES by
 * kind weight (as any very common query is ranked). The coverage says so: mode "recent", the share
 * of all matches unknown.
 */
function rankWindow(scoped: ScopedSearch, parsed: ParsedQuery, inWindow: RankedRow[]): Ranking {
	if (inWindow.length > RECENT_MATCHES) return { ranked: inWindow.slice(0, RECENT_MATCHES), mode: "recent", rankedShare: null };
	scoreAll(scoped, parsed, inWindow);
	return { ranked: inWindow, mode: "recent", rankedShare: null, wholeEvents: true };
}

/**
 * A very common query (more matches than are ranked in full) whose filters say which part of the
 * history can hold its matches, searched in that part only; null when no filter does, or the part
 * is too large (then the caller walks the matches until the filters pass enough of them):
 * - --since: only the sessions active since then, when at most SINCE_SESSIONS;
 * - --file: only the sessions with events touching those files, when at most FILE_ROWS file rows do;
 * - --until (or a --since that too many sessions are active since): the sessions last active
 *   before then, from the time index (rankUntil).
 */
function rankInParts(
	scoped: ScopedSearch,
	parsed: ParsedQuery,
	filters: SearchFilters,
	sort: SortOrder,
	bounds: SearchBounds,
	fullRankLimit: number,
	limit: number,
): Ranking | null {
	const { sinceMs, untilMs, files } = filters;
	const order = sort === "oldest" ? "oldest" : "newest";
	const byKey = sort === "oldest" ? (a: RankedRow, b: RankedRow) => a.frag_key - b.frag_key : (a: RankedRow, b: RankedRow) => b.frag_key - a.frag_key;
	const maxSessions = bounds.untilSessions ?? UNTIL_SESSIONS;
	const sinceSpans = sinceMs !== undefined ? scoped.activeSince(sinceMs, bounds.sinceSessions ?? SINCE_SESSIONS) : null;
	const fileSpans = sinceSpans === null && files?.length ? scoped.fileSpans(files, bounds.fileRows ?? FILE_ROWS, order) : null;
	const spans = sinceSpans ?? fileSpans;
	if (spans !== null && (fileSpans === null || fileSpans.length <= (bounds.fileSessions ?? FILE_SESSIONS))) {
		// Every match the filters allow is in these spans.
		const rows = scoped.withSpanReads(() => spans.flatMap((range) => matchesIn(scoped, range, "oldest", false)));
		return rankRead(scoped, parsed, rows, true, fullRankLimit, byKey);
	}
	if (fileSpans !== null) {
		// Many sessions touch the path (each read seeks the word's postings in every segment: a file
		// of 241 sessions took 68–110 ms, 4.3 s with the index out of the page cache): the most
		// recently active of them until twice the limit pass, as for any filter checked on each match.
		const read = fileSpans.slice(0, maxSessions);
		return scoped.withSpanReads(() => rankSessionsRead(scoped, parsed, read, { limit, everySession: read.length === fileSpans.length, fullRankLimit, sort }));
	}
	if (files?.length && sinceMs === undefined && untilMs === undefined) {
		// More than FILE_ROWS file rows touch the path (a project directory): it passes matches all
		// through the history, so it is searched as a filter checked on each match is, in the newest
		// (oldest) sessions' window. Walking the word's matches for it read much more (at 5 GB, `the
		// --file` a directory of 16,552 file rows: 94 ms, in the window 19).
		const window = searchWindow(scoped, parsed, bounds, sort, limit);
		if (window !== null) return rankWindow(scoped, parsed, window.rows);
	}
	// A path is a filter checked on each match too.
	if ((sinceMs !== undefined || untilMs !== undefined) && (hasCategoricalFilter(filters) || !!files?.length)) {
		// A filter checked on each match, and more history in the time range than is searched one
		// session at a time: the sessions that can hold a match there, most recently active first (with
		// --sort oldest, oldest first), until twice the limit pass, as the window is read without a
		// time filter. Walking the word's matches for it read the whole history (at 5 GB, `the --until
		// … --tool edit` 250–310 ms; `the --since` five months before the end `--kind bash.command`,
		// which nothing passes, 250–270 ms; in a workspace of 800 sessions 170–200 ms).
		const spans = scoped.sessionsInRange({ sinceMs, untilMs, order, count: maxSessions });
		return scoped.withSpanReads(() => rankSessionsRead(scoped, parsed, spans, { limit, everySession: spans.length < maxSessions, fullRankLimit, sort }));
	}
	if (untilMs === undefined || sort === "oldest" || !scoped.admitsSessions(bounds.untilMinSessions ?? UNTIL_MIN_SESSIONS)) return null;
	return scoped.withSpanReads(() => rankUntil(scoped, parsed, untilMs, sinceMs, fullRankLimit, bounds.untilSessions ?? UNTIL_SESSIONS));
}

/**
 * The matches of these sessions' spans, read one session at a time until twice `limit` are
 * found: those, all ranked (mode "recent"); when `everySession` and every span was read, every
 * match there is was found (rankRead).
 */
function rankSessionsRead(
	scoped: ScopedSearch,
	parsed: ParsedQuery,
	spans: readonly RowidRange[],
	read: { limit: number; everySession: boolean; fullRankLimit: number; sort: SortOrder },
): Ranking {
	const rows: RankedRow[] = [];
	let sessions = 0;
	for (const range of spans) {
		rows.push(...matchesIn(scoped, range, "oldest", false));
		sessions++;
		if (rows.length >= 2 * read.limit) break;
	}
	if (read.everySession && sessions === spans.length) {
		const order = read.sort === "oldest" ? (a: RankedRow, b: RankedRow) => a.frag_key - b.frag_key : (a: RankedRow, b: RankedRow) => b.frag_key - a.frag_key;
		return rankRead(scoped, parsed, rows, true, read.fullRankLimit, order);
	}
	// Fewer than the sessions in range were read: every match found is ranked, the rest were not looked at.
	scoreAll(scoped, parsed, rows);
	return { ranked: rows, mode: "recent", rankedShare: null, wholeEvents: true };
}

/**
 * Matches read from parts of the history: all scored when they are every match there is and at
 * most `fullRankLimit` (the answer is then complete), else the first RECENT_MATCHES in `order`
 * by kind weight, as any very common query is ranked.
 */
function rankRead(
	scoped: ScopedSearch,
	parsed: ParsedQuery,
	rows: RankedRow[],
	everyMatch: boolean,
	fullRankLimit: number,
	order: (a: RankedRow, b: RankedRow) => number,
): Ranking {
	if (everyMatch && rows.length <= fullRankLimit) {
		scoreAll(scoped, parsed, rows);
		return { ranked: rows, mode: "full", rankedShare: 1 };
	}
	rows.sort(order);
	return { ranked: rows.slice(0, RECENT_MATCHES), mode: "recent", rankedShare: null };
}

/**
 * The matches of a very common query with --until, from the sessions whose newest activity before
 * then is newest, one session at a time, until RECENT_MATCHES of them are found: those, newest
 * first (rankRead). When the time range runs out first, every match was found. Null when
 * `maxSessions` sessions or UNTIL_EVENTS of their events were read before that, or when the
 * matches found so far say it would be (filters that reject most matches): the caller walks the
 * matches instead. (With a filter checked on each match, rankInParts reads sessionsInRange.)
 */
function rankUntil(
	scoped: ScopedSearch,
	parsed: ParsedQuery,
	untilMs: number,
	sinceMs: number | undefined,
	fullRankLimit: number,
	maxSessions: number,
): Ranking | null {
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
	return rankRead(scoped, parsed, rows, !enough, fullRankLimit, (a, b) => (b.ts_ms ?? 0) - (a.ts_ms ?? 0) || b.frag_key - a.frag_key);
}

/** Score every candidate from its own term counts and length (answer-score.ts), in place. */
function scoreAll(scoped: ScopedSearch, parsed: ParsedQuery, ranked: RankedRow[]): void {
	if (ranked.length === 0) return; // nothing to score: no token counts needed
	const tokens = [...new Set(parsed.terms.flatMap((t) => [...t.tokens, ...t.alternatives.flatMap(alternativeTokens)]))];
	const { occurrences, common } = scoped.termOccurrences(ranked, tokens);
	const relevance = scoreFragments(ranked, occurrences, common);
	for (const r of ranked) r.score = -(relevance.get(r.frag_key) ?? 0);
}

/**
 * The in-scope candidates: every match the filters allow when there are at most FULL_RANK_LIMIT
 * (`complete`), scored; otherwise a window of RECENT_MATCHES in index order.
 */
function rankCandidates(
	scoped: ScopedSearch,
	parsed: ParsedQuery,
	counted: number,
	complete: boolean,
	sort: NonNullable<SearchRequest["sort"]>,
	bounds: SearchBounds,
): Ranking {
	// No match in scope at all (a typo, a word never written): the ranking query would find none either.
	if (counted === 0) return { ranked: [], mode: "full", rankedShare: 1 };
	if (complete) {
		// Intersecting with a wide scope's tokens inside FTS5 can cost more than the query: when the
		// user's terms alone match few fragments, the gate matches them alone and applies the same
		// scope rule in SQL. The candidates are the same in-scope rows either way.
		const scopeInSql = scoped.fewUnscopedMatches(UNSCOPED_RANK_LIMIT);
		// Every in-scope match that the filters allow (at most FULL_RANK_LIMIT): exact counts,
		// grouping and time order need them all, and all of them are scored to sort. Each from its
		// own term counts and length alone (answer-score.ts), never bm25(), whose statistics cover
		// every workspace in the index.
		// With each event's time: the tie-break (newest first) orders equal scores without hydrating them.
		// In ascending rowids: FTS5 reads postings forwards faster than backwards, and the fragment
		// rows in order (0.75 against 1.4 ms for 973 matches); all of them are sorted below anyway.
		const ranked = scoped.rank(bounds.fullRankLimit ?? FULL_RANK_LIMIT, { scopeInSql, withTime: true, order: "oldest" });
		scoreAll(scoped, parsed, ranked);
		return { ranked, mode: "full", rankedShare: 1 };
	}
	// Very common terms: the newest (or, sorting oldest first, the oldest) RECENT_MATCHES in-scope
	// matches that the filters allow, by index order (rowids grow with sessions in creation order).
	const ranked =
		sort === "oldest"
			? scoped.rank(RECENT_MATCHES, { order: "oldest", withTime: true })
			: newestMatches(scoped, RECENT_MATCHES, bounds.firstWindowFragments ?? FIRST_WINDOW_FRAGMENTS);
	// The window held every match the filters allow; otherwise counting stopped past
	// FULL_RANK_LIMIT (an exact count of 150,000 matches costs ~5 ms) and the share is unknown.
	return ranked.length < RECENT_MATCHES ? { ranked, mode: "full", rankedShare: 1 } : { ranked, mode: "recent", rankedShare: null };
}

/** How many windows (the first, then doubled) newestMatches looks in for where its matches start. */
const NEWEST_WINDOWS = 7;

/**
 * The newest `count` in-scope matches (all of them when fewer), newest first, read forwards. FTS5
 * walks a long posting list backwards far slower than forwards, above all in a new process: at
 * 5 GB the newest 500 fragments holding `the` took 15–20 ms backwards against 0.5–0.8 ms forwards
 * from where they start. Where they start is found from rowids alone, in windows of the newest
 * sessions that double (each reading only what it adds) while the matches seen so far promise
 * enough within two more. Filters the full-text match cannot carry, and sparser matches (whose
 * posting lists are short), are read backwards as before.
 */
function newestMatches(scoped: ScopedSearch, count: number, firstWindow: number): RankedRow[] {
	let rowids: number[] = [];
	let range: RowidRange | null = null;
	for (let fragments = firstWindow; fragments < firstWindow * 2 ** NEWEST_WINDOWS; fragments *= 2) {
		const wider = scoped.window(fragments, "newest");
		if (wider === null) break; // the scope holds fewer fragments: its whole posting lists are short
		const added = scoped.matchRowids(range === null ? wider : addedPart(range, wider, "newest"));
		if (added === null) break;
		rowids = added.concat(rowids);
		range = wider;
		if (rowids.length >= count) {
			const from = rowids[rowids.length - count]!;
			// A commit between the two reads may add newer matches: still the newest `count`.
			return scoped.rank(Number.MAX_SAFE_INTEGER, { order: "oldest", withTime: true, range: { from } }).reverse().slice(0, count);
		}
		// Sparser than this, the matches would take more windows than the backward read of their
		// posting list costs, and that list is short (zqplant10000x at 5 GB: 15 matches in the first
		// window, five windows to 500, a third slower).
		if (rowids.length * 4 < count) break;
	}
	return scoped.rank(count, { order: "newest", withTime: true });
}

/**
 * Why a search found nothing, from cheap capped counts inside the caller's scope (booleans
 * only). With a targeted current session, its events are left out of the explanation: whether a
 * term occurs after the invocation cutoff must not show.
 */
function explainEmpty(
	scoped: ScopedSearch,
	parsed: ParsedQuery,
	counted: number,
	window: RowidRange | null,
): Pick<SearchCoverage, "emptyBecause" | "unmatchedTerms"> {
	// With a window (common terms only), the explanation is about that window, like the answer.
	const range = window ?? undefined;
	if (!scoped.cutoffApplies && counted > 0) return { emptyBecause: "filters", unmatchedTerms: [] };
	// With the cutoff, or in a window, the query matching there is enough: what left nothing is the filters.
	if ((scoped.cutoffApplies || window !== null) && scoped.occurs(parsed.match, { range })) return { emptyBecause: "filters", unmatchedTerms: [] };
	if (scoped.excludesDerived && scoped.occurs(parsed.match, { includeDerived: true, range })) return { emptyBecause: "derived", unmatchedTerms: [] };
	// A query of one term is that term: with no window and no cutoff, `counted` (0 here) already
	// says that it does not occur in scope.
	const only = parsed.terms.length === 1 ? parsed.terms[0]!.alternatives.join(" OR ") : null;
	const countSettlesIt = window === null && !scoped.cutoffApplies && only === parsed.match;
	const unmatched = countSettlesIt
		? parsed.terms.map((t) => t.text)
		: parsed.terms.filter((t) => !scoped.occurs(t.alternatives.join(" OR "), { range })).map((t) => t.text);
	return unmatched.length > 0 ? { emptyBecause: "terms", unmatchedTerms: unmatched } : { emptyBecause: "together", unmatchedTerms: [] };
}

/** Best first; ties newest first, then by the newer fragment (session and entry ids, after hydration, decide the rest). */
function byScore(a: RankedRow, b: RankedRow): number {
	return a.score - b.score || newerFirst(a, b) || b.frag_key - a.frag_key;
}

/** Newest first by event time (a missing time last); 0 when equal. */
function newerFirst(a: RankedRow, b: RankedRow): number {
	const ta = a.ts_ms ?? null;
	const tb = b.ts_ms ?? null;
	if (ta === tb) return 0;
	if (ta === null) return 1;
	if (tb === null) return -1;
	return tb - ta;
}

/** By event time (direction 1: oldest first, -1: newest first), events without a time last; then by fragment. */
function byTime(direction: 1 | -1): (a: RankedRow, b: RankedRow) => number {
	return (a, b) => {
		const ta = a.ts_ms ?? null;
		const tb = b.ts_ms ?? null;
		if (ta !== tb) {
			if (ta === null) return 1;
			if (tb === null) return -1;
			return (ta - tb) * direction;
		}
		return (b.frag_key - a.frag_key) * direction;
	};
}

/** The first candidate of each session, in the given order. */
function firstPerSession(ordered: RankedRow[]): RankedRow[] {
	const seen = new Set<number>();
	return ordered.filter((r) => {
		if (seen.has(r.session_key)) return false;
		seen.add(r.session_key);
		return true;
	});
}

/** How many top fragments get the signals of query/relevance.ts. */
const RERANK_CANDIDATES = 30;
/**
 * Proximity needs the fragment's words: one verified read of its source line each (about 20–50
 * µs for a line of a few KB). Lines longer than this, and reads past the budget, go without (they
 * keep the other signals), so one search never parses megabytes of tool output.
 */
const PROXIMITY_LINE_BYTES = 8 * 1024;
/** Proximity is computed for this many of the candidates, the best after the cheap signals. */
const PROXIMITY_CANDIDATES = 12;
const PROXIMITY_BUDGET_BYTES = 32 * 1024;

/**
 * Sort the candidates best first, multiply the top ones' scores by their signals and re-sort them, in place. Returns the texts
 * read (null: the source changed since indexing), keyed by fragment, for the snippets.
 */
function rerank(
	scoped: ScopedSearch,
	ranked: RankedRow[],
	terms: readonly SignalTerm[],
	forms: WordForms,
	words: TextWords,
	files: SourceFiles,
): Map<number, string | null> {
	const texts = new Map<number, string | null>();
	// The top candidates by relevance (answer-score.ts) × kind weight (in the recent window, by kind weight alone).
	ranked.sort(byScore);
	const top = ranked.slice(0, RERANK_CANDIDATES);
	if (top.length === 0) return texts;
	// Ranking does not read kinds (store/search.ts fragmentKinds): the top candidates ask for theirs.
	const kindOf = scoped.kinds(top);
	const prose = proseShare(terms);
	// A call whose result failed is what went wrong, like the result itself (which carries the error boost).
	const calls = top.filter((r) => kindOf.get(r.frag_key) === "tool.call").map((r) => r.event_key);
	const failedCalls = calls.length > 0 ? scoped.failedCallEvents(calls) : new Set<number>();
	for (const r of top) {
		const kind = kindOf.get(r.frag_key);
		if (kind === undefined) continue;
		r.score *= evidenceFactor(kind, prose) * (failedCalls.has(r.event_key) ? ERROR_BOOST : 1);
	}
	// Proximity needs the text: only for the best few after the cheap signals.
	top.sort(byScore);
	if (terms.length >= 2) {
		const near = top.slice(0, PROXIMITY_CANDIDATES);
		const rows = new Map(scoped.hydrate(near).map((r) => [r.frag_key, r]));
		let budget = PROXIMITY_BUDGET_BYTES;
		for (const r of near) {
			const row = rows.get(r.frag_key);
			if (!row || row.byte_length > PROXIMITY_LINE_BYTES || row.byte_length > budget) continue;
			budget -= row.byte_length;
			const text = fragmentText(row, files);
			texts.set(r.frag_key, text);
			if (text !== null) r.score *= proximityFactor(textSignals(text, terms, forms, words), terms.length);
		}
	}
	// The signals only ever raise a score (every factor is at least 1), and only the top
	// candidates': they stay ahead of the rest, so re-sorting them leaves all the fragments sorted.
	top.sort(byScore);
	for (let i = 0; i < top.length; i++) ranked[i] = top[i]!;
	return texts;
}

/**
 * Cut the ordered candidates at `limit`. By relevance, candidates whose score ties with the last
 * one kept are ordered by the full tie-break (newest first, then session, entry, fragment id), so
 * a smaller limit always yields a prefix of a larger one; time order is already total.
 */
function selectEvents(scoped: Pick<ScopedSearch, "hydrate">, ordered: RankedRow[], limit: number, byRelevance: boolean, grouped: boolean): CandidateRow[] {
	if (ordered.length === 0) return [];
	// Hydrate a little past the cut: an /export + /import pair holds the same (sessionId, entryId)
	// in two files, and such copies are one event (one session), shown once.
	const want = limit * 2;
	let rows: CandidateRow[];
	if (byRelevance) {
		// Only candidates equal to the last one kept in score and time need the rest of the tie-break
		// (session, entry, fragment id), which takes hydrating them.
		const boundary = ordered[Math.min(limit, ordered.length) - 1]!;
		const tiesWith = (r: RankedRow) => r.score === boundary.score && newerFirst(r, boundary) === 0;
		const sure = ordered.filter((r) => byScore(r, boundary) < 0 && !tiesWith(r));
		const tied = ordered.filter(tiesWith);
		rows = scoped.hydrate(sure.slice(0, want)).sort(compareRows);
		if (rows.length < want && tied.length > 0)
			rows.push(
				...scoped
					.hydrate(tied)
					.sort(compareRows)
					.slice(0, want - rows.length),
			);
	} else {
		rows = scoped.hydrate(ordered.slice(0, want));
	}
	const seen = new Set<string>();
	return rows
		.filter((r) => {
			const key = grouped ? r.session_id : `${r.session_id}\u0000${r.entry_id}`;
			if (seen.has(key)) return false;
			seen.add(key);
			return true;
		})
		.slice(0, limit);
}

function fragmentsPerEvent(ranked: readonly RankedRow[]): Map<number, number> {
	const counts = new Map<number, number>();
	for (const r of ranked) counts.set(r.event_key, (counts.get(r.event_key) ?? 0) + 1);
	return counts;
}

function bestPerEvent(ranked: RankedRow[]): RankedRow[] {
	const best = new Map<number, RankedRow>();
	for (const r of ranked) {
		const seen = best.get(r.event_key);
		if (!seen || r.score < seen.score || (r.score === seen.score && r.frag_key > seen.frag_key)) best.set(r.event_key, r);
	}
	return [...best.values()];
}

function compareRows(a: CandidateRow, b: CandidateRow): number {
	return (
		a.score - b.score || (b.ts_ms ?? 0) - (a.ts_ms ?? 0) || cmp(a.session_id, b.session_id) || cmp(a.entry_id, b.entry_id) || cmp(a.fragment_id, b.fragment_id)
	);
}

function cmp(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}

/** The hit's evidence text, re-derived from the source; null when the source changed since indexing. */
function fragmentText(row: CandidateRow, files: SourceFiles): string | null {
	const texts = fragmentTexts(
		{
			path: row.session_file,
			byteOffset: row.byte_offset,
			byteLength: row.byte_length,
			contentHash: row.content_hash,
			seq: row.seq,
			version: row.version,
			parentId: row.parent_id,
		},
		files,
	);
	return texts?.get(row.fragment_id) ?? null;
}

const STALE_NOTICE = "[the source changed since it was indexed: run pi-events index]";

function toHit(
	row: CandidateRow,
	matched: number,
	body: string | null,
	terms: readonly SignalTerm[],
	forms: WordForms,
	words: TextWords,
	rank: number,
	best: number,
): Hit {
	const snippet = body === null ? { text: STALE_NOTICE, highlights: [] } : makeSnippet(body, snippetTokens(body, terms, forms, words));
	return {
		sessionId: row.session_id,
		entryId: row.entry_id,
		fragmentId: row.fragment_id,
		eventType: row.event_type,
		semanticKind: row.kind,
		role: row.role,
		toolName: row.tool_name,
		timestamp: isoTime(row.ts_ms),
		cwd: row.cwd,
		sessionFile: row.session_file,
		sessionName: row.session_name || null,
		line: row.line,
		snippet: snippet.text,
		highlights: snippet.highlights,
		stale: body === null,
		rank,
		score: shareOfBest(-row.score, best),
		isError: row.is_error === null ? null : row.is_error === 1,
		exitCode: row.exit_code,
		branchState: row.branch_state,
		contextRole: row.context_role as ContextRole,
		selectionState: row.selection_state,
		matchedFragments: matched,
		derived: row.derived === 1,
		turn: null,
	};
}

// ---------------------------------------------------------------------------------------------
// Filter-only search: no terms, at least one narrowing filter; newest (or oldest) first.
// ---------------------------------------------------------------------------------------------

const NARROWING_FLAGS = "kind, role, tool, error, branch, selection, file, session, since, until, type";

/** Whether the filters narrow a search enough to run without terms (a cwd alone does not). */
function narrows(f: SearchFilters): boolean {
	return hasCategoricalFilter(f) || !!f.files?.length || !!f.sessionIds?.length || f.sinceMs !== undefined || f.untilMs !== undefined;
}

/**
 * Most fragments of in-scope sessions a filter-only search examines. It visits sessions from the
 * most recently active (oldest first: the earliest started), reading each one's fragments that
 * the filters allow through its session index, and stops as soon as no unvisited session can
 * change the answer, or past this budget (then it says so: coverage.mode "recent").
 */
const FILTER_SCAN_BUDGET = 40_000;

function filterOnlySearch(gate: Gate, request: SearchRequest, limit: number, started: number, files: SourceFiles): SearchResult {
	const { filters } = request;
	const browse = gate.browse(filters, { includeDerived: request.includeDerived });
	const newest = request.sort !== "oldest";
	// Newest first, by the sessions' newest event; oldest first, by their oldest (a session's events
	// lie between the two). Sessions with no event in the time range are never read. They come from
	// an index in that order as the search goes: it usually stops after a few.
	const cursor = browse?.sessionCursor({ order: newest ? "activity" : "first", sinceMs: filters.sinceMs, untilMs: filters.untilMs });
	let result: SearchResult;
	try {
		const sessions = new SessionQueue(() => cursor?.next() ?? null);
		result = filterOnlyScan(browse, sessions, request, limit, started, files);
	} finally {
		cursor?.close();
	}
	// Nothing passed the filters: when pi-events' own echoes would have, say so (and how to see
	// them), as a search with terms does. Only an empty answer pays for this second look.
	if (result.hits.length === 0 && request.includeDerived !== true) {
		const withEchoes = filterOnlySearch(gate, { ...request, includeDerived: true }, 1, started, files);
		if (withEchoes.hits.length > 0) result.coverage.emptyBecause = "derived";
		result.elapsedMs = withEchoes.elapsedMs;
	}
	return result;
}

/** Sessions in visiting order, pulled from a source as needed. */
class SessionQueue {
	private readonly buffer: BrowseSessionRow[] = [];
	private exhausted = false;

	constructor(private readonly pull: () => BrowseSessionRow | null) {}

	/** The next session, without taking it; null when none is left. */
	peek(): BrowseSessionRow | null {
		this.fill(1);
		return this.buffer[0] ?? null;
	}

	/** Up to `n` next sessions, taken. */
	take(n: number): BrowseSessionRow[] {
		this.fill(n);
		return this.buffer.splice(0, n);
	}

	private fill(n: number): void {
		while (!this.exhausted && this.buffer.length < n) {
			const s = this.pull();
			if (s === null) this.exhausted = true;
			else this.buffer.push(s);
		}
	}
}

function filterOnlyScan(
	browse: ScopedBrowse | null,
	sessions: SessionQueue,
	request: SearchRequest,
	limit: number,
	started: number,
	files: SourceFiles,
): SearchResult {
	const newest = request.sort !== "oldest";
	const grouped = request.groupBy === "session";
	const order = newest ? byTime(-1) : byTime(1);

	const rows: RankedRow[] = [];
	const bestOfEvent = new Map<number, RankedRow>();
	const bestOfSession = new Map<number, RankedRow>();
	// Times of the first `limit` units (events, or sessions when grouped) in the order, as sort keys
	// (a missing time sorts last), and how many units there are.
	const key = (ts: number | null | undefined) => ((ts ?? null) === null ? (newest ? -Infinity : Infinity) : (ts as number));
	let top: number[] = [];
	let units = 0;
	let examined = 0;
	let visited = 0;
	let mode: SearchCoverage["mode"] = "full";
	// Sessions are read in batches that double (1, 2, 4, … up to 64): few statements when the
	// filters are selective, little reading past the answer when they are not.
	let batch = 1;
	for (let next = sessions.peek(); next !== null; next = sessions.peek()) {
		// Enough units to fill the limit and know that more exist, and no unvisited session can hold
		// one that comes before the limit-th: stop.
		if (units > limit) {
			const kth = top[limit - 1]!;
			// Oldest first, a session whose oldest time is not known (NULL) bounds nothing: it is read.
			const bound = newest ? (next.last_ts_ms ?? -Infinity) : (next.first_ts_ms ?? -Infinity);
			if (newest ? bound < kth : bound > kth) break;
		}
		if (visited > 0 && examined >= FILTER_SCAN_BUDGET) {
			mode = "recent";
			break;
		}
		const group = sessions.take(batch);
		visited += group.length;
		batch = Math.min(batch * 2, 64);
		examined += group.reduce((n, s) => n + s.fragment_count, 0);
		const fresh = new Map<number, Map<number, RankedRow>>();
		for (const row of browse!.fragmentsOf(group.map((s) => s.session_key))) {
			rows.push(row);
			let events = fresh.get(row.session_key);
			if (!events) fresh.set(row.session_key, (events = new Map()));
			const e = events.get(row.event_key);
			if (!e || row.score < e.score || (row.score === e.score && row.frag_key > e.frag_key)) events.set(row.event_key, row);
		}
		for (const [sessionKey, events] of fresh) {
			const added = [...events.values()].sort(order);
			for (const e of added) bestOfEvent.set(e.event_key, e);
			bestOfSession.set(sessionKey, added[0]!);
			const newUnits = grouped ? [added[0]!] : added;
			units += newUnits.length;
			top = top
				.concat(newUnits.slice(0, limit).map((u) => key(u.ts_ms)))
				.sort((a, b) => (newest ? b - a : a - b))
				.slice(0, limit);
		}
	}
	const complete = sessions.peek() === null;
	const events = [...bestOfEvent.values()].sort(order);
	const candidates = grouped ? [...bestOfSession.values()].sort(order) : events;
	const perSession = new Map<number, number>();
	for (const e of events) perSession.set(e.session_key, (perSession.get(e.session_key) ?? 0) + 1);
	const perEvent = new Map<number, number>();
	for (const r of rows) perEvent.set(r.event_key, (perEvent.get(r.event_key) ?? 0) + 1);

	// The gate checks every hydrated row against the rule once more and names the current session as of its cutoff.
	const selected = browse ? selectEvents(browse, candidates, limit, false, grouped) : [];
	// No query words: relevance is the kind weight alone, shown as its share of the best.
	const best = events.reduce((max, e) => Math.max(max, -e.score), 0);
	const forms = new WordForms();
	const words = new TextWords();
	const turns = browse ? turnsOf(browse, selected, { terms: [], forms, words, files }) : [];
	const hits = selected.map((row, i) => {
		const hit = toHit(row, perEvent.get(row.event_key) ?? 1, fragmentText(row, files), [], forms, words, i + 1, best);
		hit.turn = turns[i] ?? null;
		if (grouped) hit.otherMatchingEvents = (perSession.get(row.session_key) ?? 1) - 1;
		return hit;
	});
	return {
		hits,
		coverage: {
			mode,
			estimatedMatches: events.length,
			matchesExact: complete,
			estimatedSessions: perSession.size,
			truncated: candidates.length > hits.length,
			rankedShare: mode === "full" ? 1 : null,
			filterOnly: true,
			ignoredTerms: [],
			// No terms: an empty answer can only be the filters'.
			...(hits.length > 0 ? notEmpty() : { emptyBecause: "filters" as const, unmatchedTerms: [] }),
		},
		elapsedMs: performance.now() - started,
	};
}
