/**
 * Freshness for queries: before answering, run a bounded incremental sync (or, with sync off,
 * only compare the sources with the index), so every answer says how fresh it is and "no
 * results" is never a silent lie.
 */
import type { Database } from "bun:sqlite";
import { checkFreshness, syncIndex } from "./indexer.ts";
import type { SourceDir } from "./source/discover.ts";

/** How long a query may spend syncing before it answers from what is indexed. */
export const QUERY_SYNC_BUDGET_MS = 3000;

export interface Freshness {
	/** Whether a sync ran before this answer. */
	synced: boolean;
	syncMs: number;
	/** Session files that changed since they were indexed and were not synced (budget or --no-sync). */
	pendingFiles: number;
	/** Indexed files no longer present (removed on the next sync). */
	missingFiles: number;
	/** Diagnostics found by this sync (malformed lines and the like). */
	newDiagnostics: number;
	/** Problems that may hide results (unreadable directories, files kept last-good). */
	problems: string[];
	lastSyncAt: string | null;
}

export function refresh(db: Database, sourceDirs: readonly SourceDir[], sync: boolean, budgetMs = QUERY_SYNC_BUDGET_MS): Freshness {
	if (sync) {
		const report = syncIndex(db, { sourceDirs, budgetMs });
		return {
			synced: true,
			syncMs: Math.round(report.durationMs * 10) / 10,
			pendingFiles: report.sessions.pending,
			missingFiles: 0,
			newDiagnostics: report.diagnosticCount,
			problems: report.problems.slice(0, 20),
			lastSyncAt: new Date().toISOString(),
		};
	}
	const started = performance.now();
	const sources = checkFreshness(db, sourceDirs);
	const last = db.query("SELECT value FROM meta WHERE key = 'last_sync'").get() as { value: string } | null;
	return {
		synced: false,
		syncMs: Math.round((performance.now() - started) * 10) / 10,
		pendingFiles: sources.reduce((n, s) => n + s.changed, 0),
		missingFiles: sources.reduce((n, s) => n + s.missing, 0),
		newDiagnostics: 0,
		problems: sources.filter((s) => !s.readable && s.error !== "ENOENT").map((s) => `cannot read ${s.dir}: ${s.error}`),
		lastSyncAt: last ? new Date((JSON.parse(last.value) as { at: number }).at).toISOString() : null,
	};
}
