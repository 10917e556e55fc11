/**
 * Hostile input, part 4: deletion leaves nothing behind. Unique tokens are planted in one session
 * among many (user text, tool output, a bash command, the session name, a file path, a custom
 * type, an error message, a label, a compaction summary, a camelCase identifier, the session id,
 * the cwd and the file name), indexed, the file is deleted (or rewritten, or truncated), the
 * index syncs, and the raw bytes of index.db, index.db-wal and index.db-shm are scanned for every
 * token: as written, lowercased (FTS5 lowercases), and by its random tail alone (FTS5 leaf pages
 * prefix-compress terms, so a surviving posting need not contain the whole token). A positive
 * control first proves the scan sees every token before the deletion. When something survives,
 * the page is mapped to its table (dbstat) so the message names the mechanism. The cost of the
 * deleting sync is measured against syncs without deletions.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import {
	cpSync,
	existsSync,
	linkSync,
	lstatSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	truncateSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { syncIndex } from "../../src/sync/sync.ts";
import type { SourceDir } from "../../src/source/discover.ts";
import { openIndex } from "../../src/store/db.ts";
import { resolveSettings } from "../../src/config.ts";
import { SYNC_NOTIFICATION, StdioServer } from "../../src/server/stdio.ts";
import { deletedTextPending, mergePending, scrubAwaitsMerge } from "../../src/store/status.ts";
import { mergeSlice } from "../../src/sync/merge.ts";
import { scrubberRunning } from "../../src/cli/background-scrub.ts";
import { type AgentLayout, cleanupTempDirs, encodeCwd, isolatedEnv, makeAgentLayout, makeTempDir, PI_FIXTURES, runCli } from "../helpers/temp.ts";
import { ChunkedWriter, header, LONG } from "./helpers.ts";

afterAll(() => cleanupTempDirs());

const figures: string[] = [];
afterAll(() => {
	if (figures.length) console.log(`deletion:\n${figures.map((f) => `  ${f}`).join("\n")}`);
});

// ---------------------------------------------------------------------------------------------
// Tokens and the planted session
// ---------------------------------------------------------------------------------------------

let counter = 0;
function rand(): string {
	// Ten characters from [a-z0-9], unique per token (seeded by time and a counter), the fifth a
	// digit: a word of letters only is also indexed by its stem (the forms column), and FTS5 stores a
	// term after an equal prefix as its differing suffix only, so the word could hide behind its
	// stem from the byte scan (the positive control failed about one run in three).
	let x = (Date.now() * 1000 + process.pid * 7 + ++counter * 7919) >>> 0;
	let out = "";
	for (let i = 0; i < 10; i++) {
		x = (Math.imul(x, 1103515245) + 12345 + i * 977) >>> 0;
		out += i === 4 ? String((x >>> 8) % 10) : "abcdefghijklmnopqrstuvwxyz0123456789"[(x >>> 8) % 36];
	}
	return out;
}

interface Token {
	where: string;
	/** The token as it appears in the session file. */
	text: string;
	/** Its random tail, which no other text shares. */
	tail: string;
}

function plantTokens(): Record<string, Token> {
	const t = (where: string, make: (r: string) => string) => {
		const r = rand();
		return { where, text: make(r), tail: r };
	};
	return {
		user: t("user text", (r) => `QZUSER${r.toUpperCase()}`),
		output: t("tool output", (r) => `qzoutput${r}`),
		bash: t("bash command", (r) => `qzbash${r}`),
		name: t("session name", (r) => `qzname${r}`),
		path: t("file path", (r) => `qzpath${r}`),
		ctype: t("custom type", (r) => `qzctype${r}`),
		error: t("error message", (r) => `qzerror${r}`),
		label: t("label", (r) => `qzlabel${r}`),
		summary: t("compaction summary", (r) => `qzsummary${r}`),
		camel: t("camelCase identifier", (r) => `parseQzCamel${r.charAt(0).toUpperCase()}${r.slice(1)}`),
		session: t("session id", (r) => `qzsession${r}`),
		cwd: t("cwd", (r) => `qzcwd${r}`),
		file: t("file name", (r) => `qzfile${r}`),
	};
}

const CWD = "/work/demo/app";

function plantedSession(T: Record<string, Token>): string {
	const cwd = `${CWD}/${T.cwd!.text}`;
	const entries = [
		header(T.session!.text, cwd),
		{
			type: "message",
			id: "p1",
			parentId: null,
			timestamp: "2026-10-01T10:00:01.000Z",
			message: { role: "user", content: [{ type: "text", text: `please look at ${T.user!.text} today` }] },
		},
		{
			type: "message",
			id: "p2",
			parentId: "p1",
			timestamp: "2026-10-01T10:00:02.000Z",
			message: {
				role: "assistant",
				content: [
					{ type: "text", text: `calling ${T.camel!.text} first` },
					{ type: "toolCall", id: "call1", name: "read", arguments: { path: `${cwd}/${T.path!.text}/config.ts` } },
				],
				stopReason: "toolUse",
			},
		},
		{
			type: "message",
			id: "p3",
			parentId: "p2",
			timestamp: "2026-10-01T10:00:03.000Z",
			message: {
				role: "toolResult",
				toolCallId: "call1",
				toolName: "read",
				content: [{ type: "text", text: `file says ${T.output!.text} here` }],
				isError: false,
			},
		},
		{
			type: "message",
			id: "p4",
			parentId: "p3",
			timestamp: "2026-10-01T10:00:04.000Z",
			message: { role: "bashExecution", command: `echo ${T.bash!.text}`, output: "done", exitCode: 0 },
		},
		{ type: "session_info", id: "p5", parentId: "p4", timestamp: "2026-10-01T10:00:05.000Z", name: `Release ${T.name!.text}` },
		{
			type: "custom_message",
			id: "p6",
			parentId: "p5",
			timestamp: "2026-10-01T10:00:06.000Z",
			customType: T.ctype!.text,
			content: "extension context",
			display: true,
		},
		{
			type: "message",
			id: "p7",
			parentId: "p6",
			timestamp: "2026-10-01T10:00:07.000Z",
			message: { role: "assistant", content: [], stopReason: "error", errorMessage: `upstream failed: ${T.error!.text}` },
		},
		{ type: "label", id: "p8", parentId: "p7", timestamp: "2026-10-01T10:00:08.000Z", targetId: "p1", label: T.label!.text },
		{
			type: "compaction",
			id: "p9",
			parentId: "p8",
			timestamp: "2026-10-01T10:00:09.000Z",
			summary: `so far: ${T.summary!.text}`,
			firstKeptEntryId: "p7",
			tokensBefore: 1000,
		},
	];
	return entries.map((e) => JSON.stringify(e)).join("\n") + "\n";
}

// ---------------------------------------------------------------------------------------------
// A corpus of other sessions
// ---------------------------------------------------------------------------------------------

function writeCorpus(sessions: string, count: number, entriesPer: number): void {
	for (const name of readdirSync(PI_FIXTURES)) if (name.endsWith(".jsonl")) cpSync(join(PI_FIXTURES, name), join(sessions, encodeCwd(CWD), name));
	for (let s = 0; s < count; s++) {
		const w = new ChunkedWriter(
			join(sessions, encodeCwd(`${CWD}/pkg${s % 7}`), `2026-09-${String(1 + (s % 28)).padStart(2, "0")}T00-00-00-000Z_other-${s}.jsonl`),
		);
		w.line(header(`other-${s}`, `${CWD}/pkg${s % 7}`));
		for (let i = 0; i < entriesPer; i++) {
			w.line({
				type: "message",
				id: `o${s}-${i}`,
				parentId: i === 0 ? null : `o${s}-${i - 1}`,
				timestamp: new Date(Date.UTC(2026, 8, 1) + s * 100_000 + i * 1000).toISOString(),
				message:
					i % 2 === 0
						? { role: "user", content: `corpus question ${s} ${i} about module${i % 50} and the build` }
						: { role: "assistant", content: [{ type: "text", text: `corpus answer ${s} ${i}: check handler${i % 40} and retry logic` }], stopReason: "stop" },
			});
		}
		w.close();
	}
}

// ---------------------------------------------------------------------------------------------
// Scanning
// ---------------------------------------------------------------------------------------------

const INDEX_FILES = ["", "-wal", "-shm"];

function needlesOf(t: Token): string[] {
	return [...new Set([t.text, t.text.toLowerCase(), t.tail, t.tail.toUpperCase()])];
}

interface Finding {
	token: string;
	where: string;
	file: string;
	needle: string;
	offset: number;
	owner: string;
}

/** Map pages of index.db to the table or index that owns them (dbstat), read-only. */
function pageOwners(dbPath: string): { pageSize: number; owner: (page: number) => string } {
	const owners = new Map<number, string>();
	let pageSize = 4096;
	try {
		const db = new Database(dbPath, { readonly: true });
		pageSize = (db.query("PRAGMA page_size").get() as { page_size: number }).page_size;
		for (const r of db.query("SELECT name, pageno, pagetype FROM dbstat").all() as { name: string; pageno: number; pagetype: string }[])
			owners.set(r.pageno, `${r.name} (${r.pagetype} page)`);
		db.close();
	} catch {
		// no dbstat: pages stay anonymous
	}
	return { pageSize, owner: (page) => owners.get(page) ?? "a page no table owns (free or unused space)" };
}

function scan(dbPath: string, tokens: Record<string, Token>): Finding[] {
	const findings: Finding[] = [];
	for (const suffix of INDEX_FILES) {
		const file = dbPath + suffix;
		if (!existsSync(file)) continue;
		const bytes = readFileSync(file);
		const owners = suffix === "" ? pageOwners(dbPath) : null;
		for (const [key, t] of Object.entries(tokens)) {
			for (const needle of needlesOf(t)) {
				const at = bytes.indexOf(Buffer.from(needle, "utf8"));
				if (at < 0) continue;
				findings.push({
					token: key,
					where: t.where,
					file: `index.db${suffix}`,
					needle,
					offset: at,
					owner: owners ? owners.owner(Math.floor(at / owners.pageSize) + 1) : suffix === "-wal" ? "a WAL frame" : "the WAL index",
				});
				break;
			}
		}
	}
	return findings;
}

function describeFindings(findings: Finding[]): string[] {
	return findings.map((f) => `${f.where} (${f.needle}) in ${f.file} at byte ${f.offset}: ${f.owner}`);
}

interface Env {
	dir: string;
	sessions: string;
	dbPath: string;
	sources: SourceDir[];
}

function makeEnv(corpus: { count: number; entries: number }): Env {
	const dir = makeTempDir("pi-events-deletion-");
	const sessions = join(dir, "sessions");
	mkdirSync(join(sessions, encodeCwd(CWD)), { recursive: true });
	writeCorpus(sessions, corpus.count, corpus.entries);
	return { dir, sessions, dbPath: join(dir, "index.db"), sources: [{ path: sessions, origin: "flag" }] };
}

function plant(env: Env, T: Record<string, Token>): string {
	const path = join(env.sessions, encodeCwd(`${CWD}/${T.cwd!.text}`), `${T.file!.text}.jsonl`);
	mkdirSync(join(path, ".."), { recursive: true });
	writeFileSync(path, plantedSession(T));
	return path;
}

/** Index with the planted session; assert the scan sees every token (positive control). */
function indexAndControl(env: Env, T: Record<string, Token>): Database {
	const db = openIndex(env.dbPath);
	const report = syncIndex(db, { sourceDirs: env.sources });
	expect(report.problems).toEqual([]);
	const seen = new Set(scan(env.dbPath, T).map((f) => f.token));
	expect(Object.keys(T).filter((k) => !seen.has(k))).toEqual([]);
	// …and every planted text is searchable (the FTS postings exist).
	for (const key of ["user", "output", "bash", "name", "path", "error", "summary"]) {
		const n = (db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH ?1").get(`"${T[key]!.text.toLowerCase()}"`) as { n: number }).n;
		expect({ key, n }).toEqual({ key, n: 1 });
	}
	return db;
}

const CORPUS = LONG ? { count: 2000, entries: 100 } : { count: 300, entries: 60 };

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe("a deleted session leaves no text in the index files", () => {
	test(
		"after delete + sync: nothing of it in index.db / -wal / -shm, with the index open and after closing it; the cost is measured",
		() => {
			const env = makeEnv(CORPUS);
			const T = plantTokens();
			const path = plant(env, T);
			const db = indexAndControl(env, T);

			// Cost baseline: a no-op sync, and a sync that writes (an unrelated session grows) without deleting.
			const time = (fn: () => void) => {
				const started = performance.now();
				fn();
				return performance.now() - started;
			};
			const noop = time(() => syncIndex(db, { sourceDirs: env.sources }));
			const other = join(env.sessions, encodeCwd(`${CWD}/pkg0`), readdirSync(join(env.sessions, encodeCwd(`${CWD}/pkg0`)))[0]!);
			writeFileSync(
				other,
				`${readFileSync(other, "utf8")}${JSON.stringify({ type: "message", id: "grow1", parentId: null, message: { role: "user", content: "grown" } })}\n`,
			);
			const appendMs = time(() => expect(syncIndex(db, { sourceDirs: env.sources }).sessions.appended).toBe(1));

			rmSync(path);
			let removed = 0;
			const deleteMs = time(() => {
				removed = syncIndex(db, { sourceDirs: env.sources }).sessions.removed;
			});
			expect(removed).toBe(1);
			const openFindings = scan(env.dbPath, T);
			db.close();
			const closedFindings = scan(env.dbPath, T);

			// What a fix would cost: FTS5 'optimize' rewrites the segments without tombstoned rows
			// (contentless_delete keeps deleted postings until their segment is merged), then the
			// WAL is folded and truncated. Measured on a copy of the index, and scanned again.
			const copy = join(env.dir, "optimized.db");
			cpSync(env.dbPath, copy);
			const fixDb = new Database(copy);
			fixDb.run("PRAGMA secure_delete = ON");
			const optimizeMs = time(() => {
				fixDb.run("INSERT INTO fts(fts) VALUES ('optimize')");
				fixDb.query("PRAGMA wal_checkpoint(TRUNCATE)").get();
			});
			const afterOptimize = scan(copy, T);
			fixDb.close();
			figures.push(
				`FTS5 'optimize' + WAL truncate on that index (a candidate fix): ${optimizeMs.toFixed(1)} ms, leftover tokens afterwards: ${afterOptimize.length}`,
			);

			const sizes = INDEX_FILES.map(
				(s) => `${s || ".db"} ${existsSync(env.dbPath + s) ? (readFileSync(env.dbPath + s).length / 1024).toFixed(0) : "-"} KB`,
			).join(", ");
			figures.push(
				`corpus ${CORPUS.count} sessions × ${CORPUS.entries} entries (+ fixtures); index ${sizes}; no-op sync ${noop.toFixed(1)} ms, sync with one append ${appendMs.toFixed(1)} ms, sync deleting one session ${deleteMs.toFixed(1)} ms`,
			);
			expect({ indexOpen: describeFindings(openFindings), afterClose: describeFindings(closedFindings) }).toEqual({ indexOpen: [], afterClose: [] });
		},
		LONG ? 600_000 : 60_000,
	);

	test("a rewritten session (same path, new content) leaves none of its old text", () => {
		const env = makeEnv({ count: 20, entries: 20 });
		const T = plantTokens();
		const path = plant(env, T);
		const db = indexAndControl(env, T);
		// Same header (so it is a rebuild of the same session), entirely new entries.
		writeFileSync(
			path,
			`${JSON.stringify(header(T.session!.text, `${CWD}/${T.cwd!.text}`))}\n${JSON.stringify({ type: "message", id: "n1", parentId: null, message: { role: "user", content: "replacement text only" } })}\n`,
		);
		expect(syncIndex(db, { sourceDirs: env.sources }).sessions.rebuilt).toBe(1);
		// The header still names the session id, cwd and file: only the entries' tokens must be gone.
		const gone = Object.fromEntries(Object.entries(T).filter(([k]) => !["session", "cwd", "file"].includes(k)));
		const openFindings = scan(env.dbPath, gone);
		db.close();
		expect({ indexOpen: describeFindings(openFindings), afterClose: describeFindings(scan(env.dbPath, gone)) }).toEqual({ indexOpen: [], afterClose: [] });
	}, 60_000);

	test("a truncated session (cut after its first entry) leaves none of the cut text", () => {
		const env = makeEnv({ count: 20, entries: 20 });
		const T = plantTokens();
		const path = plant(env, T);
		const db = indexAndControl(env, T);
		const text = readFileSync(path, "utf8");
		const lines = text.split("\n");
		truncateSync(path, Buffer.byteLength(`${lines[0]}\n${lines[1]}\n`));
		expect(syncIndex(db, { sourceDirs: env.sources }).sessions.rebuilt).toBe(1);
		const cut = Object.fromEntries(Object.entries(T).filter(([k]) => !["session", "cwd", "file", "user"].includes(k)));
		const openFindings = scan(env.dbPath, cut);
		db.close();
		expect({ indexOpen: describeFindings(openFindings), afterClose: describeFindings(scan(env.dbPath, cut)) }).toEqual({ indexOpen: [], afterClose: [] });
	}, 60_000);

	test("with another connection reading during the deleting sync: nothing left once it lets go and the index syncs again", () => {
		const env = makeEnv({ count: 20, entries: 20 });
		const T = plantTokens();
		const path = plant(env, T);
		const db = indexAndControl(env, T);
		// A reader (a serve process, another search) holds a snapshot from before the deletion.
		const reader = new Database(env.dbPath, { readonly: true });
		reader.run("BEGIN");
		reader.query("SELECT count(*) FROM events").get();
		rmSync(path);
		const started = performance.now();
		expect(syncIndex(db, { sourceDirs: env.sources }).sessions.removed).toBe(1);
		const deleteMs = performance.now() - started;
		figures.push(`sync deleting one session while another connection holds a read snapshot: ${deleteMs.toFixed(0)} ms`);
		reader.run("COMMIT");
		reader.close();
		syncIndex(db, { sourceDirs: env.sources });
		const openFindings = scan(env.dbPath, T);
		db.close();
		expect({
			// A query's sync is bounded (3 s): the scrubbing checkpoint must not wait out the busy timeout.
			deleteSyncUnder3s: deleteMs < 3000,
			indexOpen: describeFindings(openFindings),
			afterClose: describeFindings(scan(env.dbPath, T)),
		}).toEqual({ deleteSyncUnder3s: true, indexOpen: [], afterClose: [] });
	}, 60_000);
});

// ---------------------------------------------------------------------------------------------
// A large index: a query's sync leaves the scrub to the merge in slices (sync/scrub.ts)
// ---------------------------------------------------------------------------------------------

/** A query's sync (bounded) on an index taken as large: the scrub is left to the merge. */
function querySync(db: Database, env: Env) {
	return syncIndex(db, { sourceDirs: env.sources, budgetMs: 3000, scrubInlineMaxBytes: 0 });
}

function searchable(db: Database, T: Record<string, Token>): string[] {
	return ["user", "output", "bash", "name", "error", "summary"].filter(
		(key) => (db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH ?1").get(`"${T[key]!.text.toLowerCase()}"`) as { n: number }).n > 0,
	);
}

/** A small corpus in pi's own sessions dir (for the CLI) with a planted session, indexed and checked (positive control). */
function plantedInLayout(): { layout: AgentLayout; env: Env; T: Record<string, Token>; path: string } {
	const layout = makeAgentLayout();
	const sessions = layout.sessionsDir;
	mkdirSync(join(sessions, encodeCwd(CWD)), { recursive: true });
	writeCorpus(sessions, 20, 20);
	const env: Env = { dir: layout.root, sessions, dbPath: join(layout.root, "idx", "index.db"), sources: [{ path: sessions, origin: "pi" }] };
	const T = plantTokens();
	const path = plant(env, T);
	indexAndControl(env, T).close();
	return { layout, env, T, path };
}

/** A search in its own process on an index taken as large, which leaves the scrub to the background. */
function searchInOwnProcess(layout: AgentLayout, env: Env, query: string, scrubInlineMaxBytes = "0") {
	return runCli(layout, ["search", query, "--all", "--json", "--index", env.dbPath], {
		env: { PI_EVENTS_SERVER: "off", PI_EVENTS_SCRUB_INLINE_MAX_BYTES: scrubInlineMaxBytes },
	});
}

/** Wait (at most 30 s) until no removed session's text waits to be scrubbed; whether it got there. */
async function scrubbedWithin30s(db: Database): Promise<boolean> {
	const deadline = Date.now() + 30_000;
	while (pendingOrBusy(db) && Date.now() < deadline) await Bun.sleep(50);
	return !pendingOrBusy(db);
}

/**
 * Whether the scrub is still pending, as this reader can tell: the scrubber's last slice truncates
 * the WAL, and a reader that asks at that moment gets SQLITE_BUSY, which means "not yet", not an error.
 */
function pendingOrBusy(db: Database): boolean {
	try {
		return deletedTextPending(db);
	} catch (err) {
		if ((err as { code?: string }).code?.startsWith("SQLITE_BUSY")) return true;
		throw err;
	}
}

async function scrubbedWithin30sAt(dbPath: string): Promise<boolean> {
	const reader = new Database(dbPath, { readonly: true });
	try {
		return await scrubbedWithin30s(reader);
	} finally {
		reader.close();
	}
}

describe("on a large index a query's sync answers at once and the merge in slices scrubs", () => {
	test("the removed session is out of every answer at once; its tokens stay only until the last slice, which truncates the WAL", () => {
		const env = makeEnv({ count: 40, entries: 20 });
		const T = plantTokens();
		const path = plant(env, T);
		const db = indexAndControl(env, T);
		try {
			rmSync(path);
			expect(querySync(db, env).sessions.removed).toBe(1);
			expect(searchable(db, T)).toEqual([]);
			expect(db.query("SELECT count(*) AS n FROM sessions WHERE session_id = ?1").get(T.session!.text)).toEqual({ n: 0 });
			expect({ awaits: scrubAwaitsMerge(db), deleted: deletedTextPending(db) }).toEqual({ awaits: true, deleted: true });
			// Left for the merge: the tokens are still in the file (the window docs/indexing.md states).
			expect(scan(env.dbPath, T).length).toBeGreaterThan(0);
			// Another query's sync meanwhile writes nothing more and leaves it pending.
			const changes = () => (db.query("SELECT total_changes() AS n").get() as { n: number }).n;
			const before = changes();
			querySync(db, env);
			expect(changes()).toBe(before);
			let slices = 0;
			while (mergeSlice(db, 0, 4) === "more" && slices < 100_000) slices++;
			expect(slices).toBeGreaterThan(1);
			expect({ awaits: scrubAwaitsMerge(db), deleted: deletedTextPending(db), merge: mergePending(db) }).toEqual({
				awaits: false,
				deleted: false,
				merge: false,
			});
			expect(describeFindings(scan(env.dbPath, T))).toEqual([]);
			expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
			db.run("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 0)");
		} finally {
			db.close();
		}
		expect(describeFindings(scan(env.dbPath, T))).toEqual([]);
	}, 60_000);

	test("a second deletion while the slices run is scrubbed too; a full `index` run finishes a pending scrub at once", () => {
		const env = makeEnv({ count: 40, entries: 20 });
		const first = plantTokens();
		const second = plantTokens();
		const firstPath = plant(env, first);
		const secondPath = plant(env, second);
		const db = indexAndControl(env, first);
		try {
			expect(searchable(db, second).length).toBe(6);
			rmSync(firstPath);
			expect(querySync(db, env).sessions.removed).toBe(1);
			for (let i = 0; i < 3; i++) expect(mergeSlice(db, 0, 1)).toBe("more");
			rmSync(secondPath);
			expect(querySync(db, env).sessions.removed).toBe(1);
			expect(searchable(db, second)).toEqual([]);
			while (mergeSlice(db, 0, 4) === "more") {}
			expect(deletedTextPending(db)).toBe(false);
			expect(describeFindings(scan(env.dbPath, { ...prefixed("first", first), ...prefixed("second", second) }))).toEqual([]);

			// Pending again, then a full run (`pi-events index`) scrubs it at once.
			const third = plantTokens();
			const thirdPath = plant(env, third);
			syncIndex(db, { sourceDirs: env.sources });
			expect(searchable(db, third).length).toBe(6);
			rmSync(thirdPath);
			querySync(db, env);
			expect(scrubAwaitsMerge(db)).toBe(true);
			syncIndex(db, { sourceDirs: env.sources });
			expect({ deleted: deletedTextPending(db), merge: mergePending(db) }).toEqual({ deleted: false, merge: false });
			expect(describeFindings(scan(env.dbPath, third))).toEqual([]);
		} finally {
			db.close();
		}
	}, 60_000);

	test("`status` says so; `index --scrub` finishes it without a sync", () => {
		const { layout, env, T, path } = plantedInLayout();
		rmSync(path);
		const db = openIndex(env.dbPath);
		querySync(db, env);
		db.close();
		const flags = ["--index", env.dbPath];
		expect(runCli(layout, ["status", "--json", ...flags]).json<{ deletedTextPending: boolean }>().deletedTextPending).toBe(true);
		expect(runCli(layout, ["status", ...flags]).stdout).toContain("deleted:     a removed session's text is still in the index files");
		const scrubbed = runCli(layout, ["index", "--scrub", "--json", ...flags]);
		expect(scrubbed.exitCode).toBe(0);
		expect(scrubbed.json<{ scrub: string }>().scrub).toBe("scrubbed");
		expect(describeFindings(scan(env.dbPath, T))).toEqual([]);
		expect(runCli(layout, ["status", "--json", ...flags]).json<{ deletedTextPending: boolean }>().deletedTextPending).toBe(false);
		expect(runCli(layout, ["index", "--scrub", ...flags]).stdout).toBe("scrub: nothing to scrub\n");
		const misuse = runCli(layout, ["index", "--scrub", "--merge", ...flags]);
		expect({ exit: misuse.exitCode, err: misuse.stderr.includes("--scrub runs no sync") }).toEqual({ exit: 2, err: true });
	}, 60_000);

	test("a search in its own process answers, and the scrub it starts in the background leaves nothing", async () => {
		const { layout, env, T, path } = plantedInLayout();
		rmSync(path);
		const found = searchInOwnProcess(layout, env, T.user!.text);
		expect(found.exitCode).toBe(1); // no hits: the session is gone from the answer already
		const bad = searchInOwnProcess(layout, env, "x", "16M");
		expect({ exit: bad.exitCode, err: bad.stderr.trim() }).toEqual({
			exit: 2,
			err: 'pi-events: PI_EVENTS_SCRUB_INLINE_MAX_BYTES must be a whole number of bytes, got "16M"',
		});
		expect(found.json<{ hits: unknown[] }>().hits).toEqual([]);
		expect(await scrubbedWithin30sAt(env.dbPath)).toBe(true);
		// The background scrubber removes its marker when it ends.
		const deadline = Date.now() + 10_000;
		while (existsSync(`${env.dbPath}-scrub.pid`) && Date.now() < deadline) await Bun.sleep(50);
		expect(existsSync(`${env.dbPath}-scrub.pid`)).toBe(false);
		expect(describeFindings(scan(env.dbPath, T))).toEqual([]);
	}, 60_000);

	test("a symlink planted where the scrubber's marker goes is not followed, and does not stop the scrub", async () => {
		const { layout, env, T, path } = plantedInLayout();
		const victim = join(layout.root, "victim.txt");
		writeFileSync(victim, "1\n"); // pid 1 is alive: a marker read through the link would say a scrubber runs
		symlinkSync(victim, `${env.dbPath}-scrub.pid`);
		rmSync(path);
		searchInOwnProcess(layout, env, T.user!.text);
		expect(await scrubbedWithin30sAt(env.dbPath)).toBe(true);
		expect(readFileSync(victim, "utf8")).toBe("1\n");
		// Replaced by the scrubber's own marker (a new file renamed into place), which it removed at its end.
		expect(isSymlink(`${env.dbPath}-scrub.pid`)).toBe(false);
		expect(describeFindings(scan(env.dbPath, T))).toEqual([]);
	}, 60_000);

	// Issue 32 item 9.
	test("a hard link planted where the scrubber's marker goes: its target is neither truncated nor written", async () => {
		const { layout, env, T, path } = plantedInLayout();
		const victim = join(layout.root, "precious.txt");
		writeFileSync(victim, "precious contents\n");
		linkSync(victim, `${env.dbPath}-scrub.pid`);
		rmSync(path);
		searchInOwnProcess(layout, env, T.user!.text);
		expect(await scrubbedWithin30sAt(env.dbPath)).toBe(true);
		expect(readFileSync(victim, "utf8")).toBe("precious contents\n");
		expect(describeFindings(scan(env.dbPath, T))).toEqual([]);
	}, 60_000);

	// Issue 32 item 10: before, either marker stopped every background scrub (for ever, or for 15 minutes).
	test.each([
		["pid 1, dated a year ahead", 365 * 24 * 3600],
		["pid 1 (alive, not a scrubber), written now", 0],
	])(
		"a marker naming %s does not stop the scrub",
		async (_label, aheadSeconds) => {
			const { layout, env, T, path } = plantedInLayout();
			const marker = `${env.dbPath}-scrub.pid`;
			writeFileSync(marker, "1\n");
			const when = Date.now() / 1000 + aheadSeconds;
			utimesSync(marker, when, when);
			rmSync(path);
			searchInOwnProcess(layout, env, T.user!.text);
			expect(await scrubbedWithin30sAt(env.dbPath)).toBe(true);
			expect(describeFindings(scan(env.dbPath, T))).toEqual([]);
		},
		60_000,
	);

	test.skipIf(!existsSync("/proc/self/cmdline"))(
		"a marker counts only when it names a live `index --scrub` of this index, written in the last 15 minutes",
		async () => {
			const dir = makeTempDir("pi-events-scrub-marker-");
			const indexPath = join(dir, "index.db");
			// A stand-in with a scrubber's command line: it only waits.
			const standIn = Bun.spawn([process.execPath, "-e", "setTimeout(() => {}, 20000)", "index", "--scrub", "--index", indexPath], {
				stdout: "ignore",
				stderr: "ignore",
			});
			try {
				const deadline = Date.now() + 5000;
				while (!readFileSync(`/proc/${standIn.pid}/cmdline`, "utf8").includes("--scrub") && Date.now() < deadline) await Bun.sleep(20);
				const marker = `${indexPath}-scrub.pid`;
				writeFileSync(marker, `${standIn.pid}\n`);
				expect(scrubberRunning(indexPath)).toBe(true);
				// Another index's scrubber, or a process that is not one, names none here.
				expect(scrubberRunning(join(dir, "other.db"))).toBe(false);
				writeFileSync(marker, `${process.pid}\n`);
				expect(scrubberRunning(indexPath)).toBe(false);
				writeFileSync(marker, `${standIn.pid}\n`);
				// Too old, or from the future.
				expect(scrubberRunning(indexPath, Date.now() + 16 * 60 * 1000)).toBe(false);
				expect(scrubberRunning(indexPath, Date.now() - 60 * 1000)).toBe(false);
			} finally {
				standIn.kill();
				await standIn.exited;
			}
			expect(scrubberRunning(indexPath)).toBe(false);
		},
		30_000,
	);

	// Issue 32 item 11.
	test("`index --scrub` on a full disk: a plain E_INDEX error like a sync's, the index intact", () => {
		const { layout, env, path } = plantedInLayout();
		rmSync(path);
		const db = openIndex(env.dbPath);
		querySync(db, env);
		expect(scrubAwaitsMerge(db)).toBe(true);
		db.run("PRAGMA wal_checkpoint(TRUNCATE)");
		db.run("VACUUM"); // no free pages: the merge's first new page is past the limit
		const pages = (db.query("PRAGMA page_count").get() as { page_count: number }).page_count;
		db.close();
		const run = Bun.spawnSync([process.execPath, FULL_DISK_CLI, "index", "--scrub", "--json", "--index", env.dbPath], {
			cwd: layout.root,
			env: isolatedEnv(layout, { PI_EVENTS_TEST_MAX_PAGES: String(pages), PI_EVENTS_SERVER: "off" }),
			stdout: "pipe",
			stderr: "pipe",
		});
		expect({ exit: run.exitCode, out: run.stdout.toString(), err: run.stderr.toString() }).toEqual({
			exit: 2,
			out: "",
			// As a sync on a full disk says it (before: "internal error … [E_INTERNAL]").
			err: "pi-events: cannot update the index: the disk is full; it keeps its last consistent state\n",
		});
		const after = new Database(env.dbPath, { readonly: true });
		try {
			expect(after.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
			expect(deletedTextPending(after)).toBe(true);
		} finally {
			after.close();
		}
	}, 60_000);

	test("the tool server scrubs between calls", async () => {
		const { layout, env, T, path } = plantedInLayout();
		const db = openIndex(env.dbPath);
		// A small index taken as large: the scrub is left to the merge between calls.
		const settings = resolveSettings({
			sessionDirs: [],
			cwd: layout.root,
			env: isolatedEnv(layout, { PI_EVENTS_SCRUB_INLINE_MAX_BYTES: "0" }),
			indexPath: env.dbPath,
		});
		expect(settings.scrubInlineMaxBytes).toBe(0);
		const server = new StdioServer({
			db,
			settings,
			version: "test",
			launch: { root: null, cwd: layout.root, sessionId: null, sessionFile: null },
			write: () => {},
			log: () => {},
			mergeSliceMs: 0,
		});
		try {
			rmSync(path);
			server.handleFrame(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {} } }));
			server.handleFrame(JSON.stringify({ jsonrpc: "2.0", method: SYNC_NOTIFICATION }));
			expect(searchable(db, T)).toEqual([]);
			expect(await scrubbedWithin30s(db)).toBe(true);
			expect(describeFindings(scan(env.dbPath, T))).toEqual([]);
		} finally {
			server.close();
			db.close();
		}
	}, 60_000);
});

function isSymlink(path: string): boolean {
	try {
		return lstatSync(path).isSymbolicLink();
	} catch {
		return false;
	}
}

/** The real CLI with SQLite's page limit standing in for a full disk (test/reliability/full-disk-cli.ts). */
const FULL_DISK_CLI = join(import.meta.dir, "..", "reliability", "full-disk-cli.ts");

function prefixed(prefix: string, T: Record<string, Token>): Record<string, Token> {
	return Object.fromEntries(Object.entries(T).map(([k, v]) => [`${prefix}.${k}`, v]));
}
