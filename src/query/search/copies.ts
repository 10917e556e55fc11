/**
 * No copies (after order, by relevance or time, not grouped): the selected rows with every copy of
 * a better row's output folded into it (query/copies.ts). Selecting past the limit until the limit
 * is filled with rows that are not copies (or the candidates run out, or MAX_COPY_WINDOW rows were
 * read) keeps a smaller limit's answer a prefix of a larger one's.
 */
import type { CandidateRow, RankedRow, ScopedSearch } from "../../gate/gate.ts";
import type { SourceFiles } from "../../source/read.ts";
import { type Duplicates, FOLDED_KINDS, foldCopies } from "../copies.ts";
import { fragmentText } from "./hits.ts";
import { selectEvents } from "./order.ts";

/** Most rows read to fill the limit with rows that are not copies (copies beyond are not counted). */
export const MAX_COPY_WINDOW = 400;

export interface Selected {
	rows: CandidateRow[];
	/** The copies folded into each row, by event key. */
	duplicates: Map<number, Duplicates>;
	/** How many candidates were folded into the rows. */
	folded: number;
}

export function selectWithoutCopies(
	scoped: Pick<ScopedSearch, "hydrate">,
	units: RankedRow[],
	limit: number,
	byRelevance: boolean,
	texts: Map<number, string | null>,
	files: SourceFiles,
): Selected {
	const textOf = (row: CandidateRow): string | null => {
		if (!FOLDED_KINDS.has(row.kind)) return null;
		if (!texts.has(row.frag_key)) texts.set(row.frag_key, fragmentText(row, files));
		return texts.get(row.frag_key) ?? null;
	};
	let want = limit;
	for (;;) {
		const picked = selectEvents(scoped, units, want, byRelevance, false);
		const { kept, duplicates } = foldCopies(picked, textOf);
		const done = kept.length >= limit || picked.length < want || want >= MAX_COPY_WINDOW;
		if (done) {
			const rows = kept.slice(0, limit);
			const shown = new Set(rows.map((r) => r.event_key));
			let folded = 0;
			for (const [key, d] of duplicates) {
				if (shown.has(key)) folded += d.count;
				else duplicates.delete(key);
			}
			return { rows, duplicates, folded };
		}
		want = Math.min(want * 2, MAX_COPY_WINDOW);
	}
}
