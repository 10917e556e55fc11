/**
 * Turn-window matching (after answers, by relevance, without a filter on what a hit is): when fewer
 * events than the limit hold every term, the turns whose conversation holds them all (prompt,
 * assistant texts, tool-call arguments; not tool output, not pi-events' echoes) match too: AND over
 * a turn-sized window (gate/turns.ts turnWindow). Each such turn's hit is its answer
 * (query/turn-answers.ts; its outcome when it has none), marked `match: "turn"` with where each
 * term was found, ranked after the event matches, tighter turns (fewer events holding the terms)
 * and newer ones first.
 */
import type { RankedRow, ScopedSearch } from "../../gate/gate.ts";
import { type ParsedQuery, termMatch } from "../fts.ts";
import { answerOf, outcomeOf } from "../turn-answers.ts";
import type { TurnMatches } from "./answers.ts";
import { bestPerEvent } from "./order.ts";
import { textsOf } from "./turn-texts.ts";

/** A term held by more conversational fragments than this is common: looked for only in the turns the rarer terms narrowed. */
export const TURN_WINDOW_TERM_CAP = 2000;
/** Common terms are looked for in at most this many sessions (more: no turn-window match). */
export const TURN_WINDOW_SESSIONS = 50;
/** A turn-window match ranks at most this share of the weakest event match. */
const BELOW_EVENT_MATCHES = 0.5;

export function turnWindowMatches(scoped: ScopedSearch, query: ParsedQuery, rows: RankedRow[], limit: number, matches: TurnMatches): void {
	if (query.terms.length < 2) return;
	const events = bestPerEvent(rows);
	if (events.length >= limit) return;
	const reads = scoped.turns();
	const exprs = query.terms.map(termMatch);
	const window = reads.turnWindow(exprs, TURN_WINDOW_TERM_CAP, TURN_WINDOW_SESSIONS);
	if (window.length === 0) return;
	// A turn that already has an event match is that match's.
	const matched = new Set([...reads.turnsOfEvents(events.map((e) => e.event_key)).values()].map((t) => `${t.session_key}:${t.turn_seq}`));
	const spread = (t: (typeof window)[number]) => new Set(t.foundIn.flat()).size;
	const turns = window
		.filter((t) => !matched.has(`${t.session_key}:${t.turn_seq}`))
		.sort((a, b) => spread(a) - spread(b) || b.session_key - a.session_key || b.turn_seq - a.turn_seq)
		.slice(0, limit - events.length);
	const weakest = events.reduce((min, e) => Math.min(min, e.relevance), Number.POSITIVE_INFINITY);
	const base = Number.isFinite(weakest) ? weakest * BELOW_EVENT_MATCHES : 1;
	turns.forEach((turn, i) => {
		const texts = textsOf(reads, turn);
		const hit = answerOf(texts) ?? outcomeOf(texts);
		if (!hit || matches.has(hit.eventKey)) return;
		rows.push({ frag_key: hit.fragKey, relevance: base / (1 + i), weight: 1, length: hit.length, event_key: hit.eventKey, session_key: turn.session_key });
		matches.set(hit.eventKey, { foundIn: turn.foundIn });
	});
}
