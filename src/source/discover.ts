/**
 * Lists the session files under the configured source directories: `*.jsonl` in each directory
 * and one level below (pi's `sessions/<encoded-cwd>/`; symlinked subdirectories are followed).
 * Opens nothing but directories and stats; records which directories read fine, because a
 * session may only leave the index when its file is absent from a directory that read fine.
 */
import { type Dirent, lstatSync, readdirSync, statSync } from "node:fs";
import type { FileStat } from "./read.ts";

export interface SourceDir {
	path: string;
	/** Where the directory came from: pi's default, pi's custom dir, a flag or the config file. */
	origin: "pi" | "pi-session-dir" | "flag" | "config";
}

export interface DiscoveredFile extends FileStat {
	path: string;
	sourceDir: string;
}

interface DirObservation {
	path: string;
	ok: boolean;
	/** errno code when the directory could not be read (ENOENT, EACCES, EIO...). */
	error?: string;
	/** Device of the directory when it read fine: a different filesystem now (an unmount) is no proof of deletion. */
	dev?: number;
}

export interface Discovery {
	files: DiscoveredFile[];
	/** Every directory looked at (source roots and their subdirectories). */
	dirs: Map<string, DirObservation>;
	/** Files that were listed but could not be stat'ed (kept in the index, reported). */
	unreadable: { path: string; sourceDir: string; error: string }[];
}

export function discover(sourceDirs: readonly SourceDir[]): Discovery {
	const result: Discovery = { files: [], dirs: new Map(), unreadable: [] };
	const seen = new Set<string>();
	for (const root of sourceDirs) {
		scanDir(root.path, root.path, 0, result, seen);
	}
	// No sort here: the indexer orders only the files it has to read.
	return result;
}

function scanDir(dir: string, sourceDir: string, depth: number, result: Discovery, seen: Set<string>): void {
	if (result.dirs.has(dir)) return;
	let entries: Dirent[];
	try {
		entries = readdirSync(dir, { withFileTypes: true });
	} catch (err) {
		result.dirs.set(dir, { path: dir, ok: false, error: errno(err) });
		return;
	}
	let dev: number | undefined;
	try {
		dev = statSync(dir).dev;
	} catch {
		dev = undefined;
	}
	result.dirs.set(dir, { path: dir, ok: true, dev });
	const prefix = dir.endsWith("/") ? dir : `${dir}/`;
	for (const entry of entries) {
		const name = entry.name;
		const isJsonl = name.endsWith(".jsonl");
		// Subdirectories are only followed from a source root; a plain directory needs no stat.
		if (!isJsonl) {
			if (depth === 0 && (entry.isDirectory() || entry.isSymbolicLink())) {
				const full = prefix + name;
				let isDir = entry.isDirectory();
				if (!isDir) {
					try {
						isDir = statSync(full).isDirectory();
					} catch (err) {
						// A broken or looping link: remembered as an unreadable directory, never as "gone".
						result.dirs.set(full, { path: full, ok: false, error: errno(err) });
					}
				}
				if (isDir) scanDir(full, sourceDir, depth + 1, result, seen);
			}
			continue;
		}
		const full = prefix + name;
		let st: ReturnType<typeof statSync>;
		try {
			st = statSync(full);
		} catch (err) {
			result.unreadable.push({ path: full, sourceDir, error: errno(err) });
			continue;
		}
		if (!st?.isFile() || seen.has(full)) continue;
		seen.add(full);
		result.files.push({ path: full, sourceDir, dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs });
	}
}

/** Whether a path exists (without following a final symlink), or the errno code that kept us from knowing. */
export function presence(path: string): "present" | string {
	try {
		lstatSync(path);
		return "present";
	} catch (err) {
		return errno(err);
	}
}

/** The errno code of a filesystem error (ENOENT, EACCES...); anything else is EUNKNOWN, never a SQLite code. */
export function errno(err: unknown): string {
	const code = (err as { code?: unknown })?.code;
	return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) ? code : "EUNKNOWN";
}
