/**
 * Incremental sync of pi session files into the read model: discover → read → project → write →
 * classify. Per file it chooses unchanged, append (only the new durable suffix), rebuild (one
 * transaction), keep-last-good (a changed file that cannot be parsed) or remove (only when the
 * file is confirmed gone from a directory that read fine). Never writes to session files.
 *
 * The jobs live beside this loop: sync-file.ts (one file), classify.ts (branch states),
 * deletion.ts (confirmed removals), scrub.ts (deleted text made unrecoverable), observations.ts
 * (the stat-equality rule and its cache), compare.ts (freshness without writing).
 */
import type { Database } from "bun:sqlite";
import { basename } from "node:path";
import { PiEventsError } from "../errors.ts";
import { compileForLongWork, JIT_WORTH_BYTES } from "../jit.ts";
import type { DiscoveredFile, SourceDir } from "../source/discover.ts";
import {
	describeDbError,
	isDatabaseError,
	isReadOnly,
	PAGE_CACHE_KIB,
	setPageCache,
	setBusyTimeout,
	setWalCheckpointPages,
	withBulkFullText,
	withoutFsync,
} from "../store/db.ts";
import { IndexWriter } from "../store/write.ts";
import { type CheckPolicy, checkRecord, checkSources, PROGRESS_EVERY_MS } from "./check.ts";
import { removeVanished } from "./deletion.ts";
import { forgetKnown, refreshKnown, unchangedSince } from "./observations.ts";
import { addProblem, diagnosticSink, emptyReport, type SyncReport } from "./report.ts";
import { markMergePending } from "./merge.ts";
import { scrub } from "./scrub.ts";
import { PIPELINE_MIN_BYTES, PreparePipeline } from "./pipeline.ts";
import { type SyncContext, syncFile } from "./sync-file.ts";

export type { SyncCounts, SyncReport } from "./report.ts";

interface SyncOptions {
	sourceDirs: readonly SourceDir[];
	/** Stop starting new files after this many ms (files left are reported as pending). */
	budgetMs?: number;
	onProgress?: (progress: { done: number; total: number; bytes: number }) => void;
	/** Keep at most this many diagnostics in the report (all are counted). */
	maxDiagnostics?: number;
	/** Where unexpected errors are described in full (the report itself stays free of internals). */
	debug?: (line: string) => void;
	/** Which files to look at (check.ts): incremental by default, full when asked or when the last full check is old. */
	check?: CheckPolicy;
	/** Prepare new files in a worker (pipeline.ts): "auto" (default) when they are many bytes. */
	pipeline?: "auto" | "always" | "never";
	/**
	 * Wait at most this long for another process's write lock (a query's sync: freshness.ts); past
	 * it the sync fails as "locked by another process", having kept what it committed. Default: the
	 * connection's own wait (10 s).
	 */
	lockWaitMs?: number;
	/**
	 * A budgeted (query's) sync that removed a session scrubs at once only an index up to this
	 * many bytes; a larger one is left to the merge in slices (scrub.ts). Default: SCRUB_INLINE_MAX_BYTES.
	 */
	scrubInlineMaxBytes?: number;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Commit a batch of changed files after this many bytes read or this long (other writers wait at most that). */
const BATCH_BYTES = 32 * 1024 * 1024;
const BATCH_MS = 500;
/**
 * While a worker prepares files (a cold index), a batch is committed after this long instead:
 * every commit makes FTS5 write out the postings it holds, so a commit every 500 ms cut its 4 MiB
 * hash (PIPELINE_FULL_TEXT) into small segments that were merged again and again.
 */
export const PIPELINE_BATCH_MS = 2000;
/**
 * SQLite's page cache while a worker prepares files (KiB): smaller than a long sync's, for the
 * worker's heap and the parts in flight. Twice this was 4–6% faster at 1 GB, but took peak RSS to
 * 262–266 MB at 1 GB and 294 MB at 5 GB, too close to the 300 MB bound.
 */
const PIPELINE_CACHE_KIB = 32_768;
/** The WAL is checkpointed after this many pages while a worker prepares files (SQLite's default: 1,000). */
const PIPELINE_CHECKPOINT_PAGES = 10_000;
/**
 * FTS5's settings while a worker prepares files (db.ts, withBulkFullText). A 1 GB cold index, with
 * 2-second batches, interleaved pairs: 38.8/39.6 → 36.7/31.8 s (FTS5's inserts and commits 29.9/30.6
 * → 27.6/23.8 s of the writer's time); at 5 GB 215 → 201 s. An 8 MiB hash saved no more and took
 * peak RSS over 300 MB at 5 GB (316 MB).
 */
const PIPELINE_FULL_TEXT = { automerge: 8, hashsize: 4 * 1024 * 1024 };

/**
 * While a worker prepares files, this thread's garbage is mostly the parts it received, and the
 * collector left them for long: a full collection after a commit every so many bytes keeps peak
 * RSS down (1 GB cold index, side by side: 281 → 244 MB); one costs about 35 ms.
 */
const COLLECT_EVERY_BYTES = 64 * 1024 * 1024;

/** A database failure as the one error type, with a message a person can act on (a full disk: E_INDEX, never E_INTERNAL). */
export function asIndexError(err: unknown): unknown {
	if (!isDatabaseError(err)) return err;
	return new PiEventsError("E_INDEX", `cannot update the index: ${describeDbError(err)}; it keeps its last consistent state`, { cause: err });
}

/** Run one sync over the configured source directories. */
export function syncIndex(db: Database, options: SyncOptions): SyncReport {
	// Said up front: a sync that finds nothing to change writes nothing, and would otherwise pass.
	if (isReadOnly(db)) throw new PiEventsError("E_INDEX", "cannot update the index: the index location is read-only; it keeps its last consistent state");
	const restoreWait = options.lockWaitMs === undefined ? null : setBusyTimeout(db, options.lockWaitMs);
	try {
		return syncSources(db, options);
	} finally {
		restoreWait?.();
	}
}

function syncSources(db: Database, options: SyncOptions): SyncReport {
	const started = performance.now();
	const writer = new IndexWriter(db);
	const changesAtStart = writer.changes();
	const report = emptyReport();
	const ctx: SyncContext = { db, writer, report, addDiagnostics: diagnosticSink(report, options.maxDiagnostics ?? 200), debug: options.debug };

	const check = checkSources(db, writer, options.sourceDirs, options.check ?? {}, true);
	const { found, known } = check;
	report.check = { mode: check.mode, lastFullCheckAt: check.lastFullCheckAt };
	for (const dir of found.dirs.values()) {
		if (!dir.ok && dir.error !== "ENOENT") addProblem(report, dir.path, `cannot read directory ${dir.path}: ${dir.error}`);
	}
	for (const u of found.unreadable) addProblem(report, u.path, `cannot stat ${u.path}: ${u.error} (its index is kept)`);

	const changed = found.files.filter((f) => !unchangedSince(known.get(f.path), f));
	report.sessions.unchanged = found.files.length - changed.length;
	// pi names files <ISO timestamp>_<id>.jsonl: indexing in name order gives new sessions keys
	// (and fragment rowids) in creation order, which the common-term path reads newest first.
	changed.sort((a, b) => cmp(basename(a.path), basename(b.path)) || cmp(a.path, b.path));
	const total = changed.length;
	// Enough new bytes to read make compiling worth it (jit.ts); a grown file counts its growth only.
	const newBytes = changed.reduce((sum, f) => sum + Math.max(0, f.size - (known.get(f.path)?.size ?? 0)), 0);
	// The same bytes make a one-shot command's small page cache too small (db.ts): a small cache
	// would spill dirty pages to the WAL mid-transaction and re-read what FTS5 merges.
	let restorePageCache = () => {};
	if (newBytes >= JIT_WORTH_BYTES) {
		compileForLongWork();
		restorePageCache = setPageCache(db, PAGE_CACHE_KIB);
	}
	let done = 0;
	// Files are committed in batches (a changed file in its own savepoint, a new one without: see
	// syncFile): one commit per file would flush FTS5's pending postings into many tiny segments.
	let batchStarted = 0;
	let batchBytes = 0;
	let collectedAt = 0;
	let pipeline: ReturnType<typeof startPipeline> = null;
	try {
		// Inside: starting it writes (FTS5's settings), and a failure is the index's, reported as one.
		pipeline = startPipeline(db, changed, known, options.pipeline ?? "auto", options.debug);
		for (const file of changed) {
			if (options.budgetMs !== undefined && performance.now() - started > options.budgetMs) {
				report.sessions.pending = total - done;
				report.pendingPaths = changed.slice(done).map((f) => f.path);
				report.complete = false;
				break;
			}
			if (!db.inTransaction) {
				db.run("BEGIN IMMEDIATE");
				batchStarted = performance.now();
				batchBytes = 0;
			}
			const before = report.bytesRead;
			report.sessions[syncFile(ctx, file, pipeline?.files.has(file.path) ? pipeline.worker : undefined)]++;
			done++;
			batchBytes += report.bytesRead - before;
			if (batchBytes >= BATCH_BYTES || performance.now() - batchStarted >= (pipeline ? PIPELINE_BATCH_MS : BATCH_MS)) {
				db.run("COMMIT");
				if (pipeline && report.bytesRead - collectedAt >= COLLECT_EVERY_BYTES) {
					collectedAt = report.bytesRead;
					Bun.gc(true);
				}
			}
			options.onProgress?.({ done, total, bytes: report.bytesRead });
		}
		if (db.inTransaction) db.run("COMMIT");
	} catch (err) {
		if (db.inTransaction) db.run("ROLLBACK");
		forgetKnown(db);
		restorePageCache();
		throw asIndexError(err);
	} finally {
		pipeline?.worker.close();
		pipeline?.restore();
	}

	try {
		removeVanished(db, writer, found, known, options.sourceDirs, report);
		refreshKnown(
			db,
			writer,
			changed.map((f) => f.path),
			report.sessions.removed > 0,
		);
		// Only a finished sync settles what it looked at: pending files are looked at again. Before
		// the scrub, whose checkpoint then folds these writes (a removed directory's row) in too.
		// Progress is recorded by a full check, by a sync that changed the index, and otherwise at most
		// every PROGRESS_EVERY_MS (check.ts says why).
		const recordProgress =
			check.mode === "full" || writer.changes() !== changesAtStart || progressDue(writer, options.check?.progressEveryMs ?? PROGRESS_EVERY_MS);
		if (report.complete) {
			const record = checkRecord(db, writer, check, report.problemPaths, recordProgress);
			report.check.lastFullCheckAt = record.lastFullCheckAt;
			if (record.writes.length > 0) {
				db.transaction(() => {
					for (const write of record.writes) write();
				}).immediate();
			}
		}
		// Many new sessions through the prepare worker leave FTS5 with many segments: merged later,
		// in slices, where nobody waits (merge.ts). Marked before the scrub, whose full merge clears it.
		if (pipeline !== null && done > 0) markMergePending(writer);
		scrub(writer, report, { fullRun: options.budgetMs === undefined, inlineMaxBytes: options.scrubInlineMaxBytes });
		report.durationMs = performance.now() - started;
		if (recordProgress) writer.setMeta("last_sync", { at: Date.now(), durationMs: Math.round(report.durationMs), complete: report.complete });
	} catch (err) {
		forgetKnown(db);
		throw asIndexError(err);
	} finally {
		restorePageCache();
	}
	return report;
}

/** Whether the last recorded sync is at least `everyMs` old (or in the future: a clock set back). */
function progressDue(writer: IndexWriter, everyMs: number): boolean {
	const last = writer.getMeta("last_sync") as { at?: unknown } | null;
	if (typeof last?.at !== "number") return true;
	const age = Date.now() - last.at;
	return age < 0 || age >= everyMs;
}

/**
 * New files go through the worker when they are many bytes (a cold index, a large batch); a
 * small sync stays on this thread. Only new files: an append needs what the index holds.
 */
function startPipeline(
	db: Database,
	changed: readonly DiscoveredFile[],
	known: ReadonlyMap<string, unknown>,
	mode: "auto" | "always" | "never",
	debug?: (line: string) => void,
): { worker: PreparePipeline; files: Set<string>; restore: () => void } | null {
	if (mode === "never") return null;
	// "always" (tests) sends every changed file, to exercise the writer's check that it is still new.
	const fresh = mode === "always" ? [...changed] : changed.filter((f) => !known.has(f.path));
	const bytes = fresh.reduce((sum, f) => sum + f.size, 0);
	if (fresh.length === 0 || (mode === "auto" && bytes < PIPELINE_MIN_BYTES)) return null;
	debug?.(`preparing ${fresh.length} new files (${Math.round(bytes / 1e6)} MB) in a worker`);
	// Set first: if the index cannot take them, no worker has started yet.
	const restoreFullText = withBulkFullText(db, PIPELINE_FULL_TEXT);
	const worker = PreparePipeline.start(
		fresh.map((f) => f.path),
		debug,
	);
	if (!worker) {
		restoreFullText();
		return null;
	}
	const restorePageCache = setPageCache(db, PIPELINE_CACHE_KIB);
	const restoreCheckpoints = setWalCheckpointPages(db, PIPELINE_CHECKPOINT_PAGES);
	// The writer's checkpoints wait for no fsync meanwhile (store/unsynced.ts).
	const restoreSync = withoutFsync(db);
	return {
		worker,
		files: new Set(fresh.map((f) => f.path)),
		restore: () => {
			try {
				restoreFullText();
			} catch (err) {
				// Not worth failing a sync that wrote everything: the settings only tune FTS5's merging,
				// and an index left with them is whole.
				debug?.(`cannot put FTS5's settings back: ${isDatabaseError(err) ? describeDbError(err) : String(err)}`);
			} finally {
				restoreSync();
				restoreCheckpoints();
				restorePageCache();
			}
		},
	};
}
