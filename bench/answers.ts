#!/usr/bin/env bun
/**
 * Search answers as a regression check: index session folders, run a fixed matrix of searches
 * over them and print every answer (hits and coverage, without elapsedMs) or error, one JSON line
 * per request, so two checkouts' outputs can be compared byte for byte.
 *
 *   bun bench/answers.ts [--corpus DIR]... [--index FILE] [--out FILE]
 *
 * Without --corpus it indexes the bundled fixtures (fixtures/sessions, the retrieval and
 * relevance evaluations' sessions, fixtures/answers) and also runs every query of both
 * evaluations as the evaluations do. The matrix: query strings (common words, phrases, OR, the
 * evaluations' queries) × every order × grouping × each filter alone and the time filters
 * combined × default and scaled-down cost bounds (so a small index takes every retrieval
 * strategy), plus filter-only searches by each filter, and searches by and around the current
 * session (its cutoff). --index keeps the index (a bench corpus takes minutes to index); without
 * it the index lives in a temp dir removed at the end.
 *
 *   bun bench/answers.ts --out /tmp/before.jsonl   # on the old code
 *   bun bench/answers.ts --out /tmp/after.jsonl    # on the new code
 *   cmp /tmp/before.jsonl /tmp/after.jsonl
 */
import type { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Scope } from "../src/auth/scope.ts";
import { PiEventsError } from "../src/errors.ts";
import { Gate } from "../src/gate/gate.ts";
import { type SearchBounds, type SearchFilters, type SearchRequest, search } from "../src/query/search/search.ts";
import { openIndex } from "../src/store/db.ts";
import { syncIndex } from "../src/sync/sync.ts";

const argv = process.argv.slice(2);
const all = (name: string) => argv.flatMap((a, i) => (a === `--${name}` && argv[i + 1] ? [argv[i + 1]!] : []));
const root = resolve(import.meta.dir, "..");
const fixtureCorpora = ["fixtures/sessions", "fixtures/eval/sessions", "fixtures/eval/relevance/sessions", "fixtures/answers/sessions"].map((p) =>
	join(root, p),
);
const corpora = all("corpus").length > 0 ? all("corpus").map((p) => resolve(p)) : fixtureCorpora;
const withEvals = all("corpus").length === 0;

const keep = all("index")[0];
const tempDir = keep ? null : mkdtempSync(join(tmpdir(), "pi-events-answers-"));
const indexPath = keep ? resolve(keep) : join(tempDir!, "index.db");
const db = openIndex(indexPath);
const lines: string[] = [];
try {
	if (!keep || !existsSync(`${indexPath}.synced`)) {
		syncIndex(db, { sourceDirs: corpora.filter(existsSync).map((path) => ({ path, origin: "flag" as const })) });
		if (keep) writeFileSync(`${indexPath}.synced`, "");
	}
	for (const request of requests(db)) lines.push(answer(db, request));
} finally {
	db.close();
	if (tempDir) rmSync(tempDir, { recursive: true, force: true });
}
const text = `${lines.join("\n")}\n`;
const out = all("out")[0];
if (out) writeFileSync(out, text);
else process.stdout.write(text);
console.error(`${lines.length} requests`);

/** A request and the caller scope its gate applies. */
type Request = SearchRequest & { scope: Scope };

function answer(db: Database, request: Request): string {
	try {
		const { hits, coverage } = search(new Gate(db, request.scope), request);
		return JSON.stringify({ request, hits, coverage });
	} catch (e) {
		if (e instanceof PiEventsError) return JSON.stringify({ request, error: e.code, message: e.message });
		throw e;
	}
}

function requests(db: Database): Request[] {
	const unscoped: Scope = { roots: null, current: null };
	const out: Request[] = [];
	const facts = corpusFacts(db);
	const small: Partial<SearchBounds> = {
		commonTermFragments: 40,
		windowFragments: 1_200,
		firstWindowFragments: 60,
		fullRankLimit: 80,
		untilSessions: 4,
		untilMinSessions: 2,
		fileRows: 30,
		fileSessions: 2,
		sinceSessions: 3,
	};
	const mid = facts.firstTs + Math.floor((facts.lastTs - facts.firstTs) / 2);
	const quarter = facts.firstTs + Math.floor((facts.lastTs - facts.firstTs) / 4);
	const filters: SearchFilters[] = [
		{},
		{ kinds: ["tool.result"] },
		{ kinds: ["bash.command", "user.text"] },
		{ roles: ["user"] },
		{ tools: ["bash"] },
		{ eventTypes: ["message"] },
		{ isError: true },
		{ isError: false },
		{ branchStates: ["alternate"] },
		{ selectionStates: ["not-selected"] },
		{ sinceMs: mid },
		{ untilMs: mid },
		{ sinceMs: quarter, untilMs: mid },
		{ sinceMs: mid, kinds: ["tool.result"] },
		{ untilMs: mid, tools: ["bash"] },
		{ sinceMs: quarter, untilMs: mid, roles: ["assistant"] },
		...facts.files.map((f) => ({ files: [f] })),
		...facts.files.slice(0, 1).map((f) => ({ files: [f], sinceMs: quarter })),
		...facts.files.slice(0, 1).map((f) => ({ files: [f], untilMs: mid })),
		...facts.cwds.map((c) => ({ cwdPrefix: c })),
		{ sessionIds: facts.sessions.slice(0, 2) },
		{ sessionIds: facts.sessions.slice(0, 1).map((s) => s.slice(0, 8)) },
	];
	const queries = [
		"the",
		"error",
		"the error",
		'"the error"',
		'"error the"',
		"test OR fix",
		"fail*",
		"function error the",
		'"function error the"',
		"timeout",
		"tests failing",
		"zzqqnothing",
		"error zzqqnothing",
		...facts.extraQueries,
	];
	const orders = [undefined, "newest", "oldest"] as const;
	for (const query of queries)
		for (const f of filters)
			for (const sort of orders)
				for (const groupBy of [undefined, "session"] as const)
					for (const bounds of [undefined, small]) out.push({ query, filters: f, limit: 10, scope: unscoped, sort, groupBy, bounds });
	for (const f of filters)
		for (const sort of orders)
			for (const groupBy of [undefined, "session"] as const)
				for (const limit of [1, 10, 100]) out.push({ query: "", filters: f, limit, scope: unscoped, sort, groupBy });
	for (const query of ["the", "error", "tests failing"]) {
		for (const limit of [1, 3, 100]) out.push({ query, filters: {}, limit, scope: unscoped });
		out.push({ query, filters: {}, limit: 10, scope: unscoped, exact: true });
		out.push({ query, filters: {}, limit: 10, scope: unscoped, includeDerived: true });
		for (const cwd of facts.cwds) out.push({ query, filters: {}, limit: 10, scope: { roots: [cwd], current: null } });
		// Around the current session: excluded unless named, then seen up to its cutoff.
		for (const sessionId of facts.sessions.slice(0, 2)) {
			const current: Scope = { roots: null, current: { sessionId, sessionFile: null, toolCallId: null } };
			out.push({ query, filters: {}, limit: 10, scope: current });
			out.push({ query, filters: { sessionIds: [sessionId] }, limit: 10, scope: current });
			out.push({ query: "", filters: { sessionIds: [sessionId] }, limit: 10, scope: current });
		}
	}
	out.push({ query: "", filters: { cwdPrefix: "/" }, limit: 10, scope: unscoped });
	out.push({ query: "the", filters: {}, limit: 0, scope: unscoped });
	out.push({ query: "the", filters: {}, limit: 10, scope: { roots: [], current: null } });
	if (withEvals) out.push(...evaluationRequests());
	return out;
}

/** Times, files, working directories and sessions of the indexed corpus, for filters that select something. */
function corpusFacts(db: Database) {
	const times = db.query("SELECT min(ts_ms) AS first, max(ts_ms) AS last FROM events").get() as { first: number; last: number };
	const files = (db.query("SELECT path FROM event_files GROUP BY path ORDER BY count(*) DESC, path LIMIT 2").all() as { path: string }[]).map((r) => r.path);
	if (files[0]) files.push(dirname(files[0]));
	const cwds = (
		db.query("SELECT cwd_real AS cwd FROM sessions WHERE cwd_real IS NOT NULL GROUP BY cwd_real ORDER BY count(*) DESC, cwd_real LIMIT 2").all() as {
			cwd: string;
		}[]
	).map((r) => r.cwd);
	const sessions = (db.query("SELECT session_id AS id FROM sessions ORDER BY fragment_count DESC, session_id LIMIT 2").all() as { id: string }[]).map(
		(r) => r.id,
	);
	const extraQueries = withEvals
		? (JSON.parse(readFileSync(join(root, "fixtures/eval/queries.json"), "utf8")) as { query: string }[]).slice(0, 8).map((q) => q.query)
		: [];
	return { firstTs: times.first ?? 0, lastTs: times.last ?? 0, files, cwds, sessions, extraQueries };
}

/** Every query of the retrieval and relevance evaluations, as test/eval runs them. */
function evaluationRequests(): Request[] {
	const out: Request[] = [];
	const unscoped: Scope = { roots: null, current: null };
	type Retrieval = { query: string; expected: { sessionId: string }; filters?: Record<string, unknown> };
	for (const q of JSON.parse(readFileSync(join(root, "fixtures/eval/queries.json"), "utf8")) as Retrieval[]) {
		const f = q.filters ?? {};
		const filters: SearchFilters = {};
		if (f.cwd) filters.cwdPrefix = f.cwd as string;
		if (f.kind) filters.kinds = f.kind as SearchFilters["kinds"];
		if (f.tool) filters.tools = f.tool as string[];
		if (f.role) filters.roles = f.role as string[];
		if (f.type) filters.eventTypes = f.type as string[];
		if (f.error !== undefined) filters.isError = f.error as boolean;
		for (const limit of [10, 100]) out.push({ query: q.query, filters, limit, scope: unscoped });
		out.push({ query: q.query, filters: { ...filters, sessionIds: [q.expected.sessionId] }, limit: 100, scope: unscoped });
	}
	type Relevance = { query: string; root: string };
	for (const q of JSON.parse(readFileSync(join(root, "fixtures/eval/relevance/queries.json"), "utf8")) as Relevance[]) {
		const scope: Scope = { roots: [q.root], current: null };
		for (const limit of [10, 100]) out.push({ query: q.query, filters: {}, limit, scope });
		out.push({ query: q.query, filters: {}, limit: 10, scope, exact: true });
		out.push({ query: q.query, filters: {}, limit: 50, scope, includeDerived: true });
	}
	return out;
}
