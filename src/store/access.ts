/**
 * Who may read the index. Its term dictionary holds every word of the history, so pi-events makes
 * its directory 0700 and its files 0600 (SQLite gives `-wal` and `-shm` the database file's mode).
 * A directory that already exists is left as it is (the user chose it, maybe shared on purpose):
 * `status` says when it is open to other accounts.
 */
import { chmodSync, closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";

const PRIVATE_DIR_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;
/** Group and other permission bits. */
const OTHERS = 0o077;

/** The index's own files besides the database (SQLite's, and the markers beside it). */
const COMPANIONS = ["-wal", "-shm"];

/**
 * Before opening the index for writing: make its directory if missing (0700), and its database
 * file if missing (0600, so SQLite's `-wal` and `-shm` follow). An existing database file or
 * companion this account owns loses any group and other bits (one an earlier version made 0644).
 * Best effort past the directory: when a file cannot be made or changed here, SQLite's own open
 * reports why.
 */
export function prepareIndexFiles(indexPath: string): void {
	const dir = dirname(indexPath);
	if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
	try {
		closeSync(openSync(indexPath, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_FILE_MODE));
	} catch {
		// Already there (or not makeable here: SQLite says why).
	}
	for (const path of [indexPath, ...COMPANIONS.map((suffix) => `${indexPath}${suffix}`)]) closeToOthers(path);
}

/** Drop group and other bits from a regular file this account owns (never through a symlink). */
function closeToOthers(path: string): void {
	try {
		const st = lstatSync(path);
		if (!st.isFile() || st.uid !== process.geteuid?.() || (st.mode & OTHERS) === 0) return;
		chmodSync(path, st.mode & 0o700);
	} catch {
		// Gone meanwhile, or not ours to change.
	}
}

/** A directory this code makes for the index's markers: private, like the index directory. */
export function makePrivateDir(path: string): void {
	mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
}

export interface IndexAccess {
	/** The index directory's permission bits, octal ("0700"). */
	directoryMode: string;
	/** The database file's permission bits, octal; null when it does not exist. */
	fileMode: string | null;
	/** Whether group or other accounts have any permission on the directory or the file. */
	openToOthers: boolean;
}

/** The index directory's and file's modes, for `status`. */
export function indexAccess(indexPath: string): IndexAccess | null {
	let dirMode: number;
	try {
		dirMode = statSync(dirname(indexPath)).mode & 0o7777;
	} catch {
		return null;
	}
	let fileMode: number | null = null;
	try {
		fileMode = statSync(indexPath).mode & 0o7777;
	} catch {
		// no file
	}
	const octal = (mode: number) => `0${(mode & 0o7777).toString(8).padStart(3, "0")}`;
	return {
		directoryMode: octal(dirMode),
		fileMode: fileMode === null ? null : octal(fileMode),
		openToOthers: (dirMode & OTHERS) !== 0 || (fileMode !== null && (fileMode & OTHERS) !== 0),
	};
}
