/**
 * A search's whole text answer stays within 6 KB (issue 34: ten hits with their turns), making room
 * by cutting the snippets (the evidence) before the outcome lines (the answer). Real session files,
 * indexed as pi-events does; the answers evaluation measures the same bound over its corpus
 * (test/eval/answers.test.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { renderHits } from "../../src/present/render.ts";
import { cliSearchText, renderHitsWithin, SEARCH_TEXT_BYTES, toolSearchText } from "../../src/present/search-text.ts";
import { search } from "../../src/query/search/search.ts";
import { SNIPPET_CHARS } from "../../src/query/snippet.ts";
import { TURN_PREVIEW_CHARS } from "../../src/query/turns.ts";
import { Gate } from "../../src/gate/gate.ts";
import type { Freshness } from "../../src/sync/freshness.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { assistantEntry, buildIndex, type TestIndex, userEntry, writeSession } from "./helpers.ts";

afterAll(cleanupTempDirs);

const fresh: Freshness = {
	synced: true,
	syncMs: 4,
	pendingFiles: 0,
	missingFiles: 0,
	newDiagnostics: 0,
	problems: [],
	lastSyncAt: null,
	check: "full",
	lastFullCheckAt: null,
};
const bytes = (text: string) => new TextEncoder().encode(text).length;
const words = ["ledger", "cursor", "replica", "backlog", "shard", "quota", "lease", "socket", "schema", "bucket"];

let index: TestIndex;

beforeAll(() => {
	const sessions = makeTempDir("pi-events-search-text-");
	// Ten sessions, each a long report of the same problem and its own long answer: ten hits, ten outcomes to show.
	words.forEach((word, i) => {
		const at = (s: number) => new Date(Date.UTC(2026, 9, 1 + i, 10, 0, s)).toISOString();
		writeSession(sessions, {
			id: `000003${String(i).padStart(2, "0")}-0000-4000-8000-000000000000`,
			cwd: "/work/app",
			entries: [
				userEntry(
					"u1",
					null,
					at(1),
					`The zephyrine import stalls on the ${word} step again. ${`It waits on the ${word} for minutes, then times out and retries. `.repeat(5)}`,
				),
				assistantEntry(
					"a1",
					"u1",
					at(2),
					`Fixed: the ${word} step now ${"streams its rows in batches of five hundred and commits after each batch, so nothing waits on one long transaction; ".repeat(4)}`,
				),
			],
		});
	});
	index = buildIndex([sessions]);
});

afterAll(() => index?.close());

test("ten hits with long outcomes: the text stays within 6 KB, snippets cut before any outcome is", () => {
	const scope = { roots: ["/work/app"], rootSource: "flag" as const, current: null };
	const result = search(new Gate(index.db, scope), { query: "zephyrine", filters: {}, limit: 10 });
	expect(result.hits).toHaveLength(10);
	// The hits as they are would not fit: the data asks for the budget.
	expect(bytes(renderHits(result.hits, { color: false, root: "/work/app" }))).toBeGreaterThan(SEARCH_TEXT_BYTES);
	const tool = toolSearchText(result, fresh, { query: "zephyrine", exact: false, root: "/work/app" });
	const cli = cliSearchText(result, fresh, { query: "zephyrine", color: false, paths: false, exact: false });
	expect(bytes(tool)).toBeLessThanOrEqual(SEARCH_TEXT_BYTES);
	expect(bytes(cli.out + cli.err)).toBeLessThanOrEqual(SEARCH_TEXT_BYTES);
	for (const text of [tool, cli.out]) {
		const lines = text.split("\n");
		// Every outcome whole (its 300-character preview), every snippet shorter than a snippet can be.
		const outcomes = lines.filter((l) => l.startsWith("   → Fixed:"));
		expect(outcomes).toHaveLength(10);
		for (const l of outcomes) expect(l.length).toBeGreaterThan(TURN_PREVIEW_CHARS);
		const snippets = lines.filter((l) => l.startsWith("   The «zephyrine»"));
		expect(snippets).toHaveLength(10);
		for (const l of snippets) expect(l.length).toBeLessThan(SNIPPET_CHARS);
	}
});

test("a budget the snippets alone cannot meet cuts the outcome lines too, never below 160 characters", () => {
	const result = search(new Gate(index.db, { roots: ["/work/app"], current: null }), { query: "zephyrine", filters: {}, limit: 10 });
	const text = renderHitsWithin(result.hits, { color: false, root: "/work/app" }, 3000);
	const outcomes = text.split("\n").filter((l) => l.startsWith("   → Fixed:"));
	expect(outcomes).toHaveLength(10);
	for (const l of outcomes) {
		expect(l.length).toBeGreaterThanOrEqual(160);
		expect(l.length).toBeLessThan(TURN_PREVIEW_CHARS);
	}
	// Left as is when it fits.
	expect(renderHitsWithin(result.hits.slice(0, 2), { color: false }, SEARCH_TEXT_BYTES)).toBe(renderHits(result.hits.slice(0, 2), { color: false }));
});
