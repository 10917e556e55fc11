/**
 * Candidate retrieval: which in-scope fragments a search looks at, never how relevant they are
 * (test/architecture.test.ts forbids the candidates-* files to import scoring). Every match when
 * they are few; otherwise a bounded part of the history, chosen by the cost bounds (bounds.ts):
 * the newest sessions' window for a query of common terms only (candidates-window.ts), the parts
 * of the history that the filters point at (candidates-parts.ts), or the newest matches.
 */
import type { RowidRange, ScopedSearch } from "../../gate/gate.ts";
import { alternativeTokens, type ParsedQuery } from "../fts.ts";
import { RECENT_MATCHES, UNSCOPED_RANK_LIMIT } from "./bounds.ts";
import { matchesInParts } from "./candidates-parts.ts";
import { newestMatches, readWindow, windowMatches } from "./candidates-window.ts";
import { categoricalOnly, type SearchPlan } from "./plan.ts";
import type { Found } from "./found.ts";

/** A search's candidates, and what the coverage and the explanation of an empty answer need of them. */
export interface Candidates extends Found {
	wholeEvents: boolean;
	/** How many in-scope matches were counted (capped past the full-rank limit). */
	counted: number;
	/** The window a query of common terms only was searched in (null: not windowed). */
	window: RowidRange | null;
}

/** The candidates of a search with terms. */
export function findCandidates(scoped: ScopedSearch, plan: SearchPlan & { query: ParsedQuery }): Candidates {
	const { query, bounds } = plan;
	// Only common terms, which may share few fragments: search the newest sessions' window only.
	// In a window, the candidates are read at once (one walk of the window, not a count and then a
	// read); more than RECENT_MATCHES are a common query's, whose first RECENT_MATCHES in index order are
	// ranked by kind weight, as they would be without the window.
	const windowed = onlyCommonTerms(scoped, query, bounds.commonTermFragments, plan) ? readWindow(scoped, query, bounds, plan.sort, plan.limit) : null;
	if (windowed !== null) {
		const found = windowMatches(windowed.rows);
		return { ...found, wholeEvents: windowed.rows.length <= RECENT_MATCHES, counted: windowed.rows.length, window: windowed.range };
	}
	// Counting in-scope matches is cheap (no ranking, no joins) and capped: it only decides how to read them.
	const counted = scoped.count(bounds.fullRankLimit + 1);
	const complete = counted <= bounds.fullRankLimit;
	const found = (complete ? null : matchesInParts(scoped, query, plan)) ?? scopeMatches(scoped, counted, complete, plan);
	return { ...found, wholeEvents: found.wholeEvents ?? found.mode === "full", counted, window: null };
}

/**
 * Whether the query needs several words in one fragment and every term is common in scope (its
 * alternatives' rarest words are held by more than `common` fragments): then counting its matches
 * may walk every fragment holding the words. Capped in-scope counts, one per word, each stopping
 * at `common` + 1.
 */
function onlyCommonTerms(scoped: ScopedSearch, parsed: ParsedQuery, common: number, plan: SearchPlan): boolean {
	// One word (in each alternative) is one posting list: the capped count stops early whatever it
	// holds, unless a filter checked on each match (not in the full-text index) passes few of them.
	const severalWords = parsed.terms.length > 1 || parsed.terms.some((t) => t.alternatives.some((a) => alternativeTokens(a).length > 1));
	if (!severalWords && !categoricalOnly(plan.filters)) return false;
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
 * The in-scope matches: every match the filters allow when there are at most the full-rank limit
 * (`complete`), to be scored; otherwise a window of RECENT_MATCHES in index order.
 */
function scopeMatches(scoped: ScopedSearch, counted: number, complete: boolean, plan: SearchPlan): Found {
	// No match in scope at all (a typo, a word never written): the ranking query would find none either.
	if (counted === 0) return { rows: [], mode: "full", rankedShare: 1, toScore: true };
	if (complete) {
		// Intersecting with a wide scope's tokens inside FTS5 can cost more than the query: when the
		// user's terms alone match few fragments, the gate matches them alone and applies the same
		// scope rule in SQL. The candidates are the same in-scope rows either way.
		const scopeInSql = scoped.fewUnscopedMatches(UNSCOPED_RANK_LIMIT);
		// Every in-scope match that the filters allow (at most the full-rank limit): exact counts,
		// grouping and time order need them all, and all of them are scored to sort. Each from its
		// own term counts and length alone (answer-score.ts), never bm25(), whose statistics cover
		// every workspace in the index.
		// With each event's time: the tie-break (newest first) orders equal scores without hydrating them.
		// In ascending rowids: FTS5 reads postings forwards faster than backwards, and the fragment
		// rows in order (0.75 against 1.4 ms for 973 matches); all of them are sorted later anyway.
		const rows = scoped.rank(plan.bounds.fullRankLimit, { scopeInSql, withTime: true, order: "oldest" });
		return { rows, mode: "full", rankedShare: 1, toScore: true };
	}
	// Very common terms: the newest (or, sorting oldest first, the oldest) RECENT_MATCHES in-scope
	// matches that the filters allow, by index order (rowids grow with sessions in creation order).
	const rows =
		plan.sort === "oldest"
			? scoped.rank(RECENT_MATCHES, { order: "oldest", withTime: true })
			: newestMatches(scoped, RECENT_MATCHES, plan.bounds.firstWindowFragments);
	// The window held every match the filters allow; otherwise counting stopped past
	// the full-rank limit (an exact count of 150,000 matches costs ~5 ms) and the share is unknown.
	return rows.length < RECENT_MATCHES ? { rows, mode: "full", rankedShare: 1, toScore: false } : { rows, mode: "recent", rankedShare: null, toScore: false };
}
