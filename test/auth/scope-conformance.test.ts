/**
 * One table of scope cases, run against every implementation of the scope (hono's pattern: one
 * conformance suite, many implementations): the pure rule (auth/scope.ts `admits`), the FTS path
 * (the rule as scope tokens inside the MATCH), the SQL path (the rule rendered as SQL beside an
 * unscoped MATCH), the session list of a filter-only search (walking every session, or the cwd
 * index's ranges), the CLI (`pi-events search --root`) and the MCP server (`event_search` with the
 * caller in `_meta`). Each session shape is one session file whose recorded cwd is the shape;
 * each caller (a root spelling, plus request narrowing) must see exactly the expected sessions,
 * through every implementation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { admits, type SessionRule } from "../../src/auth/scope.ts";
import { cwdRanges, sessionRuleSql } from "../../src/auth/scope-sql.ts";
import { resolveCaller } from "../../src/gate/caller.ts";
import { Gate } from "../../src/gate/gate.ts";
import { toSearchFilters } from "../../src/query/filters.ts";
import { browseSessionsWhere, listedSessionsWhere } from "../../src/store/listing.ts";
import { parseQuery } from "../../src/query/fts.ts";
import { type AgentLayout, cleanupTempDirs, isolatedEnv, MAIN, makeAgentLayout, runCli } from "../helpers/temp.ts";
import { buildIndex, oneMessageSession, type TestIndex, writeSession } from "../query/helpers.ts";
import { RawServer } from "../server/harness.ts";

afterAll(cleanupTempDirs);

const WORD = "conformword";

/** A session shape: its recorded cwd (from the world's paths) and where it must be visible. */
interface Shape {
	cwd: (w: World) => string | undefined;
	/** Visible to a caller whose root is R (any spelling of it). */
	inR: boolean;
	/** Visible to a caller whose root is R/child. */
	inChild: boolean;
}

interface World {
	base: string;
	/** The root: a LIKE wildcard (_) and a non-ASCII letter (é, NFC) in its name. */
	R: string;
	out: string;
}

const abs = (f: (w: World) => string) => f;
const SHAPES: Record<string, Shape> = {
	root: { cwd: abs((w) => w.R), inR: true, inChild: false },
	child: { cwd: abs((w) => `${w.R}/child`), inR: true, inChild: true },
	grandchild: { cwd: abs((w) => `${w.R}/child/deeper`), inR: true, inChild: true },
	missingDirUnderRoot: { cwd: abs((w) => `${w.R}/never-created`), inR: true, inChild: false },
	trailingSlash: { cwd: abs((w) => `${w.R}/`), inR: true, inChild: false },
	childTrailingSlashes: { cwd: abs((w) => `${w.R}/child//`), inR: true, inChild: true },
	doubleSlash: { cwd: abs((w) => `${w.R}//child`), inR: true, inChild: true },
	dotSegment: { cwd: abs((w) => `${w.R}/./child`), inR: true, inChild: true },
	dotDotInside: { cwd: abs((w) => `${w.R}/child/../child/deeper`), inR: true, inChild: true },
	dotDotBackIn: { cwd: abs((w) => `${w.out}/../ws_caf\u00e9/child`), inR: true, inChild: true },
	dotDotOut: { cwd: abs((w) => `${w.R}/child/../../out`), inR: false, inChild: false },
	dotDotToParent: { cwd: abs((w) => `${w.R}/..`), inR: false, inChild: false },
	childDotDotToRoot: { cwd: abs((w) => `${w.R}/child/..`), inR: true, inChild: false },
	prefixExtra: { cwd: abs((w) => `${w.R}-extra`), inR: false, inChild: false },
	prefixExtraChild: { cwd: abs((w) => `${w.R}-extra/child`), inR: false, inChild: false },
	prefixLetter: { cwd: abs((w) => `${w.R}x`), inR: false, inChild: false },
	prefixDot: { cwd: abs((w) => `${w.R}.d`), inR: false, inChild: false },
	prefixSpace: { cwd: abs((w) => `${w.R} copy`), inR: false, inChild: false },
	childPrefix: { cwd: abs((w) => `${w.R}/children`), inR: true, inChild: false },
	shorterName: { cwd: abs((w) => `${w.base}/ws_caf`), inR: false, inChild: false },
	likeWildcard: { cwd: abs((w) => `${w.base}/wsXcaf\u00e9/child`), inR: false, inChild: false },
	parentDir: { cwd: abs((w) => w.base), inR: false, inChild: false },
	sibling: { cwd: abs((w) => w.out), inR: false, inChild: false },
	fsRoot: { cwd: () => "/", inR: false, inChild: false },
	relative: { cwd: () => "ws_caf\u00e9/child", inR: false, inChild: false },
	dotRelative: { cwd: () => "./child", inR: false, inChild: false },
	dotDotRelative: { cwd: () => "../ws_caf\u00e9", inR: false, inChild: false },
	tildeRelative: { cwd: () => "~/ws_caf\u00e9", inR: false, inChild: false },
	windowsPath: { cwd: () => "C:\\ws_caf\u00e9", inR: false, inChild: false },
	emptyCwd: { cwd: () => "", inR: false, inChild: false },
	missingCwd: { cwd: () => undefined, inR: false, inChild: false },
	symlinkIntoRoot: { cwd: abs((w) => `${w.base}/link-in`), inR: true, inChild: true },
	symlinkIntoRootChild: { cwd: abs((w) => `${w.base}/link-in/deeper`), inR: true, inChild: true },
	symlinkToRoot: { cwd: abs((w) => `${w.base}/link-root`), inR: true, inChild: false },
	symlinkOut: { cwd: abs((w) => `${w.R}/link-out`), inR: false, inChild: false },
	symlinkOutChild: { cwd: abs((w) => `${w.R}/link-out/inner-child`), inR: false, inChild: false },
	caseLower: { cwd: abs((w) => `${w.base}/WS_CAF\u00c9`), inR: false, inChild: false },
	caseMixedChild: { cwd: abs((w) => `${w.base}/Ws_caf\u00e9/child`), inR: false, inChild: false },
	nfdRoot: { cwd: abs((w) => `${w.base}/ws_cafe\u0301`), inR: false, inChild: false },
	nfdChild: { cwd: abs((w) => `${w.base}/ws_cafe\u0301/child`), inR: false, inChild: false },
	unicodeChild: { cwd: abs((w) => `${w.R}/na\u00efve`), inR: true, inChild: false },
	backslashName: { cwd: abs((w) => `${w.R}\\child`), inR: false, inChild: false },
	trailingDotName: { cwd: abs((w) => `${w.R}.`), inR: false, inChild: false },
};
const NAMES = Object.keys(SHAPES);
const ABSOLUTE = (name: string, w: World) => SHAPES[name]!.cwd(w)?.startsWith("/") === true;

/** A caller: a root spelling and a request, and what it must see. */
interface CallerCase {
	root: (w: World) => string;
	cwdFilter?: (w: World) => string;
	/** Target sessions by shape name. */
	sessions?: string[];
	/** The calling session (by shape name): excluded. */
	current?: string;
	expected: (name: string, w: World) => boolean;
}

const inR = (n: string) => SHAPES[n]!.inR;
const CALLERS: Record<string, CallerCase> = {
	"root R": { root: (w) => w.R, expected: inR },
	"root R/ (trailing slash)": { root: (w) => `${w.R}/`, expected: inR },
	"root R/./child/.. (dots)": { root: (w) => `${w.R}/./child/..`, expected: inR },
	"root via a symlink to R": { root: (w) => `${w.base}/link-root`, expected: inR },
	"root R/child": { root: (w) => `${w.R}/child`, expected: (n) => SHAPES[n]!.inChild },
	"root /": { root: () => "/", expected: ABSOLUTE },
	"root R, cwd filter R/child": { root: (w) => w.R, cwdFilter: (w) => `${w.R}/child`, expected: (n) => SHAPES[n]!.inChild },
	"root R, cwd filter outside (R-extra)": { root: (w) => w.R, cwdFilter: (w) => `${w.R}-extra`, expected: () => false },
	"root R, cwd filter / (cannot widen)": { root: (w) => w.R, cwdFilter: () => "/", expected: inR },
	"root R, sessions targeted outside": { root: (w) => w.R, sessions: ["prefixExtra", "sibling"], expected: () => false },
	"root R, sessions targeted inside and outside": { root: (w) => w.R, sessions: ["child", "sibling"], expected: (n) => n === "child" },
	"root R, the current session excluded": { root: (w) => w.R, current: "root", expected: (n) => inR(n) && n !== "root" },
};

const idOf = (name: string) => `00c0ffee-0000-4000-8000-${String(NAMES.indexOf(name)).padStart(12, "0")}`;
const nameOf = new Map(NAMES.map((n) => [idOf(n), n]));

let world: World;
let layout: AgentLayout;
let sessionsDir: string;
let idx: TestIndex;
let server: RawServer;

beforeAll(async () => {
	layout = makeAgentLayout();
	const base = realpathSync(layout.root);
	world = { base, R: join(base, "ws_caf\u00e9"), out: join(base, "out") };
	for (const d of ["ws_caf\u00e9/child/deeper", "out/inner/inner-child", "wsXcaf\u00e9/child", "WS_CAF\u00c9", "Ws_caf\u00e9/child", "ws_cafe\u0301/child"]) {
		mkdirSync(join(base, d), { recursive: true });
	}
	symlinkSync(join(world.R, "child"), join(base, "link-in"));
	symlinkSync(world.R, join(base, "link-root"));
	symlinkSync(join(world.out, "inner"), join(world.R, "link-out"));
	sessionsDir = join(base, "sessions");
	for (const name of NAMES) writeSession(sessionsDir, oneMessageSession(idOf(name), SHAPES[name]!.cwd(world), `${WORD} ${name}`), name);
	idx = buildIndex([sessionsDir]);
	server = new RawServer("", isolatedEnv(layout, { NO_COLOR: "1" }), [], {
		command: [process.execPath, MAIN, "serve", "--stdio", "--index", join(idx.dir, "index.db"), "--sessions-dir", sessionsDir],
		cwd: base,
	});
	await server.initialize();
}, 60_000);

afterAll(() => {
	server?.kill();
	idx?.close();
});

/** One implementation: which shapes a caller sees. */
type Implementation = (caller: CallerCase) => Promise<string[]> | string[];

const scopeOf = (c: CallerCase) =>
	resolveCaller({
		cwd: "/",
		root: c.root(world),
		configRoot: null,
		sessionId: c.current ? idOf(c.current) : null,
		sessionFile: null,
		toolCallId: null,
	});
const filtersOf = (c: CallerCase) => toSearchFilters({ cwd: c.cwdFilter?.(world), sessionId: c.sessions?.map(idOf) }, "/", Date.now());
const names = (sessionIds: Iterable<string>) => [...new Set([...sessionIds].map((id) => nameOf.get(id) ?? `unknown ${id}`))].sort();

/**
 * What SQLite itself yields through the gate's ranking statement, with the scope as tokens in the
 * MATCH or as SQL beside it: before the gate's final check of each row, so a wrong rendering fails.
 */
const throughGate =
	(scopeInSql: boolean): Implementation =>
	(c) => {
		const scoped = new Gate(idx.db, scopeOf(c)).search(parseQuery(WORD).match, filtersOf(c));
		if (scoped === null) return [];
		const sessionOf = idx.db.query("SELECT s.session_id FROM events e JOIN sessions s ON s.session_key = e.session_key WHERE e.event_key = ?1");
		return names(scoped.rank(1000, { scopeInSql }).map((r) => (sessionOf.get(r.event_key) as { session_id: string }).session_id));
	};

/** The session rule of a caller's request, as the gate derives it. */
const ruleOf = (c: CallerCase): SessionRule => {
	const scope = scopeOf(c);
	const filters = filtersOf(c);
	return {
		roots: scope.roots,
		cwdPrefix: filters.cwdPrefix,
		sessionIds: filters.sessionIds,
		excludeSessionIds: scope.current?.sessionId && !filters.sessionIds?.includes(scope.current.sessionId) ? [scope.current.sessionId] : [],
	};
};

/**
 * What SQLite itself yields when a filter-only search lists the admitted sessions (before the
 * gate's final check of each row): walking every session in activity order with the rule as SQL,
 * or reading the rule's cwd ranges through the cwd index.
 */
const browse =
	(through: "walk" | "cwd ranges"): Implementation =>
	(c) => {
		const rule = ruleOf(c);
		const cursor = browseSessionsWhere(idx.db, sessionRuleSql(rule), through === "walk" ? null : cwdRanges(rule), Number.MAX_SAFE_INTEGER);
		const seen: string[] = [];
		for (let s = cursor.next(); s !== null; s = cursor.next()) seen.push(s.session_id);
		cursor.close();
		return names(seen);
	};

const IMPLEMENTATIONS: Record<string, Implementation> = {
	"pure rule (auth/scope.ts admits)": (c) => {
		const rule = ruleOf(c);
		const rows = idx.db.query("SELECT session_id, cwd_real FROM sessions").all() as { session_id: string; cwd_real: string | null }[];
		return names(rows.filter((r) => admits(rule, { cwdReal: r.cwd_real, sessionId: r.session_id })).map((r) => r.session_id));
	},
	"session list, walking every session (the rule as SQL)": browse("walk"),
	"session list, through the rule's cwd ranges (the cwd index)": browse("cwd ranges"),
	"`pi-events sessions`' list, through the rule's cwd ranges": (c) => {
		const rule = ruleOf(c);
		return names(listedSessionsWhere(idx.db, sessionRuleSql(rule), cwdRanges(rule), Number.MAX_SAFE_INTEGER).map((s) => s.session_id));
	},
	"FTS path (scope tokens in the MATCH)": throughGate(false),
	"SQL path (the rule as SQL beside the MATCH)": throughGate(true),
	"CLI (pi-events search --root)": (c) => {
		const args = ["search", WORD, "--json", "--no-sync", "--limit", "100", "--index", join(idx.dir, "index.db"), "--root", c.root(world)];
		if (c.cwdFilter) args.push("--cwd", c.cwdFilter(world));
		if (c.sessions) args.push("--session", c.sessions.map(idOf).join(","));
		if (c.current) args.push("--current-session", idOf(c.current));
		const run = runCli(layout, args, { cwd: world.base });
		if (run.exitCode === 1) return [];
		expect(run.exitCode).toBe(0);
		const hits = run.json().hits as { sessionId: string }[];
		expect(hits.length).toBeLessThan(100);
		return names(hits.map((h) => h.sessionId));
	},
	"MCP server (event_search, caller in _meta)": async (c) => {
		// One targeted session per call (the tool takes one sessionId): the union is what the caller sees.
		const targets: (string | undefined)[] = c.sessions ? c.sessions.map(idOf) : [undefined];
		const seen: string[] = [];
		for (const sessionId of targets) {
			const args: Record<string, unknown> = { query: WORD, limit: 50 };
			if (c.cwdFilter) args.cwd = c.cwdFilter(world);
			if (sessionId) args.sessionId = sessionId;
			const caller: Record<string, unknown> = { cwd: c.root(world) };
			if (c.current) caller.sessionId = idOf(c.current);
			const res = await server.request("tools/call", { name: "event_search", arguments: args, _meta: { "pi-events/caller": caller } });
			const result = res.result as { structuredContent?: { hits: { sessionId: string }[] }; isError: boolean };
			expect(result.isError).toBe(false);
			expect(result.structuredContent!.hits.length).toBeLessThan(50);
			seen.push(...result.structuredContent!.hits.map((h) => h.sessionId));
		}
		return names(seen);
	},
};

test("the table has at least 40 session shapes and every shape is indexed", () => {
	expect(NAMES.length).toBeGreaterThanOrEqual(40);
	const indexed = idx.db.query("SELECT session_id FROM sessions").all() as { session_id: string }[];
	expect(names(indexed.map((r) => r.session_id))).toEqual([...NAMES].sort());
});

describe.each(Object.keys(IMPLEMENTATIONS))("%s", (implementation) => {
	for (const [callerName, caller] of Object.entries(CALLERS)) {
		test(callerName, async () => {
			const expected = NAMES.filter((n) => caller.expected(n, world)).sort();
			expect(await IMPLEMENTATIONS[implementation]!(caller)).toEqual(expected);
		});
	}
});
