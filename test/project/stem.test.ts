/** The Porter stemmer (with Porter2's step 1c) and the index's forms column text. */
import { describe, expect, test } from "bun:test";
import { stem, WordForms } from "../../src/project/stem.ts";

describe("stem", () => {
	test("Porter's own examples and the forms people search by", () => {
		const pairs: [string, string][] = [
			["caresses", "caress"],
			["ponies", "poni"],
			["cats", "cat"],
			["agreed", "agre"],
			["plastered", "plaster"],
			["motoring", "motor"],
			["sing", "sing"],
			["conflated", "conflat"],
			["hopping", "hop"],
			["falling", "fall"],
			["hissing", "hiss"],
			["filing", "file"],
			["happy", "happi"],
			["relational", "relat"],
			["digitizer", "digit"],
			["hopefulness", "hope"],
			["electrical", "electr"],
			["adjustment", "adjust"],
			["adoption", "adopt"],
			["controll", "control"],
			["generalization", "gener"],
			["crash", "crash"],
			["crashed", "crash"],
			["crashes", "crash"],
			["crashing", "crash"],
			["migrate", "migrat"],
			["migration", "migrat"],
			["migrating", "migrat"],
			["test", "test"],
			["tests", "test"],
			["flaky", "flaki"],
			["flakiness", "flaki"],
			["deploy", "deploy"],
			["deployment", "deploy"],
			["validated", "valid"],
			["validation", "valid"],
		];
		for (const [word, want] of pairs) expect({ word, stem: stem(word) }).toEqual({ word, stem: want });
	});

	test("short words, digits and non-ASCII are left alone", () => {
		for (const w of ["is", "as", "s3", "café", "HTTP2"]) expect(stem(w)).toBe(w);
	});
});

describe("WordForms.formsText", () => {
	test("the distinct stems that differ from their word, once each, across texts", () => {
		const forms = new WordForms();
		expect(forms.formsText("The nightly export crashed; it crashes after migrations.", "crashing migration")).toBe("nightli crash migrat");
		expect(forms.formsText("export test the")).toBe("");
		expect(forms.formsText("crashed2 naïvely déployments")).toBe(""); // not plain ASCII words
	});

	test("the table grows without losing words", () => {
		const forms = new WordForms();
		const words = Array.from(
			{ length: 20_000 },
			(_, i) => `w${String.fromCharCode(97 + (i % 26), 97 + (Math.floor(i / 26) % 26), 97 + (Math.floor(i / 676) % 26))}ings`,
		);
		const want = new Set(words.map(stem).filter((s, i) => s !== words[i]));
		expect(new Set(forms.formsText(words.join(" ")).split(" "))).toEqual(want);
		expect(new Set(forms.formsText(words.join(" ")).split(" "))).toEqual(want);
	});
});
