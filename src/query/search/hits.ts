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
import { type Highlight, makeSnippet, SNIPPET_CHARS } from "../snippet.ts";
import { OMISSION_MARKER_RE } from "../../project/text.ts";
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
	const s = snippetOf(body, ctx, ANSWER_SNIPPET_CHARS, true);
	return { snippet: s.text, highlights: s.highlights };
}

/**
 * A text longer than this is snippeted from a window of this many characters: finding the best
 * cluster in a bounded output (up to 24,000 indexed characters, head and tail) took a millisecond
 * per hit (1 GB bench, `deploy broken after release`: 10 hits of 19 KB on average, 12 ms of its 20).
 */
export const SNIPPET_SCAN_CHARS = 4096;

/**
 * The hit's snippet (snippet.ts), from a bounded window of a long text: the window that holds the
 * most of the query's terms (windowAnchor), its cuts marked with an ellipsis. An omission marker
 * outside the window (a big output indexed as head and tail) is kept on its side, as snippet.ts
 * shows it.
 */
function snippetOf(body: string, ctx: HitContext, maxChars = SNIPPET_CHARS, fromStart = false): { text: string; highlights: Highlight[] } {
	const tokens = (text: string) => snippetTokens(text, ctx.terms, ctx.tools.forms, ctx.tools.words);
	if (body.length <= SNIPPET_SCAN_CHARS) return makeSnippet(body, tokens(body), maxChars, fromStart);
	const from = fromStart ? 0 : Math.max(0, windowAnchor(body, ctx.terms) - SNIPPET_SCAN_CHARS / 4);
	const to = Math.min(body.length, from + SNIPPET_SCAN_CHARS);
	const marker = OMISSION_MARKER_RE.exec(body);
	const before = marker && marker.index + marker[0].length <= from ? marker[0] : "";
	const after = marker && marker.index >= to ? marker[0] : "";
	const text = `${before}${body.slice(from, to)}${after}`;
	const s = makeSnippet(text, tokens(text), maxChars, fromStart);
	let out = s.text;
	let highlights = s.highlights;
	if (from > 0 && before === "" && !out.startsWith("…")) {
		out = `…${out}`;
		highlights = highlights.map(([a, b]): Highlight => [a + 1, b + 1]);
	}
	if (to < body.length && after === "" && !out.endsWith("…")) out = `${out}…`;
	return { text: out, highlights };
}

/** Occurrences of each term looked at (a bound on the work for a word that fills a log). */
const ANCHOR_OCCURRENCES = 200;

/**
 * Where the snippet window of a long text begins its search: the occurrence of a query term
 * (its words in order, any short separator between them; a word's stem too) whose window holds
 * occurrences of the most terms, the earliest of those; 0 when no term is found so (then the
 * window is the text's start).
 */
function windowAnchor(text: string, terms: readonly SignalTerm[]): number {
	const lists = terms.map((t) => occurrences(text, t));
	let best = 0;
	let bestCover = 0;
	for (const list of lists) {
		for (const at of list.slice(0, 50)) {
			const lo = at - SNIPPET_SCAN_CHARS / 4;
			const hi = lo + SNIPPET_SCAN_CHARS;
			const cover = lists.filter((l) => l.some((p) => p >= lo && p < hi)).length;
			if (cover > bestCover || (cover === bestCover && at < best)) {
				bestCover = cover;
				best = at;
			}
		}
	}
	return best;
}

function occurrences(text: string, term: SignalTerm): number[] {
	const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
	const phrase = term.tokens.map(literal).join("[^\\p{L}\\p{N}]{1,3}");
	const pattern = term.stem !== null && term.tokens.length === 1 ? `${phrase}|${literal(term.stem)}` : phrase;
	if (pattern === "") return [];
	const re = new RegExp(pattern, "giu");
	const out: number[] = [];
	for (let m = re.exec(text); m !== null && out.length < ANCHOR_OCCURRENCES; m = re.exec(text)) {
		out.push(m.index);
		if (m[0].length === 0) re.lastIndex++;
	}
	return out;
}

const STALE_NOTICE = "[the source changed since it was indexed: run pi-events index]";

function toHit(row: CandidateRow, matched: number, body: string | null, ctx: HitContext, rank: number): Hit {
	const snippet = body === null ? { text: STALE_NOTICE, highlights: [] } : snippetOf(body, ctx);
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
