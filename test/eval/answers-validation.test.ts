/**
 * The answers validation set (fixtures/answers-validation, see fixtures/README.md) is well-formed:
 * enough cases of each hard kind, every expected event exists in its session file, and every query
 * word is on the problem side (it occurs in the case's story outside the expected answers). No
 * floors on ranking figures: the set is a generalization check, scored by
 * `bun run eval:answers:validation`, and nobody tunes on it. Writes nothing into the repository.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { type AnswerCase, holdsAllWords, indexAnswers, loadCases, matchingEvents, queryTerms } from "./answers-score.ts";

const DIR = resolve(import.meta.dir, "..", "..", "fixtures", "answers-validation");
const SESSIONS = join(DIR, "sessions");
const HARD_KINDS = ["status-line", "noisy-logs", "later-session", "turn-window"] as const;

interface ManifestRow {
	story: string;
	session: string;
	file: string;
	sessionId: string;
}

let dir: string;
let db: Database;
let cases: AnswerCase[];
let manifest: ManifestRow[];

beforeAll(() => {
	dir = makeTempDir("pi-events-answers-validation-");
	db = indexAnswers(dir, SESSIONS);
	cases = loadCases(join(DIR, "cases.json"));
	manifest = JSON.parse(readFileSync(join(DIR, "sessions.json"), "utf8")) as ManifestRow[];
});

afterAll(() => {
	db?.close();
	cleanupTempDirs();
});

/** The entry ids of a session file (header excluded). */
function entryIds(file: string): Set<string> {
	const lines = readFileSync(join(SESSIONS, file), "utf8")
		.split("\n")
		.filter((l) => l.trim() !== "");
	return new Set(lines.slice(1).map((l) => (JSON.parse(l) as { id: string }).id));
}

const storyOf = (c: AnswerCase) => manifest.find((m) => m.sessionId === c.expected[0]?.sessionId)?.story;

describe("answers validation set (fixtures/answers-validation)", () => {
	test("has at least 30 cases, at least 6 of each hard kind and some easy ones, with unique ids", () => {
		expect(cases.length).toBeGreaterThanOrEqual(30);
		for (const k of HARD_KINDS) expect({ kind: k, enough: cases.filter((c) => c.kind === k).length >= 6 }).toEqual({ kind: k, enough: true });
		expect(cases.filter((c) => c.kind === "easy").length).toBeGreaterThan(0);
		expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
	});

	test("every case's query has 2 to 6 words and every expected event exists in its session file", () => {
		const files = new Map(manifest.map((m) => [m.sessionId, entryIds(m.file)]));
		for (const c of cases) {
			expect({ id: c.id, words: queryTerms(c.query).length >= 2 && queryTerms(c.query).length <= 6 }).toEqual({ id: c.id, words: true });
			expect(c.expected.length).toBeGreaterThan(0);
			for (const e of c.expected)
				expect({ id: c.id, entry: e.entryId, exists: files.get(e.sessionId)?.has(e.entryId) ?? false }).toEqual({ id: c.id, entry: e.entryId, exists: true });
		}
	});

	test("its workspaces are its own: no case's root is a workspace of the tuning set (fixtures/answers)", () => {
		const tuning = new Set(loadCases().map((c) => c.root));
		for (const c of cases) expect({ id: c.id, tuningRoot: tuning.has(c.root) }).toEqual({ id: c.id, tuningRoot: false });
	});

	test("every query word occurs in the case's story outside the expected answers (the problem side, not only the answer)", () => {
		for (const c of cases) {
			const story = storyOf(c);
			expect({ id: c.id, story: story !== undefined }).toEqual({ id: c.id, story: true });
			const sessions = manifest.filter((m) => m.story === story).map((m) => m.sessionId);
			const isExpected = (sessionId: string, entryId: string) => c.expected.some((e) => e.sessionId === sessionId && e.entryId === entryId);
			for (const term of queryTerms(c.query)) {
				const elsewhere = sessions.some((s) => [...matchingEvents(db, c.root, term, s)].some((id) => !isExpected(s, id)));
				expect({ id: c.id, term, elsewhere }).toEqual({ id: c.id, term, elsewhere: true });
			}
		}
	});

	test("every case's answerHoldsAllWords is what the index says", () => {
		for (const c of cases) expect({ id: c.id, holds: holdsAllWords(db, c.root, c.query, c.expected) }).toEqual({ id: c.id, holds: c.answerHoldsAllWords });
	});

	test("`bun run eval:answers:validation` scores this set with the answers scorer", () => {
		const scripts = (JSON.parse(readFileSync(resolve(import.meta.dir, "..", "..", "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
		expect(scripts["eval:answers:validation"]).toBe(
			"bun test/eval/answers-score.ts --sessions fixtures/answers-validation/sessions --cases fixtures/answers-validation/cases.json",
		);
	});
});
