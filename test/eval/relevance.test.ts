/**
 * Relevance evaluation (issue 10): index fixtures/eval/relevance/sessions (written by
 * fixtures/eval/relevance/generate.ts with pi's own SessionManager) and run every query of the
 * three groups scoped to its workspace, as an agent working there would:
 *
 * - hard: the target (a user report or assistant conclusion) competes with at least five other
 *   in-scope events that hold every query word (logs repeating them, files written with them,
 *   messages mentioning them far apart);
 * - forms: the literal query matches nothing in scope; word forms must find the target;
 * - echo: later sessions searched for the target with pi-events itself; the original comes first.
 *
 * Prints Rank@1, Recall@10 and MRR per group and the queries not ranked first. With
 * PI_EVENTS_EVAL_WRITE=1 it writes fixtures/eval/relevance/results.json. The floors sit just under
 * the measured figures (and at the issue's targets where those are the bar).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { syncIndex } from "../../src/sync/sync.ts";
import { type Hit, search } from "../../src/query/search/search.ts";
import { Gate } from "../../src/gate/gate.ts";
import { openIndex } from "../../src/store/db.ts";
import { cleanupTempDirs, makeTempDir, ROOT } from "../helpers/temp.ts";

const DIR = join(ROOT, "fixtures", "eval", "relevance");
const SESSIONS_DIR = join(DIR, "sessions");
const RESULTS_FILE = join(DIR, "results.json");

type Group = "hard" | "forms" | "echo";
interface EvalQuery {
	id: string;
	group: Group;
	query: string;
	root: string;
	expected: { sessionId: string; entryId: string };
}
interface Metrics {
	queries: number;
	rank1: number;
	recall10: number;
	mrr: number;
}

/**
 * Measured (see fixtures/eval/relevance/results.json): hard Rank@1 1, Recall@10 1, MRR 1;
 * forms 1 / 1 / 1; echo 1 / 1 / 1. Before issue 10: hard 0.048 / 1 / 0.374, forms 0 / 0 / 0
 * (every query: no hits), echo 0.5 / 1 / 0.625. The floors are the issue's bars (hard Rank@1 0.9,
 * Recall@10 1; forms Recall@10 1; every echo scenario first) or, where higher, a query under the measure.
 */
const FLOORS: Record<Group, Omit<Metrics, "queries">> = {
	hard: { rank1: 0.9, recall10: 1, mrr: 0.95 },
	forms: { rank1: 0.9, recall10: 1, mrr: 0.95 },
	echo: { rank1: 1, recall10: 1, mrr: 1 },
};

let dir: string;
let db: Database;
let queries: EvalQuery[];
const outcomes: { id: string; group: Group; query: string; rank: number | null; hits: number; top: string | null }[] = [];
const metrics = {} as Record<Group, Metrics>;

const scopeOf = (root: string) => ({ roots: [root], current: null });
const rankOf = (hits: Hit[], e: EvalQuery["expected"]) => {
	const i = hits.findIndex((h) => h.sessionId === e.sessionId && h.entryId === e.entryId);
	return i < 0 ? null : i + 1;
};

beforeAll(() => {
	dir = makeTempDir("pi-events-relevance-");
	db = openIndex(join(dir, "index.db"));
	const report = syncIndex(db, { sourceDirs: [{ path: SESSIONS_DIR, origin: "flag" }] });
	expect(report.complete).toBe(true);
	expect(report.sessions.new).toBe(readdirSync(SESSIONS_DIR).filter((n) => n.endsWith(".jsonl")).length);
	queries = JSON.parse(readFileSync(join(DIR, "queries.json"), "utf8")) as EvalQuery[];
	for (const q of queries) {
		const hits = search(new Gate(db, scopeOf(q.root)), { query: q.query, filters: {}, limit: 10 }).hits;
		const top = hits[0] ? `${hits[0].semanticKind}${hits[0].toolName ? ` ${hits[0].toolName}` : ""}` : null;
		outcomes.push({ id: q.id, group: q.group, query: q.query, rank: rankOf(hits, q.expected), hits: hits.length, top });
	}
	const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
	for (const group of ["hard", "forms", "echo"] as Group[]) {
		const of = outcomes.filter((o) => o.group === group);
		metrics[group] = {
			queries: of.length,
			rank1: of.filter((o) => o.rank === 1).length / of.length,
			recall10: of.filter((o) => o.rank !== null).length / of.length,
			mrr: of.reduce((sum, o) => sum + (o.rank ? 1 / o.rank : 0), 0) / of.length,
		};
		const m = metrics[group];
		console.log(`relevance ${group}: ${m.queries} queries, Rank@1 ${pct(m.rank1)}, Recall@10 ${pct(m.recall10)}, MRR ${m.mrr.toFixed(3)}`);
		for (const o of of) {
			if (o.rank === 1) continue;
			console.log(
				`  ${o.id.padEnd(30)} ${(o.rank ? `rank ${o.rank}` : o.hits === 0 ? "no hits" : "beyond 10").padEnd(10)} ${JSON.stringify(o.query)}  [top: ${o.top ?? "-"}]`,
			);
		}
	}
	if (process.env.PI_EVENTS_EVAL_WRITE === "1") {
		const round = (x: number) => Math.round(x * 10000) / 10000;
		const rounded = Object.fromEntries(
			Object.entries(metrics).map(([g, m]) => [g, { queries: m.queries, rank1: round(m.rank1), recall10: round(m.recall10), mrr: round(m.mrr) }]),
		);
		writeFileSync(RESULTS_FILE, `${JSON.stringify({ metrics: rounded, queries: outcomes }, null, "\t")}\n`);
	}
});

afterAll(() => {
	db?.close();
	cleanupTempDirs();
});

describe("relevance evaluation (fixtures/eval/relevance)", () => {
	test("has the issue's minimum number of queries per group", () => {
		expect(metrics.hard.queries).toBeGreaterThanOrEqual(40);
		expect(metrics.forms.queries).toBeGreaterThanOrEqual(15);
		expect(metrics.echo.queries).toBeGreaterThanOrEqual(5);
	});

	test("hard queries: at least five other in-scope events match every word", () => {
		for (const q of queries.filter((x) => x.group === "hard")) {
			const hits = search(new Gate(db, scopeOf(q.root)), { query: q.query, filters: {}, limit: 100 }).hits;
			const others = hits.filter((h) => !(h.sessionId === q.expected.sessionId && h.entryId === q.expected.entryId));
			expect({ id: q.id, others: others.length >= 5 }).toEqual({ id: q.id, others: true });
		}
	});

	test("forms: the literal query matches nothing in scope, and no answer is empty", () => {
		for (const q of queries.filter((x) => x.group === "forms")) {
			const literal = search(new Gate(db, scopeOf(q.root)), { query: q.query, filters: {}, limit: 10, exact: true });
			expect({ id: q.id, literal: literal.hits.length }).toEqual({ id: q.id, literal: 0 });
			expect(literal.coverage.emptyBecause).not.toBeNull();
			expect({ id: q.id, empty: outcomes.find((o) => o.id === q.id)!.hits === 0 }).toEqual({ id: q.id, empty: false });
		}
	});

	test("echo: the echoes exist and come back with includeDerived, marked", () => {
		for (const q of queries.filter((x) => x.group === "echo")) {
			const all = search(new Gate(db, scopeOf(q.root)), { query: q.query, filters: {}, limit: 50, includeDerived: true }).hits;
			expect({ id: q.id, echoes: all.filter((h) => h.derived).length >= 2 }).toEqual({ id: q.id, echoes: true });
		}
	});

	for (const group of ["hard", "forms", "echo"] as Group[]) {
		test(`${group}: Rank@1, Recall@10 and MRR stay above their floors`, () => {
			expect(metrics[group].rank1).toBeGreaterThanOrEqual(FLOORS[group].rank1);
			expect(metrics[group].recall10).toBeGreaterThanOrEqual(FLOORS[group].recall10);
			expect(metrics[group].mrr).toBeGreaterThanOrEqual(FLOORS[group].mrr);
		});
	}
});
