/**
 * Answers (after rerank, by relevance only): the turns the best candidates belong to, and each
 * turn's answer ranked with its turn's evidence (query/turn-answers.ts). An answer that did not
 * match the query itself joins the candidates as a turn match: its hit says `match: "turn"` and
 * which of the turn's events held the words.
 */
import type { EventTurnRow, RankedRow, ScopedSearch } from "../../gate/gate.ts";
import {
	ANSWER_LENGTH_CAP,
	type AnswerCandidate,
	answerOf,
	answerRelevance,
	outcomeOf,
	QUESTION_KINDS,
	TURN_CANDIDATES,
	TURNS_ANSWERED,
	type TurnMember,
	turnEvidence,
} from "../turn-answers.ts";
import { bestPerEvent, byRelevance } from "./order.ts";

/** A candidate that is there for its turn: for each query term, the events of the turn that hold it (entry ids). */
export type TurnMatches = Map<number, { foundIn: string[][] }>;

/**
 * Raise or add each matched turn's answer (the TURNS_ANSWERED turns of best evidence among the
 * TURN_CANDIDATES best events). Leaves `rows` sorted best first; returns the answers added, by event key.
 */
export function answerTurns(scoped: ScopedSearch, rows: RankedRow[], terms: number): TurnMatches {
	const added: TurnMatches = new Map();
	const best = bestPerEvent(rows).sort(byRelevance).slice(0, TURN_CANDIDATES);
	if (best.length === 0) return added;
	const reads = scoped.turns();
	const turns = reads.turnsOfEvents(best.map((r) => r.event_key));
	const kindOf = scoped.kinds(best);
	const members: TurnMember[] = [];
	for (const r of best) {
		const turn = turns.get(r.event_key);
		const kind = kindOf.get(r.frag_key);
		if (turn && kind) members.push({ eventKey: r.event_key, sessionKey: r.session_key, turnSeq: turn.turn_seq, kind, relevance: r.relevance });
	}
	const bestRowOf = new Map(best.map((r) => [r.event_key, r]));
	const evidence = [...turnEvidence(members).values()].sort((a, b) => b.evidence - a.evidence).slice(0, TURNS_ANSWERED);
	const answered = evidence.map((turn) => ({
		turn,
		texts: reads.turnAnswers(turns.get(turn.members[0]!.eventKey)!).map((a) => ({
			eventKey: a.event_key,
			fragKey: a.frag_key,
			seq: a.seq,
			length: a.length,
			changesFiles: a.changes === 1,
			selected: a.selected === 1,
		})),
	}));
	// Only turns that were answered can have been taken up again.
	takenUpAgain(
		answered.filter((a) => a.texts.length > 0).map((a) => a.turn),
		turns,
		bestRowOf,
	);
	explainedLogs(answered, bestRowOf);
	for (const { turn, texts } of answered) {
		const answer = answerOf(texts);
		// A turn that ends in its answer shows it already: every hit of the turn carries it as its outcome.
		if (!answer || answer.eventKey === outcomeOf(texts)?.eventKey) continue;
		const relevance = belowNextTurn(answerRelevance(turn), turn.members[0]!, best, turns);
		const row = bestRowOf.get(answer.eventKey);
		if (row) {
			row.relevance = Math.max(row.relevance, relevance);
			continue;
		}
		// An answer that did not match joins only a turn whose question matched: a log or a call that
		// matches alone is what a query made of its words looks for, and its turn's answer is its outcome.
		if (!QUESTION_KINDS.has(turn.members[0]!.kind)) continue;
		const time = bestRowOf.get(turn.members[0]!.eventKey)?.ts_ms;
		rows.push({ frag_key: answer.fragKey, relevance, weight: 1, length: answer.length, event_key: answer.eventKey, session_key: turn.sessionKey, ts_ms: time });
		// Each matching event holds every term (an event match).
		const ids = turn.members.map((m) => turns.get(m.eventKey)!.entry_id);
		added.set(answer.eventKey, { foundIn: Array.from({ length: terms }, () => ids) });
	}
	rows.sort(byRelevance);
	return added;
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

/** A later turn whose question matches at least this share of an earlier one's evidence took the problem up again. */
const TAKEN_UP_SHARE = 0.5;

/**
 * A problem taken up again: when a turn asks (its prompt or its session's name matched best) and a
 * later turn of another session asks the same with at least TAKEN_UP_SHARE of its evidence, the
 * earlier answer did not settle it: the later turn's best event ranks just above the earlier
 * turn's, and its evidence with it (its answer follows).
 */
function takenUpAgain(
	turns: { sessionKey: number; evidence: number; members: TurnMember[] }[],
	rows: Map<number, EventTurnRow>,
	bestRowOf: Map<number, RankedRow>,
): void {
	const asks = turns.filter((t) => QUESTION_KINDS.has(t.members[0]!.kind));
	const timeOf = (t: { members: TurnMember[] }) => rows.get(t.members[0]!.eventKey)?.ts_ms ?? null;
	for (const earlier of asks) {
		const since = timeOf(earlier);
		if (since === null) continue;
		let latest: (typeof asks)[number] | null = null;
		for (const later of asks) {
			const at = timeOf(later);
			if (later === earlier || later.sessionKey === earlier.sessionKey || at === null || at <= since) continue;
			if (later.evidence < TAKEN_UP_SHARE * earlier.evidence) continue;
			if (latest === null || at > (timeOf(latest) ?? 0)) latest = later;
		}
		if (latest === null || latest.evidence > earlier.evidence) continue;
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
}

const ABOVE = 1.001;

/** Output kinds: evidence of what happened, weighed by what their turn made of it. */
const EXPLAINED_LOG_SHARE = 0.5;
const OUTPUT_KINDS = new Set(["tool.result", "bash.output"]);

/**
 * A log that led to an explanation is better evidence than the same words in a turn that ended in
 * a one-line verdict: the output that matched best in a turn gains up to EXPLAINED_LOG_SHARE by
 * the substance of its turn's answer (its length up to ANSWER_LENGTH_CAP). On the answers
 * evaluation: noisy-logs answer@1 9.1% → 18.2% (0.3, 0.6 and 1.0 alike); the known-item groups unchanged.
 */
function explainedLogs(answered: { turn: { members: TurnMember[] }; texts: AnswerCandidate[] }[], bestRowOf: Map<number, RankedRow>): void {
	for (const { turn, texts } of answered) {
		const top = turn.members[0]!;
		if (!OUTPUT_KINDS.has(top.kind)) continue;
		const answer = answerOf(texts);
		const substance = answer === null ? 0 : Math.min(answer.length, ANSWER_LENGTH_CAP) / ANSWER_LENGTH_CAP;
		const row = bestRowOf.get(top.eventKey);
		if (row) row.relevance *= 1 + EXPLAINED_LOG_SHARE * substance;
	}
}
