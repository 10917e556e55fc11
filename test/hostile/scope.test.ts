/**
 * Hostile input, part 5: scope attacks end to end, through the CLI (cwd → Git root, --root) and
 * through `serve --stdio` (the compiled binary, caller from `_meta["pi-events/caller"]`). A real
 * directory world: a Git worktree root, prefix collisions (app-extra, appx), symlinks into and
 * out of the root, `..` in recorded cwds, case and NFC/NFD variants of the root, relative and
 * missing header cwds, a parentSession outside the root (absolute and relative), fork copies in
 * both directions across the boundary, guessed ids from another workspace, sessionId and cwd
 * filters aimed outside, and tool arguments that try to widen the scope. Never a hit, a read or
 * a trace node outside the root; unauthorized looks exactly like nonexistent, byte for byte.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { makeRepo } from "../helpers/git.ts";
import { type AgentLayout, cleanupTempDirs, encodeCwd, isolatedEnv, makeAgentLayout } from "../helpers/temp.ts";
import { compiledBinary, type Frame, modernMeta, RawServer } from "../server/harness.ts";
import { header, jsonl, runChild } from "./helpers.ts";

let layout: AgentLayout;
let bin: string;
let srv: RawServer;

/** The world (all canonical absolute paths). */
let BASE: string;
let W: string; // the authorization root: a Git worktree
let OUT: string; // another workspace
let CAFE_NFC: string;
let CAFE_NFD: string;
const files = new Map<string, string>(); // session id → file

type Spec = { id: string; cwd: string | undefined; parentSession?: string; entries?: Record<string, unknown>[] };

function entry(id: string, parentId: string | null, text: string): Record<string, unknown> {
	return { type: "message", id, parentId, timestamp: "2026-10-01T10:00:05.000Z", message: { role: "user", content: [{ type: "text", text }] } };
}

function writeSpec(spec: Spec): void {
	const dir = join(layout.sessionsDir, encodeCwd(spec.cwd ?? "nocwd"));
	mkdirSync(dir, { recursive: true });
	const path = join(dir, `2026-10-01T10-00-00-000Z_${spec.id}.jsonl`);
	const entries = spec.entries ?? [
		entry(`${spec.id}-e1`, null, `sharedscopeword mark${spec.id.replace(/[^a-z]/g, "")}`),
		entry(`${spec.id}-e2`, `${spec.id}-e1`, "second line sharedscopeword"),
	];
	writeFileSync(path, jsonl([header(spec.id, spec.cwd, spec.parentSession ? { parentSession: spec.parentSession } : {}), ...entries]));
	files.set(spec.id, path);
}

/** Sessions visible from root W, and every other session id. */
const VISIBLE_W = ["w-root", "w-slash", "w-dslash", "w-sub", "w-dotdot-in", "w-link-in", "w-fork-of-out", "w-parent-rel-out"].sort();
const HIDDEN_FROM_W = [
	"h-extra",
	"h-appx",
	"h-out",
	"h-link-out",
	"h-case",
	"h-case-upper",
	"h-dotdot-out",
	"h-relative",
	"h-dot",
	"h-missing",
	"h-fork-of-w",
	"c-nfc",
	"c-nfd",
];

beforeAll(async () => {
	layout = makeAgentLayout();
	BASE = realpathSync(layout.root);
	W = join(BASE, "work", "app");
	OUT = join(BASE, "work", "other");
	CAFE_NFC = join(BASE, "work", "caf\u00e9");
	CAFE_NFD = join(BASE, "work", "cafe\u0301");
	for (const d of [
		W,
		join(W, "packages", "api"),
		OUT,
		join(BASE, "work", "app-extra"),
		join(BASE, "work", "appx"),
		join(BASE, "work", "App"),
		join(BASE, "work", "APP"),
		CAFE_NFC,
		CAFE_NFD,
		join(BASE, "links"),
	]) {
		mkdirSync(d, { recursive: true });
	}
	makeRepo(W);
	symlinkSync(W, join(BASE, "links", "into-app")); // outside → in
	symlinkSync(OUT, join(W, "link-to-other")); // inside → out

	writeSpec({
		id: "w-root",
		cwd: W,
		entries: [entry("w1", null, "sharedscopeword markwroot parent text"), entry("w2", "w1", "sharedscopeword second of the parent")],
	});
	writeSpec({ id: "w-slash", cwd: `${W}/` });
	writeSpec({ id: "w-dslash", cwd: `${BASE}//work//app//` });
	writeSpec({ id: "w-sub", cwd: join(W, "packages", "api") });
	writeSpec({ id: "w-dotdot-in", cwd: `${OUT}/../app` });
	writeSpec({ id: "w-link-in", cwd: join(BASE, "links", "into-app") });
	writeSpec({ id: "h-extra", cwd: join(BASE, "work", "app-extra") });
	writeSpec({ id: "h-appx", cwd: join(BASE, "work", "appx") });
	writeSpec({
		id: "h-out",
		cwd: OUT,
		entries: [entry("o1", null, "sharedscopeword outsideonly secret"), entry("o2", "o1", "sharedscopeword outsideonly second")],
	});
	writeSpec({ id: "h-link-out", cwd: join(W, "link-to-other") });
	writeSpec({ id: "h-case", cwd: join(BASE, "work", "App") });
	writeSpec({ id: "h-case-upper", cwd: join(BASE, "work", "APP") });
	writeSpec({ id: "h-dotdot-out", cwd: `${W}/../other` });
	writeSpec({ id: "h-relative", cwd: "work/app" });
	writeSpec({ id: "h-dot", cwd: "." });
	writeSpec({ id: "h-missing", cwd: undefined });
	writeSpec({ id: "c-nfc", cwd: CAFE_NFC });
	writeSpec({ id: "c-nfd", cwd: CAFE_NFD });
	// Fork copies across the boundary: an in-root child of an outside parent (same entry ids),
	// and an outside child of an in-root parent.
	writeSpec({
		id: "w-fork-of-out",
		cwd: W,
		parentSession: files.get("h-out")!,
		entries: [
			entry("o1", null, "sharedscopeword outsideonly secret"),
			entry("o2", "o1", "sharedscopeword outsideonly second"),
			entry("c3", "o2", "sharedscopeword child continues"),
		],
	});
	writeSpec({
		id: "h-fork-of-w",
		cwd: OUT,
		parentSession: files.get("w-root")!,
		entries: [
			entry("w1", null, "sharedscopeword markwroot parent text"),
			entry("w2", "w1", "sharedscopeword second of the parent"),
			entry("x3", "w2", "sharedscopeword outside child"),
		],
	});
	// A parentSession given relative to the cwd, pointing at the outside session's file.
	writeSpec({ id: "w-parent-rel-out", cwd: W, parentSession: relative(W, files.get("h-out")!) });

	const index = await runChild(layout, ["index", "--json"], { timeoutMs: 60_000 });
	if (index.exitCode !== 0) throw new Error(`index failed: ${index.stderr}`);
	if (index.json().sessions.new !== VISIBLE_W.length + HIDDEN_FROM_W.length) throw new Error(`indexed ${index.stdout}`);
	bin = compiledBinary();
	srv = new RawServer(bin, isolatedEnv(layout, { NO_COLOR: "1" }));
	await srv.initialize();
}, 120_000);

afterAll(() => {
	srv?.kill();
	cleanupTempDirs();
});

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** Every session id mentioned anywhere in a result (hits, events, nodes, relations, sessions). */
function sessionIdsIn(value: unknown, out = new Set<string>()): Set<string> {
	if (Array.isArray(value)) for (const v of value) sessionIdsIn(v, out);
	else if (value && typeof value === "object") {
		for (const [k, v] of Object.entries(value)) {
			if (k === "sessionId" && typeof v === "string") out.add(v);
			else sessionIdsIn(v, out);
		}
	}
	return out;
}

/** Hidden session ids (or their files and cwds) that appear in a text. */
function hiddenMentions(text: string, visible: readonly string[]): string[] {
	const hidden = [...VISIBLE_W, ...HIDDEN_FROM_W].filter((id) => !visible.includes(id));
	return hidden.filter((id) => text.includes(`"${id}"`) || text.includes(` ${id} `) || text.includes(files.get(id)!));
}

async function cli(args: string[], cwd: string) {
	return runChild(layout, args, { cwd, timeoutMs: 30_000 });
}

async function cliSearchIds(cwd: string, extra: string[] = []): Promise<string[]> {
	const run = await cli(["search", "sharedscopeword", "--json", "--no-sync", "--limit", "100", ...extra], cwd);
	if (run.exitCode === 1) return [];
	expect(run.exitCode).toBe(0);
	return [...new Set(run.json().hits.map((h: { sessionId: string }) => h.sessionId) as string[])].sort();
}

async function tool(name: string, args: unknown, caller: Record<string, unknown> | null, extraParams: Record<string, unknown> = {}): Promise<Frame> {
	return srv.request("tools/call", { name, arguments: args, ...(caller ? { _meta: { "pi-events/caller": caller } } : {}), ...extraParams });
}

async function toolSearchIds(caller: Record<string, unknown>, args: Record<string, unknown> = {}): Promise<string[]> {
	const res = await tool("event_search", { query: "sharedscopeword", limit: 50, ...args }, caller);
	const result = res.result as { structuredContent?: { hits: { sessionId: string }[] }; isError: boolean };
	expect(result.isError).toBe(false);
	return [...new Set(result.structuredContent!.hits.map((h) => h.sessionId))].sort();
}

// ---------------------------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------------------------

describe("search sees exactly the root", () => {
	test("CLI from the root, a subdirectory (Git root found), and through a symlink into the root", async () => {
		expect(await cliSearchIds(W)).toEqual(VISIBLE_W);
		expect(await cliSearchIds(join(W, "packages", "api"))).toEqual(VISIBLE_W);
		expect(await cliSearchIds(join(BASE, "links", "into-app"))).toEqual(VISIBLE_W);
	}, 60_000);

	test("CLI --root spellings: trailing slash, doubled slashes, `..`; the outside link resolves outside", async () => {
		for (const root of [`${W}/`, `${BASE}//work//app`, `${OUT}/../app`, join(BASE, "links", "into-app")]) {
			expect({ root, ids: await cliSearchIds(BASE, ["--root", root]) }).toEqual({ root, ids: VISIBLE_W });
		}
		// Through the inside → outside link, the caller's root is the outside directory.
		expect(await cliSearchIds(join(W, "link-to-other"))).toEqual(["h-dotdot-out", "h-fork-of-w", "h-link-out", "h-out"]);
	}, 60_000);

	test("CLI: case and NFC/NFD variants of a root are different directories", async () => {
		expect(await cliSearchIds(BASE, ["--root", join(BASE, "work", "App")])).toEqual(["h-case"]);
		expect(await cliSearchIds(BASE, ["--root", join(BASE, "work", "APP")])).toEqual(["h-case-upper"]);
		expect(await cliSearchIds(CAFE_NFC)).toEqual(["c-nfc"]);
		expect(await cliSearchIds(CAFE_NFD)).toEqual(["c-nfd"]);
	}, 60_000);

	test("CLI: --session and --cwd aimed outside the root find nothing; --cwd / stays inside", async () => {
		expect(await cliSearchIds(W, ["--session", "h-out"])).toEqual([]);
		expect(await cliSearchIds(W, ["--session", "h-missing"])).toEqual([]);
		expect(await cliSearchIds(W, ["--cwd", OUT])).toEqual([]);
		expect(await cliSearchIds(W, ["--cwd", join(BASE, "work", "app-extra")])).toEqual([]);
		expect(await cliSearchIds(W, ["--cwd", "/"])).toEqual(VISIBLE_W);
		expect(await cliSearchIds(W, ["--cwd", "../.."])).toEqual(VISIBLE_W);
	}, 60_000);

	test("serve: the caller's cwd (root, subdirectory, symlinks, `..`, case, NFC/NFD) decides, exactly", async () => {
		expect(await toolSearchIds({ cwd: W })).toEqual(VISIBLE_W);
		expect(await toolSearchIds({ cwd: join(W, "packages", "api") })).toEqual(VISIBLE_W);
		expect(await toolSearchIds({ cwd: join(BASE, "links", "into-app") })).toEqual(VISIBLE_W);
		expect(await toolSearchIds({ cwd: `${W}/packages/../../app/` })).toEqual(VISIBLE_W);
		expect(await toolSearchIds({ cwd: join(W, "link-to-other") })).toEqual(["h-dotdot-out", "h-fork-of-w", "h-link-out", "h-out"]);
		expect(await toolSearchIds({ cwd: `${W}/packages/../../other` })).toEqual(["h-dotdot-out", "h-fork-of-w", "h-link-out", "h-out"]);
		expect(await toolSearchIds({ cwd: join(BASE, "work", "App") })).toEqual(["h-case"]);
		expect(await toolSearchIds({ cwd: CAFE_NFD })).toEqual(["c-nfd"]);
		expect(await toolSearchIds({ cwd: CAFE_NFC })).toEqual(["c-nfc"]);
	});

	test("serve: a relative, empty or missing caller cwd never widens the scope (it falls back to the server's own)", async () => {
		// The server runs in this repository: its own root holds none of these sessions.
		for (const caller of [{ cwd: "work/app" }, { cwd: "." }, { cwd: "" }, { cwd: "~" }, {}, { cwd: null }, { cwd: ["/"] }]) {
			expect({ caller, ids: await toolSearchIds(caller as Record<string, unknown>) }).toEqual({ caller, ids: [] });
		}
		const modern = await srv.request("tools/call", { name: "event_search", arguments: { query: "sharedscopeword" }, _meta: modernMeta() });
		expect((modern.result as { structuredContent: { hits: unknown[] } }).structuredContent.hits).toEqual([]);
	});

	test("serve: sessionId and cwd arguments aimed outside find nothing; cwd / stays inside", async () => {
		const caller = { cwd: W };
		expect(await toolSearchIds(caller, { sessionId: "h-out" })).toEqual([]);
		expect(await toolSearchIds(caller, { sessionId: "h-relative" })).toEqual([]);
		expect(await toolSearchIds(caller, { cwd: OUT })).toEqual([]);
		expect(await toolSearchIds(caller, { cwd: CAFE_NFC })).toEqual([]);
		expect(await toolSearchIds(caller, { cwd: "/" })).toEqual(VISIBLE_W);
		expect(await toolSearchIds(caller, { cwd: "../../.." })).toEqual(VISIBLE_W);
		expect(await toolSearchIds(caller, { files: [OUT, "/"] })).toEqual([]);
		// Naming an outside session as the caller's own (current) session grants nothing either.
		expect(await toolSearchIds({ cwd: W, sessionId: "h-out" }, { sessionId: "h-out" })).toEqual([]);
		expect(await toolSearchIds({ cwd: W, sessionFile: files.get("h-out")! }, { sessionId: "h-out" })).toEqual([]);
		const read = await tool(
			"event_read",
			{ sessionId: "h-out", entryId: "o1" },
			{ cwd: W, sessionId: "h-out", sessionFile: files.get("h-out")!, toolCallId: "x" },
		);
		expect((read.result as { isError: boolean }).isError).toBe(true);
	});

	test("serve: arguments that try to widen the scope (root, all, _meta, caller, scope) are rejected; extra params are ignored", async () => {
		const caller = { cwd: W };
		for (const extra of [
			{ root: "/" },
			{ all: true },
			{ _meta: { "pi-events/caller": { cwd: "/" } } },
			{ caller: { cwd: "/" } },
			{ scope: null },
			{ roots: ["/"] },
			{ __proto__: { all: true }, all: true },
		]) {
			const res = await tool("event_search", { query: "sharedscopeword", ...extra }, caller);
			const result = res.result as { isError: boolean; content: { text: string }[]; structuredContent?: unknown };
			expect({ extra, isError: result.isError, structured: result.structuredContent }).toEqual({ extra, isError: true, structured: undefined });
			expect(result.content[0]!.text).toStartWith("event_search failed: invalid arguments for event_search:");
		}
		for (const name of ["event_read", "event_trace"]) {
			const res = await tool(name, { sessionId: "h-out", entryId: "o1", root: "/", all: true }, caller);
			expect((res.result as { isError: boolean }).isError).toBe(true);
			expect(hiddenMentions(JSON.stringify(res), VISIBLE_W)).toEqual([]);
		}
		// Extra top-level params are not a channel either.
		const res = await tool("event_search", { query: "sharedscopeword", limit: 50 }, caller, { root: "/", all: true, scope: { roots: null } });
		const ids = [...sessionIdsIn((res.result as { structuredContent: unknown }).structuredContent)].sort();
		expect(ids).toEqual(VISIBLE_W);
	});
});

// ---------------------------------------------------------------------------------------------
// Read and trace
// ---------------------------------------------------------------------------------------------

describe("read and trace never cross the root", () => {
	test("a guessed (sessionId, entryId) from another workspace fails exactly like a nonexistent one, byte for byte (CLI and serve)", async () => {
		// Same length ids, so even the lengths of the messages agree.
		const pairs: [string, string, string, string][] = [
			["h-out", "o1", "h-xxx", "o1"], // existing outside session vs. nonexistent session
			["h-out", "o1", "w-root", "zz"], // vs. a visible session without that entry
			["h-relative", "h-relative-e1", "h-nonexist0", "h-relative-e1"],
			["h-missing", "h-missing-e1", "h-nonexist", "h-missing-e1"],
			["h-link-out", "h-link-out-e1", "h-nonexist0", "h-link-out-e1"],
			["h-case", "h-case-e1", "h-xxxx", "h-case-e1"],
		];
		// The ids themselves are the only difference allowed (entry id first: it may contain the session id).
		const norm = (text: string, sid: string, eid: string) => text.replaceAll(eid, "<E>").replaceAll(sid, "<S>");
		for (const [sid, eid, fakeSid, fakeEid] of pairs) {
			for (const cmd of ["read", "trace"]) {
				const real = await cli([cmd, sid, eid, "--no-sync"], W);
				const fake = await cli([cmd, fakeSid, fakeEid, "--no-sync"], W);
				expect({ cmd, sid, exit: real.exitCode, stdout: real.stdout, stderr: norm(real.stderr, sid, eid) }).toEqual({
					cmd,
					sid,
					exit: fake.exitCode,
					stdout: fake.stdout,
					stderr: norm(fake.stderr, fakeSid, fakeEid),
				});
				expect(real.exitCode).toBe(2);
			}
			for (const name of ["event_read", "event_trace"]) {
				const real = await tool(name, { sessionId: sid, entryId: eid }, { cwd: W }, {});
				const fake = await tool(name, { sessionId: fakeSid, entryId: fakeEid }, { cwd: W }, {});
				const strip = (f: Frame, s: string, e: string) => norm(JSON.stringify({ ...f, id: 0 }), s, e);
				expect({ name, sid, frame: strip(real, sid, eid) }).toEqual({ name, sid, frame: strip(fake, fakeSid, fakeEid) });
				expect((real.result as { isError: boolean }).isError).toBe(true);
			}
		}
	}, 120_000);

	test("a parentSession outside the root (absolute or relative): trace shows no parent ids, no copied-from nodes", async () => {
		for (const [sid, eid] of [
			["w-fork-of-out", "o1"],
			["w-fork-of-out", "c3"],
			["w-parent-rel-out", "w-parent-rel-out-e1"],
		] as const) {
			for (const via of ["cli", "serve"] as const) {
				let result: any;
				let text: string;
				if (via === "cli") {
					const run = await cli(["trace", sid, eid, "--json", "--no-sync"], W);
					expect(run.exitCode).toBe(0);
					result = run.json();
					text = run.stdout + (await cli(["trace", sid, eid, "--no-sync"], W)).stdout;
				} else {
					const res = await tool("event_trace", { sessionId: sid, entryId: eid }, { cwd: W });
					result = (res.result as { structuredContent: unknown }).structuredContent;
					text = JSON.stringify(res);
				}
				expect({ via, sid, eid, ids: [...sessionIdsIn(result)].sort() }).toEqual({ via, sid, eid, ids: [sid] });
				const parentRel = result.relations.filter((r: any) => r.relation === "session-parent");
				expect(parentRel).toEqual([{ relation: "session-parent", direction: "out", label: "recorded", node: null, session: null, note: expect.any(String) }]);
				expect(result.relations.filter((r: any) => r.relation === "copied-from")).toEqual([]);
				expect(hiddenMentions(text, VISIBLE_W)).toEqual([]);
				expect(text).not.toContain(OUT);
			}
		}
	}, 60_000);

	test("an in-root parent with an outside fork child: no session-child, no copied-from from outside", async () => {
		for (const eid of ["w1", "w2"]) {
			const res = await tool("event_trace", { sessionId: "w-root", entryId: eid }, { cwd: W });
			const result = (res.result as { structuredContent: any }).structuredContent;
			expect([...sessionIdsIn(result)]).toEqual(["w-root"]);
			expect(result.relations.filter((r: any) => ["session-child", "copied-from"].includes(r.relation))).toEqual([]);
			expect(hiddenMentions(JSON.stringify(res), VISIBLE_W)).toEqual([]);
			const run = await cli(["trace", "w-root", eid, "--json", "--no-sync"], W);
			expect([...sessionIdsIn(run.json())]).toEqual(["w-root"]);
		}
		// From outside, the same pair is fully visible: the boundary is the root, not the data.
		const outside = await tool("event_trace", { sessionId: "h-fork-of-w", entryId: "w1" }, { cwd: OUT });
		const rels = (outside.result as { structuredContent: any }).structuredContent.relations.map((r: any) => r.relation);
		expect(rels).not.toContain("copied-from"); // its parent (w-root) is outside OUT's root
	}, 60_000);

	test("reads with neighbours (append and branch order) and every trace from the root name only visible sessions", async () => {
		const problems: string[] = [];
		for (const sid of VISIBLE_W) {
			const run = await cli(["search", "sharedscopeword", "--json", "--no-sync", "--session", sid, "--limit", "100"], W);
			for (const hit of run.json().hits as { entryId: string }[]) {
				for (const order of ["append", "branch"]) {
					const res = await tool("event_read", { sessionId: sid, entryId: hit.entryId, order, before: 20, after: 20 }, { cwd: W });
					const ids = [...sessionIdsIn((res.result as { structuredContent: unknown }).structuredContent)];
					if (ids.some((id) => !VISIBLE_W.includes(id))) problems.push(`read ${sid}/${hit.entryId}: ${ids}`);
					problems.push(...hiddenMentions(JSON.stringify(res), VISIBLE_W).map((h) => `read ${sid}/${hit.entryId} mentions ${h}`));
				}
				const trace = await tool("event_trace", { sessionId: sid, entryId: hit.entryId }, { cwd: W });
				const ids = [...sessionIdsIn((trace.result as { structuredContent: unknown }).structuredContent)];
				if (ids.some((id) => !VISIBLE_W.includes(id))) problems.push(`trace ${sid}/${hit.entryId}: ${ids}`);
				problems.push(...hiddenMentions(JSON.stringify(trace), VISIBLE_W).map((h) => `trace ${sid}/${hit.entryId} mentions ${h}`));
			}
		}
		expect(problems).toEqual([]);
	}, 120_000);

	test("the hidden sessions are really there: --all (people only) sees every one of them", async () => {
		expect(await cliSearchIds(W, ["--all"])).toEqual([...VISIBLE_W, ...HIDDEN_FROM_W].sort());
	});
});

describe("problems reported with an answer stay in scope", () => {
	test("a session outside the root that fails to re-index is not named (path, encoded cwd) in a scoped answer", async () => {
		// Index an outside session, then break its header: every sync now keeps its last good
		// index and reports a problem naming the file, whose directory name encodes the other
		// workspace's path.
		writeSpec({ id: "h-broken", cwd: OUT });
		const path = files.get("h-broken")!;
		expect((await runChild(layout, ["index", "--json"], { timeoutMs: 30_000 })).json().sessions.new).toBe(1);
		const text = await Bun.file(path).text();
		writeFileSync(path, `{"type":"not-a-header","pad":"${"x".repeat(40)}"}\n${text.slice(text.indexOf("\n") + 1)}`);
		// (OUT itself may appear legitimately: w-dotdot-in records its cwd as OUT/../app.)
		const secrets = [path, encodeCwd(OUT)];
		const mentioned = (t: string) => secrets.filter((s) => t.includes(s));

		const cliRun = await cli(["search", "sharedscopeword", "--json"], W);
		expect(cliRun.exitCode).toBe(0);
		srv.send({ jsonrpc: "2.0", method: "notifications/pi-events/sync" });
		const res = await tool("event_search", { query: "sharedscopeword" }, { cwd: W });
		expect((res.result as { isError: boolean }).isError).toBe(false);
		expect({ cli: mentioned(cliRun.stdout + cliRun.stderr), serve: mentioned(JSON.stringify(res)) }).toEqual({ cli: [], serve: [] });
	}, 60_000);
});
