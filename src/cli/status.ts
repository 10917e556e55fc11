/** `pi-events status`: where the index is, what it holds, and how fresh each source is. */
import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { defineCommand } from "./argv.ts";
import { checkFreshness } from "../sync/compare.ts";
import { type IndexAccess, indexAccess } from "../store/access.ts";
import { indexCounts } from "../store/status.ts";
import { commonArgs, formatMs } from "./shared.ts";
import { onOwnIndex, startCommand } from "./prologue.ts";
import { groupThousands } from "../project/text.ts";
import { toJson } from "../present/json.ts";
import { terminalSafe } from "../present/terminal.ts";
import { writeOut } from "./out.ts";

const args = { ...commonArgs } as const;

export const statusCommand = defineCommand({
	meta: { name: "status", description: "Show the index location, counts, last sync and source freshness" },
	args,
	run({ args: a, rawArgs }) {
		const { settings } = startCommand(args, a, rawArgs);
		const exists = existsSync(settings.indexPath);
		return onOwnIndex(settings.indexPath, (db) => {
			const counts = indexCounts(db);
			const sources = checkFreshness(db, settings.sourceDirs);
			const sizeBytes = fileSize(settings.indexPath) + fileSize(`${settings.indexPath}-wal`);
			const access = indexAccess(settings.indexPath);
			const status = { index: settings.indexPath, existed: exists, sizeBytes, access, configFile: settings.configFile, ...counts, sources };
			if (a.json) {
				writeOut(`${toJson(status, 2)}\n`);
				return 0;
			}
			const last = counts.lastSync
				? `${new Date(counts.lastSync.at).toISOString()} (${formatMs(counts.lastSync.durationMs)}${counts.lastSync.complete ? "" : ", incomplete"})`
				: "never";
			const lines = [
				`index:       ${settings.indexPath} (${(sizeBytes / 1e6).toFixed(1)} MB, schema ${counts.schema})`,
				...(access?.openToOthers ? [`access:      ${openAccessLine(settings.indexPath, access)}`] : []),
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
		});
	},
});

/**
 * What other accounts may do with the index, and why pi-events left it so: it makes the directory
 * 0700 and the files 0600, but leaves a directory that already existed as it is.
 */
function openAccessLine(indexPath: string, access: IndexAccess): string {
	const dir = dirname(indexPath);
	const fileOpen = access.fileMode !== null && (Number.parseInt(access.fileMode, 8) & 0o077) !== 0;
	const what = fileOpen
		? `other accounts may read the index (file ${access.fileMode}, directory ${access.directoryMode})`
		: `the index directory is open to other accounts (${access.directoryMode}: they see its file names and sizes, not their contents)`;
	return `${what}; pi-events leaves a directory it did not make as it is: \`chmod 700 ${dir}\` closes it`;
}

function fileSize(path: string): number {
	try {
		return statSync(path).size;
	} catch {
		return 0;
	}
}
