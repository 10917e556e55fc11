/**
 * The gate's turn reads (see gate.ts): a hit's prompt and outcome, the turns of ranked events, a
 * turn's assistant texts. Only for rows the gate admitted (hydrated or ranked within the scope),
 * only in their own session, and in the calling session only before the invocation cutoff.
 */
import type { Database } from "bun:sqlite";
import { beforeCutoff, clausesAdmit, type Cutoff, ruleClauses, type SessionRule } from "../auth/scope.ts";
import type { CandidateRow } from "../store/search.ts";
import { scopedMatch } from "../auth/scope-tokens.ts";
import { fragmentKeySpan } from "../store/db.ts";
import {
	type AnswerRow,
	type EventTurnRow,
	type TermTurnRow,
	termTurnRows,
	type TurnEventRow,
	type NextTurnRow,
	nextTurnRow,
	conversationHolds,
	fragmentMatches,
	type TermPromptRow,
	termPromptRows,
	turnAnswerRows,
	turnConversationSpan,
	turnOutcome,
	turnPrompt,
	turnsOfEvents,
} from "../store/turns.ts";

export type { AnswerRow, EventTurnRow, NextTurnRow, TermPromptRow, TurnEventRow };

/** A hit's turn as read from the index: the prompt (null when the cutoff hides it) and the outcome. */
export interface TurnRows {
	prompt: TurnEventRow | null;
	outcome: TurnEventRow | null;
}

/** A turn whose conversation holds every term: where each term was found (entry ids, by term). */
export interface WindowTurn {
	session_key: number;
	session_id: string;
	turn_seq: number;
	foundIn: string[][];
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

	/**
	 * Turns whose conversation (prompts, assistant texts, tool calls; not output, not echoes) holds
	 * every term (`terms`: each term's MATCH expression), within the rule and before the cutoff.
	 * Bounded: a term with more than `cap` such fragments is common and is only looked for in the
	 * (at most `maxSessions`) sessions the rarer terms narrowed the turns to; when every term is
	 * common, none is looked for (empty).
	 */
	turnWindow(terms: readonly string[], cap: number, maxSessions: number): WindowTurn[] {
		const matches = terms.map((t) => scopedMatch(t, this.rule, { excludeDerived: true }));
		if (matches.some((m) => m === null)) return [];
		const lists = matches.map((m) => {
			const rows = termTurnRows(this.db, m!, cap);
			return rows.length > cap ? null : rows.filter(this.visible);
		});
		let found: WindowTurn[] | null = null;
		for (const [i, rows] of lists.entries()) if (rows !== null) found = narrowTurns(found, rows, i, terms.length);
		if (found === null) return [];
		const sessions = [...new Set(found.map((t) => t.session_key))];
		if (lists.includes(null) && sessions.length > maxSessions) return [];
		for (const [i, rows] of lists.entries()) {
			if (rows !== null) continue;
			// A common term: its fragments in those sessions only.
			const inSessions = sessions.flatMap((key) => termTurnRows(this.db, matches[i]!, Number.MAX_SAFE_INTEGER - 1, fragmentKeySpan(key)).filter(this.visible));
			found = narrowTurns(found, inSessions, i, terms.length);
		}
		return found;
	}

	/** The turn after this one on its branch (before the cutoff), or null. */
	nextTurn(turn: Pick<EventTurnRow, "session_key" | "session_id" | "turn_seq">): NextTurnRow | null {
		if (turn.turn_seq === null) return null;
		return nextTurnRow(this.db, turn.session_key, turn.turn_seq, this.before(turn.session_id));
	}

	/**
	 * Which terms (`terms`: each term's MATCH expression) the conversation of each of these turns
	 * holds (prompt, assistant texts, tool calls; not output, not echoes), before the cutoff: term
	 * indexes by `session_key:turn_seq`. Bounded by the turns: one seek for the rowids a turn's
	 * conversation spans, then one seek per term within them.
	 */
	conversationTerms(turns: readonly Pick<EventTurnRow, "session_key" | "session_id" | "turn_seq">[], terms: readonly string[]): Map<string, Set<number>> {
		const found = new Map<string, Set<number>>();
		const matches = terms.map((t) => scopedMatch(t, this.rule, { excludeDerived: true }));
		for (const t of turns) {
			const held = new Set<number>();
			found.set(`${t.session_key}:${t.turn_seq}`, held);
			if (t.turn_seq === null) continue;
			const before = this.before(t.session_id);
			const span = turnConversationSpan(this.db, t.session_key, t.turn_seq, before);
			if (span === null) continue;
			for (const [i, match] of matches.entries()) if (match !== null && conversationHolds(this.db, match, span, t.turn_seq, before)) held.add(i);
		}
		return found;
	}

	/**
	 * For each term (its MATCH expression), the prompts within the rule and before the cutoff that
	 * hold it; null for a term more than `scan` fragments hold (common: not looked for).
	 */
	promptsHolding(terms: readonly string[], scan: number): (TermPromptRow[] | null)[] {
		return terms.map((term) => {
			const match = scopedMatch(term, this.rule, { excludeDerived: true });
			if (match === null) return [];
			const rows = termPromptRows(this.db, match, scan);
			return rows === null ? null : rows.filter((r) => beforeCutoff(this.cutoff, r.session_id, r.turn_seq));
		});
	}

	/** Whether a prompt promptsHolding gave holds `match` (a MATCH expression of the caller's words). */
	promptSays(prompt: TermPromptRow, match: string): boolean {
		return fragmentMatches(this.db, prompt.frag_key, match);
	}

	private visible = (r: TermTurnRow): boolean => beforeCutoff(this.cutoff, r.session_id, r.seq);
}

/** The turns (all, when `turns` is null) that term `i`'s rows fall in, with where it was found. */
function narrowTurns(turns: WindowTurn[] | null, rows: readonly TermTurnRow[], i: number, terms: number): WindowTurn[] {
	const known = turns === null ? null : new Map(turns.map((t) => [`${t.session_key}:${t.turn_seq}`, t]));
	const next = new Map<string, WindowTurn>();
	for (const r of rows) {
		const key = `${r.session_key}:${r.turn_seq}`;
		const turn =
			next.get(key) ??
			(known === null
				? { session_key: r.session_key, session_id: r.session_id, turn_seq: r.turn_seq, foundIn: Array.from({ length: terms }, () => []) }
				: known.get(key));
		if (!turn) continue;
		if (!turn.foundIn[i]!.includes(r.entry_id)) turn.foundIn[i]!.push(r.entry_id);
		next.set(key, turn);
	}
	return [...next.values()];
}
