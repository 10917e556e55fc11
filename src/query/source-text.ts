/**
 * Fragment text for snippets and previews, re-derived from the source line at the event's
 * locator (the index stores no text bodies: pi's files are the truth, and the index stays small).
 * The line's hash is checked; a changed source yields null rather than stale text.
 */
import { projectEntry } from "../project/projector.ts";
import { hashBytes } from "../source/hash.ts";
import { decodeLine } from "../source/jsonl.ts";
import { readLineAt, type SourceFiles } from "../source/read.ts";

interface TextLocator {
	path: string;
	byteOffset: number;
	byteLength: number;
	contentHash: string;
	seq: number;
	version: number;
	parentId: string | null;
}

/**
 * The bounded (indexed) text of every fragment of an event, by fragment id; null if the source
 * changed. `files`: the files already open for this answer.
 */
export function fragmentTexts(loc: TextLocator, files?: SourceFiles): Map<string, string> | null {
	let bytes: Uint8Array;
	try {
		bytes = files ? files.readLineAt(loc.path, loc.byteOffset, loc.byteLength) : readLineAt(loc.path, loc.byteOffset, loc.byteLength);
	} catch {
		return null;
	}
	if (bytes.length !== loc.byteLength || hashBytes(bytes) !== loc.contentHash) return null;
	let entry: unknown;
	try {
		entry = JSON.parse(decodeLine(bytes));
	} catch {
		return null;
	}
	if (typeof entry !== "object" || entry === null) return null;
	const projected = projectEntry(entry as Record<string, unknown>, {
		seq: loc.seq,
		version: loc.version,
		previousEntryId: loc.parentId,
		locator: { file: loc.path, offset: loc.byteOffset, length: loc.byteLength, line: 0, hash: loc.contentHash },
	});
	return new Map(projected.fragments.map((f) => [f.fragmentId, f.text]));
}
