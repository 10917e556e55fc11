/**
 * Bulk writes without fsync, made safe by a marker. A cold index spent about a tenth of its time
 * waiting for the fsyncs of SQLite's checkpoints (1 GB: 167 of them, 4.8 s of 44 s;
 * docs/indexing.md, "Writes without fsync"). While a worker prepares files (sync/pipeline.ts) the writer runs with
 * `synchronous = OFF`: what it writes is safe if the process dies (it is in the operating system's
 * page cache), not if the machine stops. So before the first such write, a marker file naming this
 * boot is made durable beside the index (`<index>-unsynced/<pid>`); after the last, the index
 * files are fsynced and the marker removed. Opening the index settles what markers are left:
 *   - one from an earlier boot: the machine stopped while a process wrote without fsync, and the
 *     index may be inconsistent, so it is rebuilt (it is disposable; the sessions are the truth);
 *   - one of this boot whose process is gone: it died, its writes are whole in the page cache, so
 *     the index files are fsynced and the marker removed;
 *   - one of a live process: it is still writing.
 * Only on Linux, whose boot id tells one boot from another; elsewhere writes keep their fsyncs.
 */
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readFileSync, rmdirSync, unlinkSync, writeSync, constants } from "node:fs";
import { makePrivateDir } from "./access.ts";
import { dirname } from "node:path";

const BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id";

/** This boot's id (Linux), or null where there is none. */
export function currentBootId(): string | null {
	try {
		const id = readFileSync(BOOT_ID_PATH, "latin1").trim();
		return id || null;
	} catch {
		return null;
	}
}

function markerDir(indexPath: string): string {
	return `${indexPath}-unsynced`;
}

/** fsync a file or directory by path; a missing one is nothing to flush. False when the flush failed. */
function fsyncPath(path: string, directory = false): boolean {
	let fd: number;
	try {
		fd = openSync(path, directory ? constants.O_RDONLY | constants.O_DIRECTORY : constants.O_RDONLY);
	} catch {
		return true;
	}
	try {
		fsyncSync(fd);
		return true;
	} catch {
		return false;
	} finally {
		closeSync(fd);
	}
}

/**
 * Make everything written to the index files durable (fsync flushes a file whoever wrote it).
 * False when the disk refused: the marker must then stay, for a later boot to rebuild the index.
 */
function flushIndexFiles(indexPath: string): boolean {
	const db = fsyncPath(indexPath);
	const wal = fsyncPath(`${indexPath}-wal`);
	return db && wal;
}

/**
 * Leave a durable marker for this process before writing without fsync. False when none could
 * be written (not Linux, an unwritable directory): then the writes must keep their fsyncs.
 */
export function markUnsynced(indexPath: string): boolean {
	const boot = currentBootId();
	if (boot === null) return false;
	const dir = markerDir(indexPath);
	try {
		makePrivateDir(dir);
		const fd = openSync(`${dir}/${process.pid}`, "w", 0o600);
		try {
			writeSync(fd, boot);
			fsyncSync(fd);
		} finally {
			closeSync(fd);
		}
		fsyncPath(dir, true);
		fsyncPath(dirname(dir), true);
		return true;
	} catch {
		return false;
	}
}

/** After writing without fsync: flush the index files, then remove this process's marker. */
export function settleUnsynced(indexPath: string): void {
	if (flushIndexFiles(indexPath)) removeMarker(indexPath, String(process.pid));
}

function removeMarker(indexPath: string, name: string): void {
	const dir = markerDir(indexPath);
	try {
		unlinkSync(`${dir}/${name}`);
	} catch {
		return;
	}
	try {
		rmdirSync(dir); // only when no other process's marker is left
	} catch {
		// another marker remains
	}
	fsyncPath(dirname(dir), true);
	fsyncPath(dir, true);
}

/** Whether a process holds this pid (also one of another user's). */
export function processAlive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (err) {
		// EPERM: a process of another user holds the pid, so it is alive.
		return (err as NodeJS.ErrnoException).code === "EPERM";
	}
}

/**
 * Settle the markers left beside the index (see the top of this file). Returns the markers of an
 * earlier boot, which the caller removes (removeStaleMarkers) once it has rebuilt the index.
 * Costs one `existsSync` when there are none.
 */
export function settleLeftMarkers(indexPath: string): string[] {
	const dir = markerDir(indexPath);
	// Checked without throwing first: there is almost never a marker, and every command opens the index.
	if (!existsSync(dir)) return [];
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch {
		return [];
	}
	const boot = currentBootId();
	const fromEarlierBoot: string[] = [];
	const ofDeadProcesses: string[] = [];
	for (const name of names) {
		let written: string;
		try {
			written = readFileSync(`${dir}/${name}`, "latin1").trim();
		} catch {
			continue; // removed meanwhile by its process
		}
		const pid = Number(name);
		if (boot === null || written !== boot) fromEarlierBoot.push(name);
		else if (!(Number.isInteger(pid) && pid > 0 && processAlive(pid))) ofDeadProcesses.push(name);
	}
	// One flush makes every dead process's writes durable.
	if (ofDeadProcesses.length > 0 && flushIndexFiles(indexPath)) removeStaleMarkers(indexPath, ofDeadProcesses);
	return fromEarlierBoot;
}

export function removeStaleMarkers(indexPath: string, names: readonly string[]): void {
	for (const name of names) removeMarker(indexPath, name);
}
