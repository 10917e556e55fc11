/**
 * Indexer rules on real files: torn tails, malformed lines, replacement, truncation, in-place
 * title-slot rewrites, keep-last-good on unparseable changes, removal only when a file is
 * confirmed gone, sync report counts, no-op cost, and the read-only guarantee.
 */
import type { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import {
	appendFileSync,
	chmodSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	renameSync,
	rmSync,
	statSync,
	symlinkSync,
	truncateSync,
	unlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { checkFreshness } from "../src/sync/compare.ts";
import { syncIndex } from "../src/sync/sync.ts";
import type { SourceDir } from "../src/source/discover.ts";
import { openIndex } from "../src/store/db.ts";
import { indexCounts } from "../src/store/status.ts";
import { cleanupTempDirs, copyIntoSessions, dumpIndex, legacyFixture, makeTempDir, piFixture, snapshotTree } from "./helpers/temp.ts";

afterAll(cleanupTempDirs);

interface Env {
	dir: string;
	sessions: string;
	/** `<sessions>/--work-demo-app--` */
	sub: string;
	sources: SourceDir[];
	db: Database;
	sync: () => ReturnType<typeof syncIndex>;
	/** Number of FTS rows matching a query. */
	hits: (query: string) => number;
	events: (sessionId?: string) => { entry_id: string; session_id: string }[];
	/** Dump of a fresh index built from the files as they are now. */
	freshDump: () => ReturnType<typeof dumpIndex>;
	close: () => void;
}

function setup(files: string[] = []): Env {
	const dir = makeTempDir("pi-events-idx-");
	const sessions = join(dir, "sessions");
	const sub = join(sessions, "--work-demo-app--");
	mkdirSync(sub, { recursive: true });
	for (const f of files) copyIntoSessions(sessions, f);
	const sources: SourceDir[] = [{ path: sessions, origin: "flag" }];
	const db = openIndex(join(dir, "index.db"));
	return {
		dir,
		sessions,
		sub,
		sources,
		db,
		sync: () => syncIndex(db, { sourceDirs: sources }),
		hits: (query) => (db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH ?1").get(query) as { n: number }).n,
		events: (sessionId) =>
			db
				.query(
					`SELECT e.entry_id, s.session_id FROM events e JOIN sessions s ON s.session_key = e.session_key
					 WHERE ?1 IS NULL OR s.session_id = ?1 ORDER BY s.session_id, e.seq`,
				)
				.all(sessionId ?? null) as { entry_id: string; session_id: string }[],
		freshDump: () => {
			const fresh = openIndex(":memory:");
			try {
				syncIndex(fresh, { sourceDirs: sources });
				return dumpIndex(fresh);
			} finally {
				fresh.close();
			}
		},
		close: () => db.close(),
	};
}

const fileRow = (db: Database, path: string) =>
	db.query("SELECT status, problem, diagnostics, durable_end, size FROM files WHERE path = ?1").get(path) as {
		status: string;
		problem: string | null;
		diagnostics: number;
		durable_end: number;
		size: number;
	} | null;

/** Make sure the next write is seen as a change even on coarse-mtime filesystems. */
function bumpMtime(path: string, seconds = 5): void {
	const st = statSync(path);
	utimesSync(path, st.atime, new Date(st.mtimeMs + seconds * 1000));
}

describe("torn tail", () => {
	test("a torn last line is not indexed until its newline arrives, then it is appended at its true offset", () => {
		const src = legacyFixture("torn-tail");
		const env = setup([src]);
		try {
			const path = join(env.sub, basename(src));
			const bytes = readFileSync(path);
			const tornStart = bytes.lastIndexOf(0x0a) + 1;
			expect(tornStart).toBeLessThan(bytes.length);

			const r1 = env.sync();
			expect(r1.sessions.new).toBe(1);
			expect(r1.diagnosticCount).toBe(0);
			expect(env.events().map((e) => e.entry_id)).toEqual(["u1", "a1", "u2"]);
			expect(env.hits('"torn partial marker"')).toBe(0);
			expect(fileRow(env.db, path)!.durable_end).toBe(tornStart);

			// More bytes of the same line, still no newline: still nothing.
			appendFileSync(path, " and more");
			const r2 = env.sync();
			expect(r2.eventsAdded).toBe(0);
			expect(r2.diagnosticCount).toBe(0);
			expect(env.events().length).toBe(3);

			appendFileSync(path, '"}],"stopReason":"stop"}}\n');
			const r3 = env.sync();
			expect(r3.sessions).toMatchObject({ appended: 1, rebuilt: 0, new: 0 });
			expect(r3.eventsAdded).toBe(1);
			expect(r3.bytesRead).toBe(statSync(path).size - tornStart);
			expect(env.events().map((e) => e.entry_id)).toEqual(["u1", "a1", "u2", "a2"]);
			expect(env.hits('"torn partial marker"')).toBe(1);
			const a2 = env.db.query("SELECT byte_offset, line FROM events WHERE entry_id = 'a2'").get() as { byte_offset: number; line: number };
			expect(a2).toEqual({ byte_offset: tornStart, line: 5 });
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});
});

describe("malformed lines", () => {
	test("a malformed middle line is a counted diagnostic with file and byte offset; later lines are indexed", () => {
		const src = legacyFixture("malformed-middle");
		const env = setup([src]);
		try {
			const path = join(env.sub, basename(src));
			const text = readFileSync(path, "utf8");
			const lines = text.split("\n");
			const badLine = lines.findIndex((l) => l.includes('"bad1"'));
			const badOffset = Buffer.byteLength(lines.slice(0, badLine).join("\n")) + 1;

			const r = env.sync();
			expect(r.diagnosticCount).toBe(1);
			expect(r.diagnostics).toHaveLength(1);
			expect(r.diagnostics[0]).toMatchObject({ file: path, offset: badOffset, line: badLine + 1, kind: "malformed-json" });
			expect(fileRow(env.db, path)).toMatchObject({ status: "indexed", diagnostics: 1 });
			expect(env.events().map((e) => e.entry_id)).toEqual(["u1", "a1", "u2", "a2"]);
			expect(env.hits('"after malformed marker"')).toBe(1);
			expect(env.hits('"broken line marker"')).toBe(0);
			expect(indexCounts(env.db).diagnostics).toBe(1);

			// A no-op sync does not count it again; an append keeps the earlier count.
			expect(env.sync().diagnosticCount).toBe(0);
			appendFileSync(path, "{oops\n");
			const r2 = env.sync();
			expect(r2.sessions.appended).toBe(1);
			expect(r2.diagnosticCount).toBe(1);
			expect(r2.diagnostics[0]).toMatchObject({ file: path, offset: Buffer.byteLength(text), line: lines.length, kind: "malformed-json" });
			expect(fileRow(env.db, path)!.diagnostics).toBe(2);
		} finally {
			env.close();
		}
	});

	test("duplicate ids are diagnostics and get derived ids; nothing is silently dropped", () => {
		const env = setup([legacyFixture("duplicate-ids")]);
		try {
			const r = env.sync();
			expect(r.diagnostics.map((d) => d.kind)).toEqual(["duplicate-id"]);
			const ids = env.events().map((e) => e.entry_id);
			expect(ids).toContain("dup1");
			expect(ids).toContain("dup1~dup1");
			expect(env.hits('"dup second marker"')).toBe(1);
			expect(env.hits('"dup first marker"')).toBe(1);
		} finally {
			env.close();
		}
	});

	test("files without a header are rejected, reported, and produce no session", () => {
		const env = setup([legacyFixture("no-header"), legacyFixture("empty")]);
		try {
			const r = env.sync();
			expect(r.sessions).toMatchObject({ new: 0, rejected: 2 });
			expect(env.events()).toEqual([]);
			expect(env.hits('"no header marker"')).toBe(0);
			const counts = indexCounts(env.db);
			expect(counts).toMatchObject({ files: 2, sessions: 0, rejectedFiles: 2 });
			expect(r.diagnostics.map((d) => d.kind)).toEqual(["missing-header"]);
		} finally {
			env.close();
		}
	});

	test("blank and malformed lines before the header are skipped like pi does: the file is still a session", () => {
		const env = setup();
		try {
			const path = join(env.sub, "late-header.jsonl");
			const body = readFileSync(piFixture("retry").path);
			writeFileSync(path, Buffer.concat([Buffer.from("\n{garbage\n"), body]));
			const r = env.sync();
			expect(r.sessions).toMatchObject({ new: 1, rejected: 0 });
			expect(r.diagnostics.map((d) => ({ kind: d.kind, line: d.line, offset: d.offset }))).toEqual([{ kind: "malformed-json", line: 2, offset: 1 }]);
			expect(env.events().length).toBe(piFixture("retry").notes.entryCount);
		} finally {
			env.close();
		}
	});

	test("an oversized line is skipped with a diagnostic (measured, not parsed) and later lines are indexed", () => {
		const env = setup();
		try {
			const path = join(env.sub, "big.jsonl");
			const header = JSON.stringify({ type: "session", version: 3, id: "big-line-session", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/w" });
			const huge = `{"type":"message","id":"h","parentId":null,"message":{"role":"user","content":"${"z".repeat(33 * 1024 * 1024)}"}}`;
			const after = JSON.stringify({ type: "message", id: "u2", parentId: null, message: { role: "user", content: "after the giant line omega" } });
			writeFileSync(path, `${header}\n${huge}\n${after}\n`);
			const r = env.sync();
			expect(r.diagnostics.map((d) => ({ kind: d.kind, line: d.line, offset: d.offset }))).toEqual([
				{ kind: "oversized-line", line: 2, offset: Buffer.byteLength(header) + 1 },
			]);
			expect(env.events().map((e) => e.entry_id)).toEqual(["u2"]);
			expect(env.hits("omega")).toBe(1);
		} finally {
			env.close();
		}
	});
});

describe("rewrites and replacement", () => {
	test("a file replaced by another session (new inode) is rebuilt: nothing of the old session remains", () => {
		const a = piFixture("basic");
		const b = piFixture("retry");
		const env = setup([a.path]);
		try {
			const path = join(env.sub, basename(a.path));
			env.sync();
			expect(env.hits('"SIGTERM"') + env.hits('"staging database"')).toBeGreaterThan(0);
			const inode = statSync(path).ino;
			writeFileSync(`${path}.tmp`, readFileSync(b.path));
			renameSync(`${path}.tmp`, path);
			expect(statSync(path).ino).not.toBe(inode);
			const r = env.sync();
			expect(r.sessions).toMatchObject({ rebuilt: 1, appended: 0, new: 0, removed: 0 });
			const sessions = env.db.query("SELECT session_id FROM sessions").all() as { session_id: string }[];
			expect(sessions).toEqual([{ session_id: b.sessionId }]);
			expect(env.events(a.sessionId)).toEqual([]);
			expect(env.hits('"staging database"')).toBe(0);
			expect(env.hits('"retry error marker"')).toBe(1);
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});

	test("a file overwritten in place by a longer, different session (same inode) is rebuilt, not appended", () => {
		const a = piFixture("retry");
		const b = piFixture("basic");
		const env = setup([a.path]);
		try {
			const path = join(env.sub, basename(a.path));
			env.sync();
			const inode = statSync(path).ino;
			writeFileSync(path, readFileSync(b.path));
			expect(statSync(path).ino).toBe(inode);
			const r = env.sync();
			expect(r.sessions).toMatchObject({ rebuilt: 1, appended: 0 });
			expect((env.db.query("SELECT session_id FROM sessions").all() as { session_id: string }[]).map((s) => s.session_id)).toEqual([b.sessionId]);
			expect(env.hits('"retry error marker"')).toBe(0);
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});

	test("truncation is rebuilt: removed entries leave the index, including their postings", () => {
		const fx = piFixture("basic");
		const env = setup([fx.path]);
		try {
			const path = join(env.sub, basename(fx.path));
			env.sync();
			expect(env.events().length).toBe(fx.notes.entryCount);
			const text = readFileSync(path, "utf8");
			const keep = text.split("\n").slice(0, 6).join("\n") + "\n";
			truncateSync(path, Buffer.byteLength(keep));
			const r = env.sync();
			expect(r.sessions).toMatchObject({ rebuilt: 1, appended: 0 });
			expect(env.events().length).toBe(5);
			expect(env.hits('"Auth refactor"')).toBe(0);
			expect(env.hits('"ECONNREFUSED"')).toBe(0);
			const s = env.db.query("SELECT entry_count, leaf_entry, name FROM sessions").get() as Record<string, unknown>;
			expect(s).toEqual({ entry_count: 5, leaf_entry: fx.notes.readResult, name: null });
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});

	test("truncation then regrowth past the old size is still a rebuild (the indexed prefix changed)", () => {
		const fx = piFixture("basic");
		const other = piFixture("branched");
		const env = setup([fx.path]);
		try {
			const path = join(env.sub, basename(fx.path));
			env.sync();
			// Same header, then entries of another session: longer than before, different prefix tail.
			const head = readFileSync(path, "utf8").split("\n").slice(0, 2).join("\n") + "\n";
			const rest = readFileSync(other.path, "utf8").split("\n").slice(1).join("\n");
			writeFileSync(
				path,
				head +
					rest +
					rest.replace(/"id":"/g, '"id":"x').replace(/"parentId":"/g, '"parentId":"x') +
					readFileSync(fx.path, "utf8").split("\n").slice(2).join("\n"),
			);
			const r = env.sync();
			expect(r.sessions.rebuilt).toBe(1);
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});

	test("an in-place rewrite of the oh-my-pi title slot (first 256 bytes, same size) is detected and rebuilt", () => {
		const src = legacyFixture("omp-title");
		const env = setup([src]);
		try {
			const path = join(env.sub, basename(src));
			env.sync();
			const before = readFileSync(path);
			const slotEnd = before.indexOf(0x0a);
			expect(slotEnd).toBe(255);
			const slot = JSON.parse(before.subarray(0, slotEnd).toString("utf8"));
			expect(JSON.parse((env.db.query("SELECT parser_state FROM files").get() as { parser_state: string }).parser_state).slotTitle).toBe(slot.title);

			const newTitle = "Renamed session title";
			const rewritten = { ...slot, title: newTitle, pad: "" };
			const base = Buffer.byteLength(JSON.stringify(rewritten));
			rewritten.pad = " ".repeat(slotEnd - base);
			const newSlot = Buffer.from(JSON.stringify(rewritten));
			expect(newSlot.length).toBe(slotEnd);
			const after = Buffer.concat([newSlot, before.subarray(slotEnd)]);
			expect(after.length).toBe(before.length);
			writeFileSync(path, after); // same inode, same size
			bumpMtime(path);

			const r = env.sync();
			expect(r.sessions).toMatchObject({ rebuilt: 1, appended: 0, unchanged: 0 });
			const state = JSON.parse((env.db.query("SELECT parser_state FROM files").get() as { parser_state: string }).parser_state);
			expect(state.slotTitle).toBe(newTitle);
			expect(state.header.title).toBe(newTitle);
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});

	test("a title-slot rewrite together with an append is a rebuild, not an append", () => {
		const src = legacyFixture("omp-title");
		const env = setup([src]);
		try {
			const path = join(env.sub, basename(src));
			env.sync();
			const before = readFileSync(path);
			const slotEnd = before.indexOf(0x0a);
			const slot = before.subarray(0, slotEnd).toString("utf8").replace("Cron double-run fix", "Cron DOUBLE-RUN fix");
			expect(Buffer.byteLength(slot)).toBe(slotEnd);
			const extra = JSON.stringify({
				type: "message",
				id: "ou3",
				parentId: "oa2",
				timestamp: "2026-02-10T08:07:00.000Z",
				message: { role: "user", content: "appended after title rewrite" },
			});
			writeFileSync(path, Buffer.concat([Buffer.from(slot), before.subarray(slotEnd), Buffer.from(`${extra}\n`)]));
			const r = env.sync();
			expect(r.sessions).toMatchObject({ rebuilt: 1, appended: 0 });
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});
});

describe("keep last known-good", () => {
	test("a changed file whose header line became garbage keeps its rows and reports the problem", () => {
		const fx = piFixture("basic");
		const env = setup([fx.path]);
		try {
			const path = join(env.sub, basename(fx.path));
			env.sync();
			const good = dumpIndex(env.db);
			const original = readFileSync(path);
			const nl = original.indexOf(0x0a);
			writeFileSync(path, Buffer.concat([Buffer.from("this is not json at all"), original.subarray(nl)]));

			const r = env.sync();
			expect(r.sessions).toMatchObject({ keptLastGood: 1, rebuilt: 0, removed: 0, rejected: 0 });
			expect(r.problems.some((p) => p.includes(path))).toBe(true);
			const now = dumpIndex(env.db);
			expect(now.events).toEqual(good.events);
			expect(now.fragments).toEqual(good.fragments);
			expect(now.sessions).toEqual(good.sessions);
			expect(now.fts).toEqual(good.fts);
			expect(now.fts_terms).toEqual(good.fts_terms);
			expect(now.event_files).toEqual(good.event_files);
			expect(fileRow(env.db, path)).toMatchObject({ status: "failed" });
			expect(fileRow(env.db, path)!.problem).toBeTruthy();
			expect(indexCounts(env.db).failedFiles).toBe(1);

			// Still broken on the next sync: still kept, still reported.
			const r2 = env.sync();
			expect(r2.sessions.keptLastGood).toBe(1);
			expect(dumpIndex(env.db).events).toEqual(good.events);

			// Fixed: rebuilt, healthy again.
			writeFileSync(path, original);
			const r3 = env.sync();
			expect(r3.sessions.rebuilt).toBe(1);
			expect(fileRow(env.db, path)).toMatchObject({ status: "indexed", problem: null });
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});

	test("a file observed empty mid-rewrite (truncated to 0) keeps its rows", () => {
		const fx = piFixture("branched");
		const env = setup([fx.path]);
		try {
			const path = join(env.sub, basename(fx.path));
			env.sync();
			const good = dumpIndex(env.db).events;
			truncateSync(path, 0);
			const r = env.sync();
			expect(r.sessions.keptLastGood).toBe(1);
			expect(dumpIndex(env.db).events).toEqual(good);
		} finally {
			env.close();
		}
	});
});

describe("removal only when confirmed gone", () => {
	test("deleting the file removes its session and every row of it", () => {
		const a = piFixture("basic");
		const b = piFixture("branched");
		const env = setup([a.path, b.path]);
		try {
			env.sync();
			unlinkSync(join(env.sub, basename(a.path)));
			const r = env.sync();
			expect(r.sessions).toMatchObject({ removed: 1, unchanged: 1 });
			expect(env.events(a.sessionId)).toEqual([]);
			expect(env.events(b.sessionId).length).toBe(b.notes.entryCount);
			expect(indexCounts(env.db)).toMatchObject({ files: 1, sessions: 1 });
			expect(env.hits('"Auth refactor"')).toBe(0);
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});

	test("an unreadable session subdirectory keeps its sessions (and the simulation really fails to read)", () => {
		const a = piFixture("basic");
		const env = setup([a.path]);
		try {
			env.sync();
			const good = dumpIndex(env.db);
			// chmod 000 does not deny root: probe it, and fall back to a symlink loop (ELOOP).
			let restore: () => void;
			chmodSync(env.sub, 0o000);
			let denied = false;
			try {
				readdirSync(env.sub);
			} catch {
				denied = true;
			}
			if (denied) {
				restore = () => chmodSync(env.sub, 0o755);
			} else {
				chmodSync(env.sub, 0o755);
				const moved = join(env.dir, "moved-out-of-sources");
				renameSync(env.sub, moved);
				symlinkSync(env.sub, env.sub); // a link to itself
				restore = () => {
					unlinkSync(env.sub);
					renameSync(moved, env.sub);
				};
			}
			try {
				expect(() => readdirSync(env.sub)).toThrow();
				const r = env.sync();
				expect(r.sessions.removed).toBe(0);
				expect(r.problems.some((p) => p.includes(basename(a.path)) || p.includes(env.sub))).toBe(true);
				expect(dumpIndex(env.db).events).toEqual(good.events);
				expect(dumpIndex(env.db).fts).toEqual(good.fts);
			} finally {
				restore();
			}
			// Readable again and unchanged: nothing to do.
			const r2 = env.sync();
			expect(r2.sessions).toMatchObject({ removed: 0, unchanged: 1 });
		} finally {
			env.close();
		}
	});

	test("a missing source directory (unmounted archive) keeps its sessions", () => {
		const a = piFixture("basic");
		const env = setup([a.path]);
		try {
			// A flat file directly in the source root as well as one in a project subdir.
			copyIntoSessions(env.sessions, piFixture("retry").path, { flat: true });
			env.sync();
			const good = dumpIndex(env.db);
			expect(good.sessions).toHaveLength(2);
			renameSync(env.sessions, `${env.sessions}.unmounted`);
			const r = env.sync();
			expect(r.sessions.removed).toBe(0);
			expect(dumpIndex(env.db).events).toEqual(good.events);
			renameSync(`${env.sessions}.unmounted`, env.sessions);
			expect(env.sync().sessions).toMatchObject({ removed: 0, unchanged: 2 });
		} finally {
			env.close();
		}
	});

	test("a source directory replaced by a non-directory keeps its sessions and reports the error", () => {
		const a = piFixture("basic");
		const env = setup([a.path]);
		try {
			env.sync();
			const good = dumpIndex(env.db);
			renameSync(env.sessions, `${env.sessions}.away`);
			writeFileSync(env.sessions, "not a directory");
			const r = env.sync();
			expect(r.sessions.removed).toBe(0);
			expect(r.problems.some((p) => p.includes("ENOTDIR"))).toBe(true);
			expect(dumpIndex(env.db).events).toEqual(good.events);
		} finally {
			env.close();
		}
	});

	test("deleting a whole project subdirectory (from a source root that reads fine) removes its sessions", () => {
		const a = piFixture("basic");
		const env = setup([a.path]);
		try {
			const other = copyIntoSessions(env.sessions, piFixture("retry").path, { cwd: "/work/demo/app-extra" });
			env.sync();
			rmSync(env.sub, { recursive: true });
			const r = env.sync();
			expect(r.sessions.removed).toBe(1);
			expect(env.events(a.sessionId)).toEqual([]);
			expect(env.events(piFixture("retry").sessionId).length).toBeGreaterThan(0);
			expect(statSync(other).isFile()).toBe(true);
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});

	test("files indexed from a source dir that is not configured in this sync are left alone", () => {
		const env = setup([piFixture("basic").path]);
		try {
			env.sync();
			const other = makeTempDir();
			const r = syncIndex(env.db, { sourceDirs: [{ path: other, origin: "flag" }] });
			expect(r.sessions.removed).toBe(0);
			expect(indexCounts(env.db).sessions).toBe(1);
		} finally {
			env.close();
		}
	});
});

describe("sync report", () => {
	test("counts new / appended / rebuilt / removed / unchanged correctly", () => {
		const fx = {
			appendTo: piFixture("branched"),
			truncate: piFixture("basic"),
			remove: piFixture("retry"),
			keep: piFixture("multi-root"),
			later: piFixture("fork-parent"),
		};
		const env = setup([fx.appendTo.path, fx.truncate.path, fx.remove.path, fx.keep.path]);
		try {
			const r1 = env.sync();
			expect(r1.sessions).toEqual({ new: 4, appended: 0, rebuilt: 0, removed: 0, unchanged: 0, keptLastGood: 0, rejected: 0, pending: 0 });
			const total = [fx.appendTo, fx.truncate, fx.remove, fx.keep].reduce((n, f) => n + f.notes.entryCount, 0);
			expect(r1.eventsAdded).toBe(total);
			expect(r1.complete).toBe(true);
			expect(r1.fragmentsAdded).toBe(indexCounts(env.db).fragments);

			const appendPath = join(env.sub, basename(fx.appendTo.path));
			appendFileSync(
				appendPath,
				`${JSON.stringify({ type: "message", id: "zz1", parentId: fx.appendTo.notes.leafId, timestamp: "2026-11-03T11:00:00.000Z", message: { role: "user", content: "appended question" } })}\n`,
			);
			const truncPath = join(env.sub, basename(fx.truncate.path));
			truncateSync(truncPath, Buffer.byteLength(readFileSync(truncPath, "utf8").split("\n").slice(0, 4).join("\n") + "\n"));
			unlinkSync(join(env.sub, basename(fx.remove.path)));
			copyIntoSessions(env.sessions, fx.later.path);

			const r2 = env.sync();
			expect(r2.sessions).toEqual({ new: 1, appended: 1, rebuilt: 1, removed: 1, unchanged: 1, keptLastGood: 0, rejected: 0, pending: 0 });
			expect(r2.eventsAdded).toBe(1 + 3 + fx.later.notes.entryCount);
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});

	test("a no-op sync reads 0 bytes and changes nothing", () => {
		const env = setup([piFixture("basic").path, piFixture("big-output").path, legacyFixture("torn-tail"), legacyFixture("no-header")]);
		try {
			env.sync();
			const before = dumpIndex(env.db);
			const r = env.sync();
			expect(r.bytesRead).toBe(0);
			expect(r.eventsAdded).toBe(0);
			expect(r.fragmentsAdded).toBe(0);
			expect(r.diagnosticCount).toBe(0);
			expect(r.sessions).toEqual({ new: 0, appended: 0, rebuilt: 0, removed: 0, unchanged: 4, keptLastGood: 0, rejected: 0, pending: 0 });
			expect(dumpIndex(env.db)).toEqual(before);
			expect(checkFreshness(env.db, env.sources)).toEqual([{ dir: env.sessions, origin: "flag", readable: true, files: 4, changed: 0, missing: 0, kept: 0 }]);
		} finally {
			env.close();
		}
	});

	test("a session first seen before its header was complete counts as new when it first enters the index", () => {
		const fx = piFixture("retry");
		const env = setup();
		try {
			const path = join(env.sub, basename(fx.path));
			const bytes = readFileSync(fx.path);
			writeFileSync(path, bytes.subarray(0, 20)); // pi is still writing the header line
			const r1 = env.sync();
			expect(r1.sessions.new).toBe(0);
			expect(indexCounts(env.db).sessions).toBe(0);
			writeFileSync(path, bytes);
			const r2 = env.sync();
			expect(indexCounts(env.db).sessions).toBe(1);
			expect(r2.sessions).toMatchObject({ new: 1, rebuilt: 0 });
		} finally {
			env.close();
		}
	});

	test("deleting a file that never was a session does not count as a removed session", () => {
		const env = setup([legacyFixture("no-header"), piFixture("retry").path]);
		try {
			env.sync();
			unlinkSync(join(env.sub, "no-header.jsonl"));
			const r = env.sync();
			expect(indexCounts(env.db).files).toBe(1);
			expect(r.sessions).toMatchObject({ removed: 0, unchanged: 1 });
		} finally {
			env.close();
		}
	});

	test("a time budget that runs out leaves files pending and the sync incomplete; the next sync finishes", () => {
		const env = setup([piFixture("basic").path, piFixture("retry").path]);
		try {
			const r1 = syncIndex(env.db, { sourceDirs: env.sources, budgetMs: -1 });
			expect(r1.complete).toBe(false);
			expect(r1.sessions).toMatchObject({ new: 0, pending: 2 });
			expect(indexCounts(env.db)).toMatchObject({ sessions: 0, lastSync: { complete: false } });
			const r2 = env.sync();
			expect(r2.complete).toBe(true);
			expect(r2.sessions).toMatchObject({ new: 2, pending: 0 });
			expect(indexCounts(env.db).lastSync?.complete).toBe(true);
		} finally {
			env.close();
		}
	});

	test("an append reads only the new bytes", () => {
		const fx = piFixture("big-output");
		const env = setup([fx.path]);
		try {
			const path = join(env.sub, basename(fx.path));
			const r1 = env.sync();
			expect(r1.bytesRead).toBe(statSync(path).size);
			const line = `${JSON.stringify({ type: "message", id: "new1", parentId: fx.notes.leafId, timestamp: "2026-11-07T17:00:00.000Z", message: { role: "user", content: "short" } })}\n`;
			appendFileSync(path, line);
			const r2 = env.sync();
			expect(r2.sessions.appended).toBe(1);
			expect(r2.bytesRead).toBe(Buffer.byteLength(line));
		} finally {
			env.close();
		}
	});
});

describe("read-only", () => {
	test("the sessions directory is byte-identical (contents, listings, mtimes, inodes) after indexing", () => {
		const env = setup([
			piFixture("basic").path,
			piFixture("big-output").path,
			legacyFixture("omp-title"),
			legacyFixture("torn-tail"),
			legacyFixture("malformed-middle"),
			legacyFixture("v1"),
			legacyFixture("no-header"),
		]);
		try {
			copyIntoSessions(env.sessions, piFixture("retry").path, { flat: true });
			const before = snapshotTree(env.sessions);
			env.sync();
			env.sync();
			checkFreshness(env.db, env.sources);
			const after = snapshotTree(env.sessions);
			expect(after).toEqual(before);
			expect(Object.keys(after).length).toBe(Object.keys(before).length);
		} finally {
			env.close();
		}
	});
});

describe("determinism", () => {
	test("the index does not depend on the indexer's working directory (relative header cwd)", () => {
		const env = setup();
		const original = process.cwd();
		try {
			const header = { type: "session", version: 3, id: "relative-cwd-session", timestamp: "2026-01-01T00:00:00.000Z", cwd: "relative/project" };
			const user = { type: "message", id: "u1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "hello" } };
			writeFileSync(join(env.sub, "relative.jsonl"), `${JSON.stringify(header)}\n${JSON.stringify(user)}\n`);
			const dumps = ["a", "b"].map((name) => {
				const cwd = join(env.dir, `cwd-${name}`);
				mkdirSync(cwd);
				process.chdir(cwd);
				const db = openIndex(":memory:");
				try {
					syncIndex(db, { sourceDirs: env.sources });
					return dumpIndex(db);
				} finally {
					db.close();
					process.chdir(original);
				}
			});
			const session = dumps[0]!.sessions![0] as { cwd: string; cwd_real: string | null };
			expect(session.cwd).toBe("relative/project");
			// A relative cwd names no directory: it must not be resolved against wherever the indexer ran.
			expect(String(session.cwd_real ?? "")).not.toContain(env.dir);
			expect(dumps[1]).toEqual(dumps[0]!);
		} finally {
			process.chdir(original);
			env.close();
		}
	});

	test("two fresh indexes of the same files are identical", () => {
		const env = setup([piFixture("basic").path, piFixture("compaction").path, legacyFixture("v1"), legacyFixture("duplicate-ids")]);
		try {
			env.sync();
			expect(dumpIndex(env.db)).toEqual(env.freshDump());
			expect(env.freshDump()).toEqual(env.freshDump());
		} finally {
			env.close();
		}
	});
});
