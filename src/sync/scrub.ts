/**
 * Deleted text must not stay recoverable from the index files. FTS5 only tombstones deleted rows
 * of a contentless table (their tokens stay in old segments until merged), so after a deletion
 * the full-text index is merged ('optimize', about 2 s on a 1 GB corpus), then the WAL is folded
 * into the database (whose freed pages secure_delete zeroes) and truncated. Previous versions of
 * rebuilt sessions are scrubbed by the next full `pi-events index` run. If a reader keeps the WAL
 * from being truncated, the scrub stays pending and the next sync retries it, without waiting.
 */
import type { IndexWriter } from "../store/write.ts";
import { MERGE_PENDING_KEY } from "./merge.ts";
import { addProblem, type SyncReport } from "./report.ts";

export function scrub(writer: IndexWriter, report: SyncReport, fullRun: boolean): void {
	if (report.sessions.removed > 0 || report.sessions.rebuilt > 0) writer.setMeta("scrub_pending", true);
	if (writer.getMeta("scrub_pending") !== true) return;
	if (report.sessions.removed === 0 && !fullRun && writer.getMeta("scrub_reason_removed") !== true) return;
	if (report.sessions.removed > 0) writer.setMeta("scrub_reason_removed", true);
	writer.optimizeFullText();
	writer.deleteMeta(MERGE_PENDING_KEY); // everything is merged now
	if (writer.checkpoint()) {
		writer.deleteMeta("scrub_pending");
		writer.deleteMeta("scrub_reason_removed");
	} else {
		addProblem(report, "", "the index could not be compacted while another process reads it; the next sync retries");
	}
}
