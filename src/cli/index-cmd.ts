/** `pi-events index`: sync the index with the session files and report what changed. */
import { defineCommand } from "./argv.ts";
import { syncIndex, type SyncReport } from "../sync/sync.ts";
import { openIndex } from "../store/db.ts";
import { mergeAll } from "../sync/merge.ts";
import { checkFlags, commonArgs, debug, formatMs, plural, progressReporter, settingsFrom } from "./shared.ts";
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
} as const;

export const indexCommand = defineCommand({
	meta: { name: "index", description: "Sync the index with pi's session files (incremental)" },
	args,
	run({ args: a, rawArgs }) {
		checkFlags(rawArgs, args);
		const settings = settingsFrom(a, rawArgs);
		const db = openIndex(settings.indexPath, { oneShot: true });
		try {
			const progress = progressReporter("indexing");
			const report = syncIndex(db, { sourceDirs: settings.sourceDirs, onProgress: progress.update, debug, check: { mode: a.full ? "full" : "auto" } });
			progress.finish();
			const merge = a.merge ? mergeAll(db) : null;
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
		} finally {
			db.close();
		}
	},
});

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
