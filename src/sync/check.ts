/**
 * Which session files a sync (or a `--no-sync` answer) looks at, at a cost that grows with what
 * changed, not with history.
 *
 * - A full check lists every directory and stats every file: O(history). `index --full` runs
 *   one; so do `index` and the server's sync after a turn when the last full check is older than
 *   FULL_CHECK_EVERY_MS (below: `onStale`), and any check of an index never checked in full.
 * - Otherwise the check is incremental:
 *   - every directory is stat'ed, and listed only when its mtime moved since its listing last
 *     matched the index (creating, removing or renaming a file moves it; pi writes one directory
 *     per cwd, so a new session or a new workspace is always seen);
 *   - files written in the last HOT_WINDOW_MS (by their last seen mtime) and the caller's own
 *     session file are stat'ed every time (an append moves no directory mtime);
 *   - a slice of IDLE_SLICE other files, in key order, continues where the last sync stopped;
 *     when the slices come round, every file has been checked since the round began.
 * When the last full check is older than FULL_CHECK_EVERY_MS, what a syncing check does depends on
 * who asks (`onStale`):
 *   - `index` runs the full check: an append to a session idle for longer than HOT_WINDOW_MS is
 *     seen within FULL_CHECK_EVERY_MS by the first `index` after that;
 *   - a query (freshness.ts) never does: a full check is O(history) (300–450 ms of a new process
 *     at 22,597 sessions, against about 20 ms for the whole search), and a search that follows
 *     more than FULL_CHECK_EVERY_MS after the last one is most searches. It stats a larger idle
 *     slice (STALE_SLICE) instead, so the slices come round sooner while the check is stale.
 * A directory listed within RACY_MS of its last change is never trusted (its mtime could move
 * again within the same clock tick).
 */
import type { Database } from "bun:sqlite";
import { dirname } from "node:path";
import { type Discovery, discover, emptyDiscovery, listDir, type SourceDir, statDir, statFile } from "../source/discover.ts";
import { CheckStore, type DirRow } from "../store/checks.ts";
import type { FileObservation, IndexWriter } from "../store/write.ts";
import { knownFiles } from "./observations.ts";

/** Files whose last seen mtime is this recent are stat'ed on every check. */
const HOT_WINDOW_MS = 24 * 60 * 60 * 1000;
/**
 * Older files stat'ed per syncing check, continuing in key order. In a history of up to this many
 * sessions every sync stats every file. 50 made a whole search at 5 GB 1.0–1.9 ms faster but
 * left appends to idle sessions unseen for several syncs in histories of 50–200 sessions.
 */
const IDLE_SLICE = 200;
/**
 * Older files stat'ed per syncing query while the last full check is stale: about 4 ms of a new
 * process (stat and row read 10–12 µs a file in the interpreter), the same at any history size.
 * Searches far apart find the check stale every time, so this is the usual cost of a search.
 */
const STALE_SLICE = 400;
/** A full check is stale when the last one is older than this: `index` then runs one (the bound for appends to idle sessions). */
const FULL_CHECK_EVERY_MS = 10 * 60 * 1000;
/**
 * A sync that changed nothing in the index records its progress (the idle cursor, the last full
 * check, the last sync) at most this often; a full check is always recorded. Any write to the
 * index costs a new process four fsyncs (the WAL's header and directory, and the checkpoint when
 * the connection closes: 2–10 ms on this project's machine, 3.7 ms of a no-op `index` at 5 GB);
 * skipped, back-to-back searches and no-op syncs write nothing. What goes unrecorded is only
 * repeated: the next sync checks the same idle slice again, and answers say an older last sync
 * and last full check than the real ones (never a newer one).
 */
export const PROGRESS_EVERY_MS = 30 * 1000;
/** A directory changed this shortly before it was listed is listed again next time. */
const RACY_MS = 2000;

export interface CheckPolicy {
	/** "auto" (default): incremental unless the last full check is stale (then see `onStale`); "full": every file now. */
	mode?: "auto" | "full";
	/**
	 * When the last full check is stale, a syncing check runs it ("full", the default: `index`) or
	 * stats `staleSlice` idle files instead ("slice": queries, whose cost must not grow with history).
	 */
	onStale?: "full" | "slice";
	staleSlice?: number;
	/** The caller's own session file: stat'ed on every check. */
	callerFile?: string | null;
	hotWindowMs?: number;
	idleSlice?: number;
	fullEveryMs?: number;
	/** How often a sync that changed nothing records its progress (default PROGRESS_EVERY_MS; 0: every time). */
	progressEveryMs?: number;
}

interface ListedDir {
	path: string;
	sourceDir: string;
	/** The directory's stat taken before it was listed. */
	dev: number;
	ino: number;
	mtimeMs: number;
	/** For a source root: every subdirectory its listing held. */
	subdirs: string[] | null;
}

interface SourceCheck {
	mode: "full" | "incremental";
	found: Discovery;
	/** The index rows this check covers, by path: only these can be found changed or gone. */
	known: Map<string, FileObservation>;
	listed: ListedDir[];
	/** Wall-clock time before the first directory was read. */
	startedAt: number;
	/** The idle slice looked at, and where the next one starts (0 when this one reached the end). */
	slice: { next: number; wrapped: boolean; roundStartedAt: number } | null;
	/** When every file was last checked (a full check, or a completed round of slices). */
	lastFullCheckAt: number | null;
	/** The directory records this check started from (only changes are written back). */
	recorded: Map<string, DirRow>;
	cursor: IdleCursor | null;
}

interface IdleCursor {
	next: number;
	roundStartedAt: number;
}

/**
 * Look at the sources. `syncing`: the result is synced and recorded afterwards (checkRecord),
 * so the idle slice advances and a stale full check is repeated; a read-only look (`--no-sync`)
 * checks directories, recent files and the caller's file only, and records nothing.
 */
export function checkSources(db: Database, writer: IndexWriter, sourceDirs: readonly SourceDir[], policy: CheckPolicy, syncing: boolean): SourceCheck {
	const startedAt = Date.now();
	const lastFull = (writer.getMeta("last_full_check") as { at: number } | null)?.at ?? null;
	const stale = lastFull === null || startedAt - lastFull > (policy.fullEveryMs ?? FULL_CHECK_EVERY_MS);
	const store = new CheckStore(db);
	const roots = new Set(sourceDirs.map((d) => d.path));
	const recorded = new Map(store.dirsOf([...roots]).map((r) => [r.path, r]));
	const cursor = syncing ? ((writer.getMeta("idle_cursor") as IdleCursor | null) ?? null) : null;
	const slicesWhenStale = policy.onStale === "slice";
	// Never checked in full (a new index): there are no directory records to trust, so every check is full.
	if (policy.mode === "full" || lastFull === null || (stale && syncing && !slicesWhenStale)) {
		const found = discover(sourceDirs);
		const known = knownFiles(db, writer);
		return { mode: "full", found, known, listed: listedOf(found, sourceDirs), startedAt, slice: null, lastFullCheckAt: lastFull, recorded, cursor };
	}

	const found = emptyDiscovery();
	const seen = new Set<string>();
	const known = new Map<string, FileObservation>();
	const listed: ListedDir[] = [];
	const cover = (rows: FileObservation[]) => {
		for (const r of rows) known.set(r.path, r);
	};
	const trusted = (dir: string): boolean => {
		const obs = statDir(dir);
		const row = recorded.get(dir);
		if (!obs.ok || !row || row.listed_mtime === null || row.dev !== obs.dev || row.ino !== obs.ino || row.listed_mtime !== obs.mtimeMs) return false;
		found.dirs.set(dir, obs);
		return true;
	};
	const list = (dir: string, sourceDir: string, isRoot: boolean): string[] => {
		const subdirs = listDir(dir, sourceDir, isRoot, found, seen);
		const obs = found.dirs.get(dir)!;
		if (obs.ok) {
			// Its indexed files are the candidates for removal; an unreadable directory keeps them (deletion.ts says why).
			cover(store.rowsInDir(dir));
			listed.push({ path: dir, sourceDir, dev: obs.dev!, ino: obs.ino!, mtimeMs: obs.mtimeMs!, subdirs: isRoot ? subdirs : null });
		} else {
			cover(store.rowsUnder(dir));
		}
		return subdirs;
	};
	const recordedSubdirs = (root: string) => [...recorded.values()].filter((r) => r.source_dir === root && r.path !== root).map((r) => r.path);

	for (const { path: root } of sourceDirs) {
		if (found.dirs.has(root)) continue;
		const rootTrusted = trusted(root);
		let subdirs = rootTrusted ? recordedSubdirs(root) : list(root, root, true);
		if (!found.dirs.get(root)!.ok) continue;
		if (!rootTrusted) {
			// Subdirectories gone from the listing: their files are candidates for removal.
			const now = new Set(subdirs);
			for (const sub of recordedSubdirs(root)) if (!now.has(sub)) cover(store.rowsUnder(sub));
		}
		const failed = (sub: string) => !found.dirs.get(sub)?.ok;
		const visit = (subs: string[]) => {
			for (const sub of subs) {
				if (found.dirs.has(sub)) continue;
				if (!trusted(sub)) list(sub, root, false);
			}
		};
		visit(subdirs);
		if (rootTrusted && subdirs.some(failed)) {
			// A subdirectory vanished or broke while its root looks unchanged (a change within one
			// mtime tick): list the root after all.
			subdirs = list(root, root, true);
			visit(subdirs);
		}
	}

	// Files no listing covered: the recent ones, the caller's, and the idle slice.
	const extra = new Map<string, FileObservation>();
	for (const r of store.recentRows(startedAt - (policy.hotWindowMs ?? HOT_WINDOW_MS))) extra.set(r.path, r);
	if (policy.callerFile) {
		const own = store.rowOf(policy.callerFile);
		if (own) extra.set(own.path, own);
	}
	let slice: SourceCheck["slice"] = null;
	const sliceSize = stale && slicesWhenStale ? (policy.staleSlice ?? STALE_SLICE) : (policy.idleSlice ?? IDLE_SLICE);
	if (syncing && sliceSize > 0) {
		const from = cursor ?? { next: 0, roundStartedAt: startedAt };
		// One row more than the slice says whether this slice reaches the end of the round.
		const rows = store.sliceRows(from.next, sliceSize + 1);
		const wrapped = rows.length <= sliceSize;
		for (const r of rows.slice(0, sliceSize)) extra.set(r.path, r);
		slice = { next: wrapped ? 0 : rows[sliceSize]!.file_key, wrapped, roundStartedAt: from.roundStartedAt };
	}
	const listedPaths = new Set(listed.map((l) => l.path));
	for (const row of extra.values()) {
		if (!roots.has(row.source_dir) || known.has(row.path)) continue;
		const dir = dirname(row.path);
		if (listedPaths.has(dir) || found.dirs.get(dir)?.ok === false) continue;
		known.set(row.path, row);
		if (statFile(row.path, row.source_dir, found, seen) === "ENOENT" && !listedPaths.has(dir)) {
			// Gone although its directory looked unchanged: list the directory, which decides.
			list(dir, row.source_dir, dir === row.source_dir);
			listedPaths.add(dir);
		}
	}
	return { mode: "incremental", found, known, listed, startedAt, slice, lastFullCheckAt: lastFull, recorded, cursor };
}

/** Every directory a full discovery read fine, with each root's subdirectories. */
function listedOf(found: Discovery, sourceDirs: readonly SourceDir[]): ListedDir[] {
	const roots = new Set(sourceDirs.map((d) => d.path));
	const out: ListedDir[] = [];
	for (const obs of found.dirs.values()) {
		if (!obs.ok) continue;
		const isRoot = roots.has(obs.path);
		const sourceDir = isRoot ? obs.path : dirname(obs.path);
		const subdirs = isRoot ? [...found.dirs.keys()].filter((p) => p !== obs.path && dirname(p) === obs.path) : null;
		out.push({ path: obs.path, sourceDir, dev: obs.dev!, ino: obs.ino!, mtimeMs: obs.mtimeMs!, subdirs });
	}
	return out;
}

/** What a finished sync records of its check: the writes (none when nothing moved), and the last full check. */
export interface CheckRecord {
	writes: (() => void)[];
	lastFullCheckAt: number | null;
}

/**
 * After a sync that finished (nothing left pending): remember each listed directory whose files
 * all match the index now, at the mtime it had before its listing, and move the idle cursor.
 * `problemPaths`: files and directories the sync could not settle (kept last-good, unreadable).
 * `recordProgress`: also move the idle cursor and the last full check (sync.ts decides when).
 * Only planned here, from what the check read: the caller takes the write lock only when there
 * is something to write, so that a sync that changes nothing never waits behind another writer.
 */
export function checkRecord(db: Database, writer: IndexWriter, check: SourceCheck, problemPaths: readonly string[], recordProgress: boolean): CheckRecord {
	const store = new CheckStore(db);
	const writes: (() => void)[] = [];
	// Deferred: run by the caller, under the write lock.
	const planned = {
		deleteDir: (path: string) => writes.push(() => store.deleteDir(path)),
		upsertDir: (row: DirRow) => writes.push(() => store.upsertDir(row)),
	};
	const unsettled = new Set<string>();
	for (const p of problemPaths) {
		unsettled.add(p);
		unsettled.add(dirname(p));
	}
	// Only directories holding session files are remembered: a directory's name encodes a cwd, and
	// nothing of a deleted session may outlive it in the index. A root with an empty (or unreadable)
	// subdirectory is therefore never settled: it is listed again every time.
	const holding = new Set(check.found.files.map((f) => dirname(f.path)));
	const listedPaths = new Set(check.listed.map((l) => l.path));
	const kept = (sub: string) => (listedPaths.has(sub) ? holding.has(sub) : check.found.dirs.get(sub)?.ok === true && check.recorded.has(sub));
	const unsettleRoots = new Set<string>();
	for (const l of check.listed) {
		if (l.subdirs === null && !holding.has(l.path)) {
			if (check.recorded.has(l.path)) {
				planned.deleteDir(l.path);
				unsettleRoots.add(l.sourceDir);
			}
			continue;
		}
		const subdirsKept = l.subdirs === null || l.subdirs.every(kept);
		const settled = !unsettled.has(l.path) && subdirsKept && l.mtimeMs < check.startedAt - RACY_MS;
		const row: DirRow = {
			path: l.path,
			source_dir: l.sourceDir,
			dev: l.dev,
			ino: l.ino,
			listed_mtime: settled ? l.mtimeMs : null,
			checked_at: check.startedAt,
		};
		if (!sameDir(check.recorded.get(l.path), row)) planned.upsertDir(row);
		if (l.subdirs) {
			const subdirs = new Set(l.subdirs);
			for (const old of check.recorded.values()) {
				if (old.source_dir === l.sourceDir && old.path !== l.sourceDir && !subdirs.has(old.path)) planned.deleteDir(old.path);
			}
		}
	}
	for (const root of unsettleRoots) {
		const row = check.recorded.get(root);
		if (row && !listedPaths.has(root)) planned.upsertDir({ ...row, listed_mtime: null, checked_at: check.startedAt });
	}
	let lastFull = check.lastFullCheckAt;
	let cursor = check.cursor;
	if (check.mode === "full") {
		lastFull = check.startedAt;
		cursor = { next: 0, roundStartedAt: check.startedAt };
	} else if (check.slice?.wrapped) {
		lastFull = Math.max(lastFull ?? 0, check.slice.roundStartedAt);
		cursor = { next: 0, roundStartedAt: check.startedAt };
	} else if (check.slice) {
		cursor = { next: check.slice.next, roundStartedAt: check.slice.roundStartedAt };
	}
	if (!recordProgress) return { writes, lastFullCheckAt: lastFull };
	if (cursor && (cursor.next !== check.cursor?.next || cursor.roundStartedAt !== check.cursor?.roundStartedAt)) {
		const moved = cursor;
		writes.push(() => writer.setMeta("idle_cursor", moved));
	}
	if (lastFull !== null && lastFull !== check.lastFullCheckAt) {
		const at = lastFull;
		writes.push(() => writer.setMeta("last_full_check", { at }));
	}
	return { writes, lastFullCheckAt: lastFull };
}

function sameDir(a: DirRow | undefined, b: DirRow): boolean {
	return !!a && a.source_dir === b.source_dir && a.dev === b.dev && a.ino === b.ino && a.listed_mtime === b.listed_mtime;
}
