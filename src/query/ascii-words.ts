/**
 * The words of an ASCII text as the index splits them (camelCase humps, capital runs), found in
 * place: offsets into the text, never a lowered copy. Proximity (relevance.ts) reads up to 32 KB
 * of candidate text per search this way.
 */

export const ASCII_ONLY = /^[\x00-\x7f]*$/;
const isUpper = (c: number) => c >= 65 && c <= 90;
const isLower = (c: number) => c >= 97 && c <= 122;
const isDigit = (c: number) => c >= 48 && c <= 57;
export const isAlnum = (c: number) => isUpper(c) || isLower(c) || isDigit(c);

/**
 * Whether a word starts at `i` of an ASCII text as the index splits words: after a non-letter, at
 * a camelCase hump (`parse|Errors`), or before the last capital of a run (`HTTP|Server`).
 */
export function wordStartsAt(text: string, i: number): boolean {
	if (i === 0) return true;
	const before = text.charCodeAt(i - 1);
	const here = text.charCodeAt(i);
	if (!isAlnum(before)) return true;
	if ((isLower(before) || isDigit(before)) && isUpper(here)) return true;
	return isUpper(before) && isUpper(here) && i + 1 < text.length && isLower(text.charCodeAt(i + 1));
}

/**
 * A run of letters and digits, by the shape of its words. Each alternative but the last matches a
 * whole run whose cuts are plain (asciiWordSpans), captured by its group:
 *   1. one word: no capital after its first character (`error`, `Error`, `v2`);
 *   2. one word: capitals, then digits (`FAIL`, `HTTP2`): splitCamel cuts a capital run only
 *      before a lowercase letter, and never after a digit that no capital follows;
 *   3. camelCase: words that each hold a lowercase letter or digit after an optional capital
 *      (`parseSessionEntries`, `v2Alpha`), cut before each capital after the first character.
 * The last alternative is any other run, cut by cutRun. Scanning by regex runs in native code: a
 * search's first pass over up to 32 KB of candidate text took 2–3 times as long as a loop over
 * char codes, before the JIT had warmed up.
 */
const ASCII_RUN = /([A-Za-z0-9][a-z0-9]*)(?![A-Za-z0-9])|([A-Z]+[0-9]*)(?![A-Za-z0-9])|([A-Z]?[a-z0-9]+(?:[A-Z][a-z0-9]+)+)(?![A-Za-z0-9])|[A-Za-z0-9]+/g;
const CAPITAL = /[A-Z]/g;

/**
 * The words of an ASCII text as textWords splits them (there, folding is lowercasing), as
 * [start, end) offsets into the text itself: each run of letters and digits, cut where
 * splitCamel's pattern matches, scanning as a global regex does (a match consumes its characters:
 * `HTTPsServer` is `htt psserver`). No copy of the text is made; proximity reads up to 32 KB of
 * candidate text per search, and splitting and lowercasing it first cost as much as the rest.
 */
export function asciiWordSpans(text: string): number[] {
	const spans: number[] = [];
	ASCII_RUN.lastIndex = 0;
	for (let run = ASCII_RUN.exec(text); run !== null; run = ASCII_RUN.exec(text)) {
		const start = run.index;
		const end = ASCII_RUN.lastIndex;
		if (run[1] !== undefined || run[2] !== undefined) spans.push(start, end);
		else if (run[3] !== undefined) cutBeforeCapitals(text, start, end, spans);
		else cutRun(text, start, end, spans);
	}
	return spans;
}

/** The words of a camelCase run text[start, end) (ASCII_RUN's third shape): a cut before each capital after the first character. */
function cutBeforeCapitals(text: string, start: number, end: number, spans: number[]): void {
	CAPITAL.lastIndex = start + 1;
	for (let capital = CAPITAL.exec(text); capital !== null && capital.index < end; capital = CAPITAL.exec(text)) {
		spans.push(start, capital.index);
		start = capital.index;
	}
	spans.push(start, end);
}

/** The words of the run text[i, end) where splitCamel cuts it, appended to `spans`. */
function cutRun(text: string, i: number, end: number, spans: number[]): void {
	let start = i;
	for (let p = i; p < end; ) {
		const c = text.charCodeAt(p);
		// ([a-z0-9])([A-Z]): a word ends at the lowercase letter or digit.
		if ((isLower(c) || isDigit(c)) && p + 1 < end && isUpper(text.charCodeAt(p + 1))) {
			spans.push(start, p + 1);
			start = p + 1;
			p += 2;
		} else if (isUpper(c)) {
			// ([A-Z]+)([A-Z][a-z]): a run of capitals before a lowercase letter keeps its last capital for the next word.
			let q = p + 1;
			while (q < end && isUpper(text.charCodeAt(q))) q++;
			if (q - p >= 2 && q < end && isLower(text.charCodeAt(q))) {
				spans.push(start, q - 1);
				start = q - 1;
				p = q + 1;
			} else p = q;
		} else p++;
	}
	spans.push(start, end);
}

/** Whether text[start, end) is `token` (lowercase ASCII) ignoring the text's case. */
export function sameWord(text: string, start: number, end: number, token: string): boolean {
	if (end - start !== token.length) return false;
	for (let k = 0; k < token.length; k++) {
		// A word holds letters and digits only: | 32 lowercases a letter and keeps a digit.
		if ((text.charCodeAt(start + k) | 32) !== token.charCodeAt(k)) return false;
	}
	return true;
}
