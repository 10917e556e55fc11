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

export interface DirObservation {
	path: string;
	ok: boolean;
	/** errno code when the directory could not be read (ENOENT, EACCES, EIO...). */
	error?: string;
	/** Device of the directory when it read fine: a different filesystem now (an unmount) is no proof of deletion. */
	dev?: number;
	ino?: number;
	/** Modification time before the listing: a later create, remove or rename in it moves it. */
	mtimeMs?: number;
}

export interface Discovery {
	files: DiscoveredFile[];
	/** Every directory looked at (source roots and their subdirectories). */
	dirs: Map<string, DirObservation>;
	/** Files that were listed but could not be stat'ed (kept in the index, reported). */
	unreadable: { path: string; sourceDir: string; error: string }[];
}

export function emptyDiscovery(): Discovery {
	return { files: [], dirs: new Map(), unreadable: [] };
}

/** Every directory listed, every session file stat'ed. */
export function discover(sourceDirs: readonly SourceDir[]): Discovery {
	const result = emptyDiscovery();
	const seen = new Set<string>();
	for (const root of sourceDirs) {
		if (result.dirs.has(root.path)) continue;
		for (const sub of listDir(root.path, root.path, true, result, seen)) {
			if (!result.dirs.has(sub)) listDir(sub, root.path, false, result, seen);
		}
	}
	// No sort here: the indexer orders only the files it has to read.
	return result;
}

/** Stat a directory (following a symlink) without listing it. */
export function statDir(dir: string): DirObservation {
	try {
		const st = statSync(dir);
		if (!st.isDirectory()) return { path: dir, ok: false, error: "ENOTDIR" };
		return { path: dir, ok: true, dev: st.dev, ino: st.ino, mtimeMs: st.mtimeMs };
	} catch (err) {
		return { path: dir, ok: false, error: errno(err) };
	}
}

/**
 * List one directory: stat its `*.jsonl` files into `result` and record how it read. For a
 * source root, returns its subdirectories (symlinks to directories included); below a root, none.
 */
export function listDir(dir: string, sourceDir: string, isRoot: boolean, result: Discovery, seen: Set<string>): string[] {
	const before = statDir(dir);
	let entries: Dirent[];
	try {
		if (!before.ok) throw Object.assign(new Error(before.error), { code: before.error });
		entries = readdirSync(dir, { withFileTypes: true });
	} catch (err) {
		result.dirs.set(dir, { path: dir, ok: false, error: errno(err) });
		return [];
	}
	result.dirs.set(dir, before);
	const prefix = dir.endsWith("/") ? dir : `${dir}/`;
	const subdirs: string[] = [];
	for (const entry of entries) {
		const name = entry.name;
		// Subdirectories are only followed from a source root; a plain directory needs no stat.
		if (!name.endsWith(".jsonl")) {
			if (isRoot && (entry.isDirectory() || entry.isSymbolicLink())) {
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
				if (isDir) subdirs.push(full);
			}
			continue;
		}
		statFile(prefix + name, sourceDir, result, seen);
	}
	return subdirs;
}

/** Stat one session file into `result` (a file that cannot be stat'ed is kept and reported). Returns its errno on failure. */
export function statFile(path: string, sourceDir: string, result: Discovery, seen: Set<string>): string | null {
	let st: ReturnType<typeof statSync>;
	try {
		st = statSync(path);
	} catch (err) {
		const code = errno(err);
		if (code !== "ENOENT") result.unreadable.push({ path, sourceDir, error: code });
		return code;
	}
	if (!st?.isFile() || seen.has(path)) return null;
	seen.add(path);
	result.files.push({ path, sourceDir, dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs });
	return null;
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
