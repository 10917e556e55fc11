/**
 * THE GATE: the one place where authorization is enforced. Every read of indexed data on behalf
 * of a caller goes through a Gate; query/ cannot import store/ (test/architecture.test.ts), so
 * there is no other way in. The rule itself is pure and lives in auth/scope.ts; this module
 * applies it to the index.
 *
 *   const gate = new Gate(db, scope);          // scope: resolveCaller() (gate/caller.ts)
 *
 *   // Exact reads and traces: handles to visible sessions, whose methods return visible events only.
 *   const { session, event } = gate.event(sessionId, entryId);   // E_NOT_FOUND when not visible
 *   session.event(id) / children(id) / roots() / eventsBySeq(a, b) / pointingAt(id)
 *   session.callerOf(callId) / resultsFor(callId) / fragments(event) / files(event)
 *   gate.session(sessionId), gate.sessionAtPath(realPath), gate.childSessions(session)
 *
 *   // Search: the scope is inside every statement that reads fragments.
 *   const scoped = gate.search(userMatch, filters, { includeDerived });   // null: nothing admitted
 *   scoped.count(cap, range?) / scoped.fewUnscopedMatches(n) / scoped.rank(limit, { order, withTime, scopeInSql, range })
 *   scoped.tokenCount(expr, cap) / scoped.window(fragments, order)   (bounding the cost of common words)
 *   scoped.activeSince(ms, cap) / scoped.sessionsInRange(range) / scoped.activeBefore(ms, since, max, walk) / scoped.fileSpans(files, cap) / scoped.admitsSessions(n)   (admitted sessions' spans)
 *   scoped.withSpanReads(read)   (a larger page cache while many spans are read)
 *   scoped.hydrate(ranked) / scoped.matchedPerEvent(rows) / scoped.failedCallEvents(keys)
 *   scoped.occurs(expr) (explaining an empty answer; never looks past the cutoff)
 *
 *   // Filter-only search (no terms): the admitted sessions, their filtered fragments, hydration.
 *   const browse = gate.browse(filters, { includeDerived });   // null: nothing admitted
 *   browse.sessionCursor() / browse.fragmentsOf(sessionKeys) / browse.hydrate(ranked)
 *
 *   // Listing and naming sessions.
 *   gate.listableSessions() / gate.summaries(listed) / gate.firstUserEvent(session)   // the calling session is not listed
 *   gate.holdsSessions()                                     // whether the roots hold any session (an empty answer says so)
 *   gate.resolveSessionId(idOrPrefix)                        // a unique visible prefix → the id
 *   session.conversationBySeq(event, "before" | "after", n) / session.isConversation(event)
 *
 *   // Freshness problems: whether an indexed file's session lies in the caller's roots.
 *   gate.fileInRoots(path)
 *
 * Visibility: a session is visible when the rule admits it (its canonical cwd under a root); the
 * current session's events only before the invocation cutoff (reads target it explicitly; a
 * search sees it only when `filters.sessionIds` names it, and otherwise excludes it). Its name
 * and leaf are shown as they were at the cutoff. Anything not visible fails exactly like a
 * missing row. To add a new kind of read: add a method here that returns only visible rows.
 */
import type { Database } from "bun:sqlite";
import { admits, beforeCutoff, clausesAdmit, type Cutoff, ruleClauses, type Scope, type SessionRule, sessionInScope } from "../auth/scope.ts";
import { cwdRanges, sessionRuleSql } from "../auth/scope-sql.ts";
import { scopedMatch } from "../auth/scope-tokens.ts";
import { PiEventsError } from "../errors.ts";
import { isFrequentWord } from "../project/frequent-words.ts";
import type { SemanticKind } from "../model.ts";
import { canonicalPath } from "../source/paths.ts";
import { invocationCutoff, sessionIdOfFile } from "../store/caller.ts";
import { type EventRow, EventStore, type FragmentRow, type SessionRow } from "../store/events.ts";
import {
	type CandidateRow,
	countMatches,
	eventsWithFailedCalls,
	fragmentKinds,
	hydrate,
	indexVersion,
	matchCarriesFilters,
	matchedPerEvent,
	matchingRowids,
	OCCURRENCE_WALK_LIMIT,
	type RankedRow,
	type RankOptions,
	rankFragments,
	type RowidRange,
	sessionWindow,
	activeSessionSpans,
	activeSpansBefore,
	sessionSpansInRange,
	fileEventSpans,
	type SqlFilters,
	termOccurrences,
} from "../store/search.ts";
import {
	type BrowseOptions,
	type BrowseSessionRow,
	admitsAtLeast,
	browseSessionsWhere,
	type SessionCursor,
	filteredFragmentsOfSessions,
	type ListedSessionRow,
	listedSessionsWhere,
	type SessionSummaryRow,
	sessionIdsWithPrefix,
	sessionSummaries,
} from "../store/listing.ts";
import { cwdOfIndexedFile } from "../store/status.ts";
import { pageCacheAtLeast, SPAN_READS_PAGE_CACHE_KIB } from "../store/db.ts";
import { TurnReads } from "./turns.ts";

export type { BrowseSessionRow, CandidateRow, EventRow, FragmentRow, ListedSessionRow, RankedRow, RowidRange, SessionRow, SessionSummaryRow };
export type { AnswerRow, EventTurnRow, TurnEventRow, TurnReads, TurnRows } from "./turns.ts";

/**
 * Capped token counts by index, kept while the index is unchanged: the same words (`the`,
 * `error`) recur across searches, and a long-lived server answers many. A count is keyed by its
 * whole expression (the scope's tokens included), so no scope ever reads another's counts.
 */
const tokenCounts = new WeakMap<Database, { version: string; counts: Map<string, number> }>();
const MAX_CACHED_COUNTS = 10_000;

/** The cached counts of this index, emptied when it changed since they were made. */
function tokenCountsOf(db: Database): Map<string, number> {
	const version = indexVersion(db);
	let cached = tokenCounts.get(db);
	if (cached?.version !== version) tokenCounts.set(db, (cached = { version, counts: new Map() }));
	return cached.counts;
}

/** One index token as an FTS5 string (any column). */
const quoteToken = (token: string) => `"${token.replaceAll('"', '""')}"`;

/** Shortest session id prefix accepted in place of a full id. */
const MIN_ID_PREFIX = 8;
/** Most candidates an ambiguous prefix lists. */
const MAX_CANDIDATES = 10;

/** A search's own filters (what a request may narrow); the gate adds the caller's scope. */
export type SearchFilters = Omit<SqlFilters, "roots" | "excludeSessionIds" | "cutoff" | "excludeDerived">;

export class Gate {
	private readonly store: EventStore;
	private readonly currentId: string | null;
	private cutoffSeq: number | undefined;

	constructor(
		private readonly db: Database,
		readonly scope: Scope,
	) {
		this.store = new EventStore(db);
		const current = scope.current;
		// A file given under another spelling (a symlinked directory) must still be recognised: fail closed.
		this.currentId = current?.sessionId ?? (current?.sessionFile ? sessionIdOfFile(db, canonicalPath(current.sessionFile)) : null);
	}

	/** The current session's cutoff (read once, after any sync that preceded this request). */
	private cutoff(): Cutoff | null {
		if (this.currentId === null) return null;
		if (this.cutoffSeq === undefined) {
			const current = this.scope.current;
			const ownFile = current?.sessionFile ? canonicalPath(current.sessionFile) : null;
			this.cutoffSeq = invocationCutoff(this.db, this.currentId, ownFile, current?.toolCallId ?? null);
		}
		return { sessionId: this.currentId, seq: this.cutoffSeq };
	}

	/** Reads: the caller's roots only (the current session is visible, before its cutoff). */
	private readRule(): SessionRule {
		return { roots: this.scope.roots, excludeSessionIds: [] };
	}

	private open(row: SessionRow): VisibleSession | null {
		if (!admits(this.readRule(), { cwdReal: row.cwd_real, sessionId: row.session_id })) return null;
		const cutoff = row.session_id === this.currentId ? this.cutoff() : null;
		if (cutoff === null) return new VisibleSession(this.store, row, null);
		// Name and leaf as they were before the cutoff: nothing appended later leaks, not even a rename.
		const facts = this.store.factsBefore(row.session_key, cutoff.seq);
		return new VisibleSession(this.store, { ...row, name: facts.name, leaf_entry: facts.leaf }, cutoff);
	}

	/**
	 * Sessions with this id that the read rule admits, the rule applied in SQL: an id outside the
	 * scope does exactly the work of a missing one (no row is read, nothing else is asked).
	 */
	private readableSessions(sessionId: string): SessionRow[] {
		this.readRuleSql ??= sessionRuleSql(this.readRule());
		return this.store.sessionsByIdWhere(sessionId, this.readRuleSql);
	}

	private readRuleSql: ReturnType<typeof sessionRuleSql> | undefined;

	/** The visible file of a session id (the one with the most entries when an id is duplicated). */
	session(sessionId: string): VisibleSession {
		for (const row of this.readableSessions(sessionId)) {
			const session = this.open(row);
			if (session) return session;
		}
		throw notFound(sessionId);
	}

	/** A visible event by its identity; E_NOT_FOUND (the same as a missing one) otherwise. */
	event(sessionId: string, entryId: string): { session: VisibleSession; event: EventRow } {
		for (const row of this.readableSessions(sessionId)) {
			const session = this.open(row);
			const event = session?.event(entryId);
			if (session && event) return { session, event };
		}
		throw notFound(sessionId, entryId);
	}

	/** The visible session stored in the file at this canonical path (a header's parentSession). */
	sessionAtPath(realPath: string): VisibleSession | null {
		const row = this.store.sessionByRealPath(realPath);
		return row ? this.open(row) : null;
	}

	/** Visible sessions whose header names this session's file as their parent (fork children). */
	childSessions(session: VisibleSession): VisibleSession[] {
		return this.store
			.childrenOfFile(session.row.real_path)
			.filter((row) => row.session_key !== session.row.session_key)
			.map((row) => this.open(row))
			.filter((s): s is VisibleSession => s !== null);
	}

	/** Whether the session indexed from this file lies in the caller's roots (for naming problems). */
	fileInRoots(path: string): boolean {
		return sessionInScope(this.scope, cwdOfIndexedFile(this.db, path));
	}

	/**
	 * A search of `userMatch` (the parsed query's MATCH expression) within the caller's scope and
	 * the request's filters. Null when the scope admits nothing.
	 */
	search(userMatch: string, filters: SearchFilters, options: { includeDerived?: boolean } = {}): ScopedSearch | null {
		const { rule, cutoff, sql } = this.searchPlan(filters, options);
		const match = scopedMatch(userMatch, rule, { excludeDerived: sql.excludeDerived });
		return match === null ? null : new ScopedSearch(this.db, this.store, { userMatch, match, rule, cutoff, sql });
	}

	/**
	 * A search by filters alone (no terms) within the caller's scope: the same rule, cutoff and
	 * filters as `search`, read session by session. Null when the scope admits nothing.
	 */
	browse(filters: SearchFilters, options: { includeDerived?: boolean } = {}): ScopedBrowse | null {
		const plan = this.searchPlan(filters, options);
		return sessionRuleSql(plan.rule).sql === "0" ? null : new ScopedBrowse(this.db, this.store, plan);
	}

	/** What a search may see: the caller's roots narrowed by the request, the current session excluded unless named. */
	private searchPlan(filters: SearchFilters, options: { includeDerived?: boolean }): { rule: SessionRule; cutoff: Cutoff | null; sql: SqlFilters } {
		let cutoff: Cutoff | null = null;
		const excludeSessionIds: string[] = [];
		if (this.currentId !== null) {
			if (filters.sessionIds?.includes(this.currentId)) cutoff = this.cutoff();
			else excludeSessionIds.push(this.currentId);
		}
		const sql: SqlFilters = { ...filters, roots: this.scope.roots, excludeSessionIds, cutoff, excludeDerived: options.includeDerived !== true };
		const rule: SessionRule = { roots: sql.roots, cwdPrefix: sql.cwdPrefix, sessionIds: sql.sessionIds, excludeSessionIds };
		return { rule, cutoff, sql };
	}

	/**
	 * A session id, or a unique prefix of one (at least MIN_ID_PREFIX characters) among the sessions
	 * the caller may read, as the full id. An ambiguous prefix is an error listing only those
	 * candidates; a prefix that fits none comes back unchanged, so it then fails (or finds nothing)
	 * exactly like an unknown id, whether or not it fits a session outside the scope.
	 */
	resolveSessionId(idOrPrefix: string): string {
		if (this.readableSessions(idOrPrefix).some((row) => this.open(row) !== null)) return idOrPrefix;
		if (idOrPrefix.length < MIN_ID_PREFIX) return idOrPrefix;
		const rule = this.readRule();
		const candidates = sessionIdsWithPrefix(this.db, idOrPrefix, sessionRuleSql(rule), MAX_CANDIDATES + 1).filter((id) =>
			this.readableSessions(id).some((row) => this.open(row) !== null),
		);
		if (candidates.length === 1) return candidates[0]!;
		if (candidates.length > 1) {
			const listed = candidates.slice(0, MAX_CANDIDATES).join(", ");
			const more = candidates.length > MAX_CANDIDATES ? ", …" : "";
			throw new PiEventsError("E_USAGE", `session id prefix ${JSON.stringify(idOrPrefix)} is ambiguous in your scope: ${listed}${more}`);
		}
		return idOrPrefix;
	}

	/** The rule of the session list: the caller's roots, without the calling session (as in search). */
	private listRule(): SessionRule {
		return { roots: this.scope.roots, excludeSessionIds: this.currentId ? [this.currentId] : [] };
	}

	/** The sessions the caller may list, most recently active first: what ordering, filtering by time and counting them needs. */
	listableSessions(): ListedSessionRow[] {
		const rule = this.listRule();
		const clauses = ruleClauses(rule);
		return listedSessionsWhere(this.db, sessionRuleSql(rule), cwdRanges(rule)).filter((s) =>
			clausesAdmit(clauses, { cwdReal: s.cwd_real, sessionId: s.session_id }),
		);
	}

	/** The full rows (name, file, counts) of listed sessions, in the order given; only listable ones. */
	summaries(listed: readonly ListedSessionRow[]): SessionSummaryRow[] {
		const clauses = ruleClauses(this.listRule());
		return sessionSummaries(
			this.db,
			listed.map((s) => s.session_key),
		).filter((s) => clausesAdmit(clauses, { cwdReal: s.cwd_real, sessionId: s.session_id }));
	}

	/**
	 * Whether the caller's roots hold any session, whatever a request narrows (an empty answer says
	 * when they hold none): the calling session only when `filters.sessionIds` names it. One row read.
	 */
	holdsSessions(filters: Pick<SearchFilters, "sessionIds"> = {}): boolean {
		const rule = this.currentId !== null && filters.sessionIds?.includes(this.currentId) ? this.readRule() : this.listRule();
		return admitsAtLeast(this.db, sessionRuleSql(rule), cwdRanges(rule), 1);
	}

	/** A listable session's first user message event (null for any other session). */
	firstUserEvent(session: SessionSummaryRow): EventRow | null {
		if (!admits(this.listRule(), { cwdReal: session.cwd_real, sessionId: session.session_id })) return null;
		return this.store.firstUserEvent(session.session_key);
	}
}

/** A session the caller may see. Its methods return only the events the caller may see. */
export class VisibleSession {
	constructor(
		private readonly store: EventStore,
		/** The session row; for the current session, its name and leaf as of the cutoff. */
		readonly row: SessionRow,
		private readonly cutoff: Cutoff | null,
	) {}

	private visible = (event: EventRow | null | undefined): event is EventRow => !!event && beforeCutoff(this.cutoff, this.row.session_id, event.seq);

	/** Whether this is the calling session, read only up to the invocation cutoff. */
	get cutoffApplies(): boolean {
		return this.cutoff !== null;
	}

	event(entryId: string): EventRow | null {
		const event = this.store.event(this.row.session_key, entryId);
		return this.visible(event) ? event : null;
	}

	children(entryId: string): EventRow[] {
		return this.store.children(this.row.session_key, entryId).filter(this.visible);
	}

	/** Entries with no resolvable parent (several roots and orphans are possible). */
	roots(): EventRow[] {
		return this.store.roots(this.row.session_key).filter(this.visible);
	}

	eventsBySeq(fromSeq: number, toSeq: number): EventRow[] {
		return this.store.eventsBySeq(this.row.session_key, fromSeq, toSeq).filter(this.visible);
	}

	/** Events that point at this entry (labels, context edits, compaction boundaries, branch summaries). */
	pointingAt(entryId: string): EventRow[] {
		return this.store.pointingAt(this.row.session_key, entryId).filter(this.visible);
	}

	/** The assistant event that made a tool call with this id. */
	callerOf(toolCallId: string): EventRow | null {
		const event = this.store.callerOf(this.row.session_key, toolCallId);
		return this.visible(event) ? event : null;
	}

	resultsFor(toolCallId: string): EventRow[] {
		return this.store.resultsFor(this.row.session_key, toolCallId).filter(this.visible);
	}

	/** Fragments and file evidence of an event obtained from this session (so already visible). */
	fragments(event: EventRow): FragmentRow[] {
		return this.visible(event) && event.session_key === this.row.session_key ? this.store.fragments(event.event_key) : [];
	}

	files(event: EventRow): { path: string; op: string; absolutePath?: string }[] {
		return this.visible(event) && event.session_key === this.row.session_key ? this.store.files(event.event_key) : [];
	}

	/** Conversational events (user or assistant text, session names, summaries) before or after an event in append order, nearest first. */
	conversationBySeq(event: EventRow, direction: "before" | "after", count: number): EventRow[] {
		return this.store.conversationBySeq(this.row.session_key, event.seq, direction, count).filter(this.visible);
	}

	/** Whether an event of this session is conversational. */
	isConversation(event: EventRow): boolean {
		return this.visible(event) && event.session_key === this.row.session_key && this.store.isConversation(event.event_key);
	}
}

/** Hydrated rows the rule admits, before the cutoff; the current session named as of the cutoff. */
function hydrateAdmitted(db: Database, store: EventStore, rule: SessionRule, cutoff: Cutoff | null, ranked: RankedRow[]): CandidateRow[] {
	// The rule's clauses are derived once, not per row.
	const clauses = ruleClauses(rule);
	const rows = hydrate(db, ranked).filter(
		(row) => clausesAdmit(clauses, { cwdReal: row.cwd_real, sessionId: row.session_id }) && beforeCutoff(cutoff, row.session_id, row.seq),
	);
	if (cutoff) {
		for (const row of rows) {
			if (row.session_id === cutoff.sessionId) row.session_name = store.factsBefore(row.session_key, cutoff.seq).name;
		}
	}
	return rows;
}

/**
 * A filter-only search inside the gate: the admitted sessions (the rule as SQL, each row checked
 * again), and the filtered fragments of those sessions only (the cutoff among the filters).
 */
export class ScopedBrowse {
	/** Sessions the cursor yielded: the only ones whose fragments are read. */
	private readonly admitted = new Set<number>();

	constructor(
		private readonly db: Database,
		private readonly store: EventStore,
		private readonly plan: { rule: SessionRule; cutoff: Cutoff | null; sql: SqlFilters },
	) {}

	/**
	 * The admitted sessions, most recently active first (or oldest activity first), only those
	 * with an event in the time range when given, one at a time (the rule in SQL, each row checked
	 * again). Close the cursor when done.
	 */
	sessionCursor(options: BrowseOptions = {}): SessionCursor {
		const { rule } = this.plan;
		const cursor = browseSessionsWhere(this.db, sessionRuleSql(rule), cwdRanges(rule), undefined, options);
		// The rule's clauses once for every row (an unscoped cursor yields every session: at 5 GB,
		// deriving them per row cost 13 of a filter-only search's 60 ms).
		const clauses = ruleClauses(rule);
		return {
			next: () => {
				for (let s = cursor.next(); s !== null; s = cursor.next()) {
					if (!clausesAdmit(clauses, { cwdReal: s.cwd_real, sessionId: s.session_id })) continue;
					this.admitted.add(s.session_key);
					return s;
				}
				return null;
			},
			close: () => cursor.close(),
		};
	}

	/** Every fragment of these sessions that the filters allow; only sessions the cursor yielded (admitted) are read. */
	fragmentsOf(sessionKeys: readonly number[]): Required<RankedRow>[] {
		return filteredFragmentsOfSessions(
			this.db,
			sessionKeys.filter((k) => this.admitted.has(k)),
			this.plan.sql,
		);
	}

	hydrate(ranked: RankedRow[]): CandidateRow[] {
		return hydrateAdmitted(this.db, this.store, this.plan.rule, this.plan.cutoff, ranked);
	}

	/** The turns of hydrated (so admitted) rows, in their own sessions, before the cutoff (gate/turns.ts). */
	turns(): TurnReads {
		return new TurnReads(this.db, this.plan.rule, this.plan.cutoff);
	}
}

/**
 * One search inside the gate. The session rule is in every statement that reads fragments: as
 * scope tokens in the MATCH (counting, newest-first ranking, and ranking in general), or, when the
 * user's terms alone match few fragments, as the same rule rendered in SQL beside the MATCH
 * (auth/scope-sql.ts): intersecting with a wide scope's tokens inside FTS5 can cost more than the
 * query. Either way SQLite yields only admitted
 * rows, and every hydrated row is checked once more against the pure rule.
 */
export class ScopedSearch {
	constructor(
		private readonly db: Database,
		private readonly store: EventStore,
		private readonly plan: { userMatch: string; match: string; rule: SessionRule; cutoff: Cutoff | null; sql: SqlFilters },
	) {}

	/** Capped counts made in this search, by cap and expression: each token is counted once. */
	private counts: Map<string, number> | null = null;

	private cappedCount(match: string, cap: number): number {
		this.counts ??= tokenCountsOf(this.db);
		const key = `${cap}\u0000${match}`;
		let n = this.counts.get(key);
		if (n === undefined) {
			if (this.counts.size >= MAX_CACHED_COUNTS) this.counts.clear();
			this.counts.set(key, (n = countMatches(this.db, match, cap)));
		}
		return n;
	}

	/** In-scope matching fragments, counting at most `cap` (only in `range`, when given). */
	count(cap: number, range?: RowidRange): number {
		// Over the whole scope, a count is kept with the token counts while the index is unchanged.
		return range === undefined ? this.cappedCount(this.plan.match, cap) : countMatches(this.db, this.plan.match, cap, range);
	}

	/** The rule without the targeted current session: what it holds after its cutoff must not show. */
	private ruleWithoutCurrent(): SessionRule {
		const { rule, cutoff } = this.plan;
		return cutoff ? { ...rule, excludeSessionIds: [...rule.excludeSessionIds, cutoff.sessionId] } : rule;
	}

	/**
	 * How many in-scope fragments hold `token` (one index token, in any column), counting at most
	 * `cap`: what a search's cost is judged by (pi-events' own echoes included: a bound). The
	 * targeted current session is left out. Counted once per search.
	 */
	tokenCount(token: string, cap: number): number {
		const match = scopedMatch(quoteToken(token), this.ruleWithoutCurrent());
		return match === null ? 0 : this.cappedCount(match, cap);
	}

	/**
	 * The rowid range of the newest (or oldest) in-scope sessions holding at least `fragments`
	 * fragments; null when the whole scope holds fewer. Read from admitted sessions only (the
	 * targeted current session counted as empty), so it depends on nothing outside the scope.
	 */
	window(fragments: number, order: "newest" | "oldest"): RowidRange | null {
		return sessionWindow(this.db, sessionRuleSql(this.ruleWithoutCurrent()), fragments, order);
	}

	/**
	 * The fragment key spans of the admitted sessions active at or after `sinceMs` (the targeted
	 * current session included: its part before the cutoff is in scope, and the plan keeps the
	 * rest out); null when there are more than `cap`.
	 */
	activeSince(sinceMs: number, cap: number): RowidRange[] | null {
		return activeSessionSpans(this.db, sessionRuleSql(this.plan.rule), sinceMs, cap);
	}

	/**
	 * The fragment key spans of at most `count` admitted sessions that can hold an event in the time
	 * range, most recently active first or oldest first (store/search.ts sessionSpansInRange; the
	 * targeted current session included, as in activeSince).
	 */
	sessionsInRange(range: { sinceMs?: number; untilMs?: number; order: "newest" | "oldest"; count: number }): RowidRange[] {
		return sessionSpansInRange(this.db, sessionRuleSql(this.plan.rule), range);
	}

	/**
	 * The fragment key spans of the admitted sessions holding an event before `untilMs` (and at or
	 * after `sinceMs`), newest activity there first, one at a time (the targeted current session
	 * included, as in activeSince), until the time range runs out or more than `maxEvents` of their
	 * events were read (then `walk.stopped`).
	 */
	activeBefore(untilMs: number, sinceMs: number | undefined, maxEvents: number, walk: { stopped: boolean }): Generator<RowidRange> {
		return activeSpansBefore(this.db, sessionRuleSql(this.plan.rule), untilMs, sinceMs, maxEvents, walk);
	}

	/**
	 * `read` with a page cache large enough for reading many sessions' matches one session at a
	 * time (each read seeks the postings in every full-text segment again; store/db.ts).
	 */
	withSpanReads<T>(read: () => T): T {
		const restore = pageCacheAtLeast(this.db, SPAN_READS_PAGE_CACHE_KIB);
		try {
			return read();
		} finally {
			restore();
		}
	}

	/** Whether the scope admits at least `count` sessions (the targeted current session included). */
	admitsSessions(count: number): boolean {
		return admitsAtLeast(this.db, sessionRuleSql(this.plan.rule), cwdRanges(this.plan.rule), count);
	}

	/**
	 * The spans of the admitted sessions' fragments of events touching these files (the targeted
	 * current session included, as in activeSince), most recently active first (or oldest first);
	 * null when more than `cap` file rows touch them.
	 */
	fileSpans(files: readonly string[], cap: number, order: "newest" | "oldest" = "newest"): RowidRange[] | null {
		return fileEventSpans(this.db, sessionRuleSql(this.plan.rule), files, cap, order);
	}

	/** Whether the user's terms alone match at most `limit` fragments (then the scope may go in SQL). */
	fewUnscopedMatches(limit: number): boolean {
		if (this.plan.match === this.plan.userMatch) return false;
		// No session clause (an unscoped caller): the scoped MATCH only leaves out echoes, which SQL
		// does as cheaply; nothing to weigh, no count needed.
		if (ruleClauses(this.plan.rule).length === 0) return true;
		return countMatches(this.db, this.plan.userMatch, limit + 1) <= limit;
	}

	/**
	 * The rowids of the in-scope matches in a range, ascending, read from the full-text index alone;
	 * null when the request has filters the MATCH cannot carry (kinds, times, roles, the cutoff…).
	 */
	matchRowids(range: RowidRange): number[] | null {
		// Asked once per search: a common-word search lists rowids window after window.
		this.carriesFilters ??= matchCarriesFilters(this.plan.sql);
		return this.carriesFilters ? matchingRowids(this.db, this.plan.match, range) : null;
	}

	private carriesFilters: boolean | undefined;

	/**
	 * In-scope fragments (at most `limit`) in index order, filtered; `scopeInSql` moves the scope
	 * from the MATCH into the SQL of the same statement.
	 */
	rank(limit: number, options: RankOptions & { scopeInSql?: boolean } = {}): RankedRow[] {
		const { scopeInSql: wanted, ...rest } = options;
		const scopeInSql = wanted === true;
		const match = scopeInSql ? this.plan.userMatch : rest.range !== undefined ? this.rangeMatch() : this.plan.match;
		return rankFragments(this.db, match, this.plan.sql, limit, { ...rest, sessionLevel: scopeInSql });
	}

	private rangeMatchExpr: string | undefined;

	/**
	 * The MATCH of a read of a rowid range (a session, a window): the scope's tokens as always, but
	 * pi-events' own echoes left to the statement's SQL, which excludes them too (`f.derived = 0`).
	 * In a read of one session, FTS5 seeking the echo token in every segment took about 15% of it.
	 */
	private rangeMatch(): string {
		this.rangeMatchExpr ??= this.plan.sql.excludeDerived ? (scopedMatch(this.plan.userMatch, this.plan.rule) ?? this.plan.match) : this.plan.match;
		return this.rangeMatchExpr;
	}

	/**
	 * Everything a hit shows, for ranked fragments, keeping only rows the rule admits (defence in
	 * depth: SQLite already applied it). The current session's name is the one before the cutoff.
	 */
	hydrate(ranked: RankedRow[]): CandidateRow[] {
		return hydrateAdmitted(this.db, this.store, this.plan.rule, this.plan.cutoff, ranked);
	}

	/** The turns of hydrated or ranked (so admitted) rows, in their own sessions, before the cutoff (gate/turns.ts). */
	turns(): TurnReads {
		return new TurnReads(this.db, this.plan.rule, this.plan.cutoff);
	}

	/** The semantic kinds of these ranked (so in-scope) fragments. */
	kinds(ranked: readonly RankedRow[]): Map<number, SemanticKind> {
		return fragmentKinds(
			this.db,
			ranked.map((r) => r.frag_key),
		);
	}

	/** Whether the targeted current session is searched (then only before its cutoff). */
	get cutoffApplies(): boolean {
		return this.plan.cutoff !== null;
	}

	/** Whether pi-events' own echoes are left out. */
	get excludesDerived(): boolean {
		return this.plan.sql.excludeDerived === true;
	}

	/**
	 * Whether `expr` (an FTS expression of the user's terms) matches anything in scope, for
	 * explaining an empty answer (a boolean, from a capped count). The targeted current session is
	 * left out entirely: whether a term occurs after its cutoff must not show.
	 */
	occurs(expr: string, options: { includeDerived?: boolean; range?: RowidRange } = {}): boolean {
		const excludeDerived = options.includeDerived === true ? false : this.excludesDerived;
		const match = scopedMatch(expr, this.ruleWithoutCurrent(), { excludeDerived });
		return match !== null && countMatches(this.db, match, 1, options.range) > 0;
	}

	/**
	 * How often each query token occurs in each column of these ranked (so in-scope) fragments.
	 * Tokens too frequent to walk (their occurrences are read index-wide) are returned as `common`
	 * instead, counted as present once: a word of the fixed list (project/frequent-words.ts), or
	 * one held by more than OCCURRENCE_WALK_LIMIT fragments of the caller's scope. Both decided
	 * without looking outside the scope, so no answer tells whether a word is frequent elsewhere;
	 * the scoped counts are the ones tokenCount keeps for the rest of the search.
	 */
	termOccurrences(ranked: readonly RankedRow[], tokens: readonly string[]): { occurrences: ReturnType<typeof termOccurrences>; common: string[] } {
		const common = tokens.filter((t) => isFrequentWord(t) || this.tokenCount(t, OCCURRENCE_WALK_LIMIT + 1) > OCCURRENCE_WALK_LIMIT);
		const walked = tokens.filter((t) => !common.includes(t));
		const occurrences = termOccurrences(
			this.db,
			ranked.map((r) => r.frag_key),
			walked,
		);
		return { occurrences, common };
	}

	/** Of these visible events, the ones holding a tool call whose result failed (a visible result). */
	failedCallEvents(eventKeys: readonly number[]): Set<number> {
		return eventsWithFailedCalls(this.db, eventKeys, this.plan.cutoff);
	}

	/** How many fragments of each of these (visible) events match the user's terms. */
	matchedPerEvent(rows: CandidateRow[]): Map<number, number> {
		return matchedPerEvent(
			this.db,
			this.plan.userMatch,
			rows.map((r) => r.event_key),
			this.plan.sql.kinds,
			this.plan.sql.excludeDerived,
		);
	}
}

export function notFound(sessionId: string, entryId?: string): PiEventsError {
	return new PiEventsError(
		"E_NOT_FOUND",
		entryId === undefined
			? `no session ${JSON.stringify(sessionId)} in your scope`
			: `no event ${JSON.stringify(entryId)} in session ${JSON.stringify(sessionId)} in your scope`,
	);
}
