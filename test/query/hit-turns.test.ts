/**
 * Every hit carries its turn (issue 34 items 1, 2 and 2): the prompt that started it and the
 * turn's outcome (its last visible assistant text, toward the materialized leaf when it forks),
 * with bounded marked previews, only from the hit's own session and before the invocation cutoff. Real session files, indexed as pi-events does.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Scope } from "../../src/auth/scope.ts";
import { renderHits } from "../../src/present/render.ts";
import { cliReadTurn, nextTurnHint, toolReadTurn } from "../../src/present/search-text.ts";
import { ANSWER_SNIPPET_CHARS } from "../../src/query/search/hits.ts";
import { SNIPPET_CHARS } from "../../src/query/snippet.ts";
import { TURN_PREVIEW_CHARS } from "../../src/query/turns.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { assistantEntry, buildIndex, marked, run, type TestIndex, toolResultEntry, userEntry, writeSession } from "./helpers.ts";

afterAll(cleanupTempDirs);

const A = "0000000a-0000-4000-8000-000000000000";
const B = "0000000b-0000-4000-8000-000000000000";
const C = "0000000c-0000-4000-8000-000000000000";
const OUT = "0000000d-0000-4000-8000-000000000000";
const H = "00000013-0000-4000-8000-000000000000";
const FOLLOW = "00000014-0000-4000-8000-000000000000";
const NEW_PROBLEM = "00000015-0000-4000-8000-000000000000";
const EXPLAINED = "00000016-0000-4000-8000-000000000000";
const CALLER_FOLLOW = "00000017-0000-4000-8000-000000000000";
const INVESTIGATED = "00000018-0000-4000-8000-000000000000";
const FIRST_REPORT = "00000019-0000-4000-8000-000000000000";
const REPORTED_AGAIN = "0000001a-0000-4000-8000-000000000000";
const MENTIONS_ONLY = "0000001b-0000-4000-8000-000000000000";
const ETL_FIRST = "0000001c-0000-4000-8000-000000000000";
const ETL_AGAIN = "0000001d-0000-4000-8000-000000000000";
const LONG_OUT = "0000001f-0000-4000-8000-000000000000";
const CONCLUDED = "0000001e-0000-4000-8000-000000000000";
const t = (s: number) => new Date(Date.UTC(2026, 9, 1, 10, 0, s)).toISOString();
const LOG = "worker boot sequence: quarkflux cache warmed, 412 entries, listening on :8080";
const LONG = `The cause: the retry decorator wrapped the task twice, so each countdown scheduled a second run. ${"Details of the fix follow. ".repeat(30)}`;

let index: TestIndex;

beforeAll(() => {
	const sessions = makeTempDir("pi-events-hit-turns-");
	// A: a turn with a tool call, its result, an explanation and a status line; a second turn; an abandoned branch in it.
	writeSession(sessions, {
		id: A,
		cwd: "/work/app",
		entries: [
			{ type: "model_change", id: "m0", parentId: null, timestamp: t(0), provider: "anthropic", modelId: "m" },
			userEntry("u1", "m0", t(1), "Why do the celery jobs with a long countdown run twice?"),
			assistantEntry("a1", "u1", t(2), "Let me read the worker module.", [{ id: "call_1", name: "read", arguments: { path: "worker.py" } }]),
			toolResultEntry("r1", "a1", t(3), "call_1", "read", LOG),
			assistantEntry("a2", "r1", t(4), LONG),
			assistantEntry("a3", "a2", t(5), "Done, tests pass."),
			// Rewound to a2 and tried another ending, then went back: the abandoned one is not the outcome.
			assistantEntry("x1", "a2", t(6), "An abandoned ending that mentions celery."),
			{ type: "session_info", id: "n1", parentId: "a3", timestamp: t(6), name: "Celery jobs run twice" },
			userEntry("u2", "n1", t(7), "ok, ship it"),
			assistantEntry("a4", "u2", t(8), "Shipped."),
		],
	});
	// B and C read the same file (the same text): copies of A's result. OUT is outside the /work/app scope.
	for (const [id, cwd] of [
		[B, "/work/app"],
		[C, "/work/app/sub"],
		[OUT, "/work/elsewhere"],
	] as const) {
		writeSession(sessions, {
			id,
			cwd,
			entries: [
				userEntry("v1", null, t(10), "look at the worker module"),
				assistantEntry("b1", "v1", t(11), null, [{ id: "call_b", name: "read", arguments: { path: "worker.py" } }]),
				toolResultEntry("s1", "b1", t(12), "call_b", "read", LOG),
				assistantEntry("b2", "s1", t(13), "It boots fine."),
			],
		});
	}
	// A problem taken up again: F's fix did not hold; G, two weeks later, finds the cause.
	const later = (s: number) => new Date(Date.UTC(2026, 9, 15, 10, 0, s)).toISOString();
	writeSession(sessions, {
		id: "0000000f-0000-4000-8000-000000000000",
		cwd: "/work/app",
		entries: [
			userEntry("f1", null, t(30), "The nightly export job fails with a lock timeout, please look"),
			assistantEntry("f2", "f1", t(31), "I raised the lock timeout from 5 to 30 seconds in the export settings; that should give the job room."),
			assistantEntry("f3", "f2", t(32), "Done."),
		],
	});
	writeSession(sessions, {
		id: "00000010-0000-4000-8000-000000000000",
		cwd: "/work/app",
		entries: [
			userEntry("g1", null, later(1), "The nightly export job fails again with a lock timeout"),
			assistantEntry(
				"g2",
				"g1",
				later(2),
				"The real cause: the vacuum cron starts at the same minute and holds the table lock for 40 seconds. I moved the export to 02:30.",
			),
		],
	});
	// The same log pulled in two turns: one led to an explanation, the newer one to a one-line verdict.
	const logTurn = (id: string, day: number, pid: number, verdict: string) =>
		writeSession(sessions, {
			id,
			cwd: "/work/app",
			entries: [
				userEntry("k1", null, later(day * 100), "look at the overnight worker log"),
				assistantEntry("k2", "k1", later(day * 100 + 1), null, [{ id: "call_k", name: "bash", arguments: { command: "kubectl logs worker" } }]),
				toolResultEntry("k3", "k2", later(day * 100 + 2), "call_k", "bash", `ERR zorblax worker died pid ${pid}`),
				assistantEntry("k4", "k3", later(day * 100 + 3), verdict),
			],
		});
	logTurn(
		"00000011-0000-4000-8000-000000000000",
		1,
		101,
		`The worker dies because ${"the pool keeps every rendered page in memory and the kernel kills it; ".repeat(8)}`,
	);
	logTurn("00000012-0000-4000-8000-000000000000", 2, 202, "Restarted.");
	// A turn whose outcome is a summary, not a status line: its hits show it.
	writeSession(sessions, {
		id: H,
		cwd: "/work/app",
		entries: [
			userEntry("h1", null, t(40), "Why is the pdf renderer slow on big invoices?"),
			assistantEntry(
				"h2",
				"h1",
				t(41),
				`Each page re-parses the whole template: ${"the layout pass walks every line item again for every page it lays out, ".repeat(5)}`,
			),
			assistantEntry(
				"h3",
				"h2",
				t(42),
				`In short: the template was parsed once per page. ${"It is now parsed once per invoice and reused by every page. ".repeat(3)}`,
			),
		],
	});
	// Follow-up turns: the explanation comes after "go on", the fix after "ok, fix it"; a long new
	// prompt starts another problem, whose answer is not this one's.
	writeSession(sessions, {
		id: FOLLOW,
		cwd: "/work/app",
		entries: [
			userEntry("p1", null, t(50), "The report export fails with a gateway timeout on big accounts"),
			assistantEntry("q0", "p1", t(51), "The export job logs show the request running for 60 seconds before the proxy gives up."),
			userEntry("p2", "q0", t(52), "go on, check the database side"),
			assistantEntry(
				"q1",
				"p2",
				t(53),
				`The export runs one query per invoice line: ${"every line item loads its product, tax rule and discount separately, ".repeat(4)}`,
			),
			userEntry("p3", "q1", t(54), "ok, fix it"),
			assistantEntry("q2", "p3", t(55), null, [{ id: "call_e", name: "edit", arguments: { path: "export.ts", edits: [] } }]),
			assistantEntry("q3", "q2", t(56), "Done."),
		],
	});
	writeSession(sessions, {
		id: NEW_PROBLEM,
		cwd: "/work/app",
		entries: [
			userEntry("p1", null, t(60), "The billing digest mail arrives empty on Mondays"),
			assistantEntry("q0", "p1", t(61), "The digest query reads last week's invoices; on Mondays the window starts after the last send."),
			userEntry(
				"p2",
				"q0",
				t(62),
				`Something else now, unrelated to the digest: ${"the admin dashboard takes ages to load the customer table with all its filters and sort orders applied, ".repeat(2)}`,
			),
			assistantEntry("q1", "p2", t(63), `The customer table loads every customer at once: ${"each row also counts its orders in a subquery, ".repeat(10)}`),
		],
	});
	// The same log in thirty routine checks (more than a search looks at the turns of), each a
	// little longer than the last, and in the turn that explained it (as long as the fourth).
	for (let i = 0; i < 30; i++) {
		writeSession(sessions, {
			id: `000001${String(i).padStart(2, "0")}-0000-4000-8000-000000000000`,
			cwd: "/work/logs",
			entries: [
				userEntry("r1", null, t(100 + i), "check the overnight logs"),
				assistantEntry("r2", "r1", t(100 + i), null, [{ id: "call_r", name: "bash", arguments: { command: "kubectl logs queue" } }]),
				toolResultEntry("r3", "r2", t(100 + i), "call_r", "bash", `WARN vexmorph queue stalled shard 7\n${"INFO shard heartbeat ok\n".repeat(i)}`),
				assistantEntry("r4", "r3", t(100 + i), "Nothing to do."),
			],
		});
	}
	writeSession(sessions, {
		id: EXPLAINED,
		cwd: "/work/logs",
		entries: [
			userEntry("e1", null, t(130), "The queue keeps stalling at night, why?"),
			assistantEntry("e2", "e1", t(131), null, [{ id: "call_x", name: "bash", arguments: { command: "kubectl logs queue --since 24h" } }]),
			toolResultEntry("e3", "e2", t(132), "call_x", "bash", `WARN vexmorph queue stalled shard 7\n${"INFO shard heartbeat ok\n".repeat(3)}`),
			assistantEntry(
				"e4",
				"e3",
				t(133),
				`Shard 7 stalls because the nightly compaction holds its lock: ${"the consumer waits for the lock and the queue backs up behind it, ".repeat(5)}`,
			),
			assistantEntry("e5", "e4", t(134), "Done."),
		],
	});
	// The same log in routine checks and in an investigation whose answer came in a follow-up turn.
	for (let i = 0; i < 5; i++) {
		writeSession(sessions, {
			id: `000002${String(i).padStart(2, "0")}-0000-4000-8000-000000000000`,
			cwd: "/work/sockets",
			entries: [
				userEntry("r1", null, t(200 + i), "morning check of the edge logs"),
				assistantEntry("r2", "r1", t(200 + i), null, [{ id: "call_r", name: "bash", arguments: { command: "kubectl logs edge" } }]),
				toolResultEntry("r3", "r2", t(200 + i), "call_r", "bash", `ERR quillfin socket reset by peer (conn ${i})`),
				assistantEntry("r4", "r3", t(200 + i), "A few resets, nothing unusual."),
			],
		});
	}
	writeSession(sessions, {
		id: INVESTIGATED,
		cwd: "/work/sockets",
		entries: [
			userEntry("i1", null, t(220), "Uploads through the edge keep failing halfway, can you look?"),
			assistantEntry("i2", "i1", t(221), null, [{ id: "call_i", name: "bash", arguments: { command: "kubectl logs edge --since 2h" } }]),
			toolResultEntry("i3", "i2", t(222), "call_i", "bash", "ERR quillfin socket reset by peer (conn 9)"),
			assistantEntry(
				"i4",
				"i3",
				t(223),
				"The failures line up with the socket resets in the edge log, every one of them during an upload that runs longer than a minute. That narrows it to a timeout somewhere between the edge and the upstream.",
			),
			userEntry("i5", "i4", t(224), "go on"),
			assistantEntry(
				"i6",
				"i5",
				t(225),
				`The edge closes idle upstream sockets after 60 seconds: ${"an upload that streams slower than the buffer fills leaves the upstream socket idle, and the edge resets it, ".repeat(3)}`,
			),
		],
	});
	// A problem reported again later in other words ("still"), and a later prompt that shares the
	// words but is about something else (no word saying the problem is back).
	writeSession(sessions, {
		id: FIRST_REPORT,
		cwd: "/work/cli",
		entries: [
			userEntry("s1", null, later(500), "Since 0.9 brisk takes almost two seconds to start, even brisk --help"),
			assistantEntry("s2", "s1", later(501), `The release profile keeps debug info: ${"a much bigger binary to map at start, ".repeat(5)}`),
			assistantEntry("s3", "s2", later(502), "Done."),
		],
	});
	writeSession(sessions, {
		id: REPORTED_AGAIN,
		cwd: "/work/cli",
		entries: [
			userEntry("t1", null, later(900), "Startup is still slow: brisk --help takes over a second on the CI runners"),
			assistantEntry(
				"t2",
				"t1",
				later(901),
				`The real cause: the update check runs before argument parsing, ${"a blocking HTTP request on every invocation, ".repeat(5)}`,
			),
		],
	});
	writeSession(sessions, {
		id: MENTIONS_ONLY,
		cwd: "/work/cli",
		entries: [
			userEntry("m1", null, later(950), "add a --json flag to brisk help output, two spaces of indent"),
			assistantEntry("m2", "m1", later(951), `Added the flag: ${"the help printer now renders its table as JSON when asked, ".repeat(5)}`),
		],
	});
	// A later report that restates the first one without the query's words.
	writeSession(sessions, {
		id: ETL_FIRST,
		cwd: "/work/etl",
		entries: [
			userEntry("e1", null, later(600), "The nightly export drops rows: the orders parquet in the lakehouse misses about 3% of them"),
			assistantEntry(
				"e2",
				"e1",
				later(601),
				`The exporter pages with OFFSET while rows are inserted: ${"a page boundary shifts and rows fall between two pages, ".repeat(5)}`,
			),
			assistantEntry("e3", "e2", later(602), "Done."),
		],
	});
	writeSession(sessions, {
		id: ETL_AGAIN,
		cwd: "/work/etl",
		entries: [
			userEntry("f1", null, later(990), "The orders parquet in the lakehouse is still short after the paging change"),
			assistantEntry(
				"f2",
				"f1",
				later(991),
				`The real cause: late-arriving orders are stamped with the next day's partition, ${"so a day's file never holds them, ".repeat(5)}`,
			),
		],
	});
	// A long tool output whose words lie deep inside, past the snippet's scan window.
	writeSession(sessions, {
		id: LONG_OUT,
		cwd: "/work/app",
		entries: [
			userEntry("l1", null, t(80), "run the integration suite"),
			assistantEntry("l2", "l1", t(81), null, [{ id: "call_l", name: "bash", arguments: { command: "make integration" } }]),
			toolResultEntry(
				"l3",
				"l2",
				t(82),
				"call_l",
				"bash",
				`${"ok step passed in 12 ms\n".repeat(1300)}FAIL zebrawing handshake refused by peer\n${"ok step passed in 9 ms\n".repeat(100)}`,
			),
		],
	});
	// A calling session whose follow-up turn (with the explanation) comes after the invocation cutoff.
	writeSession(sessions, {
		id: CALLER_FOLLOW,
		cwd: "/work/app",
		entries: [
			userEntry("k1", null, t(70), "the glimmerwort deploy hangs"),
			assistantEntry("k2", "k1", t(71), "Checking."),
			assistantEntry("k3", "k2", t(72), null, [{ id: "call_gw", name: "event_search", arguments: { query: "glimmerwort" } }]),
			userEntry("k5", "k3", t(74), "go on"),
			assistantEntry(
				"k6",
				"k5",
				t(75),
				`It hangs because the migration lock is never released: ${"the runner takes the lock before the health check and exits early on a timeout, ".repeat(3)}`,
			),
		],
	});
	// An outcome that states its conclusion first, and names the problem's words near its start and far into it.
	writeSession(sessions, {
		id: CONCLUDED,
		cwd: "/work/app",
		entries: [
			userEntry("t1", null, t(140), "The thumbnail worker gets OOM kills on animated uploads, please fix"),
			assistantEntry("t2", "t1", t(141), null, [{ id: "call_t", name: "edit", arguments: { path: "thumbs/decode.py", edits: [] } }]),
			assistantEntry(
				"t3",
				"t2",
				t(142),
				`Fixed: the thumbnail decoder now reads only the first frame of each file, so large animated uploads no longer fill the worker's memory. ${"Before, every frame was decoded at full size, one after another, and kept until the last. ".repeat(6)}No OOM kills since.`,
			),
		],
	});
	// The calling session: the search runs in c2's tool call; c3 comes after it.
	writeSession(sessions, {
		id: "0000000e-0000-4000-8000-000000000000",
		cwd: "/work/app",
		entries: [
			userEntry("w1", null, t(20), "why does the zebrafrost build fail"),
			assistantEntry("c1", "w1", t(21), "It might be the cache."),
			assistantEntry("c2", "c1", t(22), null, [{ id: "call_pi", name: "event_search", arguments: { query: "zebrafrost" } }]),
			assistantEntry("c3", "c2", t(23), "The zebrafrost build failed because the lockfile changed."),
		],
	});
	index = buildIndex([sessions]);
});

afterAll(() => index?.close());

describe("ranking that answers", () => {
	test("a turn whose question matched with more evidence (its name too): its explanation first, as a turn match saying where the words were", () => {
		const hits = run(index.db, "celery twice", { sessionIds: [A] }).hits;
		expect(hits[0]!.entryId).toBe("a2");
		expect(hits[0]!.match).toBe("turn");
		// An answer shows its start, where it states the cause, and twice a hit's usual length for the fix.
		expect(hits[0]!.snippet.startsWith("The cause: the retry decorator wrapped the task twice")).toBe(true);
		expect(hits[0]!.snippet.length).toBeGreaterThan(400);
		expect(hits[0]!.snippet.length).toBeLessThanOrEqual(ANSWER_SNIPPET_CHARS + 2);
		expect(hits[0]!.foundIn).toEqual([
			{ term: "celery", entryIds: expect.arrayContaining(["u1", "n1"]) },
			{ term: "twice", entryIds: expect.arrayContaining(["u1", "n1"]) },
		]);
		// The question and the name follow as event matches; the turn's status line is the outcome, not a hit.
		expect(
			hits
				.slice(1, 3)
				.map((h) => h.entryId)
				.sort(),
		).toEqual(["n1", "u1"]);
		for (const h of hits.slice(1)) expect(h.match).toBe("event");
	});

	test("a question that alone matched, in a turn that ends in a status line: its explanation first, the question next", () => {
		const hits = run(index.db, "jobs countdown", { sessionIds: [A] }).hits;
		expect(hits.map((h) => h.entryId).slice(0, 2)).toEqual(["a2", "u1"]);
		expect(hits[0]!.match).toBe("turn");
	});

	test("a question that alone matched, in a turn whose outcome says something itself: the question first, its explanation next", () => {
		const hits = run(index.db, "renderer slow", { sessionIds: [H] }).hits;
		expect(hits.map((h) => h.entryId).slice(0, 2)).toEqual(["h1", "h2"]);
		expect(hits[0]!.turn?.outcome?.entryId).toBe("h3");
		expect(hits[1]!.match).toBe("turn");
	});

	test("a turn that ends in its answer adds nothing: its hits carry the answer as their outcome", () => {
		const hits = run(index.db, "worker module", { sessionIds: [B] }).hits;
		expect(hits.every((h) => h.match === "event")).toBe(true);
	});

	test("a log that led to an explanation ranks above the same words in a turn that ended in a verdict", () => {
		const hits = run(index.db, "zorblax died", {}, { scope: { roots: ["/work/app"], current: null } }).hits;
		expect(hits.map((h) => `${h.sessionId.slice(6, 8)}/${h.entryId}`).slice(0, 2)).toEqual(["11/k3", "12/k3"]);
	});

	test("the answer given in a follow-up turn (after a short prompt: 'go on', 'ok, fix it') is the turn's answer", () => {
		const hits = run(index.db, "report export gateway timeout", { sessionIds: [FOLLOW] }).hits;
		expect(hits[0]!.entryId).toBe("q1");
		expect(hits[0]!.match).toBe("turn");
		expect(hits[0]!.turn?.prompt.preview).toBe("go on, check the database side");
		// A long prompt after the turn states a new problem: its answer is not this turn's.
		const other = run(index.db, "billing digest empty", { sessionIds: [NEW_PROBLEM] }).hits;
		expect(other.map((h) => h.entryId)).not.toContain("q1");
	});

	test("among common logs, a log whose turn went on in a follow-up turn: the answer given there ranks first", () => {
		const hits = run(index.db, "quillfin socket reset", {}, { scope: { roots: ["/work/sockets"], current: null } }).hits;
		expect(`${hits[0]!.sessionId}/${hits[0]!.entryId}`).toBe(`${INVESTIGATED}/i6`);
		expect(hits[0]!.match).toBe("turn");
		expect(hits[0]!.turn?.prompt.preview).toBe("go on");
	});

	test("a later session that reports the problem again in its own words: its answer first, marked as taking up the earlier question", () => {
		const cli = { scope: { roots: ["/work/cli"], current: null } };
		const result = run(index.db, "brisk two seconds start", {}, cli);
		const first = result.hits[0]!;
		expect(`${first.sessionId}/${first.entryId}`).toBe(`${REPORTED_AGAIN}/t2`);
		expect(first.match).toBe("later");
		expect(first.takesUp).toEqual({ sessionId: FIRST_REPORT, entryId: "s1" });
		expect(first.foundIn?.map((f) => [f.term, f.entryIds])).toEqual([
			["brisk", ["t1"]],
			["two", []],
			["seconds", ["t1"]],
			["start", []],
		]);
		// The earlier question next; the prompt that mentions brisk and help without saying the problem is back never joins.
		expect(`${result.hits[1]!.sessionId}/${result.hits[1]!.entryId}`).toBe(`${FIRST_REPORT}/s1`);
		expect(result.hits.map((h) => h.sessionId)).not.toContain(MENTIONS_ONLY);
		expect(renderHits(result.hits, { color: false })).toContain("[later: took up hit 2 again]");
		// In the later session's own scope the earlier question is not in scope: nothing to take up.
		const alone = run(index.db, "brisk two seconds start", { sessionIds: [REPORTED_AGAIN] }).hits;
		expect(alone.every((h) => h.match !== "later")).toBe(true);
	});

	test("a later session that restates the first report without the query's words (and says it is still there): its answer first", () => {
		const hits = run(index.db, "nightly export drops rows", {}, { scope: { roots: ["/work/etl"], current: null } }).hits;
		expect(`${hits[0]!.sessionId}/${hits[0]!.entryId}`).toBe(`${ETL_AGAIN}/f2`);
		expect(hits[0]!.match).toBe("later");
		expect(hits[0]!.takesUp).toEqual({ sessionId: ETL_FIRST, entryId: "e1" });
		expect(hits[0]!.foundIn?.every((f) => f.entryIds.length === 0)).toBe(true);
	});

	test("in the calling session, a follow-up turn after the invocation cutoff gives no answer", () => {
		const unscoped = run(index.db, "glimmerwort deploy", { sessionIds: [CALLER_FOLLOW] }).hits;
		expect(unscoped[0]!.entryId).toBe("k6");
		const scope: Scope = { roots: ["/work/app"], current: { sessionId: CALLER_FOLLOW, sessionFile: null, toolCallId: "call_gw" } };
		const hits = run(index.db, "glimmerwort deploy", { sessionIds: [CALLER_FOLLOW] }, { scope }).hits;
		expect(hits.map((h) => h.entryId)).toEqual(["k1"]);
		expect(hits[0]!.turn?.outcome?.entryId).toBe("k2");
	});

	test("a log in the turn that explained it ranks above the same log in routine checks, also those whose turns were not looked at", () => {
		const hits = run(index.db, "vexmorph queue stalled", {}, { scope: { roots: ["/work/logs"], current: null } }).hits;
		expect(`${hits[0]!.sessionId}/${hits[0]!.entryId}`).toBe(`${EXPLAINED}/e4`);
		expect(`${hits[1]!.sessionId}/${hits[1]!.entryId}`).toBe(`${EXPLAINED}/e3`);
		// Then the routine checks in the order of their logs' own relevance: the ones whose turns were
		// not looked at (the least relevant) count as routine too, and do not jump ahead of those that were.
		expect(hits[2]!.sessionId).toBe("00000100-0000-4000-8000-000000000000");
	});

	test("a problem taken up again in a later session: the later session's turn ranks first", () => {
		const hits = run(index.db, "nightly export lock timeout", {}, { scope: { roots: ["/work/app"], current: null } }).hits;
		expect(hits[0]!.entryId).toBe("g1");
		expect(hits[0]!.turn?.outcome?.entryId).toBe("g2");
		// Alone, the earlier session's explanation is first (its turn ends in "Done."), then its question.
		const alone = run(index.db, "nightly export lock timeout", { sessionIds: ["0000000f-0000-4000-8000-000000000000"] }).hits;
		expect(alone.map((h) => h.entryId).slice(0, 2)).toEqual(["f2", "f1"]);
	});
});

describe("snippets of long texts", () => {
	test("a match deep in a long output's tail is found and marked; the omission before it and the cut are shown", () => {
		const hit = run(index.db, "zebrawing handshake refused", { sessionIds: [LONG_OUT] }).hits[0]!;
		expect(hit.entryId).toBe("l3");
		expect(marked(hit)).toMatch(/^\[… [\d,]+ characters omitted …\] …/);
		expect(marked(hit)).toContain("FAIL «zebrawing» «handshake» «refused» by peer");
		expect(hit.snippet.length).toBeLessThanOrEqual(SNIPPET_CHARS + 50);
	});
});

describe("hit.turn", () => {
	test("a tool result's turn: its prompt and the turn's last visible text on the branch toward the leaf, previews marked and bounded", () => {
		const hit = run(index.db, "quarkflux", { sessionIds: [A] }).hits[0]!;
		expect(hit.entryId).toBe("r1");
		expect(hit.turn?.prompt.entryId).toBe("u1");
		expect(hit.turn?.prompt.preview).toContain("celery jobs with a long countdown");
		// x1 was appended later, but lies on an abandoned branch: a3 ends the turn on the selected path.
		expect(hit.turn?.outcome).toEqual({ entryId: "a3", preview: "Done, tests pass.", highlights: [] });
	});

	test("the prompt and the outcome hits give their own id only; previews of long texts stay bounded and marked", () => {
		const result = run(index.db, "celery countdown", { sessionIds: [A] });
		const prompt = result.hits.find((h) => h.entryId === "u1")!;
		expect(prompt.turn?.prompt).toEqual({ entryId: "u1" });
		expect(prompt.turn?.outcome?.entryId).toBe("a3");
		const explanation = run(index.db, "decorator wrapped", { sessionIds: [A] }).hits[0]!;
		expect(explanation.entryId).toBe("a2");
		expect(explanation.turn?.prompt.preview).toContain("celery");
		const shipped = run(index.db, "shipped", { sessionIds: [A] }).hits[0]!;
		// Marked like a snippet: "ship" is a form of "shipped".
		expect(shipped.turn).toEqual({ prompt: { entryId: "u2", preview: "ok, ship it", highlights: [[4, 8]] }, outcome: { entryId: "a4" } });
		expect(marked({ snippet: shipped.turn!.prompt.preview!, highlights: shipped.turn!.prompt.highlights as [number, number][] })).toBe("ok, «ship» it");
		const long = run(index.db, "celery", { sessionIds: [A] }).hits.find((h) => h.entryId === "u1")!;
		expect(long.turn?.outcome?.preview?.length).toBeLessThanOrEqual(TURN_PREVIEW_CHARS + 2);
	});

	test("an entry before the session's first prompt has no turn", () => {
		const hits = run(index.db, "", { sessionIds: [A], eventTypes: ["model_change"] }).hits;
		for (const h of hits) expect(h.turn).toBeNull();
	});

	test("in the calling session, the turn ends at the invocation cutoff: nothing appended after it is shown", () => {
		const E = "0000000e-0000-4000-8000-000000000000";
		const scope: Scope = { roots: ["/work/app"], current: { sessionId: E, sessionFile: null, toolCallId: "call_pi" } };
		const hit = run(index.db, "zebrafrost", { sessionIds: [E] }, { scope }).hits[0]!;
		expect(hit.entryId).toBe("w1");
		// c3 holds the answer, but after the cutoff: the outcome is the last text before it.
		expect(hit.turn?.outcome).toEqual({ entryId: "c1", preview: "It might be the cache.", highlights: [] });
		// Unscoped, from outside that session, c3 is the outcome.
		expect(run(index.db, "zebrafrost", { sessionIds: [E] }).hits.find((h) => h.entryId === "w1")?.turn?.outcome?.entryId).toBe("c3");
	});

	test("an outcome's preview begins at its start (where the conclusion is) unless the query words are far into it", () => {
		const near = run(index.db, "animated uploads", { sessionIds: [CONCLUDED] }).hits.find((h) => h.entryId === "t1")!;
		// The words lie about 100 characters in: the preview still begins with the conclusion, marked, and holds 300 characters.
		expect(near.turn?.outcome?.preview).toStartWith("Fixed: the thumbnail decoder now reads only the first frame");
		expect(marked({ snippet: near.turn!.outcome!.preview!, highlights: near.turn!.outcome!.highlights as [number, number][] })).toContain(
			"large «animated» «uploads» no longer",
		);
		expect(near.turn!.outcome!.preview!.length).toBeGreaterThan(TURN_PREVIEW_CHARS - 20);
		const far = run(index.db, "oom kills", { sessionIds: [CONCLUDED] }).hits.find((h) => h.entryId === "t1")!;
		// The words only at the end (over 500 characters in): the preview is a window on them.
		expect(far.turn?.outcome?.preview).toStartWith("…");
		expect(far.turn?.outcome?.preview).toEndWith("No OOM kills since.");
		// The CLI line shows the whole preview, not a shorter cut of it.
		const text = renderHits([near], { color: false });
		expect(text).toContain(`→ ${near.turn!.outcome!.preview!.slice(0, 60)}`);
		expect(text.split("\n").find((l) => l.includes("→"))!.length).toBeGreaterThan(TURN_PREVIEW_CHARS);
	});

	test("the search text says once how to read the first hit's whole turn and the next, where 'ok, fix it' is answered", () => {
		const hits = run(index.db, "gateway timeout export", { sessionIds: [FOLLOW] }).hits;
		const prompt = hits[0]!.turn!.prompt.entryId;
		const says = `hit 1's whole turn and the next one (where a follow-up such as "ok, fix it" is answered): `;
		// The default root (Git root, cwd, config) needs no --root: from the same directory, read has it too.
		expect(nextTurnHint(hits, cliReadTurn({ roots: ["/work/app"], rootSource: "git" }))).toBe(`${says}pi-events read ${FOLLOW} ${prompt} --turn --turns 1`);
		expect(nextTurnHint(hits, cliReadTurn({ roots: ["/work/my app"], rootSource: "flag" }))).toBe(
			`${says}pi-events read ${FOLLOW} ${prompt} --turn --turns 1 --root '/work/my app'`,
		);
		expect(nextTurnHint(hits, cliReadTurn({ roots: null, rootSource: null }))).toEndWith("--turn --turns 1 --all");
		expect(nextTurnHint(hits, toolReadTurn)).toBe(`${says}event_read {"sessionId":"${FOLLOW}","entryId":"${prompt}","view":"turn","turns":1}`);
		// The hint reads the turn by its prompt (a session-name hit may carry another entry's turn than its own).
		const named = run(index.db, "celery twice", { sessionIds: [A], kinds: ["session.name"] }).hits;
		expect(named[0]!.turn?.prompt.entryId).toBe("u1");
		expect(nextTurnHint(named, toolReadTurn)).toContain(`"entryId":"u1"`);
		// No hit with a turn (entries before a session's first prompt): no hint.
		expect(nextTurnHint(run(index.db, "", { sessionIds: [A], eventTypes: ["model_change"] }).hits, toolReadTurn)).toBeNull();
	});

	test("CLI text: the outcome as one line under the hit, shown once when hits share it", () => {
		const text = renderHits(run(index.db, "celery", { sessionIds: [A] }).hits, { color: false });
		expect(text).toContain("→ Done, tests pass. (a3)");
		expect(text.match(/→ Done, tests pass\./g)?.length).toBe(1);
		expect(text).toMatch(/→ the outcome shown at \d+\./);
	});
});

describe("turn-window matching (issue 34 item 4)", () => {
	test("no event holds every word, one turn's conversation does: its answer is the hit, marked, saying where each word was", () => {
		const result = run(index.db, "celery decorator", { sessionIds: [A] });
		expect(result.hits.map((h) => h.entryId)).toEqual(["a2"]);
		const hit = result.hits[0]!;
		expect(hit.match).toBe("turn");
		expect(hit.foundIn?.map((f) => f.term)).toEqual(["celery", "decorator"]);
		// The prompt, and the abandoned ending that also says it (an entry of the same turn).
		expect(hit.foundIn?.[0]?.entryIds.sort()).toEqual(["u1", "x1"]);
		expect(hit.foundIn?.[1]?.entryIds).toEqual(["a2"]);
		expect(result.coverage.estimatedMatches).toBe(1);
		expect(result.coverage.emptyBecause).toBeNull();
	});

	test("tool output does not count: a word only in a tool result leaves the turn unmatched", () => {
		const result = run(index.db, "celery quarkflux", { sessionIds: [A] });
		expect(result.hits).toEqual([]);
		expect(result.coverage.emptyBecause).toBe("together");
	});

	test("in the calling session, only what precedes the invocation cutoff counts, and the hit is from before it", () => {
		const E = "0000000e-0000-4000-8000-000000000000";
		const scope: Scope = { roots: ["/work/app"], current: { sessionId: E, sessionFile: null, toolCallId: "call_pi" } };
		const before = run(index.db, "zebrafrost cache", { sessionIds: [E] }, { scope }).hits;
		expect(before.map((h) => [h.entryId, h.match])).toEqual([["c1", "turn"]]);
		// "lockfile" is only in c3, after the cutoff: nothing.
		expect(run(index.db, "zebrafrost fail lockfile", { sessionIds: [E] }, { scope }).hits).toEqual([]);
		// Without the cutoff, c3 holds every word: an event match.
		expect(run(index.db, "zebrafrost fail lockfile", { sessionIds: [E] }).hits.map((h) => [h.entryId, h.match])).toEqual([["c3", "event"]]);
	});
});

describe("copies fold into the best-ranked hit (issue 34 item 6)", () => {
	const APP: Scope = { roots: ["/work/app"], current: null };
	test("the same output read in three sessions is one hit with its in-scope copies; a copy outside the scope is not counted", () => {
		const hits = run(index.db, "quarkflux", {}, { scope: APP }).hits;
		expect(hits.length).toBe(1);
		expect(hits[0]!.duplicates?.count).toBe(2);
		const all = [hits[0]!, ...hits[0]!.duplicates!.ids].map((h) => `${h.sessionId}/${h.entryId}`).sort();
		expect(all).toEqual([`${A}/r1`, `${B}/s1`, `${C}/s1`]);
		// Unscoped, the copy in /work/elsewhere counts too.
		expect(run(index.db, "quarkflux").hits.find((h) => h.duplicates)?.duplicates?.count).toBe(3);
		expect(renderHits(hits, { color: false })).toContain("= 2 identical copies folded in:");
	});

	test("only output folds: the same prompt in two sessions stays two hits (two turns); a smaller limit gives a prefix", () => {
		const hits = run(index.db, "look worker module", {}, { scope: APP }).hits;
		expect(hits.filter((h) => h.entryId === "v1").length).toBe(2);
		expect(hits.every((h) => h.duplicates === undefined)).toBe(true);
		const full = run(index.db, "worker", {}, { scope: APP, limit: 100 }).hits.map((h) => `${h.sessionId}/${h.entryId}`);
		for (const k of [1, 2, 3])
			expect(run(index.db, "worker", {}, { scope: APP, limit: k }).hits.map((h) => `${h.sessionId}/${h.entryId}`)).toEqual(full.slice(0, k));
	});
});

test("the JSON of a hit carries its turn (search result serialised as the CLI does)", () => {
	const json = JSON.parse(JSON.stringify(run(index.db, "quarkflux", { sessionIds: [B] }).hits[0]));
	expect(json.turn).toEqual({
		prompt: { entryId: "v1", preview: "look at the worker module", highlights: [] },
		outcome: { entryId: "b2", preview: "It boots fine.", highlights: [] },
	});
});
