/**
 * Ranking that answers (pure): when the query matches a turn (its prompt, its assistant texts, its
 * tool calls and their output), the turn's answer ranks as an answer, and the matches are evidence
 * for it rather than competitors.
 *
 * - A turn's **evidence** is what of it matched: its best matching event's relevance, plus a share
 *   (EVIDENCE_SHARE) of each other matching event's. A turn whose prompt, logs and name all match is
 *   better evidence than a log that matches alone in a turn that is about something else.
 * - A turn's **answer** is the assistant text that explains it: the most substantive visible text
 *   of the turn (its length, up to ANSWER_LENGTH_CAP characters), doubled for the text that goes
 *   with a change to a file (an edit or a write: that message says what was changed and why), on
 *   the branch toward the materialized leaf when the turn has one. Not always the last text: a turn
 *   often ends in a status line ("Done, tests pass.") after the explanation.
 * - The answer's relevance is at least ANSWER_SHARE of its turn's evidence. When the answer did not
 *   match the query itself, it joins the candidates, marked as a turn match.
 */
import type { SemanticKind } from "../model.ts";

/** How much each matching event of a turn beyond its best adds to the turn's evidence. */
export const EVIDENCE_SHARE = 0.5;
/** The answer's relevance as a share of its turn's evidence. */
export const ANSWER_SHARE = 1.05;
/**
 * The same when one event alone matched in the turn and the turn's outcome says something itself:
 * the answer then sits just below it. A single matching prompt or session name is what a query made
 * of its words looks for, and its hit shows the outcome (the known-item evaluation: three reports
 * and a session name found by their words fell to rank 2 above this share); a question with further
 * evidence (its name, its logs, its calls) is what the answer answers.
 */
export const SINGLE_EVIDENCE_SHARE = 0.95;
/**
 * A turn's outcome is a status line ("Done, tests pass.") when it is shorter than this and than
 * STATUS_LINE_SHARE of the turn's answer: the question's hit would show it and not the
 * explanation, so the answer ranks above the question even when the question alone matched. On
 * the answers evaluation the status lines are 15–76 characters after answers of 154–496; on the
 * known-item evaluation the outcomes of answered turns are 82–322 characters, as long as their answers.
 */
export const STATUS_LINE_CHARS = 120;
export const STATUS_LINE_SHARE = 0.5;
/** Characters of an assistant text that count towards its substance (a long paste is no better an answer). */
export const ANSWER_LENGTH_CAP = 1500;
/** How much the text that goes with a change to a file outweighs another of the same length. */
export const CHANGE_FACTOR = 2;
/** Turns of this many best-ranked matching events are considered (the rest cannot reach the top hits). */
export const TURN_CANDIDATES = 60;
/** At most this many turns (the best evidence first) have their answer looked up: one short query each. */
export const TURNS_ANSWERED = 12;

/** A matching event as ranking sees it (relevance: higher is better). */
export interface TurnMember {
	eventKey: number;
	sessionKey: number;
	/** The append position of its turn's prompt; null before a session's first prompt. */
	turnSeq: number | null;
	kind: SemanticKind;
	relevance: number;
}

/** An assistant text of a turn that could be its answer. */
export interface AnswerCandidate {
	eventKey: number;
	fragKey: number;
	seq: number;
	/** Characters of the text fragment. */
	length: number;
	/** The message changes a file (edit or write evidence). */
	changesFiles: boolean;
	/** On the branch toward the materialized leaf. */
	selected: boolean;
}

export const turnKey = (sessionKey: number, turnSeq: number) => `${sessionKey}:${turnSeq}`;

/** The evidence of each turn among `members` (best first), keyed by turnKey. */
export function turnEvidence(members: readonly TurnMember[]): Map<string, { sessionKey: number; turnSeq: number; evidence: number; members: TurnMember[] }> {
	const turns = new Map<string, { sessionKey: number; turnSeq: number; evidence: number; members: TurnMember[] }>();
	const sorted = [...members].sort((a, b) => b.relevance - a.relevance);
	for (const m of sorted) {
		if (m.turnSeq === null) continue;
		const key = turnKey(m.sessionKey, m.turnSeq);
		const turn = turns.get(key);
		if (!turn) turns.set(key, { sessionKey: m.sessionKey, turnSeq: m.turnSeq, evidence: m.relevance, members: [m] });
		else {
			turn.evidence += EVIDENCE_SHARE * m.relevance;
			turn.members.push(m);
		}
	}
	return turns;
}

/** The turn's answer among its assistant texts (see the module comment); null when it has none. */
export function answerOf(candidates: readonly AnswerCandidate[]): AnswerCandidate | null {
	const onLeafBranch = candidates.filter((c) => c.selected);
	const pool = onLeafBranch.length > 0 ? onLeafBranch : candidates;
	let best: AnswerCandidate | null = null;
	let bestWeight = -1;
	for (const c of pool) {
		const weight = answerWeight(c);
		if (weight > bestWeight || (weight === bestWeight && best !== null && c.seq > best.seq)) {
			best = c;
			bestWeight = weight;
		}
	}
	return best;
}

/**
 * A follow-up turn's text is the answer only when it says at least this many times as much as the
 * turn's own answer (its weight: length, doubled with a change to a file): "go on" led to the
 * explanation, not to the next request of a conversation of short prompts. On both answer sets
 * 1.2 to 1.5 give the same figures; at 2 the pool story's explanation after "go on" (its turn
 * ended in a finding half as long) is lost.
 */
export const FOLLOW_UP_MARGIN = 1.3;

/** The turn's answer when it has follow-up turns: their best text when it says FOLLOW_UP_MARGIN times as much as the turn's own. */
export function answerWithFollowUps(own: readonly AnswerCandidate[], followUps: readonly AnswerCandidate[]): AnswerCandidate | null {
	const mine = answerOf(own);
	const later = answerOf(followUps);
	if (later === null) return mine;
	if (mine === null) return later;
	return answerWeight(later) >= FOLLOW_UP_MARGIN * answerWeight(mine) ? later : mine;
}

function answerWeight(c: AnswerCandidate): number {
	return Math.min(c.length, ANSWER_LENGTH_CAP) * (c.changesFiles ? CHANGE_FACTOR : 1);
}

/** The turn's outcome among its assistant texts: the last on the branch toward the leaf, else the last appended (store/search.ts turnOutcome). */
export function outcomeOf(candidates: readonly AnswerCandidate[]): AnswerCandidate | null {
	const onLeafBranch = candidates.filter((c) => c.selected);
	const pool = onLeafBranch.length > 0 ? onLeafBranch : candidates;
	let last: AnswerCandidate | null = null;
	for (const c of pool) if (last === null || c.seq > last.seq) last = c;
	return last;
}

/** Whether the turn's outcome is a status line after its answer (STATUS_LINE_CHARS). */
export function isStatusLine(outcome: AnswerCandidate | null, answer: AnswerCandidate | null): boolean {
	if (outcome === null || answer === null || outcome.eventKey === answer.eventKey) return false;
	return outcome.length < STATUS_LINE_CHARS && outcome.length < STATUS_LINE_SHARE * answer.length;
}

/** Kinds that ask (or name) what a turn is about: an answer outranks them. */
export const QUESTION_KINDS: ReadonlySet<SemanticKind> = new Set<SemanticKind>(["user.text", "session.name"]);

/**
 * The relevance an answer takes from its turn: ANSWER_SHARE of the turn's evidence
 * (SINGLE_EVIDENCE_SHARE when one event alone matched and the outcome is no status line) when what matched best is the question (the
 * prompt or the session's name); when it is anything else (a log, a call, a text the query
 * quotes), just below that event, which a query made of its own words finds first.
 */
export function answerRelevance(turn: { evidence: number; members: readonly TurnMember[] }, statusLine = false): number {
	const top = turn.members[0]!;
	const share = turn.members.length >= 2 || statusLine ? ANSWER_SHARE : SINGLE_EVIDENCE_SHARE;
	const raised = share * turn.evidence;
	return QUESTION_KINDS.has(top.kind) || statusLine ? raised : Math.min(raised, top.relevance * BELOW_EVIDENCE);
}

/** An answer raised by evidence that is not the question sits just below it. */
const BELOW_EVIDENCE = 0.999;
