/**
 * Ranking signals computed from a candidate fragment's text and kind (pure), applied to a bounded
 * set of top candidates before fragments are coalesced into event hits. BM25 knows how often the
 * query words occur, not where, nor who said them:
 *
 * - Conversational evidence: for a query of words a person would say, what people said (user and
 *   assistant text, session names, and at half strength summaries) outranks tool output and
 *   arguments that merely contain the words. Code-shaped queries (paths, flags, error codes,
 *   identifiers) get little or none of it: commands and output are where code lives.
 * - Proximity: the smallest window of words that holds every query term. All terms adjacent
 *   multiplies the score by 1 + PROXIMITY; the bonus fades as the window widens.
 *
 * Repetition needs no extra rule: BM25's term-frequency saturation (k1 = 1.2) and length
 * normalisation already flatten a log that prints the words forty times, and the conversational
 * factor puts what a person said above it. An extra log-damping of repeated terms in output was
 * measured and left out: it cost 2.7 points of Rank@1 on fixtures/eval and gained nothing on the
 * hard relevance queries.
 */
import type { WordForms } from "../project/stem.ts";
import { splitCamel } from "../project/text.ts";
import type { SemanticKind } from "../model.ts";
import { ASCII_ONLY, asciiWordSpans, isAlnum, sameWord, wordStartsAt } from "./ascii-words.ts";
import { foldText } from "./fts.ts";

/** What the query contributes: per term its tokens (a code-shaped term has several) and, for a plain word, its stem. */
export interface SignalTerm {
	text: string;
	phrase: boolean;
	tokens: readonly string[];
	stem: string | null;
}

/**
 * Share of the query that is words a person says (lowercase letters only, or a capitalised word),
 * as opposed to code-shaped text (paths, flags, error codes, identifiers, numbers), which lives
 * in commands, calls and output as much as in conversation.
 */
export function proseShare(terms: readonly SignalTerm[]): number {
	if (terms.length === 0) return 0;
	const prose = terms.filter((t) => (t.phrase ? t.text.split(/\s+/) : [t.text]).every((w) => /^[A-Za-z][A-Za-z0-9]*[,.!?;:]?$/.test(w)));
	// One code-shaped term makes the query mostly about code: squared, a half-prose query counts a quarter.
	return (prose.length / terms.length) ** 2;
}

/** Kinds where people speak (or name and summarise what happened): the strongest evidence for words a person would say. */
const CONVERSATION: Partial<Record<SemanticKind, number>> = {
	"user.text": 1,
	"assistant.text": 1,
	"session.name": 1,
	"summary.compaction": 0.5,
	"summary.branch": 0.5,
};
/** Conversational evidence: the factor for a prose query (share 1) in a conversational kind. */
const CONVERSATION_BOOST = 1.0;

interface TextSignals {
	/** Distinct terms found in the text (by position, as words or forms). */
	found: number;
	/** Width in words of the smallest window holding every found term (0 when fewer than two). */
	window: number;
}

/** Score multiplier of all terms standing next to each other. */
const PROXIMITY = 0.5;
/** Occurrences counted per term before positions stop being collected (bounds the work on huge logs). */
const MAX_POSITIONS = 400;

const WORD = /[\p{L}\p{N}]+/gu;

/** Words of a text as the index sees them: camelCase split, folded, letters and digits. */
function textWords(text: string): string[] {
	return foldText(splitCamel(text)).match(WORD) ?? [];
}

/**
 * The words of the texts one search looks at, split once: proximity and snippets read the same
 * top fragments (up to 24,000 characters each).
 */
export class TextWords {
	private readonly memo = new Map<string, string[]>();

	of(text: string): string[] {
		let words = this.memo.get(text);
		if (words === undefined) this.memo.set(text, (words = textWords(text)));
		return words;
	}
}

/**
 * Whether a word may have this stem: a stem keeps the first two letters of its word (Porter only
 * rewrites endings; checked over the 595,373 distinct words of the 1 GB benchmark corpus), so
 * most words are ruled out without stemming them.
 */
function mayHaveStem(word: string, stem: string): boolean {
	return word.charCodeAt(0) === stem.charCodeAt(0) && word.charCodeAt(1) === stem.charCodeAt(1);
}

/**
 * The part of a stem that every word having it begins with: all but its last two letters (at
 * least two). Porter rewrites at most the last two letters it keeps (`sensibility` → `sensibl`,
 * `trying` → `tri`); checked over the same 595,373 words.
 */
function stemPrefix(stem: string): string {
	return stem.slice(0, Math.max(2, stem.length - 2));
}

/**
 * The distinct words of an ASCII text, lowercased, that begin with one of these stems' prefixes:
 * the only words that may have one of the stems. Found by searching for the prefixes rather than
 * splitting the whole text (a hit's text holds up to 24,000 characters).
 */
function wordsWithPrefixes(text: string, stems: readonly string[]): Set<string> {
	const lower = text.toLowerCase();
	const out = new Set<string>();
	for (const prefix of new Set(stems.map(stemPrefix))) {
		for (let at = lower.indexOf(prefix); at >= 0; at = lower.indexOf(prefix, at + 1)) {
			if (!wordStartsAt(text, at)) continue;
			let end = at + prefix.length;
			while (end < text.length && isAlnum(text.charCodeAt(end)) && !wordStartsAt(text, end)) end++;
			out.add(lower.slice(at, end));
		}
	}
	return out;
}

export function textSignals(text: string, terms: readonly SignalTerm[], forms: WordForms, texts: TextWords = new TextWords()): TextSignals {
	if (ASCII_ONLY.test(text) && terms.every((t) => t.tokens.length === 1)) return asciiSignals(text, terms, forms);
	const words = texts.of(text);
	const positions: number[][] = terms.map(() => []);
	for (let i = 0; i < words.length; i++) {
		const w = words[i]!;
		let wordStem: string | undefined;
		for (let t = 0; t < terms.length; t++) {
			const term = terms[t]!;
			const list = positions[t]!;
			if (list.length >= MAX_POSITIONS || term.tokens.length === 0) continue;
			if (term.tokens.length === 1) {
				const token = term.tokens[0]!;
				if (w === token || (term.stem !== null && mayHaveStem(w, term.stem) && (wordStem ??= forms.stemOf(w)) === term.stem)) {
					list.push(i);
				}
			} else if (w === term.tokens[0] && term.tokens.every((tok, k) => words[i + k] === tok)) {
				list.push(i);
			}
		}
	}
	const present = positions.map((p, t) => ({ p, len: terms[t]!.tokens.length })).filter((x) => x.p.length > 0);
	return { found: present.length, window: present.length >= 2 ? minimalWindow(present) : 0 };
}

/** textSignals for an ASCII text and one-word terms, comparing words in place (asciiWordSpans). */
function asciiSignals(text: string, terms: readonly SignalTerm[], forms: WordForms): TextSignals {
	const spans = asciiWordSpans(text);
	const positions: number[][] = terms.map(() => []);
	for (let w = 0; w < spans.length; w += 2) {
		const start = spans[w]!;
		const end = spans[w + 1]!;
		const first = text.charCodeAt(start) | 32;
		let wordStem: string | undefined;
		for (let t = 0; t < terms.length; t++) {
			const list = positions[t]!;
			if (list.length >= MAX_POSITIONS) continue;
			const term = terms[t]!;
			const token = term.tokens[0]!;
			const stem = term.stem;
			// Both the token and a stem begin with the word's first letter (mayHaveStem).
			if (first !== token.charCodeAt(0) && (stem === null || first !== stem.charCodeAt(0))) continue;
			if (sameWord(text, start, end, token)) list.push(w / 2);
			else if (stem !== null && end - start >= 2 && (text.charCodeAt(start + 1) | 32) === stem.charCodeAt(1)) {
				wordStem ??= forms.stemOf(text.slice(start, end).toLowerCase());
				if (wordStem === stem) list.push(w / 2);
			}
		}
	}
	const present = positions.map((p) => ({ p, len: 1 })).filter((x) => x.p.length > 0);
	return { found: present.length, window: present.length >= 2 ? minimalWindow(present) : 0 };
}

/**
 * Per term, the tokens to mark in a snippet: its own, plus the other forms of a plain word that
 * occur in the text (`crashed` for `crash`), so a form-only hit shows what matched.
 */
export function snippetTokens(text: string, terms: readonly SignalTerm[], forms: WordForms, texts: TextWords = new TextWords()): string[][] {
	const out = terms.map((t) => [...t.tokens]);
	const stems = terms.map((t) => t.stem);
	if (!stems.some((s) => s !== null)) return out;
	const present = stems.filter((s): s is string => s !== null);
	// An ASCII text is searched for the stems' prefixes; any other is split into words (folding).
	const candidates = ASCII_ONLY.test(text) ? wordsWithPrefixes(text, present) : new Set(texts.of(text));
	for (const w of candidates) {
		if (!present.some((s) => mayHaveStem(w, s))) continue;
		const s = forms.stemOf(w);
		terms.forEach((t, i) => {
			if (t.stem === s && !out[i]!.includes(w)) out[i]!.push(w);
		});
	}
	return out;
}

/**
 * Smallest span (in words, inclusive) covering one occurrence of every list, a phrase's words
 * counted whole (`len`). Each list is ascending (collected in text order). For each start, the
 * best choice is every list's first occurrence at or after it, so one pass moves a cursor per list
 * (no sort, no object per position). Exact also when a phrase in the middle ends last, which a
 * sweep over the two outermost occurrences got wrong.
 */
export function minimalWindow(lists: readonly { p: readonly number[]; len: number }[]): number {
	const next = new Array<number>(lists.length).fill(0);
	let best = Number.POSITIVE_INFINITY;
	for (;;) {
		let start = Number.POSITIVE_INFINITY;
		let end = Number.NEGATIVE_INFINITY;
		for (let i = 0; i < lists.length; i++) {
			const { p, len } = lists[i]!;
			const at = p[next[i]!];
			if (at === undefined) return Number.isFinite(best) ? best : 0;
			if (at < start) start = at;
			if (at + len - 1 > end) end = at + len - 1;
		}
		if (end - start + 1 < best) best = end - start + 1;
		for (let i = 0; i < lists.length; i++) if (lists[i]!.p[next[i]!] === start) next[i]!++;
	}
}

/** Conversational evidence (no text needed): what people said, for words a person would say. */
export function evidenceFactor(kind: SemanticKind, prose: number): number {
	return 1 + CONVERSATION_BOOST * prose * (CONVERSATION[kind] ?? 0);
}

/**
 * Proximity (≥ 1): all terms adjacent → 1 + PROXIMITY, fading with the words of slack between
 * them. A term the positions could not see (CJK, aux-only matches) is no penalty: no bonus.
 */
export function proximityFactor(s: TextSignals, termCount: number): number {
	if (termCount < 2 || s.found !== termCount || s.window === 0) return 1;
	const slack = Math.max(0, s.window - termCount);
	return 1 + PROXIMITY / (1 + slack / 4);
}
