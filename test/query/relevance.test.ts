/**
 * Relevance rules on small hand-written sessions: word forms (and --exact), quoted phrases stay
 * exact, exact forms above form-only matches, proximity, conversational evidence, and the
 * no-silent-empty explanation (within the caller's scope only).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { asciiWordSpans } from "../../src/query/ascii-words.ts";
import { minimalWindow, snippetTokens, TextWords, textSignals } from "../../src/query/relevance.ts";
import { stem, WordForms } from "../../src/project/stem.ts";
import { assistantEntry, buildIndex, ids, oneMessageSession, run, type TestIndex, toolResultEntry, userEntry, writeSession } from "./helpers.ts";

const A = "/work/rel-test/app";
const B = "/work/rel-test/other";
const sid = (n: number) => `0000dddd-0000-4000-8000-${String(n).padStart(12, "0")}`;
const u = (n: number) => `${sid(n)}/u-0000dd`;
let idx: TestIndex;

beforeAll(() => {
	const dir = join(makeTempDir("pi-events-relevance-q-"), "sessions");
	const one = (n: number, cwd: string, text: string, ts = "2026-10-01T10:00:05.000Z") => writeSession(dir, oneMessageSession(sid(n), cwd, text, ts));
	one(1, A, "The nightly export crashed after the migration of the ledger tables.");
	one(2, A, "Export job: crash loop in the migration runner.", "2026-10-02T10:00:05.000Z");
	one(3, A, "Quarterly planning notes, nothing technical here.");
	// proximity: the same words close together and far apart (the far one is newer, so ties would favour it)
	one(4, A, "Checkout retries the payment gateway webhook when it times out.", "2026-10-03T10:00:05.000Z");
	one(
		5,
		A,
		"The checkout page got a new layout this week and the design team is happy with it. Unrelated: the mobile app release slipped by a day because of store review. Later we also looked at the payment provider contract, and somebody asked about the webhook dashboard.",
		"2026-10-04T10:00:05.000Z",
	);
	// conversational evidence: a report vs a log that repeats the words
	writeSession(dir, {
		id: sid(6),
		cwd: A,
		entries: [
			userEntry("u-report", null, "2026-10-05T10:00:00.000Z", "Search indexing stalls every night around two, can you look?"),
			assistantEntry("a-call", "u-report", "2026-10-05T10:00:10.000Z", null, [{ id: "tc1", name: "bash", arguments: { command: "kubectl logs job/indexer" } }]),
			toolResultEntry(
				"r-log",
				"a-call",
				"2026-10-05T10:00:20.000Z",
				"tc1",
				"bash",
				Array.from({ length: 30 }, (_, i) => `02:0${i % 10}:11 WARN search indexing stalls: batch ${i} waiting on lock`).join("\n"),
			),
		],
	});
	// another workspace holds a word the first does not
	one(7, B, "zebrafish telemetry only lives in the other workspace");
	// a word only pi-events' own echo holds: a bash call that ran pi-events, and its output
	writeSession(dir, {
		id: sid(8),
		cwd: A,
		entries: [
			userEntry("u-ask", null, "2026-10-06T10:00:00.000Z", "Did we ever talk about this?"),
			assistantEntry("a-echo", "u-ask", "2026-10-06T10:00:10.000Z", null, [
				{ id: "tc2", name: "bash", arguments: { command: "pi-events search marmosetecho" } },
			]),
			toolResultEntry("r-echo", "a-echo", "2026-10-06T10:00:20.000Z", "tc2", "bash", "no hits for marmosetecho"),
		],
	});
	idx = buildIndex([dir]);
});

afterAll(() => {
	idx?.close();
	cleanupTempDirs();
});

const inA = { roots: [A], current: null };

describe("word forms", () => {
	test("a word finds its other forms (crash → crashed, migrate → migration); the literal query alone finds nothing", () => {
		expect(ids(run(idx.db, "export crash migrate", {}, { scope: inA })).sort()).toEqual([u(1), u(2)].sort());
		expect(ids(run(idx.db, "export crash migrate", {}, { scope: inA, exact: true }))).toEqual([]);
	});

	test("exact forms rank above form-only matches", () => {
		// session 2 says "crash" and "migration"... session 1 says "crashed" and "migration": for `crash` the exact form wins.
		expect(ids(run(idx.db, "export crash", {}, { scope: inA }))[0]).toBe(u(2));
		expect(ids(run(idx.db, "export crashed", {}, { scope: inA }))[0]).toBe(u(1));
	});

	test("quoted phrases stay exact", () => {
		expect(ids(run(idx.db, '"export crashed"', {}, { scope: inA }))).toEqual([u(1)]);
		expect(ids(run(idx.db, '"export crash"', {}, { scope: inA }))).toEqual([]);
	});

	test("snippets mark the form that matched", () => {
		const hit = run(idx.db, "crash migrate", {}, { scope: inA }).hits.find((h) => h.sessionId === sid(1))!;
		const marked = hit.highlights.map(([s, e]) => hit.snippet.slice(s, e));
		expect(marked).toEqual(["crashed", "migration"]);
	});
});

describe("forms marked in snippets", () => {
	const term = (w: string) => ({ text: w, phrase: false, tokens: [w], stem: stem(w) });
	const marks = (text: string, words: string[]) => snippetTokens(text, words.map(term), new WordForms()).map((t) => [...t].sort());

	test("other forms are found as the index splits words: camelCase humps, capital runs, punctuation", () => {
		expect(marks("parseErrors and HTTPErrors; error-prone: ERRORS", ["error"])).toEqual([["error", "errors"]]);
		// Inside a word (no hump) is not a word of its own.
		expect(marks("terrors of the night, preerrored", ["error"])).toEqual([["error"]]);
		expect(marks("Crashed twice, crashes daily; recrash", ["crash"])).toEqual([["crash", "crashed", "crashes"]]);
	});

	test("stems that rewrite the word's ending: try → trying/tried, sensible → sensibility", () => {
		expect(marks("We tried, we are trying, nobody tries", ["try"])).toEqual([["tried", "tries", "try", "trying"]]);
		expect(marks("the sensibility of it", ["sensible"])).toEqual([["sensibility", "sensible"]]);
	});

	test("a text with non-ASCII characters is folded as the index folds it", () => {
		expect(marks("Les erreurs: Érrors, ÉRRORS", ["error"])).toEqual([["error", "errors"]]);
	});
});

describe("proximity over ASCII text (words compared in place)", () => {
	const words = (text: string) => {
		const spans = asciiWordSpans(text);
		const out: string[] = [];
		for (let w = 0; w < spans.length; w += 2) out.push(text.slice(spans[w], spans[w + 1]).toLowerCase());
		return out;
	};

	test("splits words exactly as the general path does: camelCase, capital runs, digits, a regex's consumed characters", () => {
		const shapes = ["parseSessionEntries", "HTTPServer", "HTTPsServer", "aBCd", "aBcD", "v2Alpha x86_64", "ABC", "a-b_c.D9e", ""];
		// Runs of capitals and digits: one word unless a capital follows a digit (splitCamel's first rule).
		shapes.push("FAIL", "HTTP2", "A0B", "AB0C", "09Z", "X0Z s", "04T02", "502Z", "TestDeadlineTreePage", "Alpha2Beta", "x2Y");
		for (const text of shapes) {
			expect(words(text)).toEqual(new TextWords().of(text));
		}
		// Random strings over the characters that matter (a fixed generator: the same cases every run;
		// its high bits, since the low bits of a power-of-two LCG repeat with a short period).
		let seed = 7;
		const next = (n: number) => {
			seed = (seed * 1103515245 + 12345) % 2 ** 31;
			return Math.floor(seed / 2 ** 16) % n;
		};
		const alphabet = "aAbBzZ09 _-.sS";
		for (let i = 0; i < 20000; i++) {
			let text = "";
			for (let k = next(24); k >= 0; k--) text += alphabet[next(alphabet.length)];
			expect(words(text)).toEqual(new TextWords().of(text));
		}
	});

	test("gives the same positions and window as the general path", () => {
		const term = (w: string) => ({ text: w, phrase: false, tokens: [w], stem: stem(w) });
		const terms = ["deploy", "error", "the"].map(term);
		for (const text of [
			"The deployment failed with an Error in the DeployController",
			"error: the deploys keep failing; ERRORS everywhere, then the deploy worked",
			"nothing relevant here",
		]) {
			// A character outside ASCII far away sends the same text down the general path.
			expect(textSignals(text, terms, new WordForms())).toEqual(textSignals(`${text} é`, terms, new WordForms()));
		}
		expect(textSignals("deploy the error", terms, new WordForms())).toEqual({ found: 3, window: 3 });
	});

	test("the window is the smallest span holding an occurrence of every term, phrases counted whole", () => {
		// Every choice of one occurrence per list, by brute force: the definition itself.
		const smallest = (lists: { p: number[]; len: number }[]): number => {
			let best = Number.POSITIVE_INFINITY;
			const choose = (i: number, lo: number, hi: number): void => {
				if (i === lists.length) {
					best = Math.min(best, hi - lo + 1);
					return;
				}
				for (const at of lists[i]!.p) choose(i + 1, Math.min(lo, at), Math.max(hi, at + lists[i]!.len - 1));
			};
			choose(0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY);
			return best;
		};
		expect(
			minimalWindow([
				{ p: [0, 9], len: 1 },
				{ p: [4, 8], len: 1 },
			]),
		).toBe(2);
		// A two-word phrase at 3 ends at 4: with a word at 0 the span is 0–4, with one at 6 it is 3–6.
		expect(
			minimalWindow([
				{ p: [0, 6], len: 1 },
				{ p: [3], len: 2 },
			]),
		).toBe(4);
		// A phrase in the middle that ends last: the span runs to its end (0–5), not to the last start (0–3).
		expect(
			minimalWindow([
				{ p: [0], len: 1 },
				{ p: [1], len: 5 },
				{ p: [3], len: 1 },
			]),
		).toBe(6);
		let seed = 11;
		const next = (n: number) => {
			seed = (seed * 1103515245 + 12345) % 2 ** 31;
			return Math.floor(seed / 2 ** 16) % n;
		};
		for (let i = 0; i < 3000; i++) {
			const lists = Array.from({ length: 2 + next(3) }, () => {
				const p = new Set<number>();
				for (let k = next(6); k >= 0; k--) p.add(next(40));
				return { p: [...p].sort((a, b) => a - b), len: 1 + next(3) };
			});
			expect(minimalWindow(lists)).toBe(smallest(lists));
		}
	});
});

describe("ranking signals", () => {
	test.skipIf(process.platform !== "linux")("a search leaves no session file open (its reads share one descriptor per file)", () => {
		const before = readdirSync("/proc/self/fd").length;
		for (let i = 0; i < 5; i++) expect(run(idx.db, "checkout payment webhook", {}, { scope: inA }).hits.length).toBeGreaterThan(0);
		expect(readdirSync("/proc/self/fd").length).toBe(before);
	});

	test("proximity: the words close together rank above the same words far apart", () => {
		expect(ids(run(idx.db, "checkout payment webhook", {}, { scope: inA }))).toEqual([u(4), u(5)]);
	});

	test("conversational evidence: the report ranks above a log that repeats the words", () => {
		const hits = run(idx.db, "search indexing stalls", {}, { scope: inA }).hits;
		expect(hits.map((h) => h.entryId)).toEqual(["u-report", "r-log"]);
	});
});

describe("no silent empty answer", () => {
	test("terms that occur nowhere in scope are named; no hits are never unexplained", () => {
		const r = run(idx.db, "export crash zzqxv", {}, { scope: inA });
		expect(r.hits).toEqual([]);
		expect(r.coverage.emptyBecause).toBe("terms");
		expect(r.coverage.unmatchedTerms).toEqual(["zzqxv"]);
	});

	test("a term that exists only outside the scope looks exactly like one that exists nowhere", () => {
		const outside = run(idx.db, "export zebrafish", {}, { scope: inA }).coverage;
		const nowhere = run(idx.db, "export zzqxv", {}, { scope: inA }).coverage;
		expect({ ...outside, unmatchedTerms: [] }).toEqual({ ...nowhere, unmatchedTerms: [] });
		expect(outside.unmatchedTerms).toEqual(["zebrafish"]);
	});

	test("every term occurs, never together; or the filters leave nothing", () => {
		expect(run(idx.db, "quarterly ledger", {}, { scope: inA }).coverage).toMatchObject({ emptyBecause: "together", unmatchedTerms: [] });
		expect(run(idx.db, "export crash", { kinds: ["tool.result"] }, { scope: inA }).coverage).toMatchObject({ emptyBecause: "filters", unmatchedTerms: [] });
	});

	test("a query of one term: absent, outside the scope, only in pi-events' echoes, or filtered out", () => {
		expect(run(idx.db, "zzqxv", {}, { scope: inA }).coverage).toMatchObject({ emptyBecause: "terms", unmatchedTerms: ["zzqxv"] });
		const outside = run(idx.db, "zebrafish", {}, { scope: inA }).coverage;
		expect(outside).toEqual({ ...run(idx.db, "zzqxv", {}, { scope: inA }).coverage, unmatchedTerms: ["zebrafish"] });
		expect(run(idx.db, "marmosetecho", {}, { scope: inA }).coverage).toMatchObject({ emptyBecause: "derived", unmatchedTerms: [] });
		expect(run(idx.db, "marmosetecho", {}, { scope: inA, includeDerived: true }).hits.length).toBeGreaterThan(0);
		expect(run(idx.db, "export", { kinds: ["tool.result"] }, { scope: inA }).coverage).toMatchObject({ emptyBecause: "filters", unmatchedTerms: [] });
		// A term that matches only as another word form is a match: not named as unmatched.
		expect(run(idx.db, "crashes", { kinds: ["tool.result"] }, { scope: inA }).coverage).toMatchObject({ emptyBecause: "filters", unmatchedTerms: [] });
	});

	test("hits: no explanation", () => {
		expect(run(idx.db, "export", {}, { scope: inA }).coverage).toMatchObject({ emptyBecause: null, unmatchedTerms: [] });
	});
});
