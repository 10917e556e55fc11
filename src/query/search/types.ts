/**
 * What a search is asked and what it answers: the request, the hits, the coverage (how much of
 * the history the answer stands for, and why it is empty when it is).
 */
import type { Duplicates } from "../copies.ts";
import type { SearchFilters } from "../../gate/gate.ts";
import type { BranchState, ContextRole, SelectionState, SemanticKind } from "../../model.ts";
import type { Highlight } from "../snippet.ts";
import type { HitTurn } from "../turns.ts";
import type { SearchBounds } from "./bounds.ts";
import type { ScopeView } from "../scope-view.ts";

export type { SearchFilters };

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;

export const SORT_ORDERS = ["relevance", "newest", "oldest"] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

/** A search within the gate's scope (the gate applies the caller's scope to every statement). */
export interface SearchRequest {
	query: string;
	filters: SearchFilters;
	limit?: number;
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
	/**
	 * "event": the hit's own text holds every query term. "turn": the hit is there for its turn: it
	 * is the turn's answer, and the words were found in other events of the turn (`foundIn`).
	 * "later": the answer of a later session whose first report of the problem holds at least half
	 * the words (`foundIn`: its prompt, for the words it holds), taking up the question `takesUp`.
	 */
	match: "event" | "turn" | "later";
	/** With match "later": the earlier question (a hit of the same answer) that this turn took up again. */
	takesUp?: { sessionId: string; entryId: string };
	/** In-scope events whose output (tool result, shell output) is byte-identical to this hit's, folded into it (at most 20 ids). */
	duplicates?: Duplicates;
	/** With match "turn": for each query term, the events of the hit's turn that hold it; with "later", the later prompt when it holds it. */
	foundIn?: { term: string; entryIds: string[] }[];
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
	 * "together": every term occurs, but never all in one fragment nor in one turn's conversation; "filters": the query matches,
	 * the filters leave nothing; "derived": only pi-events' own echoes match. Null when there are hits.
	 */
	emptyBecause: "terms" | "together" | "filters" | "derived" | "no-sessions" | null;
	/** The terms (as typed) that match nothing in scope; empty when there are hits. */
	unmatchedTerms: string[];
}

export interface SearchResult {
	hits: Hit[];
	coverage: SearchCoverage;
	elapsedMs: number;
}

/** A search's answer and whose sessions it searched: the authorization root and how it was chosen. */
export type NamedSearchResult = SearchResult & { scope: ScopeView };
