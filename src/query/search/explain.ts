/**
 * Explaining an empty answer, from cheap capped counts inside the caller's scope (booleans only,
 * never a count, never anything outside the scope).
 */
import type { RowidRange, ScopedSearch } from "../../gate/gate.ts";
import type { ParsedQuery } from "../fts.ts";
import type { SearchCoverage, SearchResult } from "./types.ts";

type Explanation = Pick<SearchCoverage, "emptyBecause" | "unmatchedTerms">;

/** An answer with hits explains nothing. */
export const notEmpty = (): Explanation => ({ emptyBecause: null, unmatchedTerms: [] });

/** The answer when the caller's scope admits no session at all. */
export function nothingInScope(parsed: ParsedQuery, started: number): SearchResult {
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
 * Why a search found nothing. With a targeted current session, its events are left out of the
 * explanation: whether a term occurs after the invocation cutoff must not show.
 */
export function explainEmpty(scoped: ScopedSearch, parsed: ParsedQuery, counted: number, window: RowidRange | null): Explanation {
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
