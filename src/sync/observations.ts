/**
 * What the index last saw of each session file (device, inode, size, mtime), and the one rule
 * that says a file is unchanged since: every one of those is equal.
 */
import type { Database } from "bun:sqlite";
import type { FileStat } from "../source/read.ts";
import type { FileObservation, IndexWriter } from "../store/write.ts";

/** The one stat-equality rule: a file is unchanged when device, inode, size and mtime all match. */
export function unchangedSince(row: Pick<FileObservation, "dev" | "ino" | "size" | "mtime_ms"> | null | undefined, file: FileStat): boolean {
	return !!row && row.dev === file.dev && row.ino === file.ino && row.size === file.size && row.mtime_ms === file.mtimeMs;
}

/**
 * The file observations of the last sync on this connection, reused while no other connection
 * has committed (PRAGMA data_version) and this one changed nothing: a no-op sync then costs the
 * directory listing and one stat per file, not a reload of every file row.
 */
const knownCache = new WeakMap<Database, { dataVersion: number; files: Map<string, FileObservation> }>();

export function knownFiles(db: Database, writer: IndexWriter): Map<string, FileObservation> {
	const dataVersion = writer.dataVersion();
	const cached = knownCache.get(db);
	if (cached && cached.dataVersion === dataVersion) return cached.files;
	const files = writer.loadFiles();
	knownCache.set(db, { dataVersion, files });
	return files;
}

export function forgetKnown(db: Database): void {
	knownCache.delete(db);
}

/**
 * Keep the cached observations equal to the files table after this connection's own writes
 * (which do not move data_version): re-read the few changed rows, or drop the cache after a
 * large sync or any removal.
 */
export function refreshKnown(db: Database, writer: IndexWriter, changedPaths: readonly string[], removedAny: boolean): void {
	const cached = knownCache.get(db);
	if (!cached) return;
	if (changedPaths.length > 100 || removedAny) {
		knownCache.delete(db);
		return;
	}
	for (const path of changedPaths) {
		const row = writer.loadObservation(path);
		if (row) cached.files.set(path, row);
		else cached.files.delete(path);
	}
}
