/**
 * Freshness at a cost that grows with what changed (sync/check.ts), on real files in temp dirs:
 * the guarantees of the incremental check, each shown against a check that would miss it.
 *
 * - a new session file, in a known or a new workspace directory, is seen by the next sync;
 * - a removed one leaves the index at the next sync;
 * - an append to a recently written session, or to the caller's own session, is seen by the next sync;
 * - an append to a long-idle session is seen within the bound: the idle slices coming round, or
 *   the full check once the last one is older than `fullEveryMs`;
 * - the answer says what was checked and when every file was last checked;
 * - a sync that changed nothing writes nothing to the index, unless its progress is due;
 * and the same through the compiled binary (`search`, `search --no-sync`, `index`, `index --full`).
 */
import type { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openIndex } from "../../src/store/db.ts";
import type { CheckPolicy } from "../../src/sync/check.ts";
import { type SyncReport, syncIndex } from "../../src/sync/sync.ts";
import { cleanupTempDirs, encodeCwd, isolatedEnv, makeAgentLayout, makeTempDir } from "../helpers/temp.ts";
import { compiledBinary, RawServer } from "../server/harness.ts";

afterAll(cleanupTempDirs);

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

function header(id: string, cwd: string): string {
	return JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-10-01T10:00:00.000Z", cwd });
}
function entry(id: string, parentId: string | null, text: string): string {
	return JSON.stringify({
		type: "message",
		id,
		parentId,
		timestamp: "2026-10-01T10:00:05.000Z",
		message: { role: "user", content: [{ type: "text", text }], timestamp: 1_790_000_000_000 },
	});
}

/** Make a path look untouched for `ageMs` (files and directories). */
function age(path: string, ageMs: number): void {
	const t = new Date(Date.now() - ageMs);
	utimesSync(path, t, t);
}

interface World {
	sessions: string;
	db: Database;
	sync(policy?: CheckPolicy): SyncReport;
	/** Write a session of `cwd` with one entry holding `word`; returns its path. */
	session(cwd: string, id: string, word: string): string;
	append(path: string, id: string, word: string): void;
	/** Age every file and directory (as if history were old), so only what changes later is recent. */
	ageAll(ms: number): void;
	hits(word: string): number;
}

function world(): World {
	const dir = makeTempDir("pi-events-fresh-");
	const sessions = join(dir, "sessions");
	mkdirSync(sessions);
	const db = openIndex(join(dir, "index.db"));
	const sourceDirs = [{ path: sessions, origin: "flag" as const }];
	const w: World = {
		sessions,
		db,
		sync: (policy = {}) => syncIndex(db, { sourceDirs, check: policy }),
		session(cwd, id, word) {
			const sub = join(sessions, encodeCwd(cwd));
			mkdirSync(sub, { recursive: true });
			const path = join(sub, `2026-10-01T10-00-00-000Z_${id}.jsonl`);
			writeFileSync(path, `${header(id, cwd)}\n${entry(`${id}-1`, null, `first ${word}`)}\n`);
			return path;
		},
		append(path, id, word) {
			appendFileSync(path, `${entry(id, null, `appended ${word}`)}\n`);
		},
		ageAll(ms) {
			for (const sub of readdirSync(sessions)) {
				for (const f of readdirSync(join(sessions, sub))) age(join(sessions, sub, f), ms);
				age(join(sessions, sub), ms);
			}
			age(sessions, ms);
		},
		hits: (word) => (db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH ?1").get(`"${word}"`) as { n: number }).n,
	};
	return w;
}

/** An indexed history of `n` idle sessions (ten days old) in two workspaces, after a full check. */
function idleHistory(n: number): { w: World; paths: string[] } {
	const w = world();
	const paths: string[] = [];
	for (let i = 0; i < n; i++) paths.push(w.session(i % 2 ? "/work/a" : "/work/b", `s${String(i).padStart(3, "0")}`, `word${i}`));
	w.ageAll(10 * DAY);
	const first = w.sync({ mode: "full" });
	expect(first.sessions.new).toBe(n);
	return { w, paths };
}

describe("incremental check: what the next sync sees", () => {
	test("a no-op sync of an idle history is incremental and looks at no file", () => {
		const { w } = idleHistory(6);
		const r = w.sync({ idleSlice: 0 });
		expect(r.check.mode).toBe("incremental");
		expect(r.sessions).toMatchObject({ new: 0, appended: 0, removed: 0, unchanged: 0 });
	});

	test("a new session file in a known workspace directory is seen by the next sync", () => {
		const { w } = idleHistory(6);
		w.session("/work/a", "new-in-a", "freshnewword");
		const r = w.sync({ idleSlice: 0 });
		expect({ mode: r.check.mode, new: r.sessions.new, hits: w.hits("freshnewword") }).toEqual({ mode: "incremental", new: 1, hits: 1 });
	});

	test("a session in a new workspace directory is seen by the next sync", () => {
		const { w } = idleHistory(6);
		w.session("/work/brand-new", "new-ws", "newworkspaceword");
		const r = w.sync({ idleSlice: 0 });
		expect({ mode: r.check.mode, new: r.sessions.new, hits: w.hits("newworkspaceword") }).toEqual({ mode: "incremental", new: 1, hits: 1 });
	});

	test("a removed session file leaves the index at the next sync", () => {
		const { w, paths } = idleHistory(6);
		rmSync(paths[3]!);
		const r = w.sync({ idleSlice: 0 });
		expect({ mode: r.check.mode, removed: r.sessions.removed, hits: w.hits("word3") }).toEqual({ mode: "incremental", removed: 1, hits: 0 });
	});

	test("an append to a recently written session is seen by the next sync", () => {
		const { w } = idleHistory(6);
		const recent = w.session("/work/a", "recent", "recentfirst");
		age(recent, HOUR); // written an hour ago: inside the 24-hour window
		w.sync({ idleSlice: 0 });
		w.append(recent, "recent-2", "recentappendword");
		const r = w.sync({ idleSlice: 0 });
		expect({ mode: r.check.mode, appended: r.sessions.appended, hits: w.hits("recentappendword") }).toEqual({ mode: "incremental", appended: 1, hits: 1 });
	});

	test("an append to the caller's own idle session is seen by the next sync; without the caller, it waits", () => {
		const { w, paths } = idleHistory(6);
		const own = paths[4]!;
		w.append(own, "own-2", "ownappendword");
		// Idle for ten days as far as the index knows, no slice: a check that is not told whose session it is misses it.
		expect(w.sync({ idleSlice: 0 }).sessions.appended).toBe(0);
		expect(w.hits("ownappendword")).toBe(0);
		const r = w.sync({ idleSlice: 0, callerFile: own });
		expect({ mode: r.check.mode, appended: r.sessions.appended, hits: w.hits("ownappendword") }).toEqual({ mode: "incremental", appended: 1, hits: 1 });
	});

	test("an append to a long-idle session is seen once the idle slices come round, and the round moves lastFullCheckAt", () => {
		const { w, paths } = idleHistory(6);
		const before = w.sync({ idleSlice: 0 }).check.lastFullCheckAt!;
		w.append(paths[5]!, "idle-2", "idleappendword");
		const seenAfter: number[] = [];
		let lastFull = before;
		// Each sync records its progress here (by default a sync that changed nothing does so at most every 30 s).
		for (let i = 1; i <= 7 && seenAfter.length === 0; i++) {
			const r = w.sync({ idleSlice: 2, progressEveryMs: 0 });
			if (r.sessions.appended > 0) seenAfter.push(i);
			lastFull = r.check.lastFullCheckAt!;
		}
		// Six files, two per sync: seen within three syncs.
		expect(seenAfter.length).toBe(1);
		expect(seenAfter[0]!).toBeLessThanOrEqual(3);
		expect(w.hits("idleappendword")).toBe(1);
		// The next round (three more syncs at most) ends after the append: every file checked since.
		for (let i = 0; i < 3 && lastFull === before; i++) lastFull = w.sync({ idleSlice: 2, progressEveryMs: 0 }).check.lastFullCheckAt!;
		expect(lastFull).toBeGreaterThan(before);
	});

	test("a sync that changed nothing commits nothing until its progress is due; a full check and a change always record", () => {
		const { w, paths } = idleHistory(6);
		// Another connection sees PRAGMA data_version change exactly when this one commits something.
		const reader = openIndex(join(w.sessions, "..", "index.db"));
		const version = () => (reader.query("PRAGMA data_version").get() as { data_version: number }).data_version;
		const lastSync = () => JSON.parse((w.db.query("SELECT value FROM meta WHERE key = 'last_sync'").get() as { value: string }).value).at as number;
		try {
			const recorded = lastSync();
			let v = version();
			for (let i = 0; i < 3; i++) {
				const r = w.sync({ idleSlice: 2 });
				expect([r.sessions.new, r.sessions.appended, r.sessions.rebuilt, r.sessions.removed]).toEqual([0, 0, 0, 0]);
				expect(version()).toBe(v);
			}
			expect(lastSync()).toBe(recorded);
			// Due (here at once): recorded, cursor and all.
			w.sync({ idleSlice: 2, progressEveryMs: 0 });
			expect(version()).not.toBe(v);
			expect(lastSync()).toBeGreaterThanOrEqual(recorded);
			const cursor = w.db.query("SELECT value FROM meta WHERE key = 'idle_cursor'").get();
			v = version();
			// A change is committed, and its sync records progress too (in one go, not held back).
			w.append(paths[0]!, "rec-2", "recordedappendword");
			const changed = w.sync({ idleSlice: 2, callerFile: paths[0]! });
			expect(changed.sessions.appended).toBe(1);
			expect(version()).not.toBe(v);
			expect(w.db.query("SELECT value FROM meta WHERE key = 'idle_cursor'").get()).not.toEqual(cursor);
			// A full check is recorded even when it changes nothing: the next sync need not repeat it.
			v = version();
			const full = w.sync({ mode: "full" });
			expect(full.sessions.unchanged).toBe(6);
			expect(version()).not.toBe(v);
			expect(w.sync({ idleSlice: 2 }).check.mode).toBe("incremental");
		} finally {
			reader.close();
		}
	});

	test("a sync with nothing to change or record takes no write lock: it answers while another process writes", () => {
		const { w } = idleHistory(6);
		w.sync({ idleSlice: 2, progressEveryMs: 0 });
		// Another connection holds the write lock; this one would fail at once if it asked for it.
		const writer = openIndex(join(w.sessions, "..", "index.db"));
		w.db.run("PRAGMA busy_timeout = 0");
		writer.run("BEGIN IMMEDIATE");
		try {
			for (let i = 0; i < 3; i++) {
				const r = w.sync({ idleSlice: 2 });
				expect([r.sessions.new, r.sessions.appended, r.sessions.removed, r.problems.length]).toEqual([0, 0, 0, 0]);
			}
			// Progress that is due does need the lock: the writer's hold is then an error, not a wait here.
			expect(() => w.sync({ idleSlice: 2, progressEveryMs: 0 })).toThrow("the index is locked by another process");
		} finally {
			writer.run("ROLLBACK");
			writer.close();
		}
	});

	test("an append to a long-idle session is seen by the first sync after the full-check interval", async () => {
		const { w, paths } = idleHistory(6);
		w.append(paths[2]!, "late-2", "lateappendword");
		const soon = w.sync({ idleSlice: 0, fullEveryMs: 1500 });
		expect({ mode: soon.check.mode, appended: soon.sessions.appended }).toEqual({ mode: "incremental", appended: 0 });
		await Bun.sleep(1600);
		const later = w.sync({ idleSlice: 0, fullEveryMs: 1500 });
		expect({ mode: later.check.mode, appended: later.sessions.appended, hits: w.hits("lateappendword") }).toEqual({ mode: "full", appended: 1, hits: 1 });
		expect(later.check.lastFullCheckAt).toBeGreaterThan(Date.now() - 1000);
	});

	test("a query's check never runs the full check: once it is stale, each sync stats a larger idle slice", async () => {
		const { w, paths } = idleHistory(6);
		w.append(paths[5]!, "late-5", "stalesliceword");
		// Queries slice when stale (freshness.ts); progress is recorded by every sync here (by default at most every 30 s).
		const query = { onStale: "slice", idleSlice: 0, staleSlice: 2, fullEveryMs: 1500, progressEveryMs: 0 } as const;
		const fresh = w.sync(query);
		expect({ mode: fresh.check.mode, appended: fresh.sessions.appended }).toEqual({ mode: "incremental", appended: 0 });
		const before = fresh.check.lastFullCheckAt!;
		await Bun.sleep(1600);
		const staleAt = Date.now();
		// Stale: no full check (which would see the append at once), two more files a sync.
		const modes: string[] = [];
		let seenAfter = 0;
		for (let i = 1; i <= 4 && seenAfter === 0; i++) {
			const r = w.sync(query);
			modes.push(r.check.mode);
			if (r.sessions.appended > 0) seenAfter = i;
		}
		expect(modes.every((m) => m === "incremental")).toBeTrue();
		// Six files, two a sync: the sixth is reached by the third.
		expect(seenAfter).toBe(3);
		expect(w.hits("stalesliceword")).toBe(1);
		// The round that began with the stale slices ends: lastFullCheckAt moves past the stale moment
		// only once a whole round has run since (three more syncs at most).
		let lastFull = before;
		for (let i = 0; i < 4 && lastFull < staleAt; i++) lastFull = w.sync(query).check.lastFullCheckAt!;
		expect(lastFull).toBeGreaterThanOrEqual(staleAt - 100);
		// `index` (the default) still runs the full check once it is stale.
		await Bun.sleep(1600);
		expect(w.sync({ idleSlice: 0, fullEveryMs: 1500 }).check.mode).toBe("full");
	});

	test("a directory changed while it was being listed is listed again (never trusted within the racy window)", () => {
		const w = world();
		const first = w.session("/work/a", "racy-1", "racyfirst");
		w.sync({ mode: "full" });
		// A file created within the same mtime tick as the listing leaves the directory's mtime as it
		// was: simulated by putting the old mtime back. The directory changed within two seconds of
		// its listing, so it was never trusted, and is listed again.
		const sub = join(first, "..");
		const listedAt = statSync(sub);
		writeFileSync(join(sub, "2026-10-01T10-00-01-000Z_racy-2.jsonl"), `${header("racy-2", "/work/a")}\n${entry("racy-2-1", null, "racysecondword")}\n`);
		utimesSync(sub, listedAt.atime, listedAt.mtime);
		const r = w.sync({ idleSlice: 0 });
		expect({ new: r.sessions.new, hits: w.hits("racysecondword") }).toEqual({ new: 1, hits: 1 });
	});
});

describe("the compiled binary", () => {
	let bin: string;
	beforeAll(() => {
		bin = compiledBinary();
	}, 120_000);

	function run(layout: ReturnType<typeof makeAgentLayout>, args: string[], env: Record<string, string> = {}) {
		const p = Bun.spawnSync([bin, ...args], { cwd: layout.root, env: isolatedEnv(layout, { NO_COLOR: "1", ...env }), stdout: "pipe", stderr: "pipe" });
		return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString(), json: () => JSON.parse(p.stdout.toString()) };
	}

	function layoutWithHistory() {
		const layout = makeAgentLayout();
		const paths: string[] = [];
		for (let i = 0; i < 4; i++) {
			const cwd = i % 2 ? "/work/a" : "/work/b";
			const sub = join(layout.sessionsDir, encodeCwd(cwd));
			mkdirSync(sub, { recursive: true });
			const id = `bin-${i}`;
			const path = join(sub, `2026-10-01T10-00-0${i}-000Z_${id}.jsonl`);
			writeFileSync(path, `${header(id, cwd)}\n${entry(`${id}-1`, null, `history${i}`)}\n`);
			age(path, 10 * DAY);
			paths.push(path);
		}
		for (const sub of readdirSync(layout.sessionsDir)) age(join(layout.sessionsDir, sub), 10 * DAY);
		age(layout.sessionsDir, 10 * DAY);
		return { layout, paths };
	}

	test("index (first: full), no-op index (incremental), index --full: each says what it checked", () => {
		const { layout } = layoutWithHistory();
		const first = run(layout, ["index", "--json"]).json();
		expect(first).toMatchObject({ check: "full" });
		const noop = run(layout, ["index", "--json"]).json();
		expect(noop).toMatchObject({ check: "incremental", sessions: { new: 0, appended: 0 } });
		expect(Date.parse(noop.lastFullCheckAt)).toBeGreaterThan(Date.now() - 60_000);
		expect(run(layout, ["index", "--json", "--full"]).json()).toMatchObject({ check: "full", sessions: { unchanged: 4 } });
	});

	/** Make the index's last full check look `ms` old (as if the last search were that long ago). */
	function ageFullCheck(layout: ReturnType<typeof makeAgentLayout>, ms: number): void {
		const db = openIndex(layout.defaultIndex);
		try {
			db.run("UPDATE meta SET value = ?1 WHERE key = 'last_full_check'", [JSON.stringify({ at: Date.now() - ms })]);
		} finally {
			db.close();
		}
	}

	/**
	 * A new session file that only a full check can see: written into a known directory whose mtime
	 * is then put back (as when it lands within the directory's last mtime tick), so the directory
	 * looks unchanged and the file is in no slice (slices stat the files the index knows).
	 */
	function sneakIn(layout: ReturnType<typeof makeAgentLayout>, id: string, word: string): void {
		const sub = join(layout.sessionsDir, encodeCwd("/work/a"));
		const before = statSync(sub);
		writeFileSync(join(sub, `2026-10-03T10-00-00-000Z_${id}.jsonl`), `${header(id, "/work/a")}\n${entry(`${id}-1`, null, word)}\n`);
		utimesSync(sub, before.atime, before.mtime);
	}

	test("a stale full check: search slices (its cost does not grow with history), index runs it, and so does the server's sync after a turn", async () => {
		const { layout } = layoutWithHistory();
		run(layout, ["index"]);
		sneakIn(layout, "sneak-1", "sneakoneword");
		ageFullCheck(layout, HOUR);
		// A search is a query: a stale full check is not run, so the file stays unseen (said by lastFullCheckAt).
		const searched = run(layout, ["search", "--all", "--json", "sneakoneword"]).json();
		expect({ hits: searched.hits.length, check: searched.freshness.check }).toEqual({ hits: 0, check: "incremental" });
		ageFullCheck(layout, HOUR);
		expect(run(layout, ["index", "--json"]).json()).toMatchObject({ check: "full", sessions: { new: 1 } });

		sneakIn(layout, "sneak-2", "sneaktwoword");
		ageFullCheck(layout, HOUR);
		const server = new RawServer(bin, isolatedEnv(layout, { NO_COLOR: "1" }));
		try {
			await server.initialize();
			const hits = async () =>
				(await server.request("tools/call", { name: "event_search", arguments: { query: "sneaktwoword" }, _meta: { "pi-events/caller": { cwd: "/work/a" } } }))
					.result.structuredContent.hits.length;
			// A tool call is a query too.
			expect(await hits()).toBe(0);
			// After a turn the extension asks for a sync, which nobody waits for: the stale full check runs there.
			server.send({ jsonrpc: "2.0", method: "notifications/pi-events/sync" });
			expect(await hits()).toBe(1);
		} finally {
			server.kill();
		}
	});

	test("search sees a new session file at once, and an append to the caller's own idle session (PI_SESSION_FILE)", () => {
		const { layout, paths } = layoutWithHistory();
		run(layout, ["index"]);
		const sub = join(layout.sessionsDir, encodeCwd("/work/a"));
		writeFileSync(join(sub, "2026-10-02T10-00-00-000Z_bin-new.jsonl"), `${header("bin-new", "/work/a")}\n${entry("bin-new-1", null, "binnewword")}\n`);
		const found = run(layout, ["search", "--all", "--json", "binnewword"]).json();
		expect({ hits: found.hits.length, check: found.freshness.check }).toEqual({ hits: 1, check: "incremental" });

		appendFileSync(paths[0]!, `${entry("bin-0-2", null, "callerappendword")}\n`);
		const asCaller = run(layout, ["search", "--all", "--json", "--no-sync", "callerappendword"], { PI_SESSION_FILE: paths[0]! }).json();
		// --no-sync: the caller's file was looked at and is reported pending, not silently fresh.
		expect(asCaller.freshness).toMatchObject({ synced: false, pendingFiles: 1, check: "incremental" });
		// A read-only look that is not told whose session it is does not stat idle files (the next sync's slice or full check will).
		expect(run(layout, ["search", "--all", "--json", "--no-sync", "callerappendword"]).json().freshness).toMatchObject({
			pendingFiles: 0,
			check: "incremental",
		});
		run(layout, ["search", "--all", "--json", "anything"], { PI_SESSION_FILE: paths[0]! });
		const after = run(layout, ["search", "--all", "--json", "--no-sync", "callerappendword"]).json();
		expect(after.hits.length).toBe(1);
		expect(typeof after.freshness.lastFullCheckAt).toBe("string");
	});
});
