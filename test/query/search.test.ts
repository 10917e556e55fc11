/**
 * search() over real indexes: one hit per event with the strongest fragment as evidence,
 * deterministic tie-breaks, every structured filter, limit bounds, bounded marked snippets (also
 * around the omission marker of a bounded fragment), and the bounded common-term path.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toSearchFilters } from "../../src/query/filters.ts";
import { PiEventsError } from "../../src/errors.ts";
import { SNIPPET_CHARS } from "../../src/query/snippet.ts";
import { renderHits } from "../../src/present/render.ts";
import { DEFAULT_LIMIT, FULL_RANK_LIMIT, MAX_LIMIT, type SearchFilters, search } from "../../src/query/search/search.ts";
import { Gate } from "../../src/gate/gate.ts";
import { OCCURRENCE_WALK_LIMIT } from "../../src/store/search.ts";
import { cleanupTempDirs, makeTempDir, PI_FIXTURES, piFixture } from "../helpers/temp.ts";
import {
	assistantEntry,
	buildIndex,
	ids,
	plainSnippet,
	run,
	sessionText,
	type TestIndex,
	UNSCOPED,
	userEntry,
	writeSession,
	marked,
	oneMessageSession,
} from "./helpers.ts";

const basic = piFixture("basic");
const branched = piFixture("branched");
const bigOutput = piFixture("big-output");
const B = (entryId: string) => `${basic.sessionId}/${entryId}`;
const OMISSION = /\[… [\d,]+ characters omitted …\]/;

const RANK = "/work/demo/rank";
const MULTI = "0000dddd-0000-4000-8000-000000000001";
const FILES = "0000dddd-0000-4000-8000-000000000002";
/** Tie sessions, written in an order that is not their id order. */
const TIES = [
	"0000dddd-0000-4000-8000-0000000000f3",
	"0000dddd-0000-4000-8000-0000000000f1",
	"0000dddd-0000-4000-8000-0000000000f4",
	"0000dddd-0000-4000-8000-0000000000f2",
];
const TIE_NEWER = "0000dddd-0000-4000-8000-0000000000f0";
const filler = Array.from({ length: 150 }, (_, i) => `filler${i}`).join(" ");

let idx: TestIndex;

beforeAll(() => {
	const dir = join(makeTempDir("pi-events-rank-"), "sessions");
	// One assistant event with three matching fragments: a long text (weak), a short bash call
	// (strong), and a read call whose path contains the word.
	writeSession(dir, {
		id: MULTI,
		cwd: RANK,
		entries: [
			userEntry("m-u1", null, "2026-10-03T10:00:00.000Z", "please look into it"),
			assistantEntry("m-a1", "m-u1", "2026-10-03T10:00:05.000Z", `${filler} zebrafish ${filler}`, [
				{ id: "mc1", name: "bash", arguments: { command: "zebrafish" } },
				{ id: "mc2", name: "read", arguments: { path: `${RANK}/docs/zebrafish-notes and more words here to make it longer than the bash call.md` } },
			]),
		],
	});
	// Absolute file evidence: exact paths and a prefix collision (util.ts vs util.tsx, lib vs library).
	writeSession(dir, {
		id: FILES,
		cwd: RANK,
		entries: [
			userEntry("f-u1", null, "2026-10-03T11:00:00.000Z", "filesword start"),
			assistantEntry("f-a1", "f-u1", "2026-10-03T11:00:05.000Z", "filesword read", [
				{ id: "fc1", name: "read", arguments: { path: `${RANK}/src/lib/util.ts` } },
			]),
			assistantEntry("f-a2", "f-a1", "2026-10-03T11:00:10.000Z", "filesword edit", [
				{ id: "fc2", name: "edit", arguments: { path: `${RANK}/src/lib/util.tsx`, edits: [{ oldText: "a", newText: "b" }] } },
			]),
			assistantEntry("f-a3", "f-a2", "2026-10-03T11:00:15.000Z", "filesword write", [
				{ id: "fc3", name: "write", arguments: { path: `${RANK}/src/library/x.ts`, content: "x" } },
			]),
		],
	});
	// Identical events: equal scores; the same timestamp except TIE_NEWER.
	for (const id of TIES) writeSession(dir, { id, cwd: RANK, entries: [userEntry(`t-${id.slice(-2)}`, null, "2026-10-04T10:00:00.000Z", "tiebreak quokka")] });
	writeSession(dir, { id: TIE_NEWER, cwd: RANK, entries: [userEntry(`t-${TIE_NEWER.slice(-2)}`, null, "2026-10-05T10:00:00.000Z", "tiebreak quokka")] });
	idx = buildIndex([PI_FIXTURES, dir]);
});

afterAll(() => {
	idx?.close();
	cleanupTempDirs();
});

describe("coalescing and ranking", () => {
	test("the query syntax's column names are not scored as words (`body` in the text earns nothing)", () => {
		const dir = makeTempDir("pi-events-columns-");
		writeSession(dir, oneMessageSession("0000c01c-0000-4000-8000-000000000001", "/work/demo/columns", "qcolword body body body"));
		writeSession(dir, oneMessageSession("0000c01c-0000-4000-8000-000000000002", "/work/demo/columns", "qcolword node node node"));
		const columns = buildIndex([dir]);
		try {
			const scores = run(columns.db, "qcolword").hits.map((h) => h.score);
			expect(scores.length).toBe(2);
			expect(scores[0]).toBe(scores[1]!);
		} finally {
			columns.close();
		}
	});

	test("several matching fragments of one event give one hit with the strongest as evidence", () => {
		const r = run(idx.db, "zebrafish");
		const hits = r.hits.filter((h) => h.sessionId === MULTI);
		expect(hits.length).toBe(1);
		const hit = hits[0]!;
		expect(hit.entryId).toBe("m-a1");
		expect(hit.matchedFragments).toBe(3);
		// Independently: the score of each fragment alone (kind filters select one fragment each).
		const text = run(idx.db, "zebrafish", { kinds: ["assistant.text"], sessionIds: [MULTI] }).hits[0]!;
		const calls = run(idx.db, "zebrafish", { kinds: ["tool.call"], sessionIds: [MULTI] }).hits[0]!;
		expect(text.fragmentId).toBe("assistant.text#0");
		expect(text.matchedFragments).toBe(1);
		expect(calls.matchedFragments).toBe(2);
		// Scores are shares of the best match within one answer, so the fragments are compared inside
		// one answer: both kinds together, one event, its strongest fragment as evidence.
		const both = run(idx.db, "zebrafish", { kinds: ["assistant.text", "tool.call"], sessionIds: [MULTI] }).hits;
		expect(both.map((h) => [h.entryId, h.fragmentId, h.rank, h.score])).toEqual([["m-a1", "tool.call#1", 1, 1]]);
		expect(hit.fragmentId).toBe("tool.call#1");
		expect(hit.semanticKind).toBe("tool.call");
		expect(marked(hit)).toContain("«zebrafish»");
	});

	test("a fixture event: bun install matches the command and its output once", () => {
		const r = run(idx.db, "bun install", { sessionIds: [basic.sessionId] });
		expect(ids(r)).toEqual([B(basic.notes.bashExecution)]);
		expect(r.hits[0]!.fragmentId).toBe("bash.command#0");
		expect(r.hits[0]!.matchedFragments).toBe(2);
	});

	test("hits are in descending score order and events are unique", () => {
		for (const q of ["the", "src", "step", "session"]) {
			const r = run(idx.db, q);
			const keys = ids(r);
			expect(new Set(keys).size).toBe(keys.length);
			for (let i = 1; i < r.hits.length; i++) expect(r.hits[i - 1]!.score).toBeGreaterThanOrEqual(r.hits[i]!.score);
		}
	});

	test("ties break deterministically: newer first, then by session id", () => {
		const first = run(idx.db, "tiebreak quokka");
		const second = run(idx.db, "tiebreak quokka");
		expect(ids(first)).toEqual(ids(second));
		expect(first.hits.map((h) => h.sessionId)).toEqual([TIE_NEWER, ...[...TIES].sort()]);
		expect(new Set(first.hits.map((h) => h.score)).size).toBe(1);
	});

	test("a smaller limit gives the first hits of a larger limit, also when scores tie", () => {
		// The tie sessions: five events with equal scores.
		const all = ids(run(idx.db, "tiebreak quokka", {}, { limit: 100 }));
		expect(all.length).toBe(5);
		for (let k = 1; k <= 5; k++) expect(ids(run(idx.db, "tiebreak quokka", {}, { limit: k }))).toEqual(all.slice(0, k));
		// Fixture queries whose hits include equal scores (fork copies share entries verbatim).
		const mismatches: string[] = [];
		for (const query of ["and", "is", "marker", "the", "step"]) {
			const full = ids(run(idx.db, query, {}, { limit: 100 }));
			for (const k of [1, 2, 3, 5, 10]) {
				const got = ids(run(idx.db, query, {}, { limit: k }));
				if (JSON.stringify(got) !== JSON.stringify(full.slice(0, k))) mismatches.push(`${query} limit ${k}: ${got.join(" ")} ≠ ${full.slice(0, k).join(" ")}`);
			}
		}
		expect(mismatches).toEqual([]);
	});

	test("matchedFragments does not depend on the limit", () => {
		const mismatches: string[] = [];
		for (const query of ["bun", "bun install", "read", "edit", "zebrafish", "src", "session"]) {
			const full = new Map(run(idx.db, query, {}, { limit: 100 }).hits.map((h) => [`${h.sessionId}/${h.entryId}`, h.matchedFragments]));
			for (const k of [1, 2, 3, 5]) {
				for (const h of run(idx.db, query, {}, { limit: k }).hits) {
					const key = `${h.sessionId}/${h.entryId}`;
					if (full.has(key) && full.get(key) !== h.matchedFragments)
						mismatches.push(`${query} limit ${k}: ${key} matched ${h.matchedFragments}, with limit 100 ${full.get(key)}`);
				}
			}
		}
		expect(mismatches).toEqual([]);
	});

	test("the same query gives the same hits in the same order every time", () => {
		for (const q of ["the", "step", "ECONNREFUSED", "src"]) {
			const a = run(idx.db, q, {}, { limit: 50 });
			const b = run(idx.db, q, {}, { limit: 50 });
			expect(a.hits.map((h) => [h.sessionId, h.entryId, h.fragmentId, h.score])).toEqual(b.hits.map((h) => [h.sessionId, h.entryId, h.fragmentId, h.score]));
		}
	});

	test("hit fields", () => {
		const r = run(idx.db, "ECONNREFUSED", { roles: ["toolResult"] });
		expect(r.hits.length).toBe(1);
		const h = r.hits[0]!;
		expect(h).toMatchObject({
			sessionId: basic.sessionId,
			entryId: basic.notes.writeErrorResult,
			fragmentId: "tool.result#0",
			eventType: "message",
			semanticKind: "tool.result",
			role: "toolResult",
			toolName: "write",
			timestamp: "2026-11-02T09:00:35.996Z",
			cwd: "/work/demo/app",
			isError: true,
			branchState: "selected",
			contextRole: "conversation",
			selectionState: "direct",
			stale: false,
			matchedFragments: 1,
		});
		expect(h.sessionFile).toBe(join(PI_FIXTURES, basic.file));
		expect(h.sessionName).toBe("Auth refactor");
		expect(h.score).toBeGreaterThan(0);
		expect(r.coverage).toMatchObject({ mode: "full", rankedShare: 1, ignoredTerms: [] });
		// Counts are of events the filters allow: here every one was returned, so nothing was cut.
		expect(r.coverage.estimatedMatches).toBe(r.hits.length);
		expect(r.coverage.truncated).toBe(false);
	});
});

describe("filters", () => {
	const q = (query: string, filters: SearchFilters) => ids(run(idx.db, query, filters)).sort();

	test("kinds", () => {
		expect(q("bun install", { kinds: ["bash.command"] })).toEqual([B(basic.notes.bashExecution)]);
		const out = run(idx.db, "bun install", { kinds: ["bash.output"] });
		expect(ids(out)).toEqual([B(basic.notes.bashExecution)]);
		expect(out.hits[0]!.fragmentId).toBe("bash.output#0");
		expect(q("bun install", { kinds: ["user.text"] })).toEqual([]);
		expect(q("ECONNREFUSED", { kinds: ["assistant.text", "tool.result"] })).toEqual(
			[B(basic.notes.writeErrorResult), B(basic.notes.assistantAfterBash), B(basic.notes.finalAssistant)].sort(),
		);
	});

	test("roles", () => {
		expect(q("ECONNREFUSED", { roles: ["toolResult"] })).toEqual([B(basic.notes.writeErrorResult)]);
		expect(q("ECONNREFUSED", { roles: ["assistant"] })).toEqual([B(basic.notes.assistantAfterBash), B(basic.notes.finalAssistant)].sort());
		expect(q("ECONNREFUSED", { roles: ["user"] })).toEqual([]);
	});

	test("tools", () => {
		expect(q("exit code 137", { tools: ["bash"] })).toEqual([B(basic.notes.bashToolResult)]);
		expect(q("src/auth/session.ts", { tools: ["read"], sessionIds: [basic.sessionId] })).toEqual([B(basic.notes.assistantRead)]);
		expect(q("src/auth/session.ts", { tools: ["edit"], sessionIds: [basic.sessionId] })).toEqual(
			[B(basic.notes.assistantEditWrite), B(basic.notes.editResult)].sort(),
		);
		expect(q("ECONNREFUSED", { tools: ["nonexistent-tool"] })).toEqual([]);
	});

	test("eventTypes", () => {
		expect(q("staging", {})).toEqual([B(basic.notes.customMessage), B(basic.notes.finalAssistant)].sort());
		expect(q("staging", { eventTypes: ["custom_message"] })).toEqual([B(basic.notes.customMessage)]);
		expect(q("staging", { eventTypes: ["message"] })).toEqual([B(basic.notes.finalAssistant)]);
		expect(q("auth refactor", { eventTypes: ["session_info"] })).toEqual([B(basic.notes.sessionInfo)]);
	});

	test("since (inclusive) and until (exclusive)", () => {
		const write = Date.parse("2026-11-02T09:00:35.996Z");
		const all = [B(basic.notes.writeErrorResult), B(basic.notes.assistantAfterBash), B(basic.notes.finalAssistant)].sort();
		expect(q("ECONNREFUSED", { sinceMs: write })).toEqual(all);
		expect(q("ECONNREFUSED", { sinceMs: write + 1 })).toEqual([B(basic.notes.assistantAfterBash), B(basic.notes.finalAssistant)].sort());
		expect(q("ECONNREFUSED", { untilMs: write })).toEqual([]);
		expect(q("ECONNREFUSED", { untilMs: write + 1 })).toEqual([B(basic.notes.writeErrorResult)]);
		expect(q("ECONNREFUSED", { sinceMs: write, untilMs: Date.parse("2026-11-02T09:02:00Z") })).toEqual(
			[B(basic.notes.writeErrorResult), B(basic.notes.assistantAfterBash)].sort(),
		);
	});

	test("relative since (7d, 1w, 168h) measured back from now", () => {
		const now = Date.parse("2026-11-09T09:01:00.000Z");
		for (const since of ["7d", "1w", "168h", "10080m"]) {
			const filters = toSearchFilters({ since }, "/", now);
			expect(filters.sinceMs).toBe(Date.parse("2026-11-02T09:01:00.000Z"));
			expect(q("ECONNREFUSED", filters)).toEqual([B(basic.notes.assistantAfterBash), B(basic.notes.finalAssistant)].sort());
		}
		expect(q("ECONNREFUSED", toSearchFilters({ until: "7d" }, "/", now))).toEqual([B(basic.notes.writeErrorResult)]);
		expect(q("ECONNREFUSED", toSearchFilters({ since: "2026-11-03" }, "/", now))).toEqual([]);
		expect(q("ECONNREFUSED", toSearchFilters({ until: "2026-11-03" }, "/", now)).length).toBe(3);
	});

	test("bad time values and since >= until are usage errors", () => {
		const now = Date.now();
		for (const v of [{ since: "yesterday" }, { since: "7x" }, { until: "-3d" }, { since: "2026-13-45" }, { since: "1d", until: "2d" }]) {
			expect(() => toSearchFilters(v, "/", now)).toThrow(PiEventsError);
		}
	});

	test("isError true and false", () => {
		expect(q("ECONNREFUSED", { isError: true })).toEqual([B(basic.notes.writeErrorResult)]);
		expect(q("ECONNREFUSED", { isError: false })).toEqual([B(basic.notes.assistantAfterBash), B(basic.notes.finalAssistant)].sort());
		expect(q("exit code 137", { isError: true })).toEqual([B(basic.notes.bashToolResult)]);
		// A user message has no error state: it counts as not failed.
		expect(q("parseSessionEntries", { isError: false, roles: ["user"] })).toEqual([B(basic.notes.firstUser)]);
		expect(q("parseSessionEntries", { isError: true, roles: ["user"] })).toEqual([]);
	});

	test("branchStates and selectionStates", () => {
		const n = branched.notes;
		const S = (...e: string[]) => e.map((x) => `${branched.sessionId}/${x}`).sort();
		const only = { sessionIds: [branched.sessionId] };
		expect(q("step", only)).toEqual(S(n.A, n.B, n.C, n.D, n.E, n.F));
		expect(q("step", { ...only, branchStates: ["alternate"] })).toEqual(S(n.C, n.D));
		expect(q("step", { ...only, branchStates: ["selected"] })).toEqual(S(n.A, n.B, n.E, n.F));
		expect(q("step", { ...only, branchStates: ["selected", "alternate"] })).toEqual(S(n.A, n.B, n.C, n.D, n.E, n.F));
		expect(q("step", { ...only, branchStates: ["unknown"] })).toEqual([]);
		expect(q("step", { ...only, selectionStates: ["not-selected"] })).toEqual(S(n.C, n.D));
		expect(q("step", { ...only, selectionStates: ["direct"] })).toEqual(S(n.A, n.B, n.E, n.F));
		const compaction = piFixture("compaction");
		const summarized = run(idx.db, "src", { sessionIds: [compaction.sessionId], selectionStates: ["summarized"] });
		expect(summarized.hits.length).toBeGreaterThan(0);
		expect(summarized.hits.every((h) => h.selectionState === "summarized")).toBe(true);
	});

	test("the text names the states in words a newcomer reads; the JSON keeps the values the filters take", () => {
		const flags = (hits: ReturnType<typeof run>["hits"]) =>
			renderHits(hits, { color: false })
				.split("\n")
				.filter((l) => /^\d+\. /.test(l))
				.map((l) => l.match(/\[([^\]]*)\]/)?.[1] ?? "");
		const only = { sessionIds: [branched.sessionId] };
		const abandoned = run(idx.db, "step", { ...only, branchStates: ["alternate"] }).hits;
		expect(abandoned.map((h) => [h.branchState, h.selectionState])).toEqual([
			["alternate", "not-selected"],
			["alternate", "not-selected"],
		]);
		expect(flags(abandoned)).toEqual(["on an abandoned branch", "on an abandoned branch"]);
		expect(flags(run(idx.db, "step", { ...only, branchStates: ["selected"] }).hits).every((f) => f === "")).toBe(true);
		const compaction = piFixture("compaction");
		const summarized = run(idx.db, "src", { sessionIds: [compaction.sessionId], selectionStates: ["summarized"] }).hits;
		expect(flags(summarized).every((f) => f.includes("compacted: the model saw a summary of it"))).toBe(true);
		// Never a model message (a session name, a change of model): nothing to say beyond the kind.
		const notMessages = run(idx.db, "", { selectionStates: ["not-applicable"] }).hits;
		expect(notMessages.length).toBeGreaterThan(0);
		expect(notMessages.every((h) => h.selectionState === "not-applicable")).toBe(true);
		expect(renderHits(notMessages, { color: false })).not.toContain("applicable");
	});

	test("files: exact absolute paths and path prefixes on a component boundary", () => {
		const F = (...e: string[]) => e.map((x) => `${FILES}/${x}`).sort();
		expect(q("filesword", {})).toEqual(F("f-u1", "f-a1", "f-a2", "f-a3"));
		expect(q("filesword", { files: [`${RANK}/src/lib/util.ts`] })).toEqual(F("f-a1"));
		expect(q("filesword", { files: [`${RANK}/src/lib/util.tsx`] })).toEqual(F("f-a2"));
		expect(q("filesword", { files: [`${RANK}/src/lib`] })).toEqual(F("f-a1", "f-a2"));
		expect(q("filesword", { files: [`${RANK}/src/lib/`] })).toEqual(F("f-a1", "f-a2"));
		expect(q("filesword", { files: [`${RANK}/src`] })).toEqual(F("f-a1", "f-a2", "f-a3"));
		expect(q("filesword", { files: [`${RANK}/src/lib/util`] })).toEqual([]);
		expect(q("filesword", { files: [`${RANK}/src/lib/util.ts`, `${RANK}/src/library`] })).toEqual(F("f-a1", "f-a3"));
		expect(q("filesword", { files: [`${RANK}/src/li_`] })).toEqual([]);
		expect(q("filesword", { files: [`${RANK}/src/%`] })).toEqual([]);
	});

	test("files: a relative path recorded by a tool call is found by its absolute path under the session cwd", () => {
		// basic's read/edit calls record `src/auth/session.ts` with session cwd /work/demo/app. The CLI and the
		// tool server always pass absolute paths (toSearchFilters resolves them against the caller's cwd).
		const expected = [B(basic.notes.assistantRead), B(basic.notes.assistantEditWrite)].sort();
		expect(q("session", { sessionIds: [basic.sessionId], files: ["/work/demo/app/src/auth/session.ts"] })).toEqual(expected);
		expect(q("session", { sessionIds: [basic.sessionId], files: ["/work/demo/app/src/auth"] })).toEqual(expected);
		const viaCli = toSearchFilters({ files: ["src/auth/session.ts"], sessionId: [basic.sessionId] }, "/work/demo/app", Date.now());
		expect(q("session", viaCli)).toEqual(expected);
	});

	test("cwdPrefix on a path-component boundary", () => {
		const cwds = (filters: SearchFilters) => new Set(run(idx.db, "the", filters).hits.map((h) => h.cwd));
		expect(cwds({})).toEqual(new Set(["/work/demo/app", "/work/demo/app-extra", "/work/demo/app/packages/api", "/work/demo/other", RANK]));
		expect(cwds({ cwdPrefix: "/work/demo/app" })).toEqual(new Set(["/work/demo/app", "/work/demo/app/packages/api"]));
		expect(cwds({ cwdPrefix: "/work/demo/app/packages/api" })).toEqual(new Set(["/work/demo/app/packages/api"]));
		expect(cwds({ cwdPrefix: "/work/demo/app-extra" })).toEqual(new Set(["/work/demo/app-extra"]));
		expect(cwds({ cwdPrefix: "/work/demo/ap" })).toEqual(new Set());
	});

	test("sessionIds", () => {
		const r = run(idx.db, "the", { sessionIds: [basic.sessionId, branched.sessionId] });
		expect(r.hits.length).toBeGreaterThan(0);
		expect(new Set(r.hits.map((h) => h.sessionId))).toEqual(new Set([basic.sessionId, branched.sessionId]));
		expect(run(idx.db, "the", { sessionIds: ["no-such-session"] }).hits).toEqual([]);
	});

	test("filters combine with AND", () => {
		expect(q("ECONNREFUSED", { roles: ["assistant"], isError: false, sinceMs: Date.parse("2026-11-02T09:02:00Z") })).toEqual([B(basic.notes.finalAssistant)]);
	});
});

describe("limit", () => {
	test.each([[0], [-1], [101], [1.5], [Number.NaN]])("limit %p is rejected", (limit) => {
		let err: unknown;
		try {
			search(new Gate(idx.db, UNSCOPED), { query: "the", filters: {}, limit });
		} catch (e) {
			err = e;
		}
		expect(err).toBeInstanceOf(PiEventsError);
		expect((err as PiEventsError).code).toBe("E_USAGE");
	});

	test("1, the default and MAX_LIMIT", () => {
		expect(search(new Gate(idx.db, UNSCOPED), { query: "the", filters: {}, limit: 1 }).hits.length).toBe(1);
		expect(search(new Gate(idx.db, UNSCOPED), { query: "the", filters: {} }).hits.length).toBe(DEFAULT_LIMIT);
		const all = search(new Gate(idx.db, UNSCOPED), { query: "the", filters: {}, limit: MAX_LIMIT });
		expect(MAX_LIMIT).toBe(100);
		expect(all.hits.length).toBeGreaterThan(DEFAULT_LIMIT);
		expect(all.hits.length).toBeLessThanOrEqual(MAX_LIMIT);
		// A smaller limit is a prefix of a larger one.
		expect(ids(search(new Gate(idx.db, UNSCOPED), { query: "the", filters: {}, limit: 5 }))).toEqual(ids(all).slice(0, 5));
	});
});

describe("snippets", () => {
	const queries = ["the", "src", "session", "ECONNREFUSED", "exit code 137", "parseSessionEntries", "marker-tail", "marker-head", "step", "数据库", "cafe"];

	test("bounded to about SNIPPET_CHARS characters plus marks, ellipses and the omission marker", () => {
		expect(SNIPPET_CHARS).toBe(240);
		for (const query of queries) {
			for (const h of run(idx.db, query).hits) {
				expect(plainSnippet(h.snippet).trim().length).toBeLessThanOrEqual(SNIPPET_CHARS);
				expect(h.snippet.length).toBeLessThanOrEqual(SNIPPET_CHARS + 120);
			}
		}
	});

	test("whitespace is normalised", () => {
		for (const query of queries) {
			for (const h of run(idx.db, query).hits) {
				expect(h.snippet).not.toMatch(/[\n\r\t]|\s{2,}/);
				expect(h.snippet).toBe(h.snippet.trim());
			}
		}
	});

	test("matches are marked with « », balanced", () => {
		for (const query of queries) {
			for (const h of run(idx.db, query).hits) {
				const opens = [...marked(h)].filter((c) => c === "«").length;
				expect(opens).toBe([...marked(h)].filter((c) => c === "»").length);
				expect(marked(h)).not.toMatch(/«[^»]*«/);
				expect(h.snippet).not.toMatch(/[«»]/);
				for (const [start, end] of h.highlights) expect(0 <= start && start < end && end <= h.snippet.length).toBe(true);
			}
		}
		expect(run(idx.db, "ECONNREFUSED").hits.every((h) => marked(h).includes("«ECONNREFUSED»"))).toBe(true);
		expect(marked(run(idx.db, "cafe").hits[0]!)).toContain("«café»");
		expect(marked(run(idx.db, "数据库").hits[0]!)).toContain("«数据库»");
	});

	test("a snippet is source text: without marks and ellipses it is a substring of the normalised source", () => {
		const r = run(idx.db, "ECONNREFUSED", { roles: ["toolResult"] });
		const source = "Error: ECONNREFUSED 127.0.0.1:5432\n    at format-on-save hook (.pi/hooks/db-schema-check.ts:14:11)\nThe file was not written.";
		expect(r.hits[0]!.snippet).toBe(source.replace(/\s+/g, " "));
		expect(marked(r.hits[0]!)).toBe(source.replace(/\s+/g, " ").replace("ECONNREFUSED", "«ECONNREFUSED»"));
	});

	test("marks sit on whole words or camelCase/CJK parts, never inside a word", () => {
		// e.g. `exit` must not be marked inside `exited`, nor `name` inside `rename`.
		const isWordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}]/u.test(c);
		const isCjk = (c: string | undefined) => c !== undefined && /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]/.test(c);
		const bad: string[] = [];
		for (const query of ["exit code 137", "snake_case_name", "src/auth/session.ts", "session entries", "数据库"]) {
			for (const h of run(idx.db, query).hits) {
				for (const [at, end] of h.highlights) {
					const before = h.snippet[at - 1];
					const after = h.snippet[end];
					const inner = h.snippet.slice(at, end);
					const okBefore = !isWordChar(before) || isCjk(inner[0]) || (/\p{Ll}|\p{N}/u.test(before!) && /\p{Lu}/u.test(inner[0]!));
					const okAfter = !isWordChar(after) || isCjk(inner.at(-1)) || /\p{Lu}/u.test(after!);
					if (!okBefore || !okAfter) bad.push(`${query}: …${h.snippet.slice(Math.max(0, at - 12), end + 12)}…`);
				}
			}
		}
		expect(bad).toEqual([]);
	});

	test("big output: a tail match shows the omission marker before it, a head match after it", () => {
		const only = { sessionIds: [bigOutput.sessionId] };
		const tail = run(idx.db, "marker-tail", only).hits[0]!;
		expect(tail.entryId).toBe(bigOutput.notes.bigToolResult);
		expect(tail.snippet).toMatch(OMISSION);
		expect(marked(tail).search(OMISSION)).toBeLessThan(marked(tail).indexOf("«marker»-«tail»"));
		expect(marked(tail)).toContain("FATAL: linker failed «marker»-«tail»");

		const head = run(idx.db, "marker-head", only).hits[0]!;
		expect(head.entryId).toBe(bigOutput.notes.bigToolResult);
		expect(head.snippet).toMatch(OMISSION);
		expect(marked(head).search(OMISSION)).toBeGreaterThan(marked(head).indexOf("«marker»-«head»"));
		expect(marked(head).startsWith("BUILD START «marker»-«head»")).toBe(true);

		// The middle was omitted from the index: it is not searchable.
		expect(run(idx.db, "marker-middle", only).hits).toEqual([]);
		for (const h of [tail, head]) expect(plainSnippet(h.snippet).trim().length).toBeLessThanOrEqual(SNIPPET_CHARS);
	});
});

describe("the bounded common-term path", () => {
	const SESSIONS = 420;
	const PER_SESSION = 52; // 21,840 fragments containing "commonword"
	let big: TestIndex;

	beforeAll(() => {
		const dir = join(makeTempDir("pi-events-common-"), "sessions");
		mkdirSync(dir, { recursive: true });
		const started = performance.now();
		for (let s = 0; s < SESSIONS; s++) {
			const id = `0000eeee-0000-4000-8000-${String(s).padStart(12, "0")}`;
			const day = new Date(Date.UTC(2026, 0, 1) + s * 3_600_000);
			const entries = [];
			let parent: string | null = null;
			for (let i = 0; i < PER_SESSION; i++) {
				const entryId = `e${s}x${i}`;
				const ts = new Date(day.getTime() + i * 1000).toISOString();
				entries.push(userEntry(entryId, parent, ts, `commonword filler text number ${i} in batch ${s} marker uniqs${s}e${i}`));
				parent = entryId;
			}
			writeFileSync(join(dir, `${id}.jsonl`), sessionText({ id, cwd: "/work/demo/common", timestamp: day.toISOString(), entries }));
		}
		const written = performance.now();
		big = buildIndex([dir]);
		console.log(
			`common-term index: ${SESSIONS * PER_SESSION} fragments; wrote files in ${(written - started).toFixed(0)} ms, synced in ${(performance.now() - written).toFixed(0)} ms`,
		);
	}, 120_000);

	afterAll(() => big?.close());

	test("more fragments than FULL_RANK_LIMIT contain the common word", () => {
		const n = (big.db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH 'commonword'").get() as { n: number }).n;
		expect(n).toBe(SESSIONS * PER_SESSION);
		expect(n).toBeGreaterThan(20_000);
		expect(n).toBeGreaterThan(FULL_RANK_LIMIT);
		expect(n).toBeGreaterThan(OCCURRENCE_WALK_LIMIT);
	});

	test("a very common term is ranked over recent windows, with hits, quickly", () => {
		const times: number[] = [];
		let last = run(big.db, "commonword", {}, { limit: 10 });
		for (let i = 0; i < 5; i++) {
			const t0 = performance.now();
			last = run(big.db, "commonword", {}, { limit: 10 });
			times.push(performance.now() - t0);
		}
		console.log(
			`common term: ${times.map((t) => t.toFixed(1)).join(", ")} ms (elapsedMs ${last.elapsedMs.toFixed(1)}), coverage ${JSON.stringify(last.coverage)}`,
		);
		expect(last.coverage.mode).toBe("recent");
		// A lower bound: the events among the ranked window; the limit cut them.
		expect(last.coverage.estimatedMatches).toBeGreaterThan(10);
		expect(last.coverage.truncated).toBe(true);
		// Counting stops past FULL_RANK_LIMIT, so the ranked share is unknown and reported as null.
		expect(last.coverage.matchesExact).toBe(false);
		expect(last.coverage.rankedShare).toBeNull();
		expect(last.hits.length).toBe(10);
		expect(new Set(ids(last)).size).toBe(10);
		for (const h of last.hits) expect(marked(h)).toContain("«commonword»");
		// Generous bound: the point is that it does not rank 20,000+ fragments with joins.
		expect(Math.min(...times)).toBeLessThan(2000);
	});

	test("a common term combined with a selective term is ranked in full", () => {
		const r = run(big.db, "commonword uniqs7e3");
		expect(r.coverage.mode).toBe("full");
		expect(r.coverage.rankedShare).toBe(1);
		expect(ids(r)).toEqual(["0000eeee-0000-4000-8000-000000000007/e7x3"]);
	});

	test("a token held by more fragments than the walk limit is counted as present, not walked; a selective one is walked", () => {
		const uniq = big.db.query("SELECT rowid FROM fts WHERE fts MATCH 'uniqs7e3'").all() as { rowid: number }[];
		expect(uniq.length).toBeGreaterThan(0);
		const keys = uniq.map((r) => r.rowid);
		const scoped = new Gate(big.db, { roots: null, current: null }).search('"uniqs7e3"', {})!;
		const ranked = keys.map((frag_key) => ({ frag_key, relevance: 0, weight: 1, length: 1, event_key: 0, session_key: 0 }));
		const { occurrences, common } = scoped.termOccurrences(ranked, ["commonword", "uniqs7e3"]);
		expect(common).toEqual(["commonword"]);
		expect(occurrences.length).toBeGreaterThan(0);
		expect(new Set(occurrences.map((o) => o.term))).toEqual(new Set(["uniqs7e3"]));
		for (const o of occurrences) expect(keys).toContain(o.doc);
	});

	test("a selective query is ranked in full", () => {
		const r = run(big.db, "uniqs123e45");
		expect(r.coverage.mode).toBe("full");
		expect(r.coverage.estimatedMatches).toBe(1);
		expect(ids(r)).toEqual(["0000eeee-0000-4000-8000-000000000123/e123x45"]);
	});

	test("a common term with a filter never claims full coverage it did not have", () => {
		const oldest = "0000eeee-0000-4000-8000-000000000000";
		const r = run(big.db, "commonword", { sessionIds: [oldest] }, { limit: 5 });
		console.log(`common term filtered to the oldest session: ${r.hits.length} hits, coverage ${JSON.stringify(r.coverage)}`);
		if (r.hits.length < 5) {
			expect(r.coverage.mode).toBe("recent");
			expect(r.coverage.rankedShare).not.toBe(1);
		}
		for (const h of r.hits) expect(h.sessionId).toBe(oldest);
	});
});
