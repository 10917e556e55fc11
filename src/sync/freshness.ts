/**
 * Freshness for queries: before answering, run a bounded incremental sync (or, with sync off,
 * only compare the sources with the index), so every answer says how fresh it is and "no
 * results" is never a silent lie. A scoped answer names only problems of its own scope: file
 * and directory names encode other workspaces' paths.
 */
import type { Database } from "bun:sqlite";
import { Gate } from "../gate/gate.ts";
import { PiEventsError } from "../errors.ts";
import { BUSY_PROBLEM } from "../model.ts";
import { isBusyError } from "../store/db.ts";
import type { SourceDir } from "../source/discover.ts";
import { type Scope, sessionInScope } from "../auth/scope.ts";
import { lastFullCheck, lastSync } from "../store/status.ts";
import type { CheckPolicy } from "./check.ts";
import { compareSources, headerCwd } from "./compare.ts";
import { syncIndex } from "./sync.ts";

/** How long a query may spend syncing before it answers from what is indexed. */
const QUERY_SYNC_BUDGET_MS = 3000;
/**
 * How long a query's sync waits for another process's write lock. An incremental sync holds it for
 * milliseconds; a long one (a cold `pi-events index`, a large backlog) holds it for its batches,
 * seconds on end, and a query waiting on it waited up to SQLite's 10 s per batch (a search during a
 * 1 GB cold index: 3.3–7.6 s). Past this wait the query answers from what the index holds and says
 * that another process is updating it.
 */
const QUERY_LOCK_WAIT_MS = 300;
const MAX_PROBLEMS = 20;

export interface Freshness {
	/** Whether a sync ran before this answer. */
	synced: boolean;
	/** The time this answer spent syncing (0 when it reused an earlier sync: see syncAgeMs). */
	syncMs: number;
	/**
	 * Only when the tool server answered from its own sync of a moment ago instead of syncing again
	 * (at most every 1.5 s): how long before this call that sync ran. Absent otherwise.
	 */
	syncAgeMs?: number;
	/** Session files of the caller's scope that changed since they were indexed and were not synced (budget or --no-sync). */
	pendingFiles: number;
	/** Indexed files of the caller's scope no longer present (removed on the next sync). */
	missingFiles: number;
	/** Diagnostics this sync found in the caller's scope (malformed lines and the like). */
	newDiagnostics: number;
	/** Problems that may hide results (unreadable directories, files kept last-good). */
	problems: string[];
	lastSyncAt: string | null;
	/**
	 * What this answer looked at (sync/check.ts): "full", every session file; "incremental", the
	 * directories (new and removed files), sessions written in the last 24 hours, the caller's own
	 * session and, when syncing, a slice of older ones.
	 */
	check: "full" | "incremental";
	/** When every session file was last checked: appends older than this are in the answer (or pending). */
	lastFullCheckAt: string | null;
}

interface RefreshOptions {
	sync: boolean;
	budgetMs?: number;
	/** The caller's scope: counts and problems are cut to it. Null: everything. */
	scope?: Scope | null;
	/** The caller's own session file, checked on every call (default: the scope's current session file). */
	callerFile?: string | null;
	/**
	 * When the last full check is stale: "slice" (default) stats a larger slice of idle files, at a
	 * cost that does not grow with history; "full" runs the full check (the server's sync after a
	 * turn, when nobody waits for an answer). See sync/check.ts.
	 */
	onStale?: "full" | "slice";
	debug?: (line: string) => void;
}

/** What a sync needs of the settings (config.ts Settings): where the sessions are, and how large an index it scrubs at once (sync/scrub.ts). */
export interface SyncSources {
	sourceDirs: readonly SourceDir[];
	scrubInlineMaxBytes?: number;
}

/** Freshness before scoping: totals, and the paths each count and problem concerns. */
export interface RawFreshness extends Freshness {
	problemPaths: string[];
	pendingPaths: string[];
	missingPaths: string[];
	diagnosticsByFile: Map<string, number>;
}

export function refresh(db: Database, sources: SyncSources, options: RefreshOptions): Freshness {
	const callerFile = options.callerFile ?? options.scope?.current?.sessionFile ?? null;
	return forScope(db, observe(db, sources, { ...options, callerFile }), sources.sourceDirs, options.scope ?? null);
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Sync (bounded) or compare, for any caller; `forScope` then cuts it to one caller's view. */
export function observe(db: Database, sources: SyncSources, options: RefreshOptions): RawFreshness {
	const { sourceDirs } = sources;
	// A query's check never runs a full one, whose cost grows with history (check.ts: onStale).
	const check = { callerFile: options.callerFile ?? null, onStale: options.onStale ?? "slice" };
	const started = performance.now();
	if (options.sync) {
		let report: ReturnType<typeof syncIndex>;
		try {
			report = syncIndex(db, {
				sourceDirs,
				budgetMs: options.budgetMs ?? QUERY_SYNC_BUDGET_MS,
				lockWaitMs: QUERY_LOCK_WAIT_MS,
				scrubInlineMaxBytes: sources.scrubInlineMaxBytes,
				debug: options.debug,
				check,
			});
		} catch (err) {
			// The index could not be updated (full disk, I/O, another process's lock): answer from what it
			// holds, and say so.
			if (!(err instanceof PiEventsError)) throw err;
			if (isBusyError(err.cause)) return notSynced(db, sourceDirs, check, [BUSY_PROBLEM], started);
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
				check: "incremental",
				lastFullCheckAt: iso(lastFullCheck(db)),
				pendingPaths: [],
				missingPaths: [],
				diagnosticsByFile: new Map(),
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
			check: report.check.mode,
			lastFullCheckAt: iso(report.check.lastFullCheckAt),
			pendingPaths: report.pendingPaths,
			missingPaths: [],
			diagnosticsByFile: report.diagnosticsByFile,
		};
	}
	return notSynced(db, sourceDirs, check, [], started);
}

/**
 * Freshness without a sync: the sources compared with the index (read-only), with `problems`
 * first; `syncMs` counts from `started` (a sync that waited for a lock in vain included).
 */
function notSynced(db: Database, sourceDirs: readonly SourceDir[], check: CheckPolicy, problems: string[], started: number): RawFreshness {
	const looked = compareSources(db, sourceDirs, check);
	const last = lastSync(db);
	return {
		synced: false,
		syncMs: Math.round((performance.now() - started) * 10) / 10,
		pendingFiles: looked.pending.length,
		missingFiles: looked.missing.length,
		newDiagnostics: 0,
		// A problem with no path of its own ("") is shown in every scope (visibleProblems).
		problems: [...problems, ...looked.unreadable.map((d) => `cannot read ${d.path}: ${d.error}`)],
		problemPaths: [...problems.map(() => ""), ...looked.unreadable.map((d) => d.path)],
		lastSyncAt: last ? new Date(last.at).toISOString() : null,
		check: looked.mode,
		lastFullCheckAt: iso(looked.lastFullCheckAt),
		pendingPaths: looked.pending,
		missingPaths: looked.missing,
		diagnosticsByFile: new Map(),
	};
}

/**
 * The caller's view: counts of pending, missing and diagnosed files only within its scope (a
 * session file counts when its session's cwd is in scope: indexed files by their indexed cwd,
 * files not indexed yet by their header), and problems named only within it.
 */
export function forScope(db: Database, raw: RawFreshness, sourceDirs: readonly SourceDir[], scope: Scope | null): Freshness {
	const { problemPaths, pendingPaths, missingPaths, diagnosticsByFile, ...freshness } = raw;
	const problems = visibleProblems(db, raw.problems, problemPaths, sourceDirs, scope);
	if (scope === null || scope.roots === null) return { ...freshness, problems };
	const gate = new Gate(db, scope);
	// An indexed file by its indexed session (the gate), else by the cwd its header records now.
	const inScope = (path: string) => gate.fileInRoots(path) || sessionInScope(scope, headerCwd(path));
	let newDiagnostics = 0;
	for (const [path, n] of diagnosticsByFile) if (inScope(path)) newDiagnostics += n;
	return {
		...freshness,
		pendingFiles: pendingPaths.filter(inScope).length,
		missingFiles: missingPaths.filter(inScope).length,
		newDiagnostics,
		problems,
	};
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
