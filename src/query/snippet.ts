/**
 * Pure bounded snippets: a window of the fragment text around the best cluster of matches,
 * whitespace normalised, never paraphrased, with the matched spans as [start, end) offsets into
 * that plain text (renderers mark them). When the fragment was bounded (head + omission marker +
 * tail), the marker stays visible on the side it lies.
 */
import { OMISSION_MARKER_RE } from "../project/text.ts";
import { foldText } from "./fts.ts";

export const SNIPPET_CHARS = 240;

/** A matched span of a snippet: [start, end) in UTF-16 code units (JavaScript string indices). */
export type Highlight = [start: number, end: number];

interface Snippet {
	/** Plain text: no marks. */
	text: string;
	/** Matched spans, in order, never overlapping. */
	highlights: Highlight[];
}

interface Span {
	start: number;
	end: number;
	term: number;
}

/**
 * @param text the stored fragment text
 * @param termTokens for each query term, its tokens (already folded)
 * @param fromStart begin at the text's start unless no query word lies within its first `maxChars`
 *   characters (a turn's outcome states its conclusion first: the window goes to the words only
 *   when they are far into the text)
 */
export function makeSnippet(text: string, termTokens: readonly string[][], maxChars = SNIPPET_CHARS, fromStart = false): Snippet {
	const flat = text.replace(/\s+/g, " ");
	const folded = foldPreservingLength(flat);
	const spans = findSpans(folded, termTokens, flat);
	const marker = OMISSION_MARKER_RE.exec(text);
	const markerFlat = marker ? marker[0].replace(/\s+/g, " ").trim() : null;
	const markerAt = markerFlat ? flat.indexOf(markerFlat) : -1;

	let start = 0;
	if (spans.length > 0 && !(fromStart && spans[0]!.end <= maxChars)) {
		const best = bestWindowStart(spans, maxChars);
		start = Math.max(0, best - Math.floor(maxChars / 4));
	}
	let end = Math.min(flat.length, start + maxChars);
	if (end - start < maxChars) start = Math.max(0, end - maxChars);
	// Do not cut words when a nearby space exists.
	if (start > 0) {
		const space = flat.indexOf(" ", start);
		if (space >= 0 && space - start < 20) start = space + 1;
	}
	if (end < flat.length) {
		const space = flat.lastIndexOf(" ", end);
		if (space > start && end - space < 20) end = space;
	}
	let out = flat.slice(start, end);
	let shift = -start;
	if (start > 0) {
		out = `…${out}`;
		shift += 1;
	}
	if (end < flat.length) out = `${out}…`;
	if (markerFlat && markerAt >= 0) {
		const markerEnd = markerAt + markerFlat.length;
		const overlaps = markerAt < end && markerEnd > start;
		if (!overlaps) {
			if (markerAt >= end) out = `${out} ${markerFlat}`;
			else {
				out = `${markerFlat} ${out}`;
				shift += markerFlat.length + 1;
			}
		}
	}
	const trimmed = out.trimStart();
	shift -= out.length - trimmed.length;
	return { text: trimmed.trimEnd(), highlights: visibleSpans(spans, start, end).map((s) => [s.start + shift, s.end + shift]) };
}

/** Lowercase with diacritics removed, keeping one output unit per input unit (offsets stay valid). */
function foldPreservingLength(text: string): string {
	// Most text is ASCII: lowercase keeps the length, and nothing else needs folding.
	if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase();
	let out = "";
	let runStart = 0;
	for (let i = 0; i < text.length; i++) {
		if (text.charCodeAt(i) < 0x80) continue;
		out += text.slice(runStart, i).toLowerCase();
		const ch = text[i]!;
		const f = foldText(ch);
		out += f.length === 1 ? f : ch.toLowerCase().length === 1 ? ch.toLowerCase() : ch;
		runStart = i + 1;
	}
	return out + text.slice(runStart).toLowerCase();
}

const WORD = /[\p{L}\p{N}]/u;
const UPPER = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;
const isAsciiUpper = (c: number) => c >= 65 && c <= 90;
const isAsciiLower = (c: number) => c >= 97 && c <= 122;
const isAsciiWord = (c: number) => isAsciiUpper(c) || isAsciiLower(c) || (c >= 48 && c <= 57);

/**
 * Whether a word may start (or end) between `before` and `after` in the original text: at a
 * non-word character, at a camelCase hump (`parse|Session`, `HTTP|Server`), or beside CJK,
 * which the index splits per character. So marks never land inside a word (`edi«ts»`).
 */
export function isBoundary(before: string | undefined, after: string | undefined, afterNext: string | undefined): boolean {
	if (before === undefined || after === undefined) return true;
	const b = before.charCodeAt(0);
	const a = after.charCodeAt(0);
	// ASCII on both sides (most text) by character codes: the same answers as the Unicode classes
	// (test/query/snippet.test.ts compares them), without a regex run per side: a common word's
	// 200 occurrences cost thousands of them.
	if (b < 0x80 && a < 0x80) {
		if (!isAsciiWord(b) || !isAsciiWord(a)) return true;
		if (isAsciiLower(b) && isAsciiUpper(a)) return true;
		return isAsciiUpper(b) && isAsciiUpper(a) && afterNext !== undefined && LOWER.test(afterNext);
	}
	return isBoundaryByClasses(before, after, afterNext);
}

/** isBoundary by Unicode classes, for any text. */
export function isBoundaryByClasses(before: string, after: string, afterNext: string | undefined): boolean {
	if (!WORD.test(before) || !WORD.test(after)) return true;
	if (CJK.test(before) || CJK.test(after)) return true;
	if (LOWER.test(before) && UPPER.test(after)) return true;
	return UPPER.test(before) && UPPER.test(after) && afterNext !== undefined && LOWER.test(afterNext);
}

function findSpans(folded: string, termTokens: readonly string[][], original: string): Span[] {
	const spans: Span[] = [];
	termTokens.forEach((tokens, term) => {
		for (const token of tokens) {
			if (!token) continue;
			let from = 0;
			let count = 0;
			for (;;) {
				const at = folded.indexOf(token, from);
				if (at < 0 || count > 200) break;
				const end = at + token.length;
				if (isBoundary(original[at - 1], original[at], original[at + 1]) && isBoundary(original[end - 1], original[end], original[end + 1])) {
					spans.push({ start: at, end, term });
					count++;
				}
				from = at + 1;
			}
		}
	});
	spans.sort((a, b) => a.start - b.start || b.end - a.end);
	return spans;
}

/** Start of the window that covers the most distinct terms (earliest on ties). */
function bestWindowStart(spans: Span[], width: number): number {
	let bestStart = spans[0]!.start;
	let bestScore = -1;
	for (let i = 0; i < spans.length; i++) {
		const terms = new Set<number>();
		let hits = 0;
		for (let j = i; j < spans.length && spans[j]!.end <= spans[i]!.start + width; j++) {
			terms.add(spans[j]!.term);
			hits++;
		}
		const score = terms.size * 1000 + Math.min(hits, 999);
		if (score > bestScore) {
			bestScore = score;
			bestStart = spans[i]!.start;
		}
	}
	return bestStart;
}

/** The spans inside [start, end), in order, skipping any that overlap one already taken. */
function visibleSpans(spans: Span[], start: number, end: number): Span[] {
	const out: Span[] = [];
	let cursor = start;
	for (const s of spans) {
		if (s.start < cursor || s.end > end) continue;
		out.push(s);
		cursor = s.end;
	}
	return out;
}
