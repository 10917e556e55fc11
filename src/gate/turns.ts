/**
 * The gate's turn reads (see gate.ts): a hit's prompt and outcome, the turns of ranked events, a
 * turn's assistant texts. Only for rows the gate admitted (hydrated or ranked within the scope),
 * only in their own session, and in the calling session only before the invocation cutoff.
 */
import type { Database } from "bun:sqlite";
import { beforeCutoff, clausesAdmit, type Cutoff, ruleClauses, type SessionRule } from "../auth/scope.ts";
import type { CandidateRow } from "../store/search.ts";
import { type AnswerRow, type EventTurnRow, type TurnEventRow, turnAnswerRows, turnOutcome, turnPrompt, turnsOfEvents } from "../store/turns.ts";

export type { AnswerRow, EventTurnRow, TurnEventRow };

/** A hit's turn as read from the index: the prompt (null when the cutoff hides it) and the outcome. */
export interface TurnRows {
	prompt: TurnEventRow | null;
	outcome: TurnEventRow | null;
}

export class TurnReads {
	constructor(
		private readonly db: Database,
		private readonly rule: SessionRule,
		private readonly cutoff: Cutoff | null,
	) {}

	/** Reads in this session stop at this append position (the cutoff in the calling session). */
	private before(sessionId: string): number {
		return this.cutoff !== null && this.cutoff.sessionId === sessionId ? this.cutoff.seq : Number.MAX_SAFE_INTEGER;
	}

	/** The turn of a hydrated row: its prompt and outcome. Null when the row has no turn. */
	turnOf(row: CandidateRow): TurnRows | null {
		if (row.turn_seq === null) return null;
		const before = this.before(row.session_id);
		if (row.turn_seq >= before) return null;
		return { prompt: turnPrompt(this.db, row.session_key, row.turn_seq, before), outcome: turnOutcome(this.db, row.session_key, row.turn_seq, before) };
	}

	/** The turns of these ranked events, only those the rule admits before the cutoff (checked again, as hydration does). */
	turnsOfEvents(eventKeys: readonly number[]): Map<number, EventTurnRow> {
		const clauses = ruleClauses(this.rule);
		const out = turnsOfEvents(this.db, eventKeys);
		for (const [key, row] of out) {
			if (!clausesAdmit(clauses, { cwdReal: row.cwd_real, sessionId: row.session_id }) || !beforeCutoff(this.cutoff, row.session_id, row.seq)) out.delete(key);
		}
		return out;
	}

	/** The assistant texts of the turn of an event turnsOfEvents gave. */
	turnAnswers(turn: Pick<EventTurnRow, "session_key" | "session_id" | "turn_seq">): AnswerRow[] {
		if (turn.turn_seq === null) return [];
		return turnAnswerRows(this.db, turn.session_key, turn.turn_seq, this.before(turn.session_id));
	}
}
