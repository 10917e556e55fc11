/** Read-only summary queries for `pi-events status`. */
import type { Database } from "bun:sqlite";

interface IndexCounts {
	schema: number;
	files: number;
	sessions: number;
	events: number;
	fragments: number;
	rejectedFiles: number;
	failedFiles: number;
	diagnostics: number;
	lastSync: { at: number; durationMs: number; complete: boolean } | null;
	/** Whether the full-text index's segments are still to be merged (sync/merge.ts). */
	mergePending: boolean;
	/** Whether a removed session's text still waits to be scrubbed from the index files (sync/scrub.ts). */
	deletedTextPending: boolean;
	/** Source directories that have indexed files (including ones not configured this run). */
	indexedDirs: { dir: string; files: number }[];
}

export function indexCounts(db: Database): IndexCounts {
	const one = (sql: string) => (db.query(sql).get() as { n: number }).n;
	const last = db.query("SELECT value FROM meta WHERE key = 'last_sync'").get() as { value: string } | null;
	return {
		// The index's own version: a newer pi-events may have built it (store/db.ts SCHEMA_COMPATIBLE_FROM).
		schema: (db.query("PRAGMA user_version").get() as { user_version: number }).user_version,
		files: one("SELECT count(*) AS n FROM files"),
		sessions: one("SELECT count(*) AS n FROM sessions"),
		events: one("SELECT count(*) AS n FROM events"),
		fragments: one("SELECT count(*) AS n FROM fragments"),
		rejectedFiles: one("SELECT count(*) AS n FROM files WHERE status = 'rejected'"),
		failedFiles: one("SELECT count(*) AS n FROM files WHERE status = 'failed'"),
		diagnostics: one("SELECT coalesce(sum(diagnostics), 0) AS n FROM files"),
		lastSync: last ? JSON.parse(last.value) : null,
		mergePending: mergePending(db),
		deletedTextPending: deletedTextPending(db),
		indexedDirs: db.query("SELECT source_dir AS dir, count(*) AS files FROM files GROUP BY source_dir ORDER BY source_dir").all() as {
			dir: string;
			files: number;
		}[],
	};
}

/** The meta key a sync sets when the full-text index's segments are worth merging (sync/merge.ts). */
export const MERGE_PENDING_KEY = "merge_pending";

/** Whether a sync has marked the index as worth merging. */
export function mergePending(db: Database): boolean {
	return db.query("SELECT 1 FROM meta WHERE key = ?1 AND value = 'true'").get(MERGE_PENDING_KEY) !== null;
}

/** The size at which a session file was last indexed (by path or canonical path), or null. */
export function indexedSize(db: Database, path: string): number | null {
	const row = db.query("SELECT size FROM files WHERE path = ?1 OR real_path = ?1 LIMIT 1").get(path) as { size: number } | null;
	return row?.size ?? null;
}

export function lastSync(db: Database): { at: number; durationMs: number; complete: boolean } | null {
	const row = db.query("SELECT value FROM meta WHERE key = 'last_sync'").get() as { value: string } | null;
	return row ? JSON.parse(row.value) : null;
}

/** The canonical cwd of the session indexed from this file, or null. */
export function cwdOfIndexedFile(db: Database, path: string): string | null {
	const row = db.query("SELECT s.cwd_real FROM sessions s JOIN files f ON f.file_key = s.file_key WHERE f.path = ?1").get(path) as {
		cwd_real: string | null;
	} | null;
	return row?.cwd_real ?? null;
}

/** When every session file was last checked (sync/check.ts), or null. */
export function lastFullCheck(db: Database): number | null {
	const row = db.query("SELECT value FROM meta WHERE key = 'last_full_check'").get() as { value: string } | null;
	return row ? (JSON.parse(row.value) as { at: number }).at : null;
}

/** The meta keys of a pending scrub (sync/scrub.ts): its generation, and whether a removal (not only a rebuild) left it. */
export const SCRUB_PENDING_KEY = "scrub_pending";
export const SCRUB_REASON_REMOVED_KEY = "scrub_reason_removed";

/** Whether a removed session's text still waits to be scrubbed from the index files. */
export function deletedTextPending(db: Database): boolean {
	return db.query("SELECT 1 FROM meta WHERE key = ?1 AND value = 'true'").get(SCRUB_REASON_REMOVED_KEY) !== null;
}

/** Whether that scrub waits for the merge in slices (a query's sync left it there). */
export function scrubAwaitsMerge(db: Database): boolean {
	return deletedTextPending(db) && mergePending(db);
}
