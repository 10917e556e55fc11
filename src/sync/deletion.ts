/**
 * Removing indexed sessions whose files are gone, only when the source observation establishes
 * that they are: a missing disk or an unreadable directory never deletes anything.
 */
import type { Database } from "bun:sqlite";
import { dirname } from "node:path";
import { type Discovery, presence, type SourceDir } from "../source/discover.ts";
import type { FileObservation, IndexWriter } from "../store/write.ts";
import { addProblem, type SyncReport } from "./report.ts";

export function removeVanished(
	db: Database,
	writer: IndexWriter,
	found: Discovery,
	known: Map<string, FileObservation>,
	sourceDirs: readonly SourceDir[],
	report: SyncReport,
): void {
	const roots = new Set(sourceDirs.map((d) => d.path));
	const present = new Set(found.files.map((f) => f.path));
	const unreadable = new Set(found.unreadable.map((u) => u.path));
	for (const row of known.values()) {
		if (!roots.has(row.source_dir) || present.has(row.path) || unreadable.has(row.path)) continue;
		const verdict = confirmedGone(row.path, row.dev, row.source_dir, found);
		if (verdict !== true) {
			addProblem(report, row.path, `kept ${row.path}: ${verdict}`);
			continue;
		}
		const hadSession = writer.sessionKeyOf(row.file_key) !== null;
		db.transaction(() => writer.deleteFile(row.file_key)).immediate();
		if (hadSession) report.sessions.removed++;
	}
}

/**
 * A file is gone only when the nearest directory above it that still exists was read fine this
 * sync and everything between is absent (ENOENT). An unreadable or missing source root (an
 * unmounted disk) never counts as confirmation. Returns true, or why the file is kept. `status`
 * asks the same question, so it never calls gone what a sync keeps.
 */
export function confirmedGone(path: string, fileDev: number, sourceDir: string, found: Discovery): true | string {
	const file = presence(path);
	if (file === "present") return "it still exists but was not listed";
	if (file !== "ENOENT") return `it cannot be checked (${file})`;
	let dir = dirname(path);
	for (;;) {
		const seen = found.dirs.get(dir);
		if (seen?.ok) {
			// Another filesystem where the file's was (a source directory unmounted, an empty mount point left): keep.
			if (seen.dev !== undefined && seen.dev !== fileDev) return `${dir} is on another device than when the file was indexed (unmounted?)`;
			return true;
		}
		if (seen && seen.error !== "ENOENT") return `its directory ${dir} could not be read (${seen.error})`;
		if (dir === sourceDir || dir === dirname(dir)) return `its source directory ${sourceDir} is missing (unmounted?)`;
		const here = presence(dir);
		if (here === "present") return `its directory ${dir} exists but was not read`;
		if (here !== "ENOENT") return `its directory ${dir} cannot be checked (${here})`;
		dir = dirname(dir);
	}
}
