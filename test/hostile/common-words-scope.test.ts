/**
 * Common words do not probe other workspaces (issue 32 item 15). A word held by more than 5,000
 * fragments used to be counted as present once in every candidate instead of having its
 * occurrences counted, and "more than 5,000" was counted over the whole index: a caller could
 * plant or choose a word and learn from its in-scope scores (0.767 against 0.689) whether another
 * workspace holds it that often. Now only a fixed list and counts within the scope decide, and
 * the scoped answer is byte-identical with and without the other workspace's fragments.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { Scope } from "../../src/auth/scope.ts";
import { Gate } from "../../src/gate/gate.ts";
import { isFrequentWord } from "../../src/project/frequent-words.ts";
import { search } from "../../src/query/search/search.ts";
import { OCCURRENCE_WALK_LIMIT } from "../../src/store/search.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { buildIndex, type Entry, userEntry, writeSession } from "../query/helpers.ts";

afterAll(cleanupTempDirs);

const A = "/work/probe/mine";
const B = "/work/probe/theirs";
const inA: Scope = { roots: [A], current: null };
const at = (i: number) => new Date(Date.UTC(2026, 9, 1) + i * 1000).toISOString();

function chain(prefix: string, texts: string[]): Entry[] {
	return texts.map((text, i) => userEntry(`${prefix}${i}`, i === 0 ? null : `${prefix}${i - 1}`, at(i), text));
}

describe("a word frequent in another workspace", () => {
	test("leaves the scoped answer byte-identical (hits, order, scores, coverage)", () => {
		expect(isFrequentWord("quokkaprobe")).toBe(false);
		const dir = makeTempDir("pi-events-common-probe-");
		// In scope: the word at different frequencies and lengths, so counting it or not changes scores.
		writeSession(dir, {
			id: "0000c0de-0000-4000-8000-00000000000a",
			cwd: A,
			entries: chain("a", [
				"quokkaprobe deploy",
				"quokkaprobe quokkaprobe quokkaprobe deploy failed on the staging host",
				"the deploy went fine, quokkaprobe is up; deploy again tomorrow with the usual checks and a longer note",
				"deploy quokkaprobe",
				"a long line about the deploy and nothing else, padded with more words to make it longer than the others here",
			]),
		});
		const index = buildIndex([dir]);
		try {
			const answers = () =>
				["quokkaprobe", "quokkaprobe deploy", "deploy quokkaprobe failed"].map((query) => {
					const result = search(new Gate(index.db, inA), { query, filters: {}, limit: 20 });
					return JSON.stringify({ hits: result.hits, coverage: result.coverage });
				});
			const without = answers();
			expect(without[1]).toContain('"rank":1');
			// Another workspace: the word in more fragments than the walk limit.
			writeSession(dir, {
				id: "0000c0de-0000-4000-8000-00000000000b",
				cwd: B,
				entries: chain(
					"b",
					Array.from({ length: OCCURRENCE_WALK_LIMIT + 200 }, (_, i) => `quokkaprobe elsewhere ${i}`),
				),
			});
			index.sync();
			const held = (index.db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH 'quokkaprobe'").get() as { n: number }).n;
			expect(held).toBeGreaterThan(OCCURRENCE_WALK_LIMIT);
			expect(answers()).toEqual(without);
		} finally {
			index.close();
		}
	}, 120_000);
});
