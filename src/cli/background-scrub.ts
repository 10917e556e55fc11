/**
 * A one-shot command exits once it has answered, so when its sync left a deletion's scrub to the
 * merge in slices (sync/scrub.ts: a large index), it starts `pi-events index --scrub` in the
 * background to do it: the deleted text does not wait for the next `pi-events index` or
 * resident server. One scrubber per index at a time: `<index>-scrub.pid` names the running one.
 */
import type { Database } from "bun:sqlite";
import { closeSync, constants, lstatSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { isReadOnly } from "../store/db.ts";
import { processAlive } from "../store/unsynced.ts";
import { scrubAwaitsMerge } from "../store/status.ts";
import { spawnDetached } from "./self.ts";

/** A marker older than this is not trusted to name a live scrubber (its pid may be another process's by now). */
const MARKER_TRUSTED_MS = 15 * 60 * 1000;

function markerPath(indexPath: string): string {
	return `${indexPath}-scrub.pid`;
}

/** The pid a marker no older than `maxAgeMs` names: only a regular file counts (a symlink planted there names nothing). */
function markerPid(marker: string, maxAgeMs = Number.POSITIVE_INFINITY): number | null {
	try {
		const st = lstatSync(marker);
		if (!st.isFile() || Date.now() - st.mtimeMs > maxAgeMs) return null;
		const pid = Number.parseInt(readFileSync(marker, "utf8"), 10);
		return pid > 0 ? pid : null;
	} catch {
		return null;
	}
}

/** After a command's work on `db`: start a background scrub if one awaits and none runs. */
export function startBackgroundScrubIfNeeded(db: Database): void {
	if (isReadOnly(db) || !scrubAwaitsMerge(db)) return;
	const marker = markerPath(db.filename);
	const running = markerPid(marker, MARKER_TRUSTED_MS);
	if (running !== null && processAlive(running)) return;
	const pid = spawnDetached(["index", "--scrub", "--index", db.filename]);
	if (pid === null) return; // not started: the next command's sync tries again
	try {
		// Never through a symlink: the marker is written where it is, or not at all.
		const fd = openSync(marker, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
		try {
			writeSync(fd, `${pid}\n`);
		} finally {
			closeSync(fd);
		}
	} catch {
		// Without the marker the next command may start a second scrubber, which finds the work done.
	}
}

/** The scrubber's own end: its marker goes, unless another scrubber has replaced it. */
export function releaseScrubMarker(indexPath: string): void {
	const marker = markerPath(indexPath);
	try {
		if (markerPid(marker) === process.pid) unlinkSync(marker);
	} catch {
		// no marker
	}
}
