/**
 * A problem taken up again (answers.ts): the earlier answer did not settle it. Either a later
 * session's turn asks the same in the same words (takenUpAgain: it ranks just above the earlier
 * one), or a later session's first report of it holds at least half the words in its own
 * (laterAnswers: its answer joins just above the earlier question, `match: "later"`).
 */
import type { EventTurnRow, RankedRow } from "../../gate/gate.ts";
import type { TermPromptRow, TurnReads } from "../../gate/turns.ts";
import { parseQuery, type QueryTerm, termMatch } from "../fts.ts";
import { isFrequentWord } from "../../project/frequent-words.ts";
import { answerWithFollowUps, QUESTION_KINDS, type TurnMember } from "../turn-answers.ts";
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
export const LATER_SCAN = 1000;

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

/** At most this many words of the best earlier report are looked for in later prompts. */
export const REPORT_WORDS = 8;
/** A report word more fragments than this hold says little of which problem it is: not looked for. */
export const REPORT_SCAN = 200;
/** A later prompt that shares this share of the earlier report's uncommon words (and three) restates it. */
export const REPORT_SHARE = 0.4;

/** Later prompts that hold words of a list: by turn, with how many of the uncommon words each must hold. */
interface WordMatches {
	prompts: Map<string, { row: TermPromptRow; terms: Set<number> }>;
	needed: number;
}

/**
 * A problem reported again in other words: for each of the LATER_ASKS best answered turns whose
 * question (prompt or session name) matched, the prompt of another, later session that says the
 * problem is back (RECURRENCE) and either holds at least half the query's uncommon words (and two)
 * or, for the best question, restates its report (REPORT_SHARE of its first REPORT_WORDS uncommon
 * words, and three) took the problem up again: the one sharing the most words, the latest of
 * those. Its answer (its own texts and its follow-up turns') joins just above the earlier
 * question. Prompts already among the matched turns are left to takenUpAgain.
 */
export function laterAnswers(
	reads: TurnReads,
	asks: { turn: { sessionKey: number; turnSeq: number; evidence: number; members: TurnMember[] } }[],
	turns: Map<number, EventTurnRow>,
	bestRowOf: Map<number, RankedRow>,
	terms: readonly QueryTerm[],
	reportOf: (eventKey: number) => string | null,
): LaterAnswer[] {
	const questions = asks
		.map((a) => a.turn)
		.filter((t) => QUESTION_KINDS.has(t.members[0]!.kind))
		.sort((a, b) => b.evidence - a.evidence)
		.slice(0, LATER_ASKS);
	if (questions.length === 0) return [];
	const byQuery = terms.length >= 2 ? wordMatches(reads, terms, LATER_SCAN, 0.5, 2) : null;
	const known = new Set(asks.map((a) => `${a.turn.sessionKey}:${a.turn.turnSeq}`));
	const out: LaterAnswer[] = [];
	for (const [i, earlier] of questions.entries()) {
		const top = turns.get(earlier.members[0]!.eventKey);
		const over = bestRowOf.get(earlier.members[0]!.eventKey);
		if (!top || !over || top.ts_ms === null) continue;
		const report = i === 0 ? reportTerms(reportOf(earlier.members[0]!.eventKey), terms) : [];
		const byReport = report.length > 0 ? wordMatches(reads, report, REPORT_SCAN, REPORT_SHARE, 3) : null;
		const qualifies = (key: string, row: TermPromptRow) =>
			!known.has(key) && row.session_key !== earlier.sessionKey && row.ts_ms !== null && row.ts_ms > top.ts_ms!;
		const chosen = choose([byQuery, byReport], qualifies, (row) => reads.promptSays(row, RECURRENCE));
		if (chosen === null) continue;
		const answer = answerWithFollowUps(textsOf(reads, chosen), followUpTexts(reads, chosen));
		if (answer === null) continue;
		const held = byQuery?.prompts.get(`${chosen.session_key}:${chosen.turn_seq}`)?.terms ?? new Set<number>();
		out.push({
			earlier,
			row: {
				frag_key: answer.fragKey,
				relevance: over.relevance * ABOVE,
				weight: 1,
				length: answer.length,
				event_key: answer.eventKey,
				session_key: chosen.session_key,
				ts_ms: chosen.ts_ms,
			},
			foundIn: terms.map((_, t) => (held.has(t) ? [chosen.entry_id] : [])),
			takesUp: { sessionId: top.session_id, entryId: top.entry_id },
		});
	}
	return out;
}

/** The prompts holding `terms`, when at least `min` of them are uncommon; each must hold `share` of those (and `min`). */
function wordMatches(reads: TurnReads, terms: readonly QueryTerm[], scan: number, share: number, min: number): WordMatches | null {
	const lists = reads.promptsHolding(terms.map(termMatch), scan);
	const uncommon = lists.filter((l) => l !== null).length;
	if (uncommon < min) return null;
	return { prompts: promptsByTurn(lists), needed: Math.max(min, Math.ceil(uncommon * share)) };
}

/** The qualifying prompt that holds enough of a list's words and says the problem is back: the most words, then the latest. */
function choose(
	matches: readonly (WordMatches | null)[],
	qualifies: (key: string, row: TermPromptRow) => boolean,
	saysBack: (row: TermPromptRow) => boolean,
): TermPromptRow | null {
	const words = new Map<string, { row: TermPromptRow; count: number; enough: boolean }>();
	for (const m of matches) {
		if (m === null) continue;
		for (const [key, p] of m.prompts) {
			const seen = words.get(key) ?? { row: p.row, count: 0, enough: false };
			seen.count += p.terms.size;
			seen.enough ||= p.terms.size >= m.needed;
			words.set(key, seen);
		}
	}
	let best: { row: TermPromptRow; count: number } | null = null;
	for (const [key, p] of words) {
		if (!p.enough || !qualifies(key, p.row)) continue;
		if (best !== null && (p.count < best.count || (p.count === best.count && p.row.ts_ms! <= best.row.ts_ms!))) continue;
		if (saysBack(p.row)) best = p;
	}
	return best?.row ?? null;
}

/** The first REPORT_WORDS uncommon words of an earlier report that are not query words, as terms. */
function reportTerms(text: string | null, query: readonly QueryTerm[]): QueryTerm[] {
	if (text === null || text.trim() === "") return [];
	let parsed: QueryTerm[];
	try {
		parsed = parseQuery(text).terms;
	} catch {
		return [];
	}
	const asked = new Set(query.map((t) => t.text.toLowerCase()));
	return parsed
		.filter((t) => !t.phrase && !asked.has(t.text.toLowerCase()) && t.tokens.every((tok) => tok.length >= 3 && !isFrequentWord(tok)))
		.slice(0, REPORT_WORDS);
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
