/**
 * The search use case, as a pipeline: plan → candidates → score → rerank → order → hits →
 * explain. Every read goes through the gate, which applies the caller's scope and the current
 * session's cutoff in every statement.
 *
 * - plan.ts: the request as a value (limit, filters, parsed query, cost bounds);
 * - candidates*.ts: which fragments are looked at (retrieval; never relevance), within bounds.ts;
 * - score.ts: each candidate's relevance from its own term counts (answer-score.ts);
 * - rerank.ts: the top candidates' signals (evidence, failed calls, proximity: relevance.ts);
 * - order.ts: one candidate per event (or session), in the answer's order, cut at the limit;
 * - hits.ts: the answer's hits, with snippets; explain.ts: why an empty answer is empty;
 * - filter-only.ts: a search by filters alone (no terms), newest or oldest first.
 */
import type { Gate, ScopedSearch } from "../../gate/gate.ts";
import { WordForms } from "../../project/stem.ts";
import { SourceFiles } from "../../source/read.ts";
import type { ParsedQuery } from "../fts.ts";
import { TextWords } from "../relevance.ts";

import { answerTurns, type TurnMatches } from "./answers.ts";
import { type Candidates, findCandidates } from "./candidates.ts";
import { selectWithoutCopies } from "./copies.ts";
import { explainEmpty, notEmpty, nothingInScope } from "./explain.ts";
import { filterOnlySearch } from "./filter-only.ts";
import { buildHits, type TextTools } from "./hits.ts";
import { fragmentsPerEvent, type Ordered, orderEvents, selectEvents } from "./order.ts";
import { planSearch, type SearchPlan } from "./plan.ts";
import { rerank } from "./rerank.ts";
import { turnWindowMatches } from "./turn-window.ts";
import { scoreCandidates } from "./score.ts";
import type { NamedSearchResult, SearchCoverage, SearchRequest, SearchResult } from "./types.ts";
import { scopeView } from "../scope-view.ts";

export {
	DEFAULT_LIMIT,
	type Hit,
	MAX_LIMIT,
	type NamedSearchResult,
	type SearchCoverage,
	type SearchFilters,
	type SearchRequest,
	type SearchResult,
	SORT_ORDERS,
	type SortOrder,
} from "./types.ts";
export { COMMON_TERM_FRAGMENTS, FULL_RANK_LIMIT, RECENT_MATCHES, SEARCH_WINDOW_FRAGMENTS, type SearchBounds } from "./bounds.ts";

/** Search within the gate's scope; the answer names that scope. */
export function search(gate: Gate, request: SearchRequest): NamedSearchResult {
	const started = performance.now();
	const plan = planSearch(gate, request);
	const tools: TextTools = { forms: new WordForms(), words: new TextWords(), files: new SourceFiles() };
	try {
		const { query } = plan;
		const result = query === null ? filterOnlySearch(gate, plan, tools, started) : searchTerms(gate, { ...plan, query }, tools, started);
		return named(gate, plan, result);
	} finally {
		tools.files.close();
	}
}

/**
 * The answer with its scope. An empty answer from a root that holds no session at all (the
 * calling session aside, unless the request names it) says that, whatever else it found: one
 * session row read at most, nothing outside the roots counted.
 */
function named(gate: Gate, plan: SearchPlan, result: SearchResult): NamedSearchResult {
	const scope = scopeView(gate.scope);
	if (result.hits.length > 0 || gate.holdsSessions(plan.filters)) return { ...result, scope };
	return { ...result, coverage: { ...result.coverage, emptyBecause: "no-sessions", unmatchedTerms: [] }, scope };
}

function searchTerms(gate: Gate, plan: SearchPlan & { query: ParsedQuery }, tools: TextTools, started: number): SearchResult {
	const scoped = gate.search(plan.query.match, plan.filters, { includeDerived: plan.includeDerived });
	if (scoped === null) return nothingInScope(plan.query, started);
	const candidates = findCandidates(scoped, plan);
	scoreCandidates(scoped, plan.query, candidates);
	const texts = plan.sort === "relevance" ? rerank(scoped, candidates.rows, plan.query.terms, tools) : new Map<number, string | null>();
	// By relevance, each matched turn's answer ranks with its turn's evidence (grouped, a session is its first event).
	// Only without a filter on what a hit is (kind, role, tool, type, error, branch, file, time): an answer must pass them too.
	const answering = plan.sort === "relevance" && !plan.grouped && !filtersHits(plan.filters);
	const turnMatches: TurnMatches = answering ? answerTurns(scoped, candidates.rows, plan.query.terms, texts) : new Map();
	// Fewer events than the limit hold every term: the turns whose conversation holds them all match too.
	if (answering) turnWindowMatches(scoped, plan.query, candidates.rows, plan.limit, turnMatches);
	const ordered = orderEvents(candidates.rows, plan);
	// Grouped, each hit stands for its session: nothing folds.
	const selected = plan.grouped
		? { rows: selectEvents(scoped, ordered.units, plan.limit, plan.sort === "relevance", true), duplicates: new Map(), folded: 0 }
		: selectWithoutCopies(scoped, ordered.units, plan.limit, plan.sort === "relevance", texts, tools.files);
	const rows = selected.rows;
	const coverage = termsCoverage(scoped, plan, candidates, ordered, rows.length + selected.folded);
	// When every match (of the scope, or of the window) was read, the candidates say how many of
	// each event matched; otherwise the gate counts them.
	const matched = candidates.wholeEvents ? fragmentsPerEvent(candidates.rows) : scoped.matchedPerEvent(rows);
	const best = ordered.events.reduce((max, e) => Math.max(max, e.relevance), 0);
	const hits = buildHits(rows, {
		matched,
		texts,
		terms: plan.query.terms,
		tools,
		best,
		eventsPerSession: plan.grouped ? ordered.eventsPerSession : null,
		turns: scoped.turns(),
		turnMatches,
		duplicates: selected.duplicates,
	});
	return { hits, coverage, elapsedMs: performance.now() - started };
}

/** What the answer stands for, and why it is empty when it is. */
function termsCoverage(scoped: ScopedSearch, plan: SearchPlan & { query: ParsedQuery }, found: Candidates, ordered: Ordered, hits: number): SearchCoverage {
	return {
		mode: found.mode,
		estimatedMatches: ordered.events.length,
		matchesExact: found.mode === "full",
		estimatedSessions: ordered.eventsPerSession.size,
		truncated: ordered.units.length > hits,
		rankedShare: found.rankedShare,
		filterOnly: false,
		ignoredTerms: plan.query.ignored,
		...(hits > 0 ? notEmpty() : explainEmpty(scoped, plan.query, found.counted, found.window)),
	};
}

/** Whether the filters ask something of each hit beyond its session (its kind, role, tool, type, error, branch, files or time). */
function filtersHits(f: SearchPlan["filters"]): boolean {
	return (
		!!f.kinds?.length ||
		!!f.roles?.length ||
		!!f.tools?.length ||
		!!f.eventTypes?.length ||
		f.isError !== undefined ||
		!!f.branchStates?.length ||
		!!f.selectionStates?.length ||
		!!f.files?.length ||
		f.sinceMs !== undefined ||
		f.untilMs !== undefined
	);
}
