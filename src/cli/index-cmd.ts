/** `pi-events index`: sync the index with the session files and report what changed. */
import { defineCommand } from "./argv.ts";
import { asIndexError, syncIndex, type SyncReport } from "../sync/sync.ts";
import { openIndex } from "../store/db.ts";
import { mergeAll, scrubInSlices } from "../sync/merge.ts";
import { PiEventsError } from "../errors.ts";
import { releaseScrubMarker } from "./background-scrub.ts";
import { commonArgs, debugLog, formatMs, plural, progressReporter } from "./shared.ts";
import { onOwnIndex, startCommand } from "./prologue.ts";
import { toJson } from "../present/json.ts";
import { terminalSafe } from "../present/terminal.ts";
import { writeErr, writeOut } from "./out.ts";

const args = {
	...commonArgs,
	verbose: { type: "boolean", description: "List every diagnostic (default: the first 10)" },
	full: {
		type: "boolean",
		description: "Stat every session file now (default: new and removed files, recent sessions, a slice of older ones; every file at least every 10 minutes)",
	},
	merge: {
		type: "boolean",
		description: "Then merge the full-text index into one segment (default: the tool server does it between calls after a large load)",
	},
	scrub: {
		type: "boolean",
		description:
			"Only finish scrubbing deleted sessions' text, without a sync: merge the full-text index in slices, then truncate the WAL (what a command starts in the background after a deletion)",
	},
} as const;

export const indexCommand = defineCommand({
	meta: { name: "index", description: "Sync the index with pi's session files (incremental)" },
	args,
	run({ args: a, rawArgs }) {
		const { settings } = startCommand(args, a, rawArgs);
		if (a.scrub) {
			if (a.full || a.merge) throw new PiEventsError("E_USAGE", "--scrub runs no sync and merges anyway: use it without --full and --merge");
			return scrubOnly(settings.indexPath, a.json === true);
		}
		return onOwnIndex(settings.indexPath, (db) => {
			const progress = progressReporter("indexing");
			const report = syncIndex(db, {
				sourceDirs: settings.sourceDirs,
				onProgress: progress.update,
				debug: debugLog(),
				check: { mode: a.full ? "full" : "auto" },
			});
			progress.finish();
			const merge = a.merge ? asIndexFailure(() => mergeAll(db)) : null;
			if (merge?.outcome === "busy")
				report.problems.push("the full-text index was not merged: another process kept writing the index; run `pi-events index --merge` again");
			if (a.json) {
				const { diagnosticsByFile: _byFile, pendingPaths: _pending, check, ...rest } = report;
				const lastFullCheckAt = check.lastFullCheckAt === null ? null : new Date(check.lastFullCheckAt).toISOString();
				writeOut(`${toJson({ index: settings.indexPath, ...rest, check: check.mode, lastFullCheckAt, ...(merge ? { merge } : {}) }, 2)}\n`);
			} else {
				writeOut(renderReport(report, settings.indexPath));
				if (merge?.outcome === "merged") writeOut(`merged: the full-text index into one segment in ${formatMs(merge.ms)}\n`);
			}
			printDiagnostics(report, a.verbose === true);
			return 0;
		});
	},
});

/** `index --scrub`: no sync, only the scrub a query's sync left to the merge (sync/scrub.ts). */
function scrubOnly(indexPath: string, json: boolean): number {
	const db = openIndex(indexPath, { oneShot: true });
	try {
		const { outcome, ms } = asIndexFailure(() => scrubInSlices(db));
		if (json) writeOut(`${toJson({ index: indexPath, scrub: outcome, ms: Math.round(ms) }, 2)}\n`);
		else if (outcome === "none") writeOut("scrub: nothing to scrub\n");
		else if (outcome === "scrubbed") writeOut(`scrubbed: deleted sessions' text merged out of the index in ${formatMs(ms)}\n`);
		// As with --merge: a busy index is a problem reported, not a failed command.
		if (outcome === "busy")
			writeErr("pi-events: the scrub is not finished: another process kept the index busy; the next sync or `pi-events index` finishes it\n");
		return 0;
	} finally {
		db.close();
		releaseScrubMarker(indexPath);
	}
}

/** The merge's and the scrub's writes fail like a sync's: a full disk or an I/O error is E_INDEX with a plain message. */
function asIndexFailure<T>(work: () => T): T {
	try {
		return work();
	} catch (err) {
		throw asIndexError(err);
	}
}

function renderReport(r: SyncReport, indexPath: string): string {
	const s = r.sessions;
	const mbps = r.durationMs > 0 ? r.bytesRead / 1e6 / (r.durationMs / 1000) : 0;
	const lines = [
		`index: ${indexPath}`,
		`sessions: ${s.new} new, ${s.appended} appended, ${s.rebuilt} rebuilt, ${s.removed} removed, ${s.unchanged} unchanged` +
			(s.keptLastGood ? `, ${s.keptLastGood} kept last-good` : "") +
			(s.rejected ? `, ${s.rejected} not sessions` : "") +
			(s.pending ? `, ${s.pending} pending` : ""),
		`added: ${plural(r.eventsAdded, "event")}, ${plural(r.fragmentsAdded, "fragment")} from ${(r.bytesRead / 1e6).toFixed(1)} MB`,
		`diagnostics: ${r.diagnosticCount}`,
		`time: ${formatMs(r.durationMs)}${r.bytesRead > 1e6 ? ` (${mbps.toFixed(1)} MB/s)` : ""}`,
		`checked: ${r.check.mode === "full" ? "every session file" : "new and removed files, recent sessions, a slice of older ones"}; every file last checked ${r.check.lastFullCheckAt === null ? "never" : new Date(r.check.lastFullCheckAt).toISOString()}`,
	];
	return `${terminalSafe(lines.join("\n"))}\n`;
}

function printDiagnostics(r: SyncReport, all: boolean): void {
	for (const p of r.problems) writeErr(`pi-events: ${terminalSafe(p)}\n`);
	const shown = all ? r.diagnostics : r.diagnostics.slice(0, 10);
	for (const d of shown) writeErr(`pi-events: ${terminalSafe(`${d.file}:${d.line} (byte ${d.offset}): ${d.kind}: ${d.detail}`)}\n`);
	if (r.diagnosticCount > shown.length) {
		writeErr(`pi-events: ${r.diagnosticCount - shown.length} more diagnostics (use --verbose or --json)\n`);
	}
}
