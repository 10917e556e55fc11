/**
 * The full-text index is merged into one segment in slices where nobody waits (sync/merge.ts): a
 * sync that loads new sessions through the prepare worker marks the index, each slice does at
 * least one FTS5 merge step, the last one clears the mark, the answers never change, a full scrub
 * clears the mark too, and the tool server merges after a turn with no further request. Real
 * session files and a real index in temp dirs.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { resolveSettings } from "../../src/config.ts";
import { search } from "../../src/query/search/search.ts";
import { Gate } from "../../src/gate/gate.ts";
import { SYNC_NOTIFICATION, StdioServer } from "../../src/server/stdio.ts";
import { openIndex } from "../../src/store/db.ts";
import { mergePending, mergeSlice } from "../../src/sync/merge.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { cleanupTempDirs, encodeCwd, isolatedEnv, MAIN, makeAgentLayout, runCli } from "../helpers/temp.ts";
import { userEntry, writeSession } from "../query/helpers.ts";

afterAll(cleanupTempDirs);

const CWD = "/work/merge-test/app";
const WORDS = ["quokka", "wombat", "numbat", "bilby", "dingo"];

/** Sessions written and synced in `batches` loads through the prepare worker: one or more segments each. */
function world(batches: number) {
	const layout = makeAgentLayout();
	const dir = join(layout.sessionsDir, encodeCwd(CWD));
	mkdirSync(dir, { recursive: true });
	const indexPath = join(layout.root, "idx", "index.db");
	const db = openIndex(indexPath);
	const sourceDirs = [{ path: layout.sessionsDir, origin: "pi" as const }];
	const files: string[] = [];
	let n = 0;
	const add = (count: number) => {
		for (let i = 0; i < count; i++, n++) {
			const id = `mg-${String(n).padStart(4, "0")}`;
			const text = `${WORDS[n % WORDS.length]} session ${n} talks about merge${n} and ${WORDS[(n * 3) % WORDS.length]}`;
			files.push(
				writeSession(dir, { id, cwd: CWD, entries: [userEntry(`${id}-1`, null, "2026-10-01T10:00:05.000Z", text)] }, `2026-10-01T10-00-00-000Z_${id}`),
			);
		}
	};
	for (let b = 0; b < batches; b++) {
		add(12);
		syncIndex(db, { sourceDirs, pipeline: "always" });
	}
	return { layout, db, dir, indexPath, sourceDirs, files, add };
}

function segments(db: Database): number {
	return (db.query("SELECT count(DISTINCT segid) AS n FROM fts_idx").get() as { n: number }).n;
}

/** Every query's hits, as `session/entry`, in order. */
function answers(db: Database): string[][] {
	const queries = [...WORDS, "merge7", "session", "talks about", '"session 3"'];
	return queries.map((q) =>
		search(new Gate(db, { roots: null, current: null }), { query: q, filters: {}, limit: 50 }).hits.map((h) => `${h.sessionId}/${h.entryId}`),
	);
}

describe("merging the full-text index in slices", () => {
	test("a load through the prepare worker marks the index; slices merge it step by step into one segment, the answers unchanged", () => {
		const w = world(5);
		try {
			expect(mergePending(w.db)).toBe(true);
			const before = segments(w.db);
			expect(before).toBeGreaterThan(1);
			const answered = answers(w.db);
			expect(answered.flat().length).toBeGreaterThan(60);
			// Slices of no time and one page per step: each does exactly one step.
			const outcomes: string[] = [];
			for (let i = 0; i < 10_000 && mergePending(w.db); i++) outcomes.push(mergeSlice(w.db, 0, 1));
			expect(outcomes.at(-1)).toBe("merged");
			expect(outcomes.filter((o) => o === "more").length).toBeGreaterThan(0);
			expect(segments(w.db)).toBe(1);
			expect(mergePending(w.db)).toBe(false);
			expect(answers(w.db)).toEqual(answered);
			// Nothing pending: a slice does nothing.
			expect(mergeSlice(w.db, 1000)).toBe("none");
			expect(w.db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
			w.db.run("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 0)");
		} finally {
			w.db.close();
		}
	});

	test("a sync that loads no new sessions through the worker does not mark it", () => {
		const w = world(1);
		try {
			while (mergeSlice(w.db, 1000) === "more") {}
			expect(mergePending(w.db)).toBe(false);
			w.add(3);
			syncIndex(w.db, { sourceDirs: w.sourceDirs, pipeline: "never" });
			expect(mergePending(w.db)).toBe(false);
			syncIndex(w.db, { sourceDirs: w.sourceDirs, pipeline: "always" });
			expect(mergePending(w.db)).toBe(false); // nothing new to load
			w.add(3);
			syncIndex(w.db, { sourceDirs: w.sourceDirs, pipeline: "always" });
			expect(mergePending(w.db)).toBe(true);
		} finally {
			w.db.close();
		}
	});

	test("the scrub after a removed session merges everything and clears the mark", () => {
		const w = world(3);
		try {
			expect(mergePending(w.db)).toBe(true);
			rmSync(w.files[0]!);
			const report = syncIndex(w.db, { sourceDirs: w.sourceDirs });
			expect(report.sessions.removed).toBe(1);
			expect(mergePending(w.db)).toBe(false);
			expect(segments(w.db)).toBe(1);
		} finally {
			w.db.close();
		}
	});

	test("`status` says when segments are to be merged; `index --merge` merges them now", () => {
		const w = world(4);
		w.db.close();
		const flags = ["--index", w.indexPath];
		const status = runCli(w.layout, ["status", "--json", ...flags]).json<{ mergePending: boolean }>();
		expect(status.mergePending).toBe(true);
		expect(runCli(w.layout, ["status", ...flags]).stdout).toContain("segments to merge");
		const merged = runCli(w.layout, ["index", "--merge", "--json", ...flags]);
		expect(merged.exitCode).toBe(0);
		expect(merged.json<{ merge: { outcome: string; ms: number } }>().merge.outcome).toBe("merged");
		expect(runCli(w.layout, ["status", "--json", ...flags]).json<{ mergePending: boolean }>().mergePending).toBe(false);
		expect(runCli(w.layout, ["status", ...flags]).stdout).not.toContain("segments to merge");
		const db = openIndex(w.indexPath);
		try {
			expect(segments(db)).toBe(1);
		} finally {
			db.close();
		}
		expect(runCli(w.layout, ["index", "--merge", ...flags]).stdout).toContain("merged: the full-text index into one segment");
	});

	test("the tool server merges after a turn, with no further request", async () => {
		const w = world(4);
		w.db.close();
		const db = openIndex(w.indexPath);
		const settings = resolveSettings({ sessionDirs: [w.layout.sessionsDir], cwd: w.layout.root, env: isolatedEnv(w.layout), indexPath: w.indexPath });
		const server = new StdioServer({
			db,
			settings,
			version: "test",
			launch: { root: null, cwd: w.layout.root, sessionId: null, sessionFile: null },
			write: () => {},
			log: () => {},
			mergeSliceMs: 0,
		});
		try {
			expect(mergePending(db)).toBe(true);
			expect(segments(db)).toBeGreaterThan(1);
			server.handleFrame(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {} } }));
			server.handleFrame(JSON.stringify({ jsonrpc: "2.0", method: SYNC_NOTIFICATION }));
			const deadline = Date.now() + 20_000;
			while (mergePending(db) && Date.now() < deadline) await Bun.sleep(50);
			expect(mergePending(db)).toBe(false);
			expect(segments(db)).toBe(1);
		} finally {
			server.close();
			db.close();
		}
	});

	test("a command-line server on its own (`serve --socket`) merges after it starts, with no command", async () => {
		const w = world(4);
		w.db.close();
		const reader = new Database(w.indexPath, { readonly: true });
		const proc = Bun.spawn([process.execPath, MAIN, "serve", "--socket", "--index", w.indexPath, "--sessions-dir", w.layout.sessionsDir], {
			cwd: w.layout.root,
			env: isolatedEnv(w.layout),
			stdout: "ignore",
			stderr: "pipe",
		});
		try {
			expect(mergePending(reader)).toBe(true);
			expect(segments(reader)).toBeGreaterThan(1);
			const deadline = Date.now() + 30_000;
			while (mergePending(reader) && Date.now() < deadline) await Bun.sleep(100);
			expect(mergePending(reader)).toBe(false);
			expect(segments(reader)).toBe(1);
		} finally {
			proc.kill("SIGTERM");
			await proc.exited;
			reader.close();
		}
	});
});
