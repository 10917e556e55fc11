/**
 * Ordering: candidates become events (each one's best fragment) or sessions (each one's first
 * event), in the answer's order, and the limit cuts them with a total tie-break.
 */
import type { CandidateRow, RankedRow, ScopedSearch } from "../../gate/gate.ts";
import type { SearchPlan } from "./plan.ts";

/** The events of the candidates in the answer's order, and the units (events, or sessions when grouped) the limit cuts. */
export interface Ordered {
	events: RankedRow[];
	units: RankedRow[];
	/** How many matching events each session holds. */
	eventsPerSession: Map<number, number>;
}

/**
 * One candidate per event (its best fragment), or per session (its first event in the order). By
 * relevance, rerank left the fragments sorted, so each event's best fragment came first and the
 * events are already in order; by time they are sorted here.
 */
export function orderEvents(rows: RankedRow[], plan: SearchPlan): Ordered {
	const events = bestPerEvent(rows);
	const eventsPerSession = new Map<number, number>();
	for (const e of events) eventsPerSession.set(e.session_key, (eventsPerSession.get(e.session_key) ?? 0) + 1);
	if (plan.sort !== "relevance") events.sort(plan.sort === "newest" ? byTime(-1) : byTime(1));
	return { events, units: plan.grouped ? firstPerSession(events) : events, eventsPerSession };
}

/** Best first; ties newest first, then by the newer fragment (session and entry ids, after hydration, decide the rest). */
export function byRelevance(a: RankedRow, b: RankedRow): number {
	return b.relevance - a.relevance || newerFirst(a, b) || b.frag_key - a.frag_key;
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
export function byTime(direction: 1 | -1): (a: RankedRow, b: RankedRow) => number {
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

/** Whether `r` is a better evidence of its event than `seen`: more relevant, or as relevant and a later fragment. */
export function betterEvidence(r: RankedRow, seen: RankedRow | undefined): boolean {
	return !seen || r.relevance > seen.relevance || (r.relevance === seen.relevance && r.frag_key > seen.frag_key);
}

export function bestPerEvent(ranked: RankedRow[]): RankedRow[] {
	const best = new Map<number, RankedRow>();
	for (const r of ranked) if (betterEvidence(r, best.get(r.event_key))) best.set(r.event_key, r);
	return [...best.values()];
}

/** How many of the candidates each event holds. */
export function fragmentsPerEvent(ranked: readonly RankedRow[]): Map<number, number> {
	const counts = new Map<number, number>();
	for (const r of ranked) counts.set(r.event_key, (counts.get(r.event_key) ?? 0) + 1);
	return counts;
}

/**
 * Cut the ordered candidates at `limit`, hydrated (the gate checks every hydrated row once more
 * against the rule: defence in depth). By relevance, candidates whose relevance ties with the last
 * one kept are ordered by the full tie-break (newest first, then session, entry, fragment id), so
 * a smaller limit always yields a prefix of a larger one; time order is already total.
 */
export function selectEvents(
	scoped: Pick<ScopedSearch, "hydrate">,
	ordered: RankedRow[],
	limit: number,
	byRelevanceOrder: boolean,
	grouped: boolean,
): CandidateRow[] {
	if (ordered.length === 0) return [];
	// Hydrate a little past the cut: an /export + /import pair holds the same (sessionId, entryId)
	// in two files, and such copies are one event (one session), shown once.
	const want = limit * 2;
	const rows = byRelevanceOrder ? hydrateByRelevance(scoped, ordered, limit, want) : scoped.hydrate(ordered.slice(0, want));
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

/** The first `want` by relevance: only candidates equal to the last one kept in relevance and time need the rest of the tie-break (session, entry, fragment id), which takes hydrating them. */
function hydrateByRelevance(scoped: Pick<ScopedSearch, "hydrate">, ordered: RankedRow[], limit: number, want: number): CandidateRow[] {
	const boundary = ordered[Math.min(limit, ordered.length) - 1]!;
	const tiesWith = (r: RankedRow) => r.relevance === boundary.relevance && newerFirst(r, boundary) === 0;
	const sure = ordered.filter((r) => byRelevance(r, boundary) < 0 && !tiesWith(r));
	const tied = ordered.filter(tiesWith);
	const rows = scoped.hydrate(sure.slice(0, want)).sort(compareRows);
	if (rows.length < want && tied.length > 0)
		rows.push(
			...scoped
				.hydrate(tied)
				.sort(compareRows)
				.slice(0, want - rows.length),
		);
	return rows;
}

function compareRows(a: CandidateRow, b: CandidateRow): number {
	return (
		b.relevance - a.relevance ||
		(b.ts_ms ?? 0) - (a.ts_ms ?? 0) ||
		cmp(a.session_id, b.session_id) ||
		cmp(a.entry_id, b.entry_id) ||
		cmp(a.fragment_id, b.fragment_id)
	);
}

function cmp(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}
