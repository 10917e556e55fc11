/**
 * Answers (after rerank, by relevance only): the turns the best candidates belong to, and each
 * turn's answer ranked with its turn's evidence (query/turn-answers.ts). An answer that did not
 * match the query itself joins the candidates as a turn match: its hit says `match: "turn"` and
 * which of the turn's events held the words.
 */
import type { EventTurnRow, RankedRow, ScopedSearch } from "../../gate/gate.ts";
import type { TurnReads } from "../../gate/turns.ts";
import {
	EVIDENCE_SHARE,
	type AnswerCandidate,
	answerWithFollowUps,
	answerRelevance,
	isStatusLine,
	outcomeOf,
	QUESTION_KINDS,
	TURN_CANDIDATES,
	TURNS_ANSWERED,
	turnKey,
	type TurnMember,
	turnEvidence,
} from "../turn-answers.ts";
import type { SemanticKind } from "../../model.ts";
import { lengthNorm } from "../answer-score.ts";
import { type QueryTerm, termMatch } from "../fts.ts";
import { bestPerEvent, byRelevance } from "./order.ts";
import { laterAnswers, takenUpAgain } from "./taken-up.ts";
import { followUpTexts, textsOf } from "./turn-texts.ts";

/** A candidate that is there for its turn: for each query term, the events of the turn that hold it (entry ids). */
export type TurnMatches = Map<number, { foundIn: string[][]; takesUp?: { sessionId: string; entryId: string } }>;

/** A turn looked at for its answer: its evidence, its own texts and those of its follow-up turns. */
interface AnsweredTurn {
	turn: { sessionKey: number; turnSeq: number; evidence: number; members: TurnMember[] };
	texts: AnswerCandidate[];
	/** Its answer: among its own texts, or those of its follow-up turns when they say much more (turn-answers.ts answerWithFollowUps). */
	answer: AnswerCandidate | null;
}

/** What the answers stage reads once: the best events, their turns and kinds, and the turns looked at. */
interface Matched {
	best: RankedRow[];
	bestRowOf: Map<number, RankedRow>;
	turns: Map<number, EventTurnRow>;
	answered: AnsweredTurn[];
}

/**
 * Raise or add each matched turn's answer (the TURNS_ANSWERED turns of best evidence among the
 * TURN_CANDIDATES best events), after weighing the logs among the WEIGHED_LOG_EVENTS best events
 * by their turns. Leaves `rows` sorted best first; returns the answers added, by event key.
 */
export function answerTurns(
	scoped: ScopedSearch,
	rows: RankedRow[],
	queryTerms: readonly QueryTerm[],
	texts: ReadonlyMap<number, string | null> = new Map(),
): TurnMatches {
	const added: TurnMatches = new Map();
	const weighed = bestPerEvent(rows).sort(byRelevance).slice(0, WEIGHED_LOG_EVENTS);
	if (weighed.length === 0) return added;
	const reads = scoped.turns();
	const kindOf = scoped.kinds(weighed);
	const matched = matchedTurns(reads, weighed.slice(0, TURN_CANDIDATES), kindOf);
	// Only turns that were answered can have been taken up again.
	const supersededBy = takenUpAgain(
		matched.answered.filter((a) => a.texts.length > 0).map((a) => a.turn),
		matched.turns,
		matched.bestRowOf,
	);
	// Only turns with a log among their matches have a log to weigh by what the turn said.
	const spoken = reads.conversationTerms(
		matched.answered.filter((a) => a.turn.members.some((m) => OUTPUT_KINDS.has(m.kind))).map((a) => matched.turns.get(a.turn.members[0]!.eventKey)!),
		queryTerms.map(termMatch),
	);
	const logGains = weighLogs(
		matched.answered,
		(key) => matched.bestRowOf.get(key)?.length ?? 0,
		(turn) => (spoken.get(turnKey(turn.sessionKey, turn.turnSeq))?.size ?? 0) / queryTerms.length,
	);
	// The logs among the best events whose turn was not looked at count as a routine check's.
	for (const r of weighed) if (!logGains.has(r.event_key) && OUTPUT_KINDS.has(kindOf.get(r.frag_key) ?? "")) logGains.set(r.event_key, ROUTINE_LOG_GAIN);
	for (const r of rows) r.relevance *= logGains.get(r.event_key) ?? 1;
	const logsCommon = matched.answered.filter((a) => OUTPUT_KINDS.has(a.turn.members[0]!.kind)).length >= COMMON_LOG_TURNS;
	const reportOf = (eventKey: number) => texts.get(matched.bestRowOf.get(eventKey)?.frag_key ?? -1) ?? null;
	const reported = joinLaterAnswers(reads, matched, rows, queryTerms, added, reportOf);
	for (const answered of matched.answered) {
		const later = supersededBy.get(answered.turn);
		const laterTop = later ? matched.bestRowOf.get(later.members[0]!.eventKey) : reported.get(answered.turn);
		const joined = placeAnswer(answered, matched, { logsCommon, laterTop });
		if (joined === null) continue;
		rows.push(joined);
		// Each matching event holds every term (an event match).
		const ids = answered.turn.members.map((m) => matched.turns.get(m.eventKey)!.entry_id);
		added.set(joined.event_key, { foundIn: Array.from({ length: queryTerms.length }, () => ids) });
	}
	rows.sort(byRelevance);
	return added;
}

/**
 * The answers of later sessions that reported an answered question again in other words
 * (taken-up.ts laterAnswers) join the candidates (raised, when one matched already), marked as
 * such in `added`. Returns each one's row by the earlier turn it takes up.
 */
function joinLaterAnswers(
	reads: TurnReads,
	matched: Matched,
	rows: RankedRow[],
	terms: readonly QueryTerm[],
	added: TurnMatches,
	reportOf: (eventKey: number) => string | null,
): Map<object, RankedRow> {
	const asks = matched.answered.filter((a) => a.texts.length > 0);
	const byEarlier = new Map<object, RankedRow>();
	for (const later of laterAnswers(reads, asks, matched.turns, matched.bestRowOf, terms, reportOf)) {
		byEarlier.set(later.earlier, later.row);
		const own = rows.filter((r) => r.event_key === later.row.event_key);
		for (const r of own) r.relevance = Math.max(r.relevance, later.row.relevance);
		if (own.length > 0) continue;
		rows.push(later.row);
		added.set(later.row.event_key, { foundIn: later.foundIn, takesUp: later.takesUp });
	}
	return byEarlier;
}

/** The turns of the best events, with their evidence; the TURNS_ANSWERED best with their answers. */
function matchedTurns(reads: TurnReads, best: RankedRow[], kindOf: Map<number, SemanticKind>): Matched {
	const turns = reads.turnsOfEvents(best.map((r) => r.event_key));
	const members: TurnMember[] = [];
	for (const r of best) {
		const turn = turns.get(r.event_key);
		const kind = kindOf.get(r.frag_key);
		if (turn && kind) members.push({ eventKey: r.event_key, sessionKey: r.session_key, turnSeq: turn.turn_seq, kind, relevance: r.relevance });
	}
	const evidence = [...turnEvidence(members).values()].sort((a, b) => b.evidence - a.evidence).slice(0, TURNS_ANSWERED);
	const answered = evidence.map((turn) => {
		const row = turns.get(turn.members[0]!.eventKey)!;
		const texts = textsOf(reads, row);
		return { turn, texts, answer: answerWithFollowUps(texts, followUpTexts(reads, row)) };
	});
	return { best, bestRowOf: new Map(best.map((r) => [r.event_key, r])), turns, answered };
}

/**
 * Place a turn's answer: raise it when it matched itself, or return it as a row to join the
 * candidates (a turn match); null when its turn ends in it (every hit of the turn shows it as
 * the outcome) or it may not join.
 */
function placeAnswer(
	{ turn, texts, answer }: AnsweredTurn,
	{ best, bestRowOf, turns }: Matched,
	context: { logsCommon: boolean; laterTop: RankedRow | undefined },
): RankedRow | null {
	const outcome = outcomeOf(texts);
	if (!answer || answer.eventKey === outcome?.eventKey) return null;
	const top = turn.members[0]!;
	// A log that matched alone is what a query made of its words looks for, unless the same words
	// fill the logs of many turns: then the turn's explanation is the answer, not a log.
	// The turn's hits do not show its answer when its outcome is a status line, or when the answer
	// came in a follow-up turn (the outcome was a step on the way: "shall I go on?"). A question
	// whose turn's own outcome concludes it is what a query made of its words looks for.
	const unshown = isStatusLine(outcome, answer) || !texts.includes(answer);
	const statusLine = unshown && (QUESTION_KINDS.has(top.kind) || context.logsCommon);
	let relevance = belowNextTurn(answerRelevance(turn, statusLine), top, best, turns);
	// An answer that did not settle the problem (it was taken up again later) ranks below the later turn's question.
	if (context.laterTop) relevance = Math.min(relevance, context.laterTop.relevance * NEXT_TURN_BELOW);
	const row = bestRowOf.get(answer.eventKey);
	if (row) {
		row.relevance = Math.max(row.relevance, relevance);
		return null;
	}
	// An answer that did not match joins only a turn whose question matched, or one that ends in a
	// status line: a log or a call that matches alone is what a query made of its words looks for,
	// and its hit shows its turn's outcome, unless that says nothing.
	if (!QUESTION_KINDS.has(top.kind) && !statusLine) return null;
	const time = bestRowOf.get(top.eventKey)?.ts_ms;
	return { frag_key: answer.fragKey, relevance, weight: 1, length: answer.length, event_key: answer.eventKey, session_key: turn.sessionKey, ts_ms: time };
}

/**
 * An answer that ranks below its turn's best event also ranks below the best event of the next
 * turn: it stands with its turn, and does not push another turn's best match down (a later
 * session that took the problem up again, whose own hit carries the answer as its outcome).
 */
function belowNextTurn(relevance: number, top: TurnMember, best: readonly RankedRow[], turns: Map<number, EventTurnRow>): number {
	if (relevance >= top.relevance) return relevance;
	const own = turns.get(top.eventKey)?.turn_seq;
	let next = -1;
	for (const r of best) {
		if (r.relevance >= top.relevance || r.relevance <= next) continue;
		const turn = turns.get(r.event_key);
		if (turn && turn.session_key === top.sessionKey && turn.turn_seq === own) continue;
		next = r.relevance;
	}
	return next < 0 ? relevance : Math.min(relevance, next * NEXT_TURN_BELOW);
}

const NEXT_TURN_BELOW = 0.999;

/** Output kinds: evidence of what happened, weighed by what their turn made of it. */
const OUTPUT_KINDS = new Set(["tool.result", "bash.output"]);
/** Logs are common to a query when they are the best match of this many of its best turns (of TURNS_ANSWERED). */
const COMMON_LOG_TURNS = 4;
/** How much a log gains when its turn's conversation (prompt, texts, calls) holds every query word. */
const SPOKEN_WEIGHT = 1;
/**
 * How much a log gains when its turn's answer is substantial (SUBSTANCE_CHARS or more). On both
 * answer sets the figures are flat from 3 to 6 (with SPOKEN_WEIGHT 0.5 to 2); 2 left a long log
 * in the turn that explained it below short ones in routine checks.
 */
const EXPLAINED_LOG_SHARE = 4;
/** An answer of this many characters explains; a shorter one is weighed by its share of them. */
const SUBSTANCE_CHARS = 400;

/** Among logs, length says little: a looked-at log is compared as if it were at most this long (characters). */
const LOG_LENGTH_CAP = 3000;

/**
 * What BM25's length damping (answer-score.ts: k1 1.2, b 0.75, 400 characters) took from a log
 * longer than LOG_LENGTH_CAP, for one occurrence of a word: the 6.7 KB log of the turn that
 * explained it, its line buried in it, held its words as well as five short routine logs did.
 */
function lengthRelief(length: number): number {
	if (length <= LOG_LENGTH_CAP) return 1;
	return (1 + lengthNorm(length)) / (1 + lengthNorm(LOG_LENGTH_CAP));
}

/** The best this many events are weighed (a log among them whose turn was not looked at: ROUTINE_LOG_GAIN). */
const WEIGHED_LOG_EVENTS = 200;
/** What a log keeps of its relevance when its turn neither spoke of the words nor explained anything. */
const ROUTINE_LOG_GAIN = 1 / ((1 + SPOKEN_WEIGHT) * (1 + EXPLAINED_LOG_SHARE));

/**
 * A log is evidence of what happened, weighed by what its turn made of it: it keeps its relevance
 * in a turn whose conversation (prompt, texts, calls) holds every query word (the person described
 * the problem, the assistant talked about it) and whose answer explains at length
 * (SUBSTANCE_CHARS), and down to ROUTINE_LOG_GAIN in a routine check that ended in a one-line
 * verdict, by SPOKEN_WEIGHT for the words and EXPLAINED_LOG_SHARE for the substance. Returns each
 * weighed log's gain by event key; the turns' evidence and members are weighed with them (their
 * answers rank with the evidence as weighed).
 */
function weighLogs(
	answered: AnsweredTurn[],
	lengthOf: (eventKey: number) => number,
	spokenShare: (turn: { sessionKey: number; turnSeq: number }) => number,
): Map<number, number> {
	const gains = new Map<number, number>();
	for (const { turn, answer } of answered) {
		const substance = answer === null ? 0 : Math.min(answer.length, SUBSTANCE_CHARS) / SUBSTANCE_CHARS;
		const weighed = (1 + SPOKEN_WEIGHT * spokenShare(turn)) * (1 + EXPLAINED_LOG_SHARE * substance) * ROUTINE_LOG_GAIN;
		for (const [i, m] of turn.members.entries()) {
			if (!OUTPUT_KINDS.has(m.kind)) continue;
			const gain = weighed * lengthRelief(lengthOf(m.eventKey));
			turn.evidence -= (i === 0 ? 1 : EVIDENCE_SHARE) * m.relevance * (1 - gain);
			m.relevance *= gain;
			gains.set(m.eventKey, gain);
		}
	}
	return gains;
}
