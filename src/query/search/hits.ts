/**
 * Hits: the selected rows as the answer shows them, each with a bounded snippet re-derived from
 * its source line (verified against the indexed hash; a notice when the file changed since).
 */
import type { CandidateRow, TurnRows } from "../../gate/gate.ts";
import type { ContextRole } from "../../model.ts";
import type { WordForms } from "../../project/stem.ts";
import { isoTime } from "../../project/projector.ts";
import type { SourceFiles } from "../../source/read.ts";
import { shareOfBest } from "../answer-score.ts";
import { type SignalTerm, snippetTokens, type TextWords } from "../relevance.ts";
import { type Highlight, makeSnippet } from "../snippet.ts";
import { fragmentTexts } from "../source-text.ts";
import { turnsOf } from "../turns.ts";
import type { Duplicates } from "../copies.ts";
import type { TurnMatches } from "./answers.ts";
import type { Hit } from "./types.ts";

/** What reading and marking text needs, shared by one search's stages (each caches what it learns). */
export interface TextTools {
	forms: WordForms;
	words: TextWords;
	files: SourceFiles;
}

/** What building the hits of one answer needs beside the rows. */
export interface HitContext {
	/** How many fragments of each event matched (absent: 1). */
	matched: Map<number, number>;
	/** Texts already read (by rerank), by fragment; null: the source changed. */
	texts: Map<number, string | null>;
	terms: readonly SignalTerm[];
	tools: TextTools;
	/** The best relevance among all candidates: a hit's score is its share of it. */
	best: number;
	/** Grouped by session: how many matching events each session holds. */
	eventsPerSession: Map<number, number> | null;
	/** Where the hits' turns are read (the gate's scoped search or browse). */
	turns: { turnOf(row: CandidateRow): TurnRows | null };
	/** Hits that are there for their turn (answers.ts), with the turn's events that held the words. */
	turnMatches?: TurnMatches;
	/** Copies of the hits' output folded into them (copies.ts), by event key. */
	duplicates?: Map<number, Duplicates>;
}

/** The hits of the selected rows, ranked from 1 in their order, each with its turn. */
export function buildHits(rows: readonly CandidateRow[], ctx: HitContext): Hit[] {
	const turns = turnsOf(ctx.turns, rows, { terms: ctx.terms, ...ctx.tools });
	return rows.map((row, i) => {
		const body = ctx.texts.has(row.frag_key) ? (ctx.texts.get(row.frag_key) ?? null) : fragmentText(row, ctx.tools.files);
		const hit = toHit(row, ctx.matched.get(row.event_key) ?? 1, body, ctx, i + 1);
		hit.turn = turns[i] ?? null;
		const byTurn = ctx.turnMatches?.get(row.event_key);
		if (byTurn) {
			// An answer that joined for its turn shows its start, where it states the cause, and enough of it for the fix.
			if (body !== null) Object.assign(hit, answerSnippet(body, ctx));
			hit.match = byTurn.takesUp ? "later" : "turn";
			hit.foundIn = ctx.terms.map((t, i) => ({ term: t.text, entryIds: byTurn.foundIn[i] ?? [] }));
			if (byTurn.takesUp) hit.takesUp = byTurn.takesUp;
		}
		const copies = ctx.duplicates?.get(row.event_key);
		if (copies) hit.duplicates = copies;
		if (ctx.eventsPerSession !== null) hit.otherMatchingEvents = (ctx.eventsPerSession.get(row.session_key) ?? 1) - 1;
		return hit;
	});
}

/** The hit's evidence text, re-derived from the source; null when the source changed since indexing. */
export function fragmentText(row: CandidateRow, files: SourceFiles): string | null {
	const texts = fragmentTexts(
		{
			path: row.session_file,
			byteOffset: row.byte_offset,
			byteLength: row.byte_length,
			contentHash: row.content_hash,
			seq: row.seq,
			version: row.version,
			parentId: row.parent_id,
		},
		files,
	);
	return texts?.get(row.fragment_id) ?? null;
}

/** Characters of a joined answer's snippet (a hit's is SNIPPET_CHARS): "Found it. <cause> … <fix>" mostly fits. */
export const ANSWER_SNIPPET_CHARS = 480;

function answerSnippet(body: string, ctx: HitContext): { snippet: string; highlights: Highlight[] } {
	const s = makeSnippet(body, snippetTokens(body, ctx.terms, ctx.tools.forms, ctx.tools.words), ANSWER_SNIPPET_CHARS, true);
	return { snippet: s.text, highlights: s.highlights };
}

const STALE_NOTICE = "[the source changed since it was indexed: run pi-events index]";

function toHit(row: CandidateRow, matched: number, body: string | null, ctx: HitContext, rank: number): Hit {
	const snippet = body === null ? { text: STALE_NOTICE, highlights: [] } : makeSnippet(body, snippetTokens(body, ctx.terms, ctx.tools.forms, ctx.tools.words));
	return {
		sessionId: row.session_id,
		entryId: row.entry_id,
		fragmentId: row.fragment_id,
		eventType: row.event_type,
		semanticKind: row.kind,
		role: row.role,
		toolName: row.tool_name,
		timestamp: isoTime(row.ts_ms),
		cwd: row.cwd,
		sessionFile: row.session_file,
		sessionName: row.session_name || null,
		line: row.line,
		snippet: snippet.text,
		highlights: snippet.highlights,
		stale: body === null,
		rank,
		score: shareOfBest(row.relevance, ctx.best),
		isError: row.is_error === null ? null : row.is_error === 1,
		exitCode: row.exit_code,
		branchState: row.branch_state,
		contextRole: row.context_role as ContextRole,
		selectionState: row.selection_state,
		matchedFragments: matched,
		derived: row.derived === 1,
		match: "event",
		turn: null,
	};
}
