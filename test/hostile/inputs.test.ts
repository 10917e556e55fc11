/**
 * Hostile input, part 2: inputs at the edges of size and shape. A 200 MB single line (skipped
 * with an oversized-line diagnostic, measured not buffered, the lines after it still indexed),
 * the same line as a torn tail completed by an append, a 31 MiB line just under the limit,
 * 100,000 levels of nesting, invalid UTF-8, NUL bytes, lone surrogates, sessions of 100,000
 * entries (a chain, a star, a cycle), parentId cycles (also closed by an append), duplicate ids
 * (also colliding with the derived `~dupN` ids), and huge numbers in the fields pi-events reads.
 * No crash, no hang (every child has a hard timeout), bounded memory (peak RSS of the indexing
 * child, printed), and nothing but PiEventsError out of search, read and trace.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Scope } from "../../src/auth/scope.ts";
import { isPiEventsError } from "../../src/errors.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { renderRead } from "../../src/present/render-read.ts";
import { renderTrace } from "../../src/present/render-trace.ts";
import { renderHits } from "../../src/present/render.ts";
import { Gate } from "../../src/gate/gate.ts";
import { readEvent } from "../../src/query/read.ts";
import { search } from "../../src/query/search/search.ts";
import { traceEvent } from "../../src/query/trace.ts";
import type { SourceDir } from "../../src/source/discover.ts";
import { MAX_LINE_BYTES } from "../../src/source/session-parser.ts";
import { openIndex } from "../../src/store/db.ts";
import { cleanupTempDirs, dumpIndex, encodeCwd, makeAgentLayout, makeTempDir } from "../helpers/temp.ts";
import { ChunkedWriter, header, jsonl, LONG, MB, mb, runChild, user } from "./helpers.ts";

afterAll(() => cleanupTempDirs());

const APP = "/work/demo/app";
const UNSCOPED: Scope = { roots: null, current: null };
/** Generous bound on the peak RSS of one indexing process. */
const RSS_BOUND = 600 * MB;

/** A temp index over one sessions dir, synced in-process. */
function tempIndex(): { sessions: string; db: Database; sync: () => ReturnType<typeof syncIndex>; sources: SourceDir[]; dir: string } {
	const dir = makeTempDir("pi-events-hostile-");
	const sessions = join(dir, "sessions");
	mkdirSync(sessions, { recursive: true });
	const sources: SourceDir[] = [{ path: sessions, origin: "flag" }];
	const db = openIndex(join(dir, "index.db"));
	return { dir, sessions, db, sources, sync: () => syncIndex(db, { sourceDirs: sources, maxDiagnostics: 10_000 }) };
}

/** Run fn; anything thrown must be a PiEventsError. Returns the error (or null). */
function onlyPiEventsErrors(fn: () => unknown): unknown {
	try {
		fn();
		return null;
	} catch (err) {
		if (!isPiEventsError(err)) throw err;
		return err;
	}
}

/** search + read + trace (+ renderers) of every event of a session, unscoped. */
function probeSession(db: Database, sessionId: string, query: string): void {
	const access = new Gate(db, UNSCOPED);
	const result = search(new Gate(db, UNSCOPED), { query, filters: { sessionIds: [sessionId] }, limit: 100 });
	renderHits(result.hits, { color: false });
	const entries = db
		.query("SELECT e.entry_id FROM events e JOIN sessions s ON s.session_key = e.session_key WHERE s.session_id = ?1 ORDER BY e.seq")
		.all(sessionId) as { entry_id: string }[];
	for (const { entry_id } of entries) {
		onlyPiEventsErrors(() => renderRead(readEvent(access, { sessionId, entryId: entry_id, order: "branch", before: 20, after: 20 })));
		onlyPiEventsErrors(() => renderRead(readEvent(access, { sessionId, entryId: entry_id, order: "append", before: 20, after: 20 })));
		onlyPiEventsErrors(() => renderTrace(traceEvent(access, sessionId, entry_id), { color: false }));
	}
}

function hitsFor(db: Database, query: string, sessionId?: string) {
	return search(new Gate(db, UNSCOPED), { query, filters: sessionId ? { sessionIds: [sessionId] } : {}, limit: 100 }).hits;
}

const figures: string[] = [];
afterAll(() => {
	if (figures.length) console.log(`hostile inputs:\n${figures.map((f) => `  ${f}`).join("\n")}`);
});

// ---------------------------------------------------------------------------------------------
// Huge lines (child processes: time and peak RSS)
// ---------------------------------------------------------------------------------------------

describe("a 200 MB single line", () => {
	const BIG = LONG ? 1024 * MB : 200 * MB;

	test(
		"is skipped with an oversized-line diagnostic (file, line, offset); the lines after it are indexed; peak RSS stays bounded",
		async () => {
			const layout = makeAgentLayout();
			const path = join(layout.sessionsDir, encodeCwd(APP), "big-line.jsonl");
			const w = new ChunkedWriter(path);
			w.line(header("big-line-session"));
			w.line(user("before", null, "beforebigline marker"));
			const bigOffset = w.bytes;
			const prefix = '{"type":"message","id":"huge","parentId":"before","message":{"role":"user","content":"';
			w.write(prefix)
				.repeat("hugeword ", BIG - prefix.length - 4)
				.write('"}}\n');
			w.line(user("after", "before", "afterbigline marker"));
			w.close();

			const run = await runChild(layout, ["index", "--json"], { timeoutMs: 120_000 });
			figures.push(`${mb(BIG)} line: index ${(run.ms / 1000).toFixed(1)} s, peak RSS ${mb(run.maxRSS)}`);
			expect(run.timedOut).toBe(false);
			expect(run.exitCode).toBe(0);
			const report = run.json();
			expect(report.sessions.new).toBe(1);
			expect(report.eventsAdded).toBe(2);
			expect(report.diagnostics).toEqual([
				{ file: path, offset: bigOffset, line: 3, kind: "oversized-line", detail: `line of ${BIG - 1} bytes exceeds ${MAX_LINE_BYTES} and was skipped` },
			]);
			expect(report.bytesRead).toBe(w.bytes);
			expect(run.maxRSS).toBeLessThan(RSS_BOUND);

			const found = await runChild(layout, ["search", "afterbigline", "--all", "--json", "--no-sync"], { timeoutMs: 30_000 });
			expect(found.exitCode).toBe(0);
			expect(found.json().hits.map((h: any) => h.entryId)).toEqual(["after"]);
			// The next sync has nothing to do: the skipped line is not re-read.
			const again = await runChild(layout, ["index", "--json"], { timeoutMs: 30_000 });
			expect(again.json().sessions.unchanged).toBe(1);
			expect(again.json().bytesRead).toBe(0);
		},
		LONG ? 600_000 : 120_000,
	);

	test(
		"as a torn tail it is not durable; once its LF and another line arrive, the append skips it and indexes the next line",
		async () => {
			const layout = makeAgentLayout();
			const path = join(layout.sessionsDir, encodeCwd(APP), "torn-big.jsonl");
			const w = new ChunkedWriter(path);
			w.line(header("torn-big-session"));
			w.line(user("before", null, "tornbefore marker"));
			const bigOffset = w.bytes;
			const prefix = '{"type":"message","id":"huge","parentId":"before","message":{"role":"user","content":"';
			w.write(prefix).repeat("x", BIG - prefix.length);
			w.close();

			const first = await runChild(layout, ["index", "--json"], { timeoutMs: 120_000 });
			expect(first.timedOut).toBe(false);
			expect(first.exitCode).toBe(0);
			expect(first.json().eventsAdded).toBe(1);
			expect(first.json().diagnosticCount).toBe(0);
			expect(first.maxRSS).toBeLessThan(RSS_BOUND);

			appendFileSync(path, `"}}\n${JSON.stringify(user("after", "before", "tornafter marker"))}\n`);
			const second = await runChild(layout, ["index", "--json"], { timeoutMs: 120_000 });
			figures.push(
				`${mb(BIG)} torn tail: first index ${(first.ms / 1000).toFixed(1)} s / ${mb(first.maxRSS)}, append ${(second.ms / 1000).toFixed(1)} s / ${mb(second.maxRSS)}`,
			);
			expect(second.exitCode).toBe(0);
			const report = second.json();
			expect(report.sessions.appended).toBe(1);
			expect(report.eventsAdded).toBe(1);
			expect(report.diagnostics.map((d: any) => [d.kind, d.line, d.offset])).toEqual([["oversized-line", 3, bigOffset]]);
			expect(second.maxRSS).toBeLessThan(RSS_BOUND);
			const found = await runChild(layout, ["search", "tornafter", "--all", "--json", "--no-sync"], { timeoutMs: 30_000 });
			expect(found.json().hits.map((h: any) => h.entryId)).toEqual(["after"]);
		},
		LONG ? 600_000 : 120_000,
	);
});

describe("a line just under the limit", () => {
	test("a 31 MiB message is parsed and indexed bounded (head and tail searchable), readable by window; peak RSS bounded", async () => {
		const layout = makeAgentLayout();
		const path = join(layout.sessionsDir, encodeCwd(APP), "near-limit.jsonl");
		const w = new ChunkedWriter(path);
		w.line(header("near-limit-session"));
		const prefix =
			'{"type":"message","id":"big","parentId":null,"message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"headmarkerword ';
		const suffix = ' tailmarkerword"}]}}\n';
		w.write(prefix)
			.repeat("filler ", 31 * MB - prefix.length - suffix.length)
			.write(suffix);
		w.line(user("next", "big", "nextmarkerword"));
		w.close();
		expect(31 * MB).toBeLessThan(MAX_LINE_BYTES);

		const run = await runChild(layout, ["index", "--json"], { timeoutMs: 120_000 });
		figures.push(`31 MiB line: index ${(run.ms / 1000).toFixed(1)} s, peak RSS ${mb(run.maxRSS)}`);
		expect(run.exitCode).toBe(0);
		expect(run.json().eventsAdded).toBe(2);
		expect(run.json().diagnosticCount).toBe(0);
		expect(run.maxRSS).toBeLessThan(RSS_BOUND);
		for (const word of ["headmarkerword", "tailmarkerword", "nextmarkerword"]) {
			const found = await runChild(layout, ["search", word, "--all", "--json", "--no-sync"], { timeoutMs: 60_000 });
			expect(found.exitCode).toBe(0);
			expect(found.json().hits.length).toBe(1);
		}
		const read = await runChild(
			layout,
			[
				"read",
				"near-limit-session",
				"big",
				"--all",
				"--json",
				"--no-sync",
				"--fragment",
				"tool.result#0",
				"--offset",
				String(31 * MB - 1000),
				"--length",
				"20000",
			],
			{ timeoutMs: 60_000 },
		);
		expect(read.exitCode).toBe(0);
		expect(read.json().window.text).toContain("tailmarkerword");
		expect(read.maxRSS).toBeLessThan(RSS_BOUND);
	}, 120_000);
});

// ---------------------------------------------------------------------------------------------
// Shapes: nesting, encodings
// ---------------------------------------------------------------------------------------------

describe("deeply nested JSON", () => {
	const DEPTH = 100_000;
	const nestedArrays = "[".repeat(DEPTH) + "]".repeat(DEPTH);
	const nestedObjects = '{"a":'.repeat(DEPTH) + '"deepleafword"' + "}".repeat(DEPTH);

	test("100,000 nested arrays or objects in content, tool arguments, details and the header: no throw, later lines indexed, reads safe", () => {
		const t = tempIndex();
		const lines = [
			`{"type":"session","version":3,"id":"deep-session","cwd":"/work/demo/app","x":${nestedArrays}}`,
			`{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":${nestedArrays}}}`,
			`{"type":"message","id":"a1","parentId":"u1","message":{"role":"assistant","content":[{"type":"text","text":"deepanswer"},{"type":"toolCall","id":"c1","name":"edit","arguments":${nestedObjects}}],"stopReason":"toolUse"}}`,
			`{"type":"message","id":"r1","parentId":"a1","message":{"role":"toolResult","toolCallId":"c1","toolName":"edit","content":[${nestedArrays},{"type":"text","text":"deepresult"}]}}`,
			`{"type":"compaction","id":"k1","parentId":"r1","summary":"deepsummary","firstKeptEntryId":"u1","details":${nestedObjects}}`,
			`{"type":"custom","id":"x1","parentId":"k1","customType":"state","data":${nestedObjects}}`,
			JSON.stringify(user("after", "x1", "afterdeepword")),
		];
		writeFileSync(join(t.sessions, "deep.jsonl"), `${lines.join("\n")}\n`);
		const started = performance.now();
		const report = t.sync();
		const ms = performance.now() - started;
		figures.push(
			`100,000-level nesting: sync ${ms.toFixed(0)} ms, ${report.diagnosticCount} diagnostics (${report.diagnostics.map((d) => `line ${d.line} ${d.kind}`).join(", ") || "none"})`,
		);
		expect(report.problems).toEqual([]);
		expect(report.sessions.new + report.sessions.rejected).toBe(1);
		// Whether the engine parses such depth or reports it, every diagnostic names its line; the last line is indexed.
		for (const d of report.diagnostics) expect(d.kind).toBe("malformed-json");
		if (report.sessions.new === 1) {
			expect(hitsFor(t.db, "afterdeepword").map((h) => h.entryId)).toEqual(["after"]);
			probeSession(t.db, "deep-session", "deepanswer");
			// The tool call's arguments are flattened to a bounded depth, never recursed 100,000 levels.
			expect(hitsFor(t.db, "deepleafword")).toEqual([]);
		}
		expect(ms).toBeLessThan(20_000);
		t.db.close();
	});
});

describe("invalid UTF-8, NUL bytes, lone surrogates", () => {
	test("invalid UTF-8 inside strings is indexed as U+FFFD; the words around it are found and read back", () => {
		const t = tempIndex();
		const enc = new TextEncoder();
		const parts = [
			enc.encode(`${JSON.stringify(header("utf8-session"))}\n`),
			enc.encode('{"type":"message","id":"u1","parentId":null,"message":{"role":"user","content":"beforebad '),
			Uint8Array.of(0xff, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xe2, 0x82),
			enc.encode(' afterbad"}}\n'),
			// Invalid UTF-8 outside a string: a malformed line, reported with its line and offset.
			Uint8Array.of(0xff, 0xfe, 0x7b, 0x7d, 0x0a),
			enc.encode(`${JSON.stringify(user("u2", "u1", "secondline ok"))}\n`),
		];
		const bytes = Buffer.concat(parts);
		writeFileSync(join(t.sessions, "utf8.jsonl"), bytes);
		const report = t.sync();
		expect(report.problems).toEqual([]);
		const badOffset = bytes.indexOf(Buffer.from([0xff, 0xfe, 0x7b]));
		expect(report.diagnostics.map((d) => [d.kind, d.line, d.offset])).toEqual([["malformed-json", 3, badOffset]]);
		expect(hitsFor(t.db, "afterbad").map((h) => h.entryId)).toEqual(["u1"]);
		expect(hitsFor(t.db, "secondline").map((h) => h.entryId)).toEqual(["u2"]);
		const read = readEvent(new Gate(t.db, UNSCOPED), { sessionId: "utf8-session", entryId: "u1" });
		expect(read.content[0]!.text).toContain("\ufffd");
		expect(read.content[0]!.text).toStartWith("beforebad ");
		expect(read.content[0]!.text).toEndWith(" afterbad");
		probeSession(t.db, "utf8-session", "beforebad");
		t.db.close();
	});

	test("a raw NUL byte makes its line malformed (diagnosed); escaped NULs stay text and the words after them are searchable", () => {
		const t = tempIndex();
		const raw = Buffer.concat([
			Buffer.from(`${JSON.stringify(header("nul-session", "/work/demo/app"))}\n`),
			Buffer.from('{"type":"message","id":"raw","parentId":null,"message":{"role":"user","content":"rawnul'),
			Buffer.from([0x00]),
			Buffer.from('after"}}\n'),
			Buffer.from([0x00, 0x00, 0x0a]),
			Buffer.from(
				jsonl([
					user("esc", null, "alphanul\u0000omeganulword and more"),
					{ type: "session_info", id: "name", parentId: "esc", name: "name\u0000withnulname" },
					{
						type: "message",
						id: "call",
						parentId: "name",
						message: {
							role: "assistant",
							content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "/work/demo/app/nul\u0000pathword.ts" } }],
							stopReason: "toolUse",
						},
					},
					user("last", "call", "lastnulline"),
				]),
			),
		]);
		writeFileSync(join(t.sessions, "nul.jsonl"), raw);
		const report = t.sync();
		expect(report.problems).toEqual([]);
		const secondLine = raw.indexOf(Buffer.from('{"type":"message","id":"raw"'));
		expect(report.diagnostics.map((d) => [d.kind, d.line, d.offset])).toEqual([
			["malformed-json", 2, secondLine],
			["malformed-json", 3, raw.indexOf(Buffer.from([0x00, 0x00, 0x0a]))],
		]);
		expect(hitsFor(t.db, "lastnulline").map((h) => h.entryId)).toEqual(["last"]);
		// A NUL inside the text must not cut what the index sees (bound as a C string it would).
		expect(hitsFor(t.db, "omeganulword").map((h) => h.entryId)).toEqual(["esc"]);
		expect(hitsFor(t.db, "withnulname").map((h) => h.entryId)).toEqual(["name"]);
		expect(hitsFor(t.db, "pathword").map((h) => h.entryId)).toEqual(["call"]);
		probeSession(t.db, "nul-session", "alphanul");
		t.db.close();
	});

	test("a NUL, U+FFFD or lone surrogate in the header cwd, session id or entry ids never throws", () => {
		const t = tempIndex();
		writeFileSync(
			join(t.sessions, "odd-header.jsonl"),
			jsonl([
				header("odd\u0000id\ud800", "/work/demo/app/\u0000\ufffd\udc00dir"),
				user("e\u0000\ud800", null, "oddheaderword"),
				user("e2", "e\u0000\ud800", "oddsecond"),
			]),
		);
		const report = t.sync();
		expect(report.problems).toEqual([]);
		const ids = t.db.query("SELECT session_id FROM sessions").all() as { session_id: string }[];
		expect(ids.length).toBe(1);
		expect(hitsFor(t.db, "oddheaderword").length).toBe(1);
		probeSession(t.db, ids[0]!.session_id, "oddsecond");
		const scoped: Scope = { roots: ["/work/demo/app"], current: null };
		onlyPiEventsErrors(() => search(new Gate(t.db, scoped), { query: "oddheaderword", filters: {}, limit: 10 }));
		t.db.close();
	});

	test("lone surrogates in text are indexed; the words beside them are found", () => {
		const t = tempIndex();
		writeFileSync(
			join(t.sessions, "surrogates.jsonl"),
			`${JSON.stringify(header("surrogate-session"))}\n{"type":"message","id":"s1","parentId":null,"message":{"role":"user","content":"leftword \\ud800\\udc00\\ud800 \\udfff rightword"}}\n`,
		);
		const report = t.sync();
		expect(report.problems).toEqual([]);
		expect(hitsFor(t.db, "rightword").map((h) => h.entryId)).toEqual(["s1"]);
		probeSession(t.db, "surrogate-session", "leftword");
		t.db.close();
	});
});

// ---------------------------------------------------------------------------------------------
// Big sessions and tree shapes
// ---------------------------------------------------------------------------------------------

function writeShape(path: string, sessionId: string, n: number, parentOf: (i: number) => string | null): void {
	const w = new ChunkedWriter(path);
	w.line(header(sessionId));
	let batch: string[] = [];
	for (let i = 0; i < n; i++) {
		const text = i % 2 === 0 ? `question ${i} token${i % 997} shapeword` : `answer ${i} token${i % 991}`;
		batch.push(
			JSON.stringify({
				type: "message",
				id: `e${i}`,
				parentId: parentOf(i),
				timestamp: new Date(Date.UTC(2026, 9, 1) + i * 1000).toISOString(),
				message: i % 2 === 0 ? { role: "user", content: text } : { role: "assistant", content: [{ type: "text", text }], stopReason: "stop" },
			}),
		);
		if (batch.length === 2000) {
			w.write(`${batch.join("\n")}\n`);
			batch = [];
		}
	}
	if (batch.length) w.write(`${batch.join("\n")}\n`);
	w.close();
}

describe("a 100,000-entry session", () => {
	const N = LONG ? 1_000_000 : 100_000;

	test(
		`a ${N.toLocaleString("en-US")}-entry chain: indexed by a child process in bounded time and memory; classification terminates; read and trace answer`,
		async () => {
			const layout = makeAgentLayout();
			const path = join(layout.sessionsDir, encodeCwd(APP), "chain.jsonl");
			writeShape(path, "chain-session", N, (i) => (i === 0 ? null : `e${i - 1}`));
			const run = await runChild(layout, ["index", "--json"], { timeoutMs: LONG ? 600_000 : 60_000 });
			figures.push(`${N.toLocaleString("en-US")}-entry chain: index ${(run.ms / 1000).toFixed(1)} s, peak RSS ${mb(run.maxRSS)}`);
			expect(run.timedOut).toBe(false);
			expect(run.exitCode).toBe(0);
			expect(run.json().eventsAdded).toBe(N);
			expect(run.maxRSS).toBeLessThan(RSS_BOUND);

			const db = openIndex(layout.defaultIndex);
			const states = db.query("SELECT branch_state, selection_state, count(*) AS n FROM events GROUP BY 1, 2").all();
			expect(states).toEqual([{ branch_state: "selected", selection_state: "direct", n: N }]);
			const access = new Gate(db, UNSCOPED);
			const started = performance.now();
			const leaf = readEvent(access, { sessionId: "chain-session", entryId: `e${N - 1}`, order: "branch", before: 20 });
			expect(leaf.neighbours.before.length).toBe(20);
			const mid = traceEvent(access, "chain-session", `e${N >> 1}`);
			expect(mid.children.length).toBe(1);
			expect(hitsFor(db, "shapeword token5").length).toBeGreaterThan(0);
			expect(performance.now() - started).toBeLessThan(5_000);
			db.close();

			// Appending one entry to the long chain is cheap (no full reclassification of a linear append).
			appendFileSync(path, `${JSON.stringify(user(`e${N}`, `e${N - 1}`, "appendedword"))}\n`);
			const append = await runChild(layout, ["index", "--json"], { timeoutMs: 60_000 });
			figures.push(`${N.toLocaleString("en-US")}-entry chain: append of one entry ${(append.ms / 1000).toFixed(2)} s`);
			expect(append.json().sessions.appended).toBe(1);
		},
		LONG ? 1_200_000 : 120_000,
	);

	test("a 100,000-child star and a 100,000-entry cycle: classification terminates; read and trace answer in bounded time", () => {
		const t = tempIndex();
		const n = 100_000;
		writeShape(join(t.sessions, "star.jsonl"), "star-session", n, (i) => (i === 0 ? null : "e0"));
		writeShape(join(t.sessions, "cycle.jsonl"), "cycle-session", n, (i) => (i === 0 ? `e${n - 1}` : `e${i - 1}`));
		let started = performance.now();
		const report = t.sync();
		figures.push(`100,000-child star + 100,000-entry cycle: sync ${(performance.now() - started).toFixed(0)} ms`);
		expect(report.problems).toEqual([]);
		const states = (sid: string) =>
			t.db
				.query(
					"SELECT branch_state AS b, count(*) AS n FROM events e JOIN sessions s ON s.session_key = e.session_key WHERE s.session_id = ?1 GROUP BY 1 ORDER BY 1",
				)
				.all(sid);
		expect(states("star-session")).toEqual([
			{ b: "alternate", n: n - 2 },
			{ b: "selected", n: 2 },
		]);
		expect(states("cycle-session")).toEqual([{ b: "unknown", n }]);

		const access = new Gate(t.db, UNSCOPED);
		started = performance.now();
		const cycleRead = readEvent(access, { sessionId: "cycle-session", entryId: "e0", order: "branch", before: 20, after: 20 });
		expect(cycleRead.neighbours.before.length).toBe(20);
		traceEvent(access, "cycle-session", "e0");
		expect(performance.now() - started).toBeLessThan(5_000);

		// The star's root has 99,999 children: one trace lists them all (no bound on node count).
		started = performance.now();
		const root = traceEvent(access, "star-session", "e0");
		const traceMs = performance.now() - started;
		const traceBytes = JSON.stringify(root).length;
		started = performance.now();
		const rootRead = readEvent(access, { sessionId: "star-session", entryId: "e0", order: "branch", after: 20 });
		const readMs = performance.now() - started;
		const readBytes = JSON.stringify(rootRead).length;
		figures.push(
			`star root: trace ${root.children.length} children in ${traceMs.toFixed(0)} ms (${mb(traceBytes)} of JSON); read --order branch: ${rootRead.neighbours.alternatives.length} alternatives in ${readMs.toFixed(0)} ms (${mb(readBytes)})`,
		);
		expect(traceMs).toBeLessThan(20_000);
		expect(readMs).toBeLessThan(20_000);
		t.db.close();
	}, 120_000);
});

describe("parentId cycles", () => {
	const entries = [
		user("self", "self", "selfloopword"),
		user("c1", "c2", "cycleoneword"),
		user("c2", "c1", "cycletwoword"),
		user("tail", "c2", "hangsoffcycle"),
		user("r1", null, "rootword"),
		user("r2", "r1", "childofroot"),
		user("t1", "t3", "threecycle"),
		user("t2", "t1", "threecycle"),
		user("t3", "t2", "threecycle"),
		user("leaf", "r2", "leafword"),
	];

	test("self-loops, 2- and 3-cycles and what hangs off them are unknown; the rest is classified; read and trace terminate", () => {
		const t = tempIndex();
		writeFileSync(join(t.sessions, "cycles.jsonl"), jsonl([header("cycle-session"), ...entries]));
		expect(t.sync().problems).toEqual([]);
		const states = Object.fromEntries(
			(t.db.query("SELECT entry_id, branch_state FROM events").all() as { entry_id: string; branch_state: string }[]).map((r) => [r.entry_id, r.branch_state]),
		);
		expect(states).toEqual({
			self: "unknown",
			c1: "unknown",
			c2: "unknown",
			tail: "unknown",
			r1: "selected",
			r2: "selected",
			t1: "unknown",
			t2: "unknown",
			t3: "unknown",
			leaf: "selected",
		});
		const access = new Gate(t.db, UNSCOPED);
		for (const e of entries) {
			const id = e.id as string;
			const r = readEvent(access, { sessionId: "cycle-session", entryId: id, order: "branch", before: 20, after: 20 });
			expect(r.neighbours.before.length).toBeLessThanOrEqual(20);
			expect(r.neighbours.after.length).toBeLessThanOrEqual(20);
			expect(new Set(r.neighbours.before.map((v) => v.entryId)).size).toBe(r.neighbours.before.length);
			traceEvent(access, "cycle-session", id);
		}
		t.db.close();
	});

	test("a cycle closed by an append (a forward reference) gives the same states as a fresh index", () => {
		const t = tempIndex();
		const path = join(t.sessions, "forward.jsonl");
		writeFileSync(path, jsonl([header("forward-session"), user("a", "b", "forwardone"), user("x", null, "plain")]));
		t.sync();
		appendFileSync(path, jsonl([user("b", "a", "forwardtwo"), user("y", "x", "plain two")]));
		expect(t.sync().sessions.appended).toBe(1);
		const fresh = openIndex(join(t.dir, "fresh.db"));
		syncIndex(fresh, { sourceDirs: t.sources });
		expect(dumpIndex(t.db).events).toEqual(dumpIndex(fresh).events);
		fresh.close();
		t.db.close();
	});
});

// ---------------------------------------------------------------------------------------------
// Duplicate ids
// ---------------------------------------------------------------------------------------------

describe("duplicate ids", () => {
	test("a repeated id gets a derived id and a diagnostic; both entries are readable and traceable", () => {
		const t = tempIndex();
		writeFileSync(
			join(t.sessions, "dups.jsonl"),
			jsonl([header("dup-session"), user("a", null, "firstcopy"), user("a", "a", "secondcopy"), user("b", "a", "childofa")]),
		);
		const report = t.sync();
		expect(report.problems).toEqual([]);
		expect(report.diagnostics.map((d) => [d.kind, d.line])).toEqual([["duplicate-id", 3]]);
		const ids = (t.db.query("SELECT entry_id FROM events ORDER BY seq").all() as { entry_id: string }[]).map((r) => r.entry_id);
		expect(ids).toEqual(["a", "a~dup1", "b"]);
		probeSession(t.db, "dup-session", "copy");
		t.db.close();
	});

	test("an entry whose literal id looks derived (a~dup1) does not stop the file from being indexed", () => {
		// parseLines renames the second "a" to `a~dup1` without checking that id is free: the
		// INSERT hits UNIQUE(session_key, entry_id) and the whole session is never indexed.
		const t = tempIndex();
		writeFileSync(
			join(t.sessions, "literal.jsonl"),
			jsonl([header("literal-session"), user("a~dup1", null, "literalword"), user("a", "a~dup1", "plainword"), user("a", "a", "repeatword")]),
		);
		const report = t.sync();
		expect(report.problems).toEqual([]);
		expect(report.sessions.new).toBe(1);
		expect(report.diagnostics.map((d) => [d.kind, d.line])).toEqual([["duplicate-id", 4]]);
		expect((t.db.query("SELECT count(*) AS n FROM events").get() as { n: number }).n).toBe(3);
		expect(hitsFor(t.db, "repeatword").length).toBe(1);
		t.db.close();
	});

	test("the same collision arriving by append keeps the appended entries searchable", () => {
		const t = tempIndex();
		const path = join(t.sessions, "literal-append.jsonl");
		writeFileSync(path, jsonl([header("literal-append-session"), user("a~dup1", null, "literalword"), user("a", "a~dup1", "plainword")]));
		expect(t.sync().sessions.new).toBe(1);
		appendFileSync(path, jsonl([user("a", "a", "repeatedword"), user("z", "a", "appendedafter")]));
		const report = t.sync();
		expect(report.problems).toEqual([]);
		expect(report.sessions.appended).toBe(1);
		expect(hitsFor(t.db, "appendedafter").length).toBe(1);
		t.db.close();
	});
});

// ---------------------------------------------------------------------------------------------
// Huge numbers
// ---------------------------------------------------------------------------------------------

describe("huge numbers", () => {
	test("a timestamp beyond the Date range (1e20 ms) never breaks search, read or trace", async () => {
		// parseTime accepts any finite number; toISOString() of an out-of-range Date throws RangeError.
		const layout = makeAgentLayout();
		const dir = join(layout.sessionsDir, encodeCwd(APP));
		mkdirSync(dir, { recursive: true });
		writeFileSync(
			join(dir, "huge-ts.jsonl"),
			jsonl([
				header("huge-ts-session"),
				{ type: "message", id: "u1", parentId: null, timestamp: 1e20, message: { role: "user", content: "hugetimestampword" } },
				{ type: "message", id: "u2", parentId: "u1", timestamp: -8.7e15, message: { role: "user", content: "negativetimestampword", timestamp: 1e300 } },
			]),
		);
		const index = await runChild(layout, ["index", "--json"], { timeoutMs: 30_000 });
		expect(index.exitCode).toBe(0);
		for (const args of [
			["search", "hugetimestampword", "--all", "--json", "--no-sync"],
			["search", "negativetimestampword", "--all", "--no-sync"],
			["read", "huge-ts-session", "u1", "--all", "--json", "--no-sync", "--after", "5"],
			["trace", "huge-ts-session", "u2", "--all", "--no-sync"],
		]) {
			const run = await runChild(layout, args, { timeoutMs: 30_000 });
			expect({ args, exit: run.exitCode, stderr: run.stderr }).toEqual({ args, exit: 0, stderr: expect.not.stringContaining("internal error") });
		}
	}, 60_000);

	test("a header version of 1e400 (Infinity) reads appended entries the way a rebuild does", () => {
		// JSON.stringify(Infinity) is null: the saved parser state loses the version, and the append
		// path then reads the new entries as v1 (derived ids v1-N), unlike a rebuild of the same file.
		const t = tempIndex();
		const path = join(t.sessions, "inf-version.jsonl");
		writeFileSync(path, `{"type":"session","version":1e400,"id":"inf-session","cwd":"/work/demo/app"}\n${JSON.stringify(user("u1", null, "first"))}\n`);
		t.sync();
		appendFileSync(path, jsonl([user("u2", "u1", "second")]));
		expect(t.sync().sessions.appended).toBe(1);
		const fresh = openIndex(join(t.dir, "fresh.db"));
		syncIndex(fresh, { sourceDirs: t.sources });
		const ids = (db: Database) => (db.query("SELECT entry_id FROM events ORDER BY seq").all() as { entry_id: string }[]).map((r) => r.entry_id);
		expect(ids(t.db)).toEqual(ids(fresh));
		fresh.close();
		t.db.close();
	});

	test("huge exit codes, token counts and compaction indexes are stored without throwing", () => {
		const t = tempIndex();
		writeFileSync(
			join(t.sessions, "huge-numbers.jsonl"),
			[
				JSON.stringify(header("numbers-session")),
				'{"type":"message","id":"b1","parentId":null,"message":{"role":"bashExecution","command":"bignumbercmd","output":"out","exitCode":1e400}}',
				'{"type":"message","id":"b2","parentId":"b1","message":{"role":"bashExecution","command":"negnumbercmd","output":"out","exitCode":-9223372036854775809}}',
				'{"type":"compaction","id":"k1","parentId":"b2","summary":"bignumbersummary","firstKeptEntryIndex":1e400,"tokensBefore":123456789012345678901234567890}',
				'{"type":"message","id":"b3","parentId":"k1","message":{"role":"bashExecution","command":"fractioncmd","output":"out","exitCode":1.5}}',
			].join("\n") + "\n",
		);
		expect(t.sync().problems).toEqual([]);
		for (const word of ["bignumbercmd", "negnumbercmd", "bignumbersummary", "fractioncmd"]) expect(hitsFor(t.db, word).length).toBe(1);
		probeSession(t.db, "numbers-session", "out");
		t.db.close();
	});
});
