/**
 * Snippet word boundaries: the ASCII path (character codes) answers as the Unicode classes do, for
 * every pair of ASCII characters and the character after them; and marks never land inside words.
 */
import { expect, test } from "bun:test";
import { isBoundary, isBoundaryByClasses, makeSnippet } from "../../src/query/snippet.ts";

test("for ASCII, isBoundary by character codes equals isBoundary by Unicode classes", () => {
	const nexts = [undefined, "a", "Z", "5", " ", "_", "é", "É", "中"];
	let compared = 0;
	for (let b = 0; b < 128; b++) {
		for (let a = 0; a < 128; a++) {
			const before = String.fromCharCode(b);
			const after = String.fromCharCode(a);
			for (const next of nexts) {
				expect(isBoundary(before, after, next)).toBe(isBoundaryByClasses(before, after, next));
				compared++;
			}
		}
	}
	expect(compared).toBe(128 * 128 * nexts.length);
});

test("highlights fall on word boundaries: camelCase humps and acronyms, never inside a word", () => {
	const text = "theme: the other parseSessionEntries read HTTPServer and the end";
	const { text: shown, highlights } = makeSnippet(text, [["the"], ["session"], ["server"]]);
	const marked = highlights.map(([s, e]) => shown.slice(s, e));
	expect(marked).toEqual(["the", "Session", "Server", "the"]);
});

test("fromStart: the window begins at the text's start while a query word lies in its first maxChars, else on the words", () => {
	const text = `Fixed: the decoder ${"reads one frame only now, ".repeat(3)}so animated uploads fit. ${"Background on the old code. ".repeat(20)}The worker stopped crashing.`;
	const near = makeSnippet(text, [["animated"]], 120, true);
	expect(near.text).toStartWith("Fixed: the decoder");
	expect(near.highlights.map(([s, e]) => near.text.slice(s, e))).toEqual(["animated"]);
	// Without fromStart the same words are windowed (a quarter of the width before them): the start is cut.
	expect(makeSnippet(text, [["animated"]], 120).text).toStartWith("…");
	const far = makeSnippet(text, [["crashing"]], 120, true);
	expect(far.text).toStartWith("…");
	expect(far.text).toEndWith("The worker stopped crashing.");
	expect(makeSnippet(text, [], 120, true).text).toStartWith("Fixed: the decoder");
});
