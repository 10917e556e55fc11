/**
 * A one-shot command exits once it has answered, so when its sync left a deletion's scrub to the
 * merge in slices (sync/scrub.ts: a large index), it starts `pi-events index --scrub` in the
 * background to do it: the deleted text does not wait for the next `pi-events index` or
 * resident server. One scrubber per index at a time: `<index>-scrub.pid` names the running one.
 */
import type { Database } from "bun:sqlite";
import { closeSync, constants, existsSync, lstatSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { isReadOnly } from "../store/db.ts";
import { processAlive } from "../store/unsynced.ts";
import { scrubAwaitsMerge } from "../store/status.ts";
import { spawnDetached } from "./self.ts";

/** A marker older than this is not trusted to name a live scrubber (its pid may be another process's by now). */
const MARKER_TRUSTED_MS = 15 * 60 * 1000;
/** Clocks of processes on one machine agree; a marker written later than this past now was not written by a scrubber's starter. */
const MARKER_CLOCK_SLACK_MS = 5_000;

function markerPath(indexPath: string): string {
	return `${indexPath}-scrub.pid`;
}

/** The pid a marker names: only a regular file counts (a symlink planted there names nothing). */
function markerPid(marker: string): { pid: number; mtimeMs: number } | null {
	try {
		const st = lstatSync(marker);
		if (!st.isFile()) return null;
		const pid = Number.parseInt(readFileSync(marker, "utf8"), 10);
		return pid > 0 ? { pid, mtimeMs: st.mtimeMs } : null;
	} catch {
		return null;
	}
}

/**
 * Whether a scrubber of this index runs now, by its marker: written in the last 15 minutes (not
 * in the future: a planted marker dated years ahead would otherwise stop every scrub), naming a
 * live process that is `pi-events index --scrub` of this index. Where the process's command
 * line can be read (/proc on Linux), a live pid that is anything else (pid 1, a pid reused since)
 * names no scrubber.
 */
export function scrubberRunning(indexPath: string, now = Date.now()): boolean {
	const marker = markerPid(markerPath(indexPath));
	if (marker === null) return false;
	const age = now - marker.mtimeMs;
	if (age > MARKER_TRUSTED_MS || age < -MARKER_CLOCK_SLACK_MS) return false;
	if (!processAlive(marker.pid)) return false;
	const args = commandLine(marker.pid);
	if (args === undefined) return true; // no /proc here: the age bounds how long a reused pid can stop a scrub
	if (args === null) return false;
	const at = args.indexOf("--index");
	return args.includes("--scrub") && at !== -1 && args[at + 1] === indexPath;
}

/** A process's arguments from /proc; null when they cannot be read there; undefined without /proc. */
function commandLine(pid: number): string[] | null | undefined {
	try {
		return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
	} catch {
		return existsSync("/proc/self/cmdline") ? null : undefined;
	}
}

/** After a command's work on `db`: start a background scrub if one awaits and none runs. */
export function startBackgroundScrubIfNeeded(db: Database): void {
	if (isReadOnly(db) || !scrubAwaitsMerge(db)) return;
	if (scrubberRunning(db.filename)) return;
	const pid = spawnDetached(["index", "--scrub", "--index", db.filename]);
	if (pid === null) return; // not started: the next command's sync tries again
	writeMarker(markerPath(db.filename), pid);
}

/**
 * Write the marker as a new file and rename it into place: whatever was at its name (a hard link
 * to someone's file, a symlink) is replaced, never written through. Best effort: without the
 * marker the next command may start a second scrubber, which finds the work done.
 */
function writeMarker(marker: string, pid: number): void {
	const fresh = `${marker}.${process.pid}.tmp`;
	try {
		try {
			unlinkSync(fresh);
		} catch {
			// none left by an earlier process of this pid
		}
		const fd = openSync(fresh, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
		try {
			writeSync(fd, `${pid}\n`);
		} finally {
			closeSync(fd);
		}
		renameSync(fresh, marker);
	} catch {
		try {
			unlinkSync(fresh);
		} catch {
			// not made
		}
	}
}

/** The scrubber's own end: its marker goes, unless another scrubber has replaced it. */
export function releaseScrubMarker(indexPath: string): void {
	const marker = markerPath(indexPath);
	try {
		if (markerPid(marker)?.pid === process.pid) unlinkSync(marker);
	} catch {
		// no marker
	}
}
