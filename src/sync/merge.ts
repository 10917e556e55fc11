/**
 * The full-text index merged into one segment in bounded slices, where nobody waits for them.
 *
 * A cold index leaves FTS5 with many segments (21 for the 5 GB bench corpus), and every term
 * lookup probes each: there, a whole search process took 1.0–3.5 ms longer than on the same index
 * merged, and reading sessions one at a time 40% longer. Merging them all at once ('optimize')
 * takes about 22 s at 5 GB, too long for the cold index itself (docs/performance.md). So a sync
 * that loaded new sessions through the prepare worker only marks the index (`merge_pending`), and
 * a resident server merges a slice after each turn or command and then while it idles
 * (server/stdio.ts; server/command-server.ts when it serves the command line alone): FTS5
 * 'merge' steps of MERGE_STEP_PAGES pages until the slice's time is up or FTS5 finds nothing left,
 * which clears the mark. A full scrub ('optimize', scrub.ts) clears it too. A query's sync that
 * removed a session from a large index leaves its scrub to these slices too: the merge drops the
 * deleted tokens, and the slice that completes it truncates the WAL (finishScrub). Each step is a write
 * transaction of its own: readers go on; another process's sync waits for at most one step.
 */
import type { Database } from "bun:sqlite";
import { publicMessage } from "../errors.ts";
import { isBusyError, isReadOnly, setBusyTimeout } from "../store/db.ts";
import { MERGE_PENDING_KEY, mergePending, scrubAwaitsMerge } from "../store/status.ts";
import { IndexWriter } from "../store/write.ts";
import { finishScrub } from "./scrub.ts";

export { MERGE_PENDING_KEY, mergePending };

/**
 * Pages FTS5 writes per step. Merging the 5 GB bench index (21 segments) in slices of 250 ms: 95
 * slices, 25.7 s of work in all, the longest slice 397 ms; with steps of 64 pages, 123 slices,
 * 34.1 s, the longest 1.2 s.
 */
export const MERGE_STEP_PAGES = 256;

/** A resident server's merge slice (ms): a request that comes meanwhile waits at most one. */
export const MERGE_SLICE_MS = 250;
/** The pause between two of a resident server's slices (ms): requests that came meanwhile are answered first. */
export const MERGE_PAUSE_MS = 250;

/** How long a slice waits for another process's write lock before it leaves the work for later. */
const MERGE_LOCK_WAIT_MS = 50;

export type MergeOutcome = "none" | "more" | "merged";

/** Mark the index as worth merging (after loading many new sessions). */
export function markMergePending(writer: IndexWriter): void {
	writer.setMeta(MERGE_PENDING_KEY, true);
}

/**
 * At least one merge step, then more until `budgetMs` has passed: "merged" when FTS5 had nothing
 * left to merge (the mark is cleared), "more" when work is left (or another process held the
 * lock), "none" when nothing was pending or the index cannot be written here.
 */
export function mergeSlice(db: Database, budgetMs: number, stepPages = MERGE_STEP_PAGES): MergeOutcome {
	if (isReadOnly(db) || !mergePending(db)) return "none";
	const writer = new IndexWriter(db);
	const restoreWait = setBusyTimeout(db, MERGE_LOCK_WAIT_MS);
	try {
		const started = performance.now();
		do {
			// Nothing left to merge: the mark is cleared (and a deletion's scrub finished) in one
			// transaction that checks nothing came meanwhile (scrub.ts).
			if (!writer.mergeFullTextStep(stepPages)) return finishScrub(writer, stepPages) === "done" ? "merged" : "more";
		} while (performance.now() - started < budgetMs);
		return "more";
	} catch (err) {
		if (isBusyError(err)) return "more";
		throw err;
	} finally {
		restoreWait();
	}
}

/** How long `mergeAll` and `scrubInSlices` keep trying while another process holds the write lock. */
const MERGE_ALL_PATIENCE_MS = 10_000;

/**
 * Merge the whole full-text index into one segment now (`pi-events index --merge`), step by step,
 * each step committed (the WAL stays small, readers go on): "merged", or "busy" when another
 * process held the write lock for MERGE_ALL_PATIENCE_MS without a step in between.
 */
export function mergeAll(db: Database): { outcome: "merged" | "busy"; ms: number } {
	markMergePending(new IndexWriter(db));
	return mergeUntilDone(db, 1000, 0);
}

/**
 * The background scrubber's pause between slices (ms): a query's sync in another process waits
 * up to 300 ms for the write lock, and gets it in between.
 */
const SCRUB_PAUSE_MS = 50;

/**
 * Finish the scrub a query's sync left to the merge (scrub.ts) in slices, with a pause between
 * them (`pi-events index --scrub`, which a one-shot command starts in the background): "scrubbed",
 * "none" when no scrub waited, or "busy" as in mergeAll.
 */
export function scrubInSlices(db: Database): { outcome: "scrubbed" | "none" | "busy"; ms: number } {
	if (isReadOnly(db) || !scrubAwaitsMerge(db)) return { outcome: "none", ms: 0 };
	const result = mergeUntilDone(db, MERGE_SLICE_MS, SCRUB_PAUSE_MS);
	return { outcome: result.outcome === "merged" ? "scrubbed" : "busy", ms: result.ms };
}

function mergeUntilDone(db: Database, sliceMs: number, pauseMs: number): { outcome: "merged" | "busy"; ms: number } {
	const started = performance.now();
	const writer = new IndexWriter(db);
	let progressAt = started;
	for (;;) {
		const before = writer.changes();
		if (mergeSlice(db, sliceMs) !== "more") return { outcome: "merged", ms: performance.now() - started };
		const now = performance.now();
		if (writer.changes() !== before) progressAt = now;
		else if (now - progressAt > MERGE_ALL_PATIENCE_MS) return { outcome: "busy", ms: now - started };
		if (pauseMs > 0) Bun.sleepSync(pauseMs);
	}
}

/**
 * A resident server's merging (server/stdio.ts, server/command-server.ts): `plan()` after a request
 * sets a timer for the next slice when the index is marked, and each slice that leaves work plans
 * the next, MERGE_PAUSE_MS apart. Never run inside a request, never what keeps the process alive
 * (nor, with `--idle-exit`, a command).
 */
export class MergeInSlices {
	private timer: ReturnType<typeof setTimeout> | null = null;
	private stopped = false;

	constructor(
		private readonly index: () => Database,
		private readonly log: (line: string) => void,
		private readonly sliceMs = MERGE_SLICE_MS,
	) {}

	plan(): void {
		if (this.stopped || this.timer !== null) return;
		try {
			if (!mergePending(this.index())) return;
		} catch {
			return; // no index to merge (yet): the next request's sync makes one
		}
		this.timer = setTimeout(() => {
			this.timer = null;
			if (this.stopped) return;
			try {
				if (mergeSlice(this.index(), this.sliceMs) === "more") this.plan();
			} catch (err) {
				this.log(`pi-events serve: merging the full-text index failed: ${publicMessage(err)}`);
			}
		}, MERGE_PAUSE_MS);
		this.timer.unref?.();
	}

	stop(): void {
		this.stopped = true;
		if (this.timer !== null) clearTimeout(this.timer);
		this.timer = null;
	}
}
