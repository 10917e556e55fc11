/**
 * Whom a command runs for. Usually this process: its cwd, its environment, its stdout and stderr,
 * an index connection opened for the command and closed after it. Inside the resident server
 * (`serve --socket`, server/command-server.ts with cli/served.ts) a command runs for a client process instead: with the
 * client's cwd and environment (so its scope and settings are the client's own, exactly as if it
 * ran there), its output collected for the client, and the server's warm connection to the index.
 *
 * A command runs synchronously from start to end, so the server swaps the invocation around that
 * one call (`within`) and no other work can observe it.
 */
import type { Database } from "bun:sqlite";
import type { Env } from "../config.ts";
import { openIndex } from "../store/db.ts";
import { startBackgroundScrubIfNeeded } from "./background-scrub.ts";
import { type OutputTarget, redirectOutput } from "./out.ts";

export interface Invocation {
	cwd: string;
	env: Env;
	/** The index connection a command uses; `release` is called once the command is done with it. */
	connect(indexPath: string): Database;
	release(db: Database): void;
}

const thisProcess: Invocation = {
	get cwd() {
		return process.cwd();
	},
	get env() {
		return process.env;
	},
	// A command that answers once and exits: a small page cache (store/db.ts).
	connect: (indexPath) => openIndex(indexPath, { oneShot: true }),
	release: (db) => {
		try {
			// Nobody stays to merge a deletion out of a large index: a background process does (sync/scrub.ts).
			startBackgroundScrubIfNeeded(db);
		} catch {
			// The answer is out already; the next command's sync looks again.
		} finally {
			db.close();
		}
	},
};

let current: Invocation = thisProcess;

export function invocation(): Invocation {
	return current;
}

/** Run `work` (synchronous) for another invocation, its output going to `output`. */
export function within<T>(other: Invocation, output: OutputTarget, work: () => T): T {
	const before = current;
	current = other;
	const restoreOutput = redirectOutput(output);
	try {
		return work();
	} finally {
		restoreOutput();
		current = before;
	}
}
