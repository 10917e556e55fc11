/**
 * Marked snippets in text output: bold on a terminal, « » otherwise, and the source's own « » and
 * backslashes never confusable with marks: a reader can always recover the plain text and the
 * matched spans (checked by decoding random texts full of «, » and \).
 */
import { expect, test } from "bun:test";
import { markSnippet } from "../../src/present/render.ts";
import type { Highlight } from "../../src/query/snippet.ts";

/** The inverse of markSnippet without colour: plain text and highlights. */
function decode(marked: string): { text: string; highlights: Highlight[] } {
	let text = "";
	const highlights: Highlight[] = [];
	let open = -1;
	let slashes = 0;
	for (const ch of marked) {
		if (ch === "\\") {
			slashes++;
			continue;
		}
		if (ch === "«" || ch === "»") {
			text += "\\".repeat(Math.floor(slashes / 2));
			if (slashes % 2 === 1) text += ch;
			else if (ch === "«") open = text.length;
			else highlights.push([open, text.length]);
		} else {
			text += "\\".repeat(slashes) + ch;
		}
		slashes = 0;
	}
	return { text: text + "\\".repeat(slashes), highlights };
}

test("on a terminal, matches are bold and the text is unchanged", () => {
	expect(markSnippet("say «hi» there", [[5, 7]], { color: true })).toBe("say «\x1b[1mhi\x1b[0m» there");
});

test("without colour, marks are « » and literal guillemets are escaped", () => {
	expect(markSnippet("a «b» c", [[3, 4]], { color: false })).toBe("a \\««b»\\» c");
	expect(markSnippet("C:\\dir\\", [[3, 7]], { color: false })).toBe("C:\\\\«dir\\\\»");
	expect(markSnippet("plain \\ text", [], { color: false })).toBe("plain \\ text");
});

test("the marked form always decodes back to the text and its highlights", () => {
	let seed = 7;
	const rand = (n: number) => {
		seed = (seed * 1103515245 + 12345) % 2 ** 31;
		return seed % n;
	};
	const alphabet = ["a", "b", " ", "«", "»", "\\"];
	for (let round = 0; round < 2000; round++) {
		const text = Array.from({ length: 1 + rand(12) }, () => alphabet[rand(alphabet.length)]).join("");
		const highlights: Highlight[] = [];
		for (let at = rand(3); at < text.length; at += 1 + rand(4)) {
			const end = Math.min(text.length, at + 1 + rand(3));
			highlights.push([at, end]);
			at = end;
		}
		expect(decode(markSnippet(text, highlights, { color: false }))).toEqual({ text, highlights });
	}
});
