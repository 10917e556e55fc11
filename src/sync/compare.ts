/** Compare the sources with the index without writing anything (`status`, `--no-sync`). */
import type { Database } from "bun:sqlite";
import { discover, type SourceDir } from "../source/discover.ts";
import { IndexWriter } from "../store/write.ts";
import { confirmedGone } from "./deletion.ts";
import { knownFiles, unchangedSince } from "./observations.ts";

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
