/**
 * No copies: a hit whose matched text is byte-identical to a better-ranked hit's (the same file read
 * in three sessions, the same CI log pulled twice) is folded into that hit's `duplicates`.
 *
 * Only output is folded (tool results and shell output): a copy there is the same bytes fetched
 * again, and says nothing the first did not. pi-events' own echoes are never folded (they are shown
 * only when asked for, and then each as it is). Conversation and calls are not: the same prompt ("ok,
 * fix it") or the same call in two turns are two moments, each with a turn of its own.
 */
import type { SemanticKind } from "../model.ts";

/** In-scope copies of a hit's matched text that were folded into it (other events, maybe other sessions). */
export interface Duplicates {
	count: number;
	ids: { sessionId: string; entryId: string }[];
}

/** The kinds whose copies fold. */
export const FOLDED_KINDS: ReadonlySet<SemanticKind> = new Set<SemanticKind>(["tool.result", "bash.output"]);

/** Most ids listed in `duplicates.ids` (the count is always whole). */
export const MAX_LISTED_COPIES = 20;

interface Foldable {
	event_key: number;
	session_id: string;
	entry_id: string;
	kind: SemanticKind;
	/** 1: an echo of pi-events itself (shown only when asked for, and then as it is): never folded. */
	derived: number;
}

/**
 * Fold copies among rows (best first): a row of a folded kind whose text equals a better row's of
 * the same kind. Returns the rows kept, in order, and the copies folded into each kept row (by its
 * event key). A row whose text could not be read (null: the source changed) is never folded and
 * folds nothing.
 */
export function foldCopies<R extends Foldable>(rows: readonly R[], textOf: (row: R) => string | null): { kept: R[]; duplicates: Map<number, Duplicates> } {
	const firstByText = new Map<string, R>();
	const kept: R[] = [];
	const duplicates = new Map<number, Duplicates>();
	for (const row of rows) {
		const text = FOLDED_KINDS.has(row.kind) && row.derived === 0 ? textOf(row) : null;
		const key = text === null ? null : `${row.kind}\u0000${text}`;
		const original = key === null ? undefined : firstByText.get(key);
		if (original === undefined) {
			if (key !== null) firstByText.set(key, row);
			kept.push(row);
			continue;
		}
		let copies = duplicates.get(original.event_key);
		if (!copies) duplicates.set(original.event_key, (copies = { count: 0, ids: [] }));
		copies.count++;
		if (copies.ids.length < MAX_LISTED_COPIES) copies.ids.push({ sessionId: row.session_id, entryId: row.entry_id });
	}
	return { kept, duplicates };
}
