/** Compare the sources with the index without writing anything (`status`, `--no-sync`). */
import type { Database } from "bun:sqlite";
import { isAbsolute } from "node:path";
import { frameLines } from "../source/jsonl.ts";
import { type DirObservation, discover, type SourceDir } from "../source/discover.ts";
import { canonicalPath } from "../source/paths.ts";
import { readHead } from "../source/read.ts";
import { initialParserState, parseLines } from "../source/session-parser.ts";
import { IndexWriter } from "../store/write.ts";
import { type CheckPolicy, checkSources } from "./check.ts";
import { confirmedGone } from "./deletion.ts";
import { knownFiles, unchangedSince } from "./observations.ts";

interface SourceComparison {
	mode: "full" | "incremental";
	/** Files new or changed since they were indexed. */
	pending: string[];
	/** Indexed files no longer listed. */
	missing: string[];
	/** Directories that could not be read (a missing one is not a problem). */
	unreadable: DirObservation[];
	lastFullCheckAt: number | null;
}

/** What a `--no-sync` answer says: the incremental check (check.ts), read only. */
export function compareSources(db: Database, sourceDirs: readonly SourceDir[], policy: CheckPolicy): SourceComparison {
	const check = checkSources(db, new IndexWriter(db), sourceDirs, policy, false);
	const present = new Set(check.found.files.map((f) => f.path));
	const unreadableFiles = new Set(check.found.unreadable.map((u) => u.path));
	const roots = new Set(sourceDirs.map((d) => d.path));
	const missing: string[] = [];
	for (const row of check.known.values()) {
		if (!roots.has(row.source_dir) || present.has(row.path) || unreadableFiles.has(row.path)) continue;
		// As `status` and the sync: gone only when confirmed (an unreadable directory or an unmounted disk keeps it).
		if (confirmedGone(row.path, row.dev, row.source_dir, check.found) === true) missing.push(row.path);
	}
	return {
		mode: check.mode,
		pending: check.found.files.filter((f) => !unchangedSince(check.known.get(f.path), f)).map((f) => f.path),
		missing,
		unreadable: [...check.found.dirs.values()].filter((d) => !d.ok && d.error !== "ENOENT"),
		lastFullCheckAt: check.lastFullCheckAt,
	};
}

/** The canonical cwd a session file's header records (null: none, relative, unreadable, not a session). */
export function headerCwd(path: string): string | null {
	let head: Uint8Array;
	try {
		head = readHead(path, 64 * 1024);
	} catch {
		return null;
	}
	const state = initialParserState();
	// The header is the first record, or the second after an oh-my-pi title slot.
	for (const line of frameLines(head, 0, 1).lines.slice(0, 2)) {
		parseLines(state, [line], {
			file: path,
			idExists: () => false,
			project: () => {
				throw new Error("unreachable: no entry is read before the header");
			},
		});
		if (state.header || state.rejected) break;
	}
	const cwd = state.header?.cwd ?? null;
	return cwd && isAbsolute(cwd) ? canonicalPath(cwd) : null;
}

interface SourceFreshness {
	dir: string;
	origin: SourceDir["origin"];
	readable: boolean;
	error?: string;
	files: number;
	/** Files new or changed since they were last indexed. */
	changed: number;
	/** Indexed files that are gone (a sync would remove them). */
	missing: number;
	/** Indexed files not listed but not confirmed gone (under an unreadable directory, an unmounted disk): a sync keeps them. */
	kept: number;
}

export function checkFreshness(db: Database, sourceDirs: readonly SourceDir[]): SourceFreshness[] {
	const writer = new IndexWriter(db);
	const found = discover(sourceDirs);
	const known = knownFiles(db, writer);
	const present = new Set(found.files.map((f) => f.path));
	const unreadable = new Set(found.unreadable.map((u) => u.path));
	return sourceDirs.map((dir) => {
		const obs = found.dirs.get(dir.path);
		const files = found.files.filter((f) => f.sourceDir === dir.path);
		const changed = files.filter((f) => !unchangedSince(known.get(f.path), f)).length;
		let missing = 0;
		let kept = 0;
		for (const row of known.values()) {
			if (row.source_dir !== dir.path || present.has(row.path)) continue;
			if (!unreadable.has(row.path) && confirmedGone(row.path, row.dev, row.source_dir, found) === true) missing++;
			else kept++;
		}
		return {
			dir: dir.path,
			origin: dir.origin,
			readable: obs?.ok ?? false,
			...(obs?.error ? { error: obs.error } : {}),
			files: files.length,
			changed,
			missing,
			kept,
		};
	});
}
