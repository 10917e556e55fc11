/**
 * Answers evaluation (issue 34, item 8): does the first search show the event that answers "what
 * happened?". The corpus and cases are fixtures/answers (generate.ts); the scoring is
 * test/eval/answers-score.ts, the same that `bun run eval:answers` prints. Writes nothing into the
 * repository.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { search } from "../../src/query/search/search.ts";
import { cliSearchText } from "../../src/present/search-text.ts";
import { TOOLS } from "../../src/server/tools.ts";
import type { Freshness } from "../../src/sync/freshness.ts";
import { Gate } from "../../src/gate/gate.ts";
import { cleanupTempDirs, makeAgentLayout, makeTempDir, runCli } from "../helpers/temp.ts";
import {
	ANSWERS_SESSIONS,
	type AnswerCase,
	evaluate,
	simulatedOutcomes,
	formatReport,
	holdsAllWords,
	indexAnswers,
	KINDS,
	type Kind,
	loadCases,
	type Metrics,
	type Report,
} from "./answers-score.ts";

/**
 * Floors at the last measure, each rounded down, so they can only ratchet up: when the search
 * improves, paste `bun run eval:answers --floors` here. Measured when hits began to carry their
 * turn (issue 34 items 1-2): answer@1 0.275, answer@3 0.507, MRR 0.399 (before: 0 / 0.145 /
 * 0.071); the ten turn-window queries answer nothing. With the ranking that answers (a matched
 * turn's answer ranked with its turn's evidence, a problem taken up again in a later session first,
 * query/search/answers.ts): 0.449 / 0.71 / 0.59; with turn-window matching (query/search/turn-window.ts):
 * 0.594 / 0.855 / 0.737, no empty answer where one turn holds every word; a log weighed by its
 * turn's explanation: 0.608 / 0.855 / 0.744; common words decided without other workspaces (issue 32
 * item 15: 'error', 'exited' and the like count once per hit on this small index too, as they
 * already did on any index where more than 5,000 fragments hold them): 0.594 / 0.84 / 0.733; a
 * status line lets the explanation rank above the question, an answer taken up again later ranks
 * below the later question, follow-up turns ("go on", "ok, fix it") hold the answer, and a log is
 * weighed by what its turn said and explained (then 0.17 to 1): 0.942 / 0.971 / 0.959; a later turn
 * raised above an earlier one by its question's rank, not its evidence: 0.956 / 0.971 / 0.966;
 * among common logs, an answer given in a follow-up turn joins above the log: 0.971 / 0.986 / 0.981; later reports in
 * other words and a heavier weight of a turn's explanation for its logs (a routine log keeps a
 * tenth): 0.986 / 1 / 0.993. The floors then went DOWN, with no change to the search, when the
 * warehouse workspace added 13 cases reproducing the validation set's failure shapes (69 → 82
 * cases): overall 0.986 / 1 / 0.993 → 0.951 / 0.963 / 0.961; noisy-logs 0.909 / 1 / 0.954 →
 * 0.812 / 0.875 / 0.864 (two queries whose explaining turn's long log buries the line rank 6th,
 * under five short routine logs); later-session 1 → 0.95 (nightly-csv-export-bucket: the later
 * report shares none of the query's words, a known miss kept on purpose). A looked-at log compared
 * as if at most 3,000 characters long (the long buried logs: one of the two now first): 0.975 /
 * 0.975 / 0.977. The target: answer@1 ≥ 0.85 and answer@3 ≥ 0.95 overall, and no empty answer where the query words occur together in one turn
 * (emptyWhereTurnHoldsAllWords = 0).
 */
type Floor = Omit<Metrics, "cases" | "empty">;
const FLOORS: { overall: Floor; byKind: Record<Kind, Floor>; byWords: { holds: Floor; spread: Floor }; emptyWhereTurnHoldsAllWords: number } = {
	overall: { answer1: 0.975, answer3: 0.975, mrr: 0.977 },
	byKind: {
		"status-line": { answer1: 1, answer3: 1, mrr: 1 },
		"noisy-logs": { answer1: 0.937, answer3: 0.937, mrr: 0.947 },
		"later-session": { answer1: 0.95, answer3: 0.95, mrr: 0.95 },
		"turn-window": { answer1: 1, answer3: 1, mrr: 1 },
		easy: { answer1: 1, answer3: 1, mrr: 1 },
	},
	byWords: { holds: { answer1: 1, answer3: 1, mrr: 1 }, spread: { answer1: 0.971, answer3: 0.971, mrr: 0.974 } },
	/** A ceiling: at most this many such empty answers (none since turn-window matching). */
	emptyWhereTurnHoldsAllWords: 0,
};

let dir: string;
let db: Database;
let cases: AnswerCase[];
let report: Report;

beforeAll(() => {
	dir = makeTempDir("pi-events-answers-");
	db = indexAnswers(dir);
	cases = loadCases();
	report = evaluate(db, cases, simulatedOutcomes());
	console.log(formatReport(report));
});

afterAll(() => {
	db?.close();
	cleanupTempDirs();
});

describe("answers evaluation (fixtures/answers)", () => {
	test("has the issue's cases: at least 60, and at least 10 of each hard kind", () => {
		expect(cases.length).toBeGreaterThanOrEqual(60);
		for (const k of ["status-line", "noisy-logs", "later-session", "turn-window"] as const) {
			expect({ kind: k, enough: cases.filter((c) => c.kind === k).length >= 10 }).toEqual({ kind: k, enough: true });
		}
	});

	test("every case's answerHoldsAllWords is what the index says", () => {
		for (const c of cases) {
			expect({ id: c.id, holds: holdsAllWords(db, c.root, c.query, c.expected) }).toEqual({ id: c.id, holds: c.answerHoldsAllWords });
		}
	});

	test("the scorer sees the hits `pi-events search --json` prints (identity and turn outcome)", () => {
		const layout = makeAgentLayout();
		const identity = (h: { sessionId: string; entryId: string; turn?: { outcome?: { entryId: string } | null } }) =>
			`${h.sessionId} ${h.entryId} → ${h.turn?.outcome?.entryId ?? "-"}`;
		for (const kind of ["status-line", "noisy-logs", "later-session"] as const) {
			const c = cases.find((x) => x.kind === kind)!;
			const cli = runCli(layout, ["search", c.query, "--json", "--limit", "10", "--root", c.root, "--sessions-dir", ANSWERS_SESSIONS]);
			expect(cli.exitCode).toBe(0);
			const inProcess = search(new Gate(db, { roots: [c.root], current: null }), { query: c.query, filters: {}, limit: 10 }).hits;
			expect({ id: c.id, hits: cli.json<{ hits: Parameters<typeof identity>[0][] }>().hits.map(identity) }).toEqual({
				id: c.id,
				hits: inProcess.map((h) => identity(h as Parameters<typeof identity>[0])),
			});
		}
	});

	test("turn-window cases: no single event in scope holds every query word", () => {
		for (const c of cases.filter((x) => x.kind === "turn-window")) {
			const hits = search(new Gate(db, { roots: [c.root], current: null }), { query: c.query, filters: {}, limit: 100 }).hits;
			// Once turn-window matching lands, its hits are marked match: "turn"; event matches must stay absent.
			const eventHits = hits.filter((h) => (h as { match?: string }).match !== "turn");
			expect({ id: c.id, eventHits: eventHits.length }).toEqual({ id: c.id, eventHits: 0 });
			expect({ id: c.id, turnHoldsAllWords: c.turnHoldsAllWords }).toEqual({ id: c.id, turnHoldsAllWords: true });
		}
	});

	test("answer@1, answer@3 and MRR stay at or above their floors: overall, by kind, by whether the answer holds every word", () => {
		const at = (m: Metrics) => ({ answer1: m.answer1, answer3: m.answer3, mrr: m.mrr });
		const atLeast = (m: Metrics, floor: Floor) => ({
			answer1: m.answer1 >= floor.answer1 - 1e-9,
			answer3: m.answer3 >= floor.answer3 - 1e-9,
			mrr: m.mrr >= floor.mrr - 1e-9,
		});
		const ok = { answer1: true, answer3: true, mrr: true };
		expect({ overall: atLeast(report.overall, FLOORS.overall), measured: at(report.overall) }).toEqual({ overall: ok, measured: at(report.overall) });
		for (const k of KINDS) expect({ kind: k, ...atLeast(report.byKind[k], FLOORS.byKind[k]) }).toEqual({ kind: k, ...ok });
		expect({ words: "holds", ...atLeast(report.byHoldsAllWords.holds, FLOORS.byWords.holds) }).toEqual({ words: "holds", ...ok });
		expect({ words: "spread", ...atLeast(report.byHoldsAllWords.spread, FLOORS.byWords.spread) }).toEqual({ words: "spread", ...ok });
		expect(report.emptyWhereTurnHoldsAllWords).toBeLessThanOrEqual(FLOORS.emptyWhereTurnHoldsAllWords);
	});
});

describe("the text of a search with its turns (issue 34: ten hits within 6 KB)", () => {
	/** The bound on the text of 10 hits with their turns (an outcome shared by hits is shown once). */
	const TEXT_BYTES = 6 * 1024;
	const fresh: Freshness = {
		synced: true,
		syncMs: 12,
		pendingFiles: 0,
		missingFiles: 0,
		newDiagnostics: 0,
		problems: [],
		lastSyncAt: null,
		check: "full",
		lastFullCheckAt: null,
	};
	const stats = (bytes: number[]) => {
		const sorted = [...bytes].sort((a, b) => a - b);
		return { max: sorted[sorted.length - 1]!, median: sorted[Math.floor(sorted.length / 2)]! };
	};

	test("for every case, the event_search tool text and the CLI text of a 10-hit search stay within 6 KB", () => {
		const tool = TOOLS.find((t) => t.name === "event_search")!;
		const toolBytes: number[] = [];
		const cliBytes: number[] = [];
		for (const c of cases) {
			const scope = { roots: [c.root], current: null };
			const text = tool.run({ query: c.query, limit: 10 } as never, { db, scope, cwd: c.root, refresh: () => fresh, now: Date.now() }).text;
			toolBytes.push(Buffer.byteLength(text));
			// Once per answer: how to read the first hit's turn and the next (counted in the bytes).
			if (!text.startsWith("No hits")) expect({ id: c.id, hints: text.match(/"view":"turn","turns":1\}/g)?.length }).toEqual({ id: c.id, hints: 1 });
			// The CLI's stdout and stderr with --root (the test above checks that the CLI sees the same hits).
			const result = search(new Gate(db, { ...scope, rootSource: "flag" }), { query: c.query, filters: {}, limit: 10 });
			const cli = cliSearchText(result, fresh, { query: c.query, color: false, paths: false, exact: false });
			cliBytes.push(Buffer.byteLength(cli.out + cli.err));
			expect({ id: c.id, tool: toolBytes.at(-1)! <= TEXT_BYTES, cli: cliBytes.at(-1)! <= TEXT_BYTES }).toEqual({ id: c.id, tool: true, cli: true });
		}
		console.log(`text of a 10-hit search, bytes: tool ${JSON.stringify(stats(toolBytes))}, CLI ${JSON.stringify(stats(cliBytes))}`);
		// Some case fills its ten hits, so the bound is measured on full answers, not only short ones.
		expect(stats(toolBytes).max).toBeGreaterThan(TEXT_BYTES / 2);
	});
});
