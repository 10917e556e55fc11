/**
 * The byte budget of a turn transcript (`read --turn`): what is shown whole, what is cut, and what
 * is left out, always said. In order: long texts are cut, the longest first, to a common length
 * (never below MIN_TEXT_BYTES) so that every line fits; if the lines still do not fit, later turns
 * are left out whole (each named by its prompt), and then lines of the first turn between its
 * prompt and its last assistant text (its outcome), from the end backwards. The prompt and the
 * outcome are always shown. Pure.
 */
import type { TextLine, TranscriptLine } from "../project/transcript.ts";

/** Bytes every line costs beyond its text: its id, label and layout as rendered. */
export const LINE_OVERHEAD = 48;
/** A cut text's note (how many characters are left out, how to read them). */
const CUT_NOTE = 96;
/** An omission note (lines or turns left out). */
const OMISSION_NOTE = 160;
/** A long text is never cut shorter than this. */
export const MIN_TEXT_BYTES = 300;

/** A text line as shown: its text possibly cut (`shownChars` of `totalChars`). */
export type ShownTextLine = TextLine & { totalChars: number; truncated: boolean };
export type ShownLine = Exclude<TranscriptLine, TextLine> | ShownTextLine;

export interface FittedTurn {
	lines: ShownLine[];
	/** Lines of this turn left out for the budget: how many, and their entries (in order, each once). */
	leftOut: { lines: number; entryIds: string[] } | null;
}

export interface Fitted {
	turns: FittedTurn[];
	/** How many turns at the end were left out whole. */
	turnsLeftOut: number;
	/** The cost of what is shown, in the budget's bytes. */
	bytes: number;
}

const encoder = new TextEncoder();
const utf8 = (text: string) => encoder.encode(text).length;
/** Each text's size, measured once (the cut is searched for by measuring every line again). */
const textBytes = new WeakMap<TextLine, number>();
function bytesOf(line: TextLine): number {
	let n = textBytes.get(line);
	if (n === undefined) textBytes.set(line, (n = utf8(line.text)));
	return n;
}
const isText = (line: TranscriptLine): line is TextLine => "text" in line;

/** What a line costs with its text cut to at most `cap` bytes (a cut's note naming a command `extra` bytes longer). */
function cost(line: TranscriptLine, cap: number, extra: number): number {
	if (isText(line)) {
		const bytes = bytesOf(line);
		return LINE_OVERHEAD + (bytes > cap ? cap + CUT_NOTE + extra : bytes);
	}
	switch (line.kind) {
		case "tool":
			return LINE_OVERHEAD + utf8(line.tool) + utf8(line.args) + (line.resultId?.length ?? 0);
		case "bash":
			return LINE_OVERHEAD + utf8(line.command);
		default:
			return LINE_OVERHEAD + (line.tool?.length ?? 0) + (line.callId?.length ?? 0);
	}
}

/** A turn to fit: its lines, and what its header, end and lists cost beside them. */
export interface TurnToFit {
	lines: TranscriptLine[];
	overhead: number;
}

const total = (turns: readonly TurnToFit[], cap: number, extra: number) =>
	turns.reduce((sum, t) => sum + t.overhead + t.lines.reduce((s, l) => s + cost(l, cap, extra), 0), 0);

/**
 * Fit the turns (the first turn first) into `budget` bytes. `commandBytes`: how much longer than
 * usual each command a note names is (the CLI's `--root DIR`), so that its notes fit too.
 */
export function fitTurns(turns: readonly TurnToFit[], budget: number, commandBytes = 0): Fitted {
	const kept = turns.map((t) => ({ lines: [...t.lines], overhead: t.overhead }));
	const omission = OMISSION_NOTE + commandBytes;
	let turnsLeftOut = 0;
	// The note on turns left out names a command for each.
	const notes = () => (turnsLeftOut > 0 ? OMISSION_NOTE + turnsLeftOut * commandBytes : 0);
	while (kept.length > 1 && total(kept, MIN_TEXT_BYTES, commandBytes) + notes() > budget) {
		kept.pop();
		turnsLeftOut++;
	}
	let leftOut: FittedTurn["leftOut"] = null;
	if (kept.length > 0 && total(kept, MIN_TEXT_BYTES, commandBytes) + notes() > budget) {
		const { shown, dropped } = dropMiddle(kept[0]!.lines, budget - notes() - omission - kept[0]!.overhead, commandBytes);
		kept[0]!.lines = shown;
		leftOut = { lines: dropped.length, entryIds: [...new Set(dropped.map((l) => l.entryId))] };
	}
	const room = budget - notes() - (leftOut ? omission : 0);
	const cap = largestCap(kept, room, commandBytes);
	return {
		turns: kept.map((t, i) => ({ lines: t.lines.map((l) => cut(l, cap)), leftOut: i === 0 ? leftOut : null })),
		turnsLeftOut,
		bytes: total(kept, cap, commandBytes),
	};
}

/**
 * The first turn's lines within `room` at the smallest cut: the prompt and the outcome (the last
 * assistant text) always, then the lines after the prompt in order while they fit.
 */
function dropMiddle(lines: readonly TranscriptLine[], room: number, extra: number): { shown: TranscriptLine[]; dropped: TranscriptLine[] } {
	let outcome = -1;
	for (let i = lines.length - 1; i > 0 && outcome < 0; i--) if (lines[i]!.kind === "assistant") outcome = i;
	const must = new Set([0, outcome].filter((i) => i >= 0 && i < lines.length));
	let used = [...must].reduce((s, i) => s + cost(lines[i]!, MIN_TEXT_BYTES, extra), 0);
	const keep = new Set(must);
	for (let i = 1; i < lines.length; i++) {
		if (keep.has(i)) continue;
		const c = cost(lines[i]!, MIN_TEXT_BYTES, extra);
		if (used + c > room) break;
		used += c;
		keep.add(i);
	}
	return { shown: lines.filter((_, i) => keep.has(i)), dropped: lines.filter((_, i) => !keep.has(i)) };
}

/** The largest cut (in bytes, at least MIN_TEXT_BYTES) at which the lines fit `room`. */
function largestCap(turns: readonly TurnToFit[], room: number, extra: number): number {
	let hi = 0;
	for (const t of turns) for (const l of t.lines) if (isText(l)) hi = Math.max(hi, bytesOf(l));
	if (hi <= MIN_TEXT_BYTES || total(turns, hi, extra) <= room) return Math.max(hi, MIN_TEXT_BYTES);
	let lo = MIN_TEXT_BYTES;
	while (lo < hi) {
		const mid = Math.ceil((lo + hi) / 2);
		if (total(turns, mid, extra) <= room) lo = mid;
		else hi = mid - 1;
	}
	return lo;
}

/** A line with its text cut to at most `cap` bytes (never inside a character). */
function cut(line: TranscriptLine, cap: number): ShownLine {
	if (!isText(line)) return line;
	const totalChars = line.text.length;
	if (bytesOf(line) <= cap) return { ...line, totalChars, truncated: false };
	let end = Math.min(line.text.length, cap);
	while (end > 0 && utf8(line.text.slice(0, end)) > cap) end = Math.floor(end * 0.9);
	const code = line.text.charCodeAt(end - 1);
	if (code >= 0xd800 && code <= 0xdbff) end--;
	return { ...line, text: line.text.slice(0, end), totalChars, truncated: true };
}
