/**
 * Deleted text must not stay recoverable from the index files. FTS5 only tombstones deleted rows
 * of a contentless table (their tokens stay in old segments until merged), so after a deletion
 * the full-text index is merged, then the WAL is folded into the database (whose freed pages
 * secure_delete zeroes) and truncated. Previous versions of rebuilt sessions are scrubbed by the
 * next full `pi-events index` run.
 *
 * The merge rewrites the whole full-text index: 1.1 s for the 60 MB of full text of a 250 MB
 * corpus, 22–26 s at 5 GB. A full run (`pi-events index`) merges at once ('optimize'). A query's
 * sync does so only on a small index (SCRUB_INLINE_MAX_BYTES); on a larger one it leaves the
 * merge to slices where nobody waits (merge.ts: a resident server between calls, or the
 * background `pi-events index --scrub` a one-shot command starts, cli/background-scrub.ts), and
 * the query answers at once: the removed sessions' rows are gone from every answer already, only
 * their tombstoned tokens wait in the file for the merge. Whoever completes the merge finishes the
 * scrub (finishScrub). If a reader keeps the WAL from being truncated, the scrub stays pending and
 * is retried, without waiting.
 */
import type { IndexWriter } from "../store/write.ts";
import { MERGE_PENDING_KEY, SCRUB_PENDING_KEY as PENDING_KEY, SCRUB_REASON_REMOVED_KEY as REASON_REMOVED_KEY } from "../store/status.ts";
import { addProblem, type SyncReport } from "./report.ts";

/**
 * The largest index (bytes of index.db) a query's sync scrubs before it answers. 'optimize' took
 * 18 ms per MB of full-text data (1.09 s for the 60 MB of a 97 MB index), so at this size about
 * 0.2 s. Settings (config.ts, $PI_EVENTS_SCRUB_INLINE_MAX_BYTES) may set another.
 */
export const SCRUB_INLINE_MAX_BYTES = 16 * 1024 * 1024;

export interface ScrubOptions {
	/** A full run (`pi-events index`): scrubs rebuilt sessions too, and always at once. */
	fullRun: boolean;
	/** A query's sync on a larger index leaves the merge to slices (default SCRUB_INLINE_MAX_BYTES). */
	inlineMaxBytes?: number;
}

export function scrub(writer: IndexWriter, report: SyncReport, options: ScrubOptions): void {
	// Each deletion or rebuild marks the scrub with a new generation: a scrub finished meanwhile by
	// another process clears only the generation it saw (finishScrub).
	if (report.sessions.removed > 0 || report.sessions.rebuilt > 0) {
		const generation = writer.getMeta(PENDING_KEY);
		writer.setMeta(PENDING_KEY, typeof generation === "number" ? generation + 1 : 1);
	}
	if (writer.getMeta(PENDING_KEY) === null) return;
	if (report.sessions.removed === 0 && !options.fullRun && writer.getMeta(REASON_REMOVED_KEY) !== true) return;
	if (report.sessions.removed > 0) writer.setMeta(REASON_REMOVED_KEY, true);
	if (!options.fullRun && writer.indexBytes() > (options.inlineMaxBytes ?? SCRUB_INLINE_MAX_BYTES)) {
		// The merge in slices drops the tombstoned tokens as 'optimize' would (a negative FTS5
		// 'merge' rewrites even a single segment that holds tombstones).
		if (writer.getMeta(MERGE_PENDING_KEY) !== true) writer.setMeta(MERGE_PENDING_KEY, true);
		return;
	}
	writer.optimizeFullText();
	if (finishScrub(writer) === "blocked") {
		addProblem(report, "", "the index could not be compacted while another process reads it; the next sync retries");
	}
}

/**
 * Once the full-text index holds nothing left to merge: fold the WAL into the database and
 * truncate it, then clear the scrub (and the merge mark) in one transaction that checks, with a
 * last merge step, that nothing was written meanwhile, and that no deletion came since (its new
 * generation). "done" when cleared, "more" when there is merging left again, "blocked" when a
 * reader kept the WAL (the mark stays; the next sync or slice retries).
 */
export function finishScrub(writer: IndexWriter, stepPages = 256): "done" | "more" | "blocked" {
	const generation = writer.getMeta(PENDING_KEY);
	if (generation !== null && !writer.checkpoint()) return "blocked";
	return writer.inTransaction(() => {
		if (writer.mergeFullTextStep(stepPages)) return "more";
		if (JSON.stringify(writer.getMeta(PENDING_KEY)) !== JSON.stringify(generation)) return "more";
		writer.deleteMeta(MERGE_PENDING_KEY);
		writer.deleteMeta(PENDING_KEY);
		writer.deleteMeta(REASON_REMOVED_KEY);
		return "done";
	});
}
