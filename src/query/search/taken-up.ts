/**
 * A problem taken up again (answers.ts): the earlier answer did not settle it. Either a later
 * session's turn asks the same in the same words (takenUpAgain: it ranks just above the earlier
 * one), or a later session's first report of it holds at least half the words in its own
 * (laterAnswers: its answer joins just above the earlier question, `match: "later"`).
 */
import type { EventTurnRow, RankedRow } from "../../gate/gate.ts";
import type { TermPromptRow, TurnReads } from "../../gate/turns.ts";
import type { QueryTerm } from "../fts.ts";
import { termMatch } from "../fts.ts";
import { answerOf, QUESTION_KINDS, type TurnMember } from "../turn-answers.ts";
import { followUpTexts, textsOf } from "./turn-texts.ts";

/** A later turn whose question matches at least this share of an earlier one's evidence took the problem up again. */
const TAKEN_UP_SHARE = 0.5;

/**
 * A problem taken up again: when a turn asks (its prompt or its session's name matched best) and a
 * later turn of another session asks the same with at least TAKEN_UP_SHARE of its evidence, the
 * earlier answer did not settle it: the later turn's best event ranks just above the earlier
 * turn's, and its evidence with it (its answer follows). Returns the later turn of each earlier
 * one taken up again.
 */
export function takenUpAgain<T extends { sessionKey: number; evidence: number; members: TurnMember[] }>(
	turns: T[],
	rows: Map<number, EventTurnRow>,
	bestRowOf: Map<number, RankedRow>,
): Map<T, T> {
	const supersededBy = new Map<T, T>();
	const asks = turns.filter((t) => QUESTION_KINDS.has(t.members[0]!.kind));
	const timeOf = (t: { members: TurnMember[] }) => rows.get(t.members[0]!.eventKey)?.ts_ms ?? null;
	for (const earlier of asks) {
		const since = timeOf(earlier);
		if (since === null) continue;
		let latest: T | null = null;
		for (const later of asks) {
			const at = timeOf(later);
			if (later === earlier || later.sessionKey === earlier.sessionKey || at === null || at <= since) continue;
			if (later.evidence < TAKEN_UP_SHARE * earlier.evidence) continue;
			if (latest === null || at > (timeOf(latest) ?? 0)) latest = later;
		}
		if (latest === null) continue;
		supersededBy.set(earlier, latest);
		// Raised when its best event ranks below the earlier turn's (whatever their evidence: an
		// answer that matched too makes the later turn's evidence, not its question, the greater).
		const top = bestRowOf.get(latest.members[0]!.eventKey);
		const over = bestRowOf.get(earlier.members[0]!.eventKey);
		if (!top || !over || top.relevance >= over.relevance) continue;
		const raise = (over.relevance * ABOVE) / top.relevance;
		for (const m of latest.members) {
			const row = bestRowOf.get(m.eventKey);
			if (row) row.relevance *= raise;
			m.relevance *= raise;
		}
		latest.evidence *= raise;
	}
	return supersededBy;
}

export const ABOVE = 1.001;

/** The best this many answered questions are looked for in later sessions (one read per query term in all). */
export const LATER_ASKS = 3;
/** A term more fragments than this hold is common: prompts holding it are not looked for. */
export const LATER_SCAN = 2000;

/**
 * Words of a report that says the problem is back ("still happens", "again", "is back", "not
 * fixed"): a later prompt that shares the words of an earlier question without them is about
 * something else that mentions the same things ("refactor the wishlist store to zustand like
 * useCartStore").
 */
export const RECURRENCE =
	'{body aux} : (still OR again OR anymore OR "came back" OR "is back" OR "are back" OR "not fixed" OR reappeared OR recurring OR "no longer")';

/** A later session's turn whose answer joins for an earlier question. */
export interface LaterAnswer {
	/** The earlier turn it takes up (one of `asks`). */
	earlier: { members: TurnMember[] };
	row: RankedRow;
	/** For each query term, the later prompt's entry id when it holds it. */
	foundIn: string[][];
	takesUp: { sessionId: string; entryId: string };
}

/**
 * A problem reported again in other words: for each of the LATER_ASKS best answered turns whose
 * question (prompt or session name) matched, the prompt of another session, after it, that holds
 * the most of the query's uncommon words (at least half, and two), the latest of those, and says
 * the problem is back (RECURRENCE) took the problem up again; its
 * answer (its own texts and its follow-up turns') joins just above the earlier question. Prompts
 * already among the matched turns are left to takenUpAgain.
 */
export function laterAnswers(
	reads: TurnReads,
	asks: { turn: { sessionKey: number; turnSeq: number; evidence: number; members: TurnMember[] } }[],
	turns: Map<number, EventTurnRow>,
	bestRowOf: Map<number, RankedRow>,
	terms: readonly QueryTerm[],
): LaterAnswer[] {
	const questions = asks
		.map((a) => a.turn)
		.filter((t) => QUESTION_KINDS.has(t.members[0]!.kind))
		.sort((a, b) => b.evidence - a.evidence)
		.slice(0, LATER_ASKS);
	if (questions.length === 0 || terms.length < 2) return [];
	const lists = reads.promptsHolding(terms.map(termMatch), LATER_SCAN);
	const uncommon = lists.filter((l) => l !== null).length;
	const needed = Math.max(2, Math.ceil(uncommon / 2));
	if (uncommon < 2) return [];
	const prompts = promptsByTurn(lists);
	const known = new Set(asks.map((a) => `${a.turn.sessionKey}:${a.turn.turnSeq}`));
	const out: LaterAnswer[] = [];
	for (const earlier of questions) {
		const top = turns.get(earlier.members[0]!.eventKey);
		const over = bestRowOf.get(earlier.members[0]!.eventKey);
		if (!top || !over || top.ts_ms === null) continue;
		let chosen: (typeof prompts extends Map<string, infer V> ? V : never) | null = null;
		for (const [key, p] of prompts) {
			if (known.has(key) || p.row.session_key === earlier.sessionKey || p.terms.size < needed) continue;
			if (p.row.ts_ms === null || p.row.ts_ms <= top.ts_ms || !reads.promptSays(p.row, RECURRENCE)) continue;
			if (chosen === null || p.terms.size > chosen.terms.size || (p.terms.size === chosen.terms.size && p.row.ts_ms > chosen.row.ts_ms!)) chosen = p;
		}
		if (chosen === null) continue;
		const answer = answerOf([...textsOf(reads, chosen.row), ...followUpTexts(reads, chosen.row)]);
		if (answer === null) continue;
		out.push({
			earlier,
			row: {
				frag_key: answer.fragKey,
				relevance: over.relevance * ABOVE,
				weight: 1,
				length: answer.length,
				event_key: answer.eventKey,
				session_key: chosen.row.session_key,
				ts_ms: chosen.row.ts_ms,
			},
			foundIn: terms.map((_, i) => (chosen.terms.has(i) ? [chosen.row.entry_id] : [])),
			takesUp: { sessionId: top.session_id, entryId: top.entry_id },
		});
	}
	return out;
}

/** The prompts of the lists, by turn, with the terms each holds. */
function promptsByTurn(lists: readonly (TermPromptRow[] | null)[]): Map<string, { row: TermPromptRow; terms: Set<number> }> {
	const prompts = new Map<string, { row: TermPromptRow; terms: Set<number> }>();
	lists.forEach((rows, i) => {
		for (const r of rows ?? []) {
			const key = `${r.session_key}:${r.turn_seq}`;
			const p = prompts.get(key) ?? { row: r, terms: new Set<number>() };
			p.terms.add(i);
			prompts.set(key, p);
		}
	});
	return prompts;
}
