/**
 * Scoring: each candidate's relevance from its own term counts and length (answer-score.ts),
 * never bm25(), whose statistics cover every workspace in the index.
 */
import type { ScopedSearch } from "../../gate/gate.ts";
import { scoreFragments } from "../answer-score.ts";
import { alternativeTokens, type ParsedQuery } from "../fts.ts";
import type { Found } from "./found.ts";

/** Score the candidates that retrieval asks to be scored, in place; the others keep their kind weight. */
export function scoreCandidates(scoped: ScopedSearch, parsed: ParsedQuery, candidates: Found): void {
	const { rows } = candidates;
	if (!candidates.toScore || rows.length === 0) return; // nothing to score: no token counts needed
	const tokens = [...new Set(parsed.terms.flatMap((t) => [...t.tokens, ...t.alternatives.flatMap(alternativeTokens)]))];
	const { occurrences, common } = scoped.termOccurrences(rows, tokens);
	const relevance = scoreFragments(rows, occurrences, common);
	for (const r of rows) r.relevance = relevance.get(r.frag_key) ?? 0;
}
