/** What one sync did: counts per outcome, diagnostics (bounded), and file- or directory-level problems. */
import type { Diagnostic } from "../model.ts";

export interface SyncCounts {
	new: number;
	appended: number;
	rebuilt: number;
	removed: number;
	unchanged: number;
	/** Changed files that could not be parsed or read: their last known-good index is kept. */
	keptLastGood: number;
	/** Files that are not pi sessions (no header). */
	rejected: number;
	/** Changed files not looked at because the time budget ran out. */
	pending: number;
}

export interface SyncReport {
	sessions: SyncCounts;
	eventsAdded: number;
	fragmentsAdded: number;
	bytesRead: number;
	diagnosticCount: number;
	diagnostics: Diagnostic[];
	/** File- and directory-level problems (unreadable dirs, files kept, I/O errors). */
	problems: string[];
	/** For each problem, the file or directory it concerns ("" for none): lets a scoped answer hide other workspaces. */
	problemPaths: string[];
	durationMs: number;
	complete: boolean;
	/** How the sources were looked at (sync/check.ts): every file, or what can have changed; when every file was last checked (ms). */
	check: { mode: "full" | "incremental"; lastFullCheckAt: number | null };
	/** Diagnostics per session file (all counted), so an answer can count only its own scope's. */
	diagnosticsByFile: Map<string, number>;
	/** The changed files left for later (budget): their paths, so an answer can count only its own scope's. */
	pendingPaths: string[];
}

export function emptyReport(): SyncReport {
	return {
		sessions: { new: 0, appended: 0, rebuilt: 0, removed: 0, unchanged: 0, keptLastGood: 0, rejected: 0, pending: 0 },
		eventsAdded: 0,
		fragmentsAdded: 0,
		bytesRead: 0,
		diagnosticCount: 0,
		diagnostics: [],
		problems: [],
		problemPaths: [],
		durationMs: 0,
		complete: true,
		check: { mode: "full", lastFullCheckAt: null },
		diagnosticsByFile: new Map(),
		pendingPaths: [],
	};
}

export function addProblem(report: SyncReport, path: string, message: string): void {
	report.problems.push(message);
	report.problemPaths.push(path);
}

/** Count every diagnostic, keep at most `max` in the report. */
export function diagnosticSink(report: SyncReport, max: number): (list: Diagnostic[], count?: number) => void {
	return (list, count = list.length) => {
		report.diagnosticCount += count;
		const file = list[0]?.file;
		if (file !== undefined && count > 0) report.diagnosticsByFile.set(file, (report.diagnosticsByFile.get(file) ?? 0) + count);
		for (const d of list) if (report.diagnostics.length < max) report.diagnostics.push(d);
	};
}
