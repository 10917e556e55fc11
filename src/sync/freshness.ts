/**
 * Freshness for queries: before answering, run a bounded incremental sync (or, with sync off,
 * only compare the sources with the index), so every answer says how fresh it is and "no
 * results" is never a silent lie. A scoped answer names only problems of its own scope: file
 * and directory names encode other workspaces' paths.
 */
import type { Database } from "bun:sqlite";
import type { Scope } from "../auth/scope.ts";
import { Gate } from "../gate/gate.ts";
import { PiEventsError } from "../errors.ts";
import type { SourceDir } from "../source/discover.ts";
import { lastSync } from "../store/status.ts";
import { checkFreshness } from "./compare.ts";
import { syncIndex } from "./sync.ts";

/** How long a query may spend syncing before it answers from what is indexed. */
const QUERY_SYNC_BUDGET_MS = 3000;
const MAX_PROBLEMS = 20;

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

interface RefreshOptions {
	sync: boolean;
	budgetMs?: number;
	/** The caller's scope: problems outside it are counted, not named. Null: show all. */
	scope?: Scope | null;
	debug?: (line: string) => void;
}

/** Freshness before scoping: every problem, with the path it concerns. */
export interface RawFreshness extends Freshness {
	problemPaths: string[];
}

export function refresh(db: Database, sourceDirs: readonly SourceDir[], options: RefreshOptions): Freshness {
	return forScope(db, observe(db, sourceDirs, options), sourceDirs, options.scope ?? null);
}

/** Sync (bounded) or compare, for any caller; `forScope` then cuts it to one caller's view. */
export function observe(db: Database, sourceDirs: readonly SourceDir[], options: RefreshOptions): RawFreshness {
	if (options.sync) {
		let report: ReturnType<typeof syncIndex>;
		try {
			report = syncIndex(db, { sourceDirs, budgetMs: options.budgetMs ?? QUERY_SYNC_BUDGET_MS, debug: options.debug });
		} catch (err) {
			// The index could not be updated (full disk, I/O): answer from what it holds, and say so.
			if (!(err instanceof PiEventsError)) throw err;
			const last = lastSync(db);
			return {
				synced: false,
				syncMs: 0,
				pendingFiles: 0,
				missingFiles: 0,
				newDiagnostics: 0,
				problems: [err.message],
				problemPaths: [""],
				lastSyncAt: last ? new Date(last.at).toISOString() : null,
			};
		}
		return {
			synced: true,
			syncMs: Math.round(report.durationMs * 10) / 10,
			pendingFiles: report.sessions.pending,
			missingFiles: 0,
			newDiagnostics: report.diagnosticCount,
			problems: report.problems,
			problemPaths: report.problemPaths,
			lastSyncAt: new Date().toISOString(),
		};
	}
	const started = performance.now();
	const sources = checkFreshness(db, sourceDirs);
	const unreadable = sources.filter((s) => !s.readable && s.error !== "ENOENT");
	const last = lastSync(db);
	return {
		synced: false,
		syncMs: Math.round((performance.now() - started) * 10) / 10,
		pendingFiles: sources.reduce((n, s) => n + s.changed, 0),
		missingFiles: sources.reduce((n, s) => n + s.missing, 0),
		newDiagnostics: 0,
		problems: unreadable.map((s) => `cannot read ${s.dir}: ${s.error}`),
		problemPaths: unreadable.map((s) => s.dir),
		lastSyncAt: last ? new Date(last.at).toISOString() : null,
	};
}

export function forScope(db: Database, raw: RawFreshness, sourceDirs: readonly SourceDir[], scope: Scope | null): Freshness {
	const { problemPaths, ...freshness } = raw;
	return { ...freshness, problems: visibleProblems(db, raw.problems, problemPaths, sourceDirs, scope) };
}

function visibleProblems(db: Database, problems: string[], paths: string[], sourceDirs: readonly SourceDir[], scope: Scope | null): string[] {
	if (scope === null || scope.roots === null) return problems.slice(0, MAX_PROBLEMS);
	const roots = new Set(sourceDirs.map((d) => d.path));
	const gate = new Gate(db, scope);
	const shown: string[] = [];
	let hidden = 0;
	problems.forEach((problem, i) => {
		const path = paths[i] ?? "";
		const visible = path === "" || roots.has(path) || gate.fileInRoots(path);
		if (visible && shown.length < MAX_PROBLEMS) shown.push(problem);
		else hidden++;
	});
	if (hidden > 0) shown.push(`${hidden} more indexing problem${hidden === 1 ? "" : "s"} outside this scope (pi-events status shows them)`);
	return shown;
}
