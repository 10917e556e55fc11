/**
 * The pipelined cold index (a worker reads, parses and projects; this thread writes) builds the
 * same index as the main thread alone, for every fixture shape (pi-generated, legacy, broken,
 * headerless), and a file that is no longer new when its turn comes is indexed the ordinary way.
 */
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readdirSync, utimesSync } from "node:fs";
import { basename, join } from "node:path";
import type { SourceDir } from "../../src/source/discover.ts";
import { openIndex } from "../../src/store/db.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { allFixtureFiles, cleanupTempDirs, dumpIndex, makeTempDir } from "../helpers/temp.ts";

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
	// The page cache the pipeline shrank is restored.
	expect((piped.query("PRAGMA cache_size").get() as { cache_size: number }).cache_size).toBe(-65536);
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
