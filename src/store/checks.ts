/**
 * What the freshness check needs from the index without reading every file row: the directories
 * whose listing matched the files table (and at which mtime), the rows of one directory, the
 * recently written files, one slice of the rest in key order, and the caller's own file.
 */
import type { Database } from "bun:sqlite";
import type { FileObservation } from "./write.ts";

export interface DirRow {
	path: string;
	/** The source root the directory belongs to (a root's own row has path = source_dir). */
	source_dir: string;
	dev: number;
	ino: number;
	/** The mtime at which its listing matched the files table; null: list it again next time. */
	listed_mtime: number | null;
	checked_at: number;
}

const OBSERVATION = "file_key, path, source_dir, dev, ino, size, mtime_ms";

export class CheckStore {
	constructor(private readonly db: Database) {}

	/** The recorded directories of these source roots (roots and their subdirectories). */
	dirsOf(sourceDirs: readonly string[]): DirRow[] {
		if (sourceDirs.length === 0) return [];
		return this.db.query(`SELECT * FROM dirs WHERE source_dir IN (${sourceDirs.map(() => "?").join(", ")})`).all(...sourceDirs) as DirRow[];
	}

	/** Indexed files directly in `dir` (not in its subdirectories). */
	rowsInDir(dir: string): FileObservation[] {
		const prefix = dir.endsWith("/") ? dir : `${dir}/`;
		return this.rowsUnder(dir).filter((r) => !r.path.includes("/", prefix.length));
	}

	/** Indexed files anywhere under `dir` (a range of the unique path index: '0' follows '/'). */
	rowsUnder(dir: string): FileObservation[] {
		const base = dir.endsWith("/") ? dir.slice(0, -1) : dir;
		return this.db.query(`SELECT ${OBSERVATION} FROM files WHERE path > ?1 AND path < ?2`).all(`${base}/`, `${base}0`) as FileObservation[];
	}

	/** Files whose last seen mtime is at or after `sinceMs` (the recently written sessions). */
	recentRows(sinceMs: number): FileObservation[] {
		return this.db.query(`SELECT ${OBSERVATION} FROM files WHERE mtime_ms >= ?1`).all(sinceMs) as FileObservation[];
	}

	/** Up to `limit` files from key `fromKey` on, in key order. */
	sliceRows(fromKey: number, limit: number): FileObservation[] {
		return this.db.query(`SELECT ${OBSERVATION} FROM files WHERE file_key >= ?1 ORDER BY file_key LIMIT ?2`).all(fromKey, limit) as FileObservation[];
	}

	/** The row of one file, by its path or its canonical path. */
	rowOf(path: string): FileObservation | null {
		return (this.db.query(`SELECT ${OBSERVATION} FROM files WHERE path = ?1 OR real_path = ?1 LIMIT 1`).get(path) as FileObservation | null) ?? null;
	}

	/** Every file row (a full check). */
	allRows(): FileObservation[] {
		return this.db.query(`SELECT ${OBSERVATION} FROM files`).all() as FileObservation[];
	}

	upsertDir(row: DirRow): void {
		this.db.run(
			`INSERT INTO dirs (path, source_dir, dev, ino, listed_mtime, checked_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
			 ON CONFLICT(path) DO UPDATE SET source_dir = excluded.source_dir, dev = excluded.dev, ino = excluded.ino,
			   listed_mtime = excluded.listed_mtime, checked_at = excluded.checked_at`,
			[row.path, row.source_dir, row.dev, row.ino, row.listed_mtime, row.checked_at],
		);
	}

	deleteDir(path: string): void {
		this.db.run("DELETE FROM dirs WHERE path = ?1", [path]);
	}
}
