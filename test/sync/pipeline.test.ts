/**
 * The pipelined cold index (a worker reads, parses and projects; this thread writes) builds the
 * same index as the main thread alone, for every fixture shape (pi-generated, legacy, broken,
 * headerless), a file that is no longer new when its turn comes is indexed the ordinary way, and a
 * new file that fails part way leaves none of its rows.
 */
import { afterAll, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Diagnostic } from "../../src/model.ts";
import type { SourceDir } from "../../src/source/discover.ts";
import { MAX_LINE_BYTES } from "../../src/source/session-parser.ts";
import { openIndex } from "../../src/store/db.ts";
import { IndexWriter } from "../../src/store/write.ts";
import { type PreparedPart, prepareFile, splitEventsPart } from "../../src/sync/prepare.ts";
import { diagnosticSink, emptyReport } from "../../src/sync/report.ts";
import { type PreparedSource, syncFile } from "../../src/sync/sync-file.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { allFixtureFiles, cleanupTempDirs, dumpIndex, makeTempDir, PI_FIXTURES } from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

function corpus(): SourceDir[] {
	const sessions = join(makeTempDir("pi-events-pipeline-"), "sessions");
	const sub = join(sessions, "--work-demo--");
	mkdirSync(sub, { recursive: true });
	for (const f of allFixtureFiles()) copyFileSync(f.path, join(sub, `${f.group}-${basename(f.path)}`));
	return [{ path: sessions, origin: "flag" }];
}

test("a pipelined cold index equals the main-thread one for every fixture", () => {
	const sources = corpus();
	const debug: string[] = [];
	const piped = openIndex(":memory:");
	const plain = openIndex(":memory:");
	const a = syncIndex(piped, { sourceDirs: sources, pipeline: "always", debug: (l) => debug.push(l) });
	const b = syncIndex(plain, { sourceDirs: sources, pipeline: "never" });
	// The worker really ran (it did not fall back to this thread).
	expect(debug).toContain("the prepare worker is running");
	expect(debug.filter((l) => l.includes("main thread"))).toEqual([]);
	expect(a.sessions).toEqual(b.sessions);
	expect(a.eventsAdded).toBe(b.eventsAdded);
	expect(a.fragmentsAdded).toBe(b.fragmentsAdded);
	expect(a.bytesRead).toBe(b.bytesRead);
	expect(a.diagnostics).toEqual(b.diagnostics);
	expect(a.sessions.new).toBeGreaterThan(10);
	expect(dumpIndex(piped)).toEqual(dumpIndex(plain));
	// The page cache the pipeline shrank and the WAL checkpoint interval it widened are restored.
	expect((piped.query("PRAGMA cache_size").get() as { cache_size: number }).cache_size).toBe(-65536);
	expect((piped.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint).toBe(1000);
});

test("a pipelined cold index loads with FTS5's bulk settings and puts the index's own back", () => {
	const sources = corpus();
	const db = openIndex(":memory:");
	const settings = () =>
		Object.fromEntries(
			(db.query("SELECT k, v FROM fts_config WHERE k IN ('automerge', 'hashsize')").all() as { k: string; v: number }[]).map((r) => [r.k, r.v]),
		);
	// A value the index had before (not FTS5's default) comes back as it was; one it did not have
	// comes back as FTS5's default.
	db.run("INSERT INTO fts(fts, rank) VALUES ('automerge', 6)");
	const during: Record<string, number>[] = [];
	const checkpointPages: number[] = [];
	syncIndex(db, {
		sourceDirs: sources,
		pipeline: "always",
		onProgress: () => {
			during.push(settings());
			checkpointPages.push((db.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint);
		},
	});
	expect(during.length).toBeGreaterThan(10);
	for (const s of during) expect(s).toEqual({ automerge: 8, hashsize: 4 * 1024 * 1024 });
	expect(new Set(checkpointPages)).toEqual(new Set([10_000]));
	expect(settings()).toEqual({ automerge: 6, hashsize: 1024 * 1024 });
	// A sync on this thread alone changes nothing.
	const plain = openIndex(":memory:");
	const plainDuring: Record<string, number>[] = [];
	syncIndex(plain, {
		sourceDirs: sources,
		pipeline: "never",
		onProgress: () =>
			plainDuring.push(
				Object.fromEntries(
					(plain.query("SELECT k, v FROM fts_config WHERE k IN ('automerge', 'hashsize')").all() as { k: string; v: number }[]).map((r) => [r.k, r.v]),
				),
			),
	});
	expect(plainDuring.length).toBeGreaterThan(10);
	for (const s of plainDuring) expect(s).toEqual({});
});

test("a new file without a session header, the worker's last, is indexed at once and as on the main thread", () => {
	// Such a file is read to its end in the worker and then indexed on this thread. Its size does
	// not matter: a 65 MB file of zero bytes (a cold index's pipeline) and 4 of them alike waited
	// out the worker's 20 s silence, for more of a file whose end had already come.
	// Each case: how the file is written, and the kinds of the diagnostics it counts.
	const cases: [string, (path: string) => void, Diagnostic["kind"][]][] = [
		["empty", (path) => writeFileSync(path, ""), []],
		["zero bytes, no LF", (path) => writeFileSync(path, Buffer.alloc(4096)), []],
		["a line of zero bytes", (path) => writeFileSync(path, Buffer.concat([Buffer.alloc(4096), Buffer.from("\n")])), ["malformed-json"]],
		[
			"an oversized line of zero bytes",
			(path) => {
				writeFileSync(path, "");
				truncateSync(path, MAX_LINE_BYTES + 1);
				appendFileSync(path, "\n");
			},
			["oversized-line"],
		],
	];
	for (const [name, write, kinds] of cases) {
		const sessions = join(makeTempDir("pi-events-pipeline-"), "sessions");
		mkdirSync(join(sessions, "--work--"), { recursive: true });
		write(join(sessions, "--work--", "zeros.jsonl"));
		const sources: SourceDir[] = [{ path: sessions, origin: "flag" }];
		const debug: string[] = [];
		const piped = openIndex(":memory:");
		const plain = openIndex(":memory:");
		const started = performance.now();
		const a = syncIndex(piped, { sourceDirs: sources, pipeline: "always", debug: (l) => debug.push(l) });
		const elapsed = performance.now() - started;
		const b = syncIndex(plain, { sourceDirs: sources, pipeline: "never" });
		expect({ name, fallback: debug.filter((l) => l.includes("main thread")) }).toEqual({ name, fallback: [] });
		expect(elapsed).toBeLessThan(10_000);
		expect(a.sessions).toEqual(b.sessions);
		expect(a.sessions.rejected).toBe(1);
		expect({ name, kinds: a.diagnostics.map((d) => d.kind) }).toEqual({ name, kinds });
		expect(a.diagnostics).toEqual(b.diagnostics);
		expect(a.diagnosticsByFile).toEqual(b.diagnosticsByFile);
		expect(a.bytesRead).toBe(b.bytesRead);
		expect(dumpIndex(piped)).toEqual(dumpIndex(plain));
	}
});

test("a file another writer indexed meanwhile is not written again from its prepared parts", () => {
	const sources = corpus();
	const db = openIndex(":memory:");
	// An index holding every file already: each prepared file is found indexed inside the transaction.
	syncIndex(db, { sourceDirs: sources, pipeline: "never" });
	const debug: string[] = [];
	const before = withoutFileTimes(dumpIndex(db));
	const later = new Date(Date.now() + 60_000);
	for (const f of readdirSync(join(sources[0]!.path, "--work-demo--"))) utimesSync(join(sources[0]!.path, "--work-demo--", f), later, later);
	const report = syncIndex(db, { sourceDirs: sources, pipeline: "always", check: { mode: "full" }, debug: (l) => debug.push(l) });
	expect(debug).toContain("the prepare worker is running");
	expect(debug.filter((l) => l.includes("main thread"))).toEqual([]);
	expect(report.sessions.new).toBe(0);
	expect(report.sessions.appended + report.sessions.rebuilt + report.sessions.unchanged).toBeGreaterThan(10);
	expect(withoutFileTimes(dumpIndex(db))).toEqual(before);
});

/** The dump without the files' mtimes (touched on purpose) and dirs' check times. */
function withoutFileTimes(dump: Record<string, unknown[]>): Record<string, unknown[]> {
	const strip = (rows: unknown[] | undefined) => (rows ?? []).map((r) => ({ ...(r as object), mtime_ms: 0, indexed_at: 0, checked_at: 0, listed_mtime: 0 }));
	return { ...dump, files: strip(dump.files), dirs: strip(dump.dirs), meta: [] };
}

test("a new file whose worker stops part way leaves none of its rows when it cannot be indexed again", () => {
	// Inside a batch a new file has no savepoint of its own (sync-file.ts): its partial rows must be
	// deleted. The worker delivers the file's first part and stops; by then the file is gone, so the
	// main thread cannot index it either.
	const sources = corpus();
	const dir = join(sources[0]!.path, "--work-demo--");
	const [victim, other] = readdirSync(dir)
		.filter((f) => f.startsWith("pi-"))
		.map((f) => join(dir, f));
	const db = openIndex(":memory:");
	const writer = new IndexWriter(db);
	const report = emptyReport();
	const ctx = { db, writer, report, addDiagnostics: diagnosticSink(report, 200) };
	const parts: PreparedPart[] = [];
	prepareFile(victim!, (part) => parts.push(part));
	const firstEvents = parts.find((p) => p.kind === "events");
	expect(firstEvents).toBeDefined();
	const word = firstEvents!.kind === "events" ? firstEvents!.events.flatMap((e) => e.fragments)[0]!.indexText.match(/[a-z]{5,}/i)![0] : "";
	let delivered = false;
	const lostWorker: PreparedSource = {
		next: () => {
			if (delivered) {
				rmSync(victim!);
				return null;
			}
			delivered = true;
			return firstEvents!;
		},
		skip: () => {},
	};
	const stat = (path: string) => {
		const s = statSync(path);
		return { path, sourceDir: sources[0]!.path, dev: s.dev, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs };
	};
	const victimFile = stat(victim!);
	db.run("BEGIN IMMEDIATE");
	expect(syncFile(ctx, stat(other!))).toBe("new");
	expect(syncFile(ctx, victimFile, lostWorker)).toBe("keptLastGood");
	db.run("COMMIT");
	expect(delivered).toBe(true);
	expect(report.problems.join("\n")).toContain("ENOENT");
	// Only the other file is indexed: no row of the victim is left, in any table or in the full-text index.
	expect(db.query("SELECT path FROM files").all()).toEqual([{ path: other }]);
	expect(db.query("SELECT count(*) AS n FROM sessions").get()).toEqual({ n: 1 });
	const otherSession = db.query("SELECT session_key AS k FROM sessions").get() as { k: number };
	expect(db.query("SELECT count(*) AS n FROM events WHERE session_key != ?1").get(otherSession.k)).toEqual({ n: 0 });
	expect(db.query("SELECT count(*) AS n FROM fragments WHERE session_key != ?1").get(otherSession.k)).toEqual({ n: 0 });
	const inOther = (db.query("SELECT count(*) AS n FROM fragments").get() as { n: number }).n;
	const ftsRows = db.query("SELECT rowid FROM fts WHERE fts MATCH ?1").all(`"${word}"`) as { rowid: number }[];
	const fragKeys = new Set((db.query("SELECT frag_key FROM fragments").all() as { frag_key: number }[]).map((r) => r.frag_key));
	expect(inOther).toBeGreaterThan(0);
	for (const r of ftsRows) expect(fragKeys.has(r.rowid)).toBe(true);
	db.run("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 0)");
});

test.each([
	["read in several chunks (over 4 MB)", 5 * 1024 * 1024],
	["read in one chunk but sent in several messages (about 2 MB)", 2 * 1024 * 1024],
])("a session %s equals the main-thread index too", (_, targetBytes) => {
	// The worker sends a file read in one chunk with its tree states (in messages of about 512 KB,
	// each with its share of the states); a larger one goes in several parts without, and the writer
	// classifies it from its rows. Both must give the same states.
	const sessions = join(makeTempDir("pi-events-pipeline-big-"), "sessions");
	const sub = join(sessions, "--work-demo--");
	mkdirSync(sub, { recursive: true });
	const source = readdirSync(PI_FIXTURES)
		.map((f) => join(PI_FIXTURES, f))
		.filter((f) => f.endsWith(".jsonl"))
		.sort((a, b) => statSync(b).size - statSync(a).size)
		.find((f) => statSync(f).size < 100_000)!;
	const [header, ...entries] = readFileSync(source, "utf8")
		.trimEnd()
		.split("\n")
		.map((l) => JSON.parse(l) as Record<string, unknown>);
	const lines = [JSON.stringify(header)];
	let last: unknown = null;
	// Copies of the session's entries chained one after another, ids suffixed per copy (its branches repeat).
	let bytes = 0;
	for (let copy = 0; bytes < targetBytes; copy++) {
		for (const entry of entries) {
			const e = { ...entry };
			for (const key of ["id", "parentId", "targetId", "fromId", "firstKeptEntryId"]) if (typeof e[key] === "string") e[key] = `${e[key]}-${copy}`;
			if (e.parentId === null && copy > 0) e.parentId = last;
			if (typeof e.id === "string") last = e.id;
			const line = JSON.stringify(e);
			bytes += line.length + 1;
			lines.push(line);
		}
	}
	writeFileSync(join(sub, basename(source)), `${lines.join("\n")}\n`);
	expect(statSync(join(sub, basename(source))).size).toBeGreaterThan(targetBytes);
	const sources: SourceDir[] = [{ path: sessions, origin: "flag" }];
	const piped = openIndex(":memory:");
	const plain = openIndex(":memory:");
	const debug: string[] = [];
	syncIndex(piped, { sourceDirs: sources, pipeline: "always", debug: (l) => debug.push(l) });
	syncIndex(plain, { sourceDirs: sources, pipeline: "never" });
	expect(debug).toContain("the prepare worker is running");
	expect(dumpIndex(piped)).toEqual(dumpIndex(plain));
	// Classified, not left unknown: every entry on the selected path, most of them summarized.
	expect(piped.query("SELECT DISTINCT branch_state AS s FROM events").all()).toEqual([{ s: "selected" }]);
	expect(piped.query("SELECT count(DISTINCT selection_state) AS n FROM events").get()).toEqual({ n: 3 });
});

test("an events part is split into messages that keep its events, tree states and bytes in order", () => {
	const source = readdirSync(PI_FIXTURES)
		.map((f) => join(PI_FIXTURES, f))
		.filter((f) => f.endsWith(".jsonl"))
		.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
	const parts: PreparedPart[] = [];
	prepareFile(source, (p) => parts.push(p));
	const events = parts.filter((p) => p.kind === "events");
	expect(events.length).toBe(1); // one chunk: with its tree states
	const whole = events[0]!;
	if (whole.kind !== "events") throw new Error("unreachable");
	expect(whole.states?.length).toBe(whole.events.length);
	for (const max of [1, 1000, 10_000, whole.bytes, whole.bytes * 2]) {
		const pieces = splitEventsPart(whole, max);
		expect(pieces.flatMap((p) => p.events)).toEqual(whole.events);
		expect(pieces.flatMap((p) => p.states ?? [])).toEqual(whole.states!);
		expect(pieces.reduce((n, p) => n + p.bytes, 0)).toBe(whole.bytes);
		for (const p of pieces) {
			expect(p.states?.length).toBe(p.events.length);
			const lines = p.events.reduce((n, e) => n + e.locator.length, 0);
			// Each piece stops at the first event that reaches the limit.
			if (p.events.length > 1) expect(lines - p.events[p.events.length - 1]!.locator.length).toBeLessThan(max);
		}
		if (max >= whole.bytes) expect(pieces).toEqual([whole]);
		else expect(pieces.length).toBeGreaterThan(1);
	}
});
