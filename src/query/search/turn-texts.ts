/**
 * The texts a turn's answer is chosen among (answers.ts, taken-up.ts): the turn's own assistant
 * texts and those of the follow-up turns that continue it, read through the gate's turn reads
 * (scope and invocation cutoff applied there).
 */
import type { EventTurnRow } from "../../gate/gate.ts";
import type { TurnReads } from "../../gate/turns.ts";
import type { AnswerCandidate } from "../turn-answers.ts";

/** A turn as its reads name it. */
export type TurnRef = Pick<EventTurnRow, "session_key" | "session_id" | "turn_seq">;

/** A turn's assistant texts, as candidates for its answer. */
export function textsOf(reads: TurnReads, turn: TurnRef): AnswerCandidate[] {
	return reads.turnAnswers(turn).map((a) => ({
		eventKey: a.event_key,
		fragKey: a.frag_key,
		seq: a.seq,
		length: a.length,
		changesFiles: a.changes === 1,
		selected: a.selected === 1,
	}));
}

/** A prompt of at most this many characters that follows a turn continues it ("ok, fix it", "go on, check the database side"). */
export const FOLLOW_UP_PROMPT_CHARS = 160;
/** At most this many follow-up turns are read for a turn's answer. */
export const FOLLOW_UP_TURNS = 2;

/**
 * The texts of the turns that continue a turn on its branch: the next turns (at most
 * FOLLOW_UP_TURNS) while their prompt is short (FOLLOW_UP_PROMPT_CHARS), which asks to go on rather
 * than states a new problem. The answer to a problem is often given there: after "go on" or a
 * compaction, or with the fix after "ok, fix it".
 */
export function followUpTexts(reads: TurnReads, turn: TurnRef): AnswerCandidate[] {
	const texts: AnswerCandidate[] = [];
	let at: TurnRef = turn;
	for (let i = 0; i < FOLLOW_UP_TURNS; i++) {
		const next = reads.nextTurn(at);
		if (next === null || next.prompt_length > FOLLOW_UP_PROMPT_CHARS) break;
		at = { session_key: turn.session_key, session_id: turn.session_id, turn_seq: next.turn_seq };
		texts.push(...textsOf(reads, at));
	}
	return texts;
}
