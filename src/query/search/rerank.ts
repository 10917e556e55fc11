/**
 * Rerank: signals BM25 cannot see (conversational evidence, a failed call, proximity), from the
 * top candidates' kinds and source text (query/relevance.ts). They only ever raise a relevance.
 */
import type { RankedRow, ScopedSearch } from "../../gate/gate.ts";
import { ERROR_BOOST } from "../../project/weights.ts";
import { evidenceFactor, proseShare, proximityFactor, type SignalTerm, textSignals } from "../relevance.ts";
import { PROXIMITY_BUDGET_BYTES, PROXIMITY_CANDIDATES, PROXIMITY_LINE_BYTES, RERANK_CANDIDATES } from "./bounds.ts";
import { fragmentText, type TextTools } from "./hits.ts";
import { byRelevance } from "./order.ts";

/**
 * Sort the candidates best first, multiply the top ones' relevance by their signals and re-sort
 * them, in place. Returns the texts read (null: the source changed since indexing), keyed by
 * fragment, for the snippets.
 */
export function rerank(scoped: ScopedSearch, ranked: RankedRow[], terms: readonly SignalTerm[], tools: TextTools): Map<number, string | null> {
	const texts = new Map<number, string | null>();
	// The top candidates by relevance (answer-score.ts) × kind weight (in the recent window, by kind weight alone).
	ranked.sort(byRelevance);
	const top = ranked.slice(0, RERANK_CANDIDATES);
	if (top.length === 0) return texts;
	evidence(scoped, top, terms);
	// Proximity needs the text: only for the best few after the cheap signals.
	top.sort(byRelevance);
	if (terms.length >= 2) proximity(scoped, top.slice(0, PROXIMITY_CANDIDATES), terms, tools, texts);
	// The signals only ever raise a relevance (every factor is at least 1), and only the top
	// candidates': they stay ahead of the rest, so re-sorting them leaves all the fragments sorted.
	top.sort(byRelevance);
	for (let i = 0; i < top.length; i++) ranked[i] = top[i]!;
	return texts;
}

/** The kind's evidence for the query, and a call whose result failed (what went wrong, like the result itself). */
function evidence(scoped: ScopedSearch, top: RankedRow[], terms: readonly SignalTerm[]): void {
	// Ranking does not read kinds (store/search.ts fragmentKinds): the top candidates ask for theirs.
	const kindOf = scoped.kinds(top);
	const prose = proseShare(terms);
	// A call whose result failed is what went wrong, like the result itself (which carries the error boost).
	const calls = top.filter((r) => kindOf.get(r.frag_key) === "tool.call").map((r) => r.event_key);
	const failedCalls = calls.length > 0 ? scoped.failedCallEvents(calls) : new Set<number>();
	for (const r of top) {
		const kind = kindOf.get(r.frag_key);
		if (kind === undefined) continue;
		r.relevance *= evidenceFactor(kind, prose) * (failedCalls.has(r.event_key) ? ERROR_BOOST : 1);
	}
}

/** How near the terms stand in the text, for candidates whose source line is small enough and within the budget. */
function proximity(scoped: ScopedSearch, near: RankedRow[], terms: readonly SignalTerm[], tools: TextTools, texts: Map<number, string | null>): void {
	const rows = new Map(scoped.hydrate(near).map((r) => [r.frag_key, r]));
	let budget = PROXIMITY_BUDGET_BYTES;
	for (const r of near) {
		const row = rows.get(r.frag_key);
		if (!row || row.byte_length > PROXIMITY_LINE_BYTES || row.byte_length > budget) continue;
		budget -= row.byte_length;
		const text = fragmentText(row, tools.files);
		texts.set(r.frag_key, text);
		if (text !== null) r.relevance *= proximityFactor(textSignals(text, terms, tools.forms, tools.words), terms.length);
	}
}
