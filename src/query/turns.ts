/**
 * What a hit carries beyond its own event: the turn it belongs to (the prompt that started it and
 * the turn's outcome, project/turn.ts).
 *
 * - The turn is read through the gate (ScopedSearch / ScopedBrowse `turnOf`): only from the hit's
 *   own session, which the gate admitted, and in the calling session only before the invocation
 *   cutoff. Its previews are bounded snippets of the source text (never a summary), marked like
 *   the hit's own snippet; when the hit is the prompt or the outcome itself, only its id is given.
 * - A session-name or summary hit (compaction, branch summary) stands for its session rather than
 *   a moment in it: it carries the turn of the best-ranked hit of the same session in this answer
 *   that has one, and its own turn otherwise.
 */
import type { CandidateRow, TurnEventRow, TurnRows } from "../gate/gate.ts";
import type { SemanticKind } from "../model.ts";
import type { WordForms } from "../project/stem.ts";
import type { SourceFiles } from "../source/read.ts";
import { type SignalTerm, snippetTokens, type TextWords } from "./relevance.ts";
import { type Highlight, makeSnippet } from "./snippet.ts";
import { fragmentTexts } from "./source-text.ts";

/** Most characters of a turn preview (a prompt's or an outcome's). */
export const TURN_PREVIEW_CHARS = 300;

/** One end of a hit's turn: its id, and a bounded preview unless the hit is that event itself. */
export interface TurnEnd {
	entryId: string;
	/** Plain text (no marks), at most TURN_PREVIEW_CHARS plus ellipses; absent when the hit is this event. */
	preview?: string;
	/** Matched spans of `preview`, as a snippet's. */
	highlights?: Highlight[];
}

export interface HitTurn {
	/** The user prompt that started the turn. */
	prompt: TurnEnd;
	/** The turn's last visible assistant text (toward the materialized leaf when the turn forks); null while it has none. */
	outcome: TurnEnd | null;
}

/** Kinds that stand for a session rather than a moment of it: they carry the best-matching turn of their session. */
const SESSION_WIDE_KINDS: ReadonlySet<SemanticKind> = new Set<SemanticKind>(["session.name", "summary.compaction", "summary.branch"]);

interface TurnSource {
	turnOf(row: CandidateRow): TurnRows | null;
}

interface PreviewContext {
	terms: readonly SignalTerm[];
	forms: WordForms;
	words: TextWords;
	files: SourceFiles;
}

/**
 * The turn of each row (aligned with `rows`, in answer order), or null when it has none (entries
 * before a session's first prompt).
 */
export function turnsOf(source: TurnSource, rows: readonly CandidateRow[], context: PreviewContext): (HitTurn | null)[] {
	const read = new Map<string, TurnRows | null>();
	const rowsOfTurn = (row: CandidateRow): TurnRows | null => {
		const key = `${row.session_key}:${row.turn_seq}`;
		if (!read.has(key)) read.set(key, source.turnOf(row));
		return read.get(key) ?? null;
	};
	return rows.map((row) => {
		const standIn = SESSION_WIDE_KINDS.has(row.kind)
			? rows.find((other) => other.session_key === row.session_key && !SESSION_WIDE_KINDS.has(other.kind) && other.turn_seq !== null)
			: undefined;
		const turnRow = standIn ?? row;
		const turn = rowsOfTurn(turnRow);
		if (!turn?.prompt) return null;
		return {
			prompt: end(turn.prompt, row, turnRow, context, false),
			// An outcome states its conclusion first: its preview begins there unless the query words are far into it.
			outcome: turn.outcome ? end(turn.outcome, row, turnRow, context, true) : null,
		};
	});
}

function end(event: TurnEventRow, hit: CandidateRow, turnRow: CandidateRow, context: PreviewContext, fromStart: boolean): TurnEnd {
	if (event.event_key === hit.event_key) return { entryId: event.entry_id };
	const text = event.fragment_id === null ? null : textOf(event, turnRow, context.files);
	if (text === null) return { entryId: event.entry_id };
	const snippet = makeSnippet(text, snippetTokens(text, context.terms, context.forms, context.words), TURN_PREVIEW_CHARS, fromStart);
	return { entryId: event.entry_id, preview: snippet.text, highlights: snippet.highlights };
}

/** The event's preview fragment re-read from the source (the same session file as the hit's turn row). */
function textOf(event: TurnEventRow, sameSession: CandidateRow, files: SourceFiles): string | null {
	const texts = fragmentTexts(
		{
			path: sameSession.session_file,
			byteOffset: event.byte_offset,
			byteLength: event.byte_length,
			contentHash: event.content_hash,
			seq: event.seq,
			version: sameSession.version,
			parentId: event.parent_id,
		},
		files,
	);
	return texts?.get(event.fragment_id!) ?? null;
}
