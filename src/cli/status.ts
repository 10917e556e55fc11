/** `pi-events status`: where the index is, what it holds, and how fresh each source is. */
import { existsSync, statSync } from "node:fs";
import { defineCommand } from "./argv.ts";
import { checkFreshness } from "../sync/compare.ts";
import { openIndex } from "../store/db.ts";
import { indexCounts } from "../store/status.ts";
import { checkFlags, commonArgs, formatMs, settingsFrom } from "./shared.ts";
import { groupThousands } from "../project/text.ts";
import { toJson } from "../present/json.ts";
import { terminalSafe } from "../present/terminal.ts";
import { writeOut } from "./out.ts";

const args = { ...commonArgs } as const;

export const statusCommand = defineCommand({
	meta: { name: "status", description: "Show the index location, counts, last sync and source freshness" },
	args,
	run({ args: a, rawArgs }) {
		checkFlags(rawArgs, args);
		const settings = settingsFrom(a, rawArgs);
		const exists = existsSync(settings.indexPath);
		const db = openIndex(settings.indexPath, { oneShot: true });
		try {
			const counts = indexCounts(db);
			const sources = checkFreshness(db, settings.sourceDirs);
			const sizeBytes = fileSize(settings.indexPath) + fileSize(`${settings.indexPath}-wal`);
			const status = { index: settings.indexPath, existed: exists, sizeBytes, configFile: settings.configFile, ...counts, sources };
			if (a.json) {
				writeOut(`${toJson(status, 2)}\n`);
				return 0;
			}
			const last = counts.lastSync
				? `${new Date(counts.lastSync.at).toISOString()} (${formatMs(counts.lastSync.durationMs)}${counts.lastSync.complete ? "" : ", incomplete"})`
				: "never";
			const lines = [
				`index:       ${settings.indexPath} (${(sizeBytes / 1e6).toFixed(1)} MB, schema ${counts.schema})`,
				`config:      ${settings.configFile ?? "none"}`,
				`sessions:    ${groupThousands(counts.sessions)} (${counts.files} files; ${counts.rejectedFiles} not sessions, ${counts.failedFiles} kept last-good)`,
				`events:      ${groupThousands(counts.events)} (${groupThousands(counts.fragments)} searchable fragments)`,
				`diagnostics: ${counts.diagnostics}`,
				`last sync:   ${last}`,
				...(counts.deletedTextPending
					? ["deleted:     a removed session's text is still in the index files, being merged out (`pi-events index` finishes it now)"]
					: counts.mergePending
						? ["full text:   segments to merge (the tool server merges them between calls; or `pi-events index --merge`)"]
						: []),
				"sources:",
				...sources.map((s) => {
					const state = !s.readable
						? s.error === "ENOENT"
							? "missing"
							: `unreadable (${s.error})`
						: s.changed || s.missing || s.kept
							? `${s.changed} changed, ${s.missing} gone since last sync${s.kept ? `, ${s.kept} not listed but kept (unreadable directory or unmounted disk)` : ""}`
							: "up to date";
					return `  ${s.dir} [${s.origin}]: ${s.files} files, ${state}`;
				}),
			];
			const configured = new Set(settings.sourceDirs.map((d) => d.path));
			for (const d of counts.indexedDirs) {
				if (!configured.has(d.dir)) lines.push(`  ${d.dir} [indexed earlier, not configured now]: ${d.files} files`);
			}
			writeOut(`${terminalSafe(lines.join("\n"))}\n`);
			return 0;
		} finally {
			db.close();
		}
	},
});

function fileSize(path: string): number {
	try {
		return statSync(path).size;
	} catch {
		return 0;
	}
}
