/**
 * Candidates from windows of the newest (or oldest) in-scope sessions: where a query of common
 * terms only is searched, and where a very common query's newest matches start. Rowid ranges: a
 * session's fragments are contiguous and rowids grow with sessions in creation order.
 */
import type { RankedRow, RowidRange, ScopedSearch } from "../../gate/gate.ts";
import { alternativeTokens, type ParsedQuery } from "../fts.ts";
import { FIRST_WINDOW_FRAGMENTS, NEWEST_WINDOWS, RECENT_MATCHES, type SearchBounds } from "./bounds.ts";
import type { Found } from "./found.ts";
import type { SortOrder } from "./types.ts";

/**
 * The matches of a query of common terms only in a window of the newest (sorting oldest first,
 * the oldest) in-scope sessions: FIRST_WINDOW_FRAGMENTS at first, doubled while it holds fewer
 * than twice `limit` matches, up to `bounds.windowFragments`; each widening reads only the
 * sessions it adds. Null when the whole scope holds fewer (then nothing is bounded).
 */
export function readWindow(
	scoped: ScopedSearch,
	parsed: ParsedQuery,
	bounds: SearchBounds,
	sort: SortOrder,
	limit: number,
): { range: RowidRange; rows: RankedRow[] } | null {
	const order = sort === "oldest" ? "oldest" : "newest";
	const most = bounds.windowFragments;
	if (scoped.window(most, order) === null) return null;
	let fragments = Math.min(bounds.firstWindowFragments ?? FIRST_WINDOW_FRAGMENTS, most);
	let range = scoped.window(fragments, order)!;
	// Single words only (no phrase, no word split in parts): their matches are cheap to list.
	const wordsOnly = parsed.terms.every((t) => t.alternatives.every((a) => alternativeTokens(a).length <= 1));
	const rows = matchesIn(scoped, range, order, wordsOnly);
	while (rows.length < 2 * limit && fragments < most) {
		fragments = Math.min(fragments * 2, most);
		const wider = scoped.window(fragments, order)!;
		rows.push(...matchesIn(scoped, addedPart(range, wider, order), order, wordsOnly));
		range = wider;
	}
	return { range, rows: rows.slice(0, RECENT_MATCHES + 1) };
}

/**
 * The in-scope matches read from a window of sessions (a query of common terms only), in index
 * order: all of them to be scored when they are at most RECENT_MATCHES, else the first
 * RECENT_MATCHES by kind weight (as any very common query is ranked). The coverage says so: mode
 * "recent", the share of all matches unknown.
 */
export function windowMatches(inWindow: RankedRow[]): Found {
	if (inWindow.length > RECENT_MATCHES)
		return { rows: inWindow.slice(0, RECENT_MATCHES), mode: "recent", rankedShare: null, toScore: false, wholeEvents: false };
	return { rows: inWindow, mode: "recent", rankedShare: null, toScore: true, wholeEvents: true };
}

/** The fragments a wider window adds to `range`: older than it (newer, sorting oldest first). */
function addedPart(range: RowidRange, wider: RowidRange, order: "newest" | "oldest"): RowidRange {
	return order === "newest" ? { from: wider.from, to: range.from! - 1 } : { from: range.to! + 1, to: wider.to };
}

/**
 * Every match in a rowid range (a part of a window, a session's span: the range bounds them: no
 * limit, or ascending order would lose the newest), newest first when `order` is "newest". Read in
 * ascending rowids and turned round: FTS5 walks the postings of a word held by a million
 * fragments backwards several times slower than forwards, however narrow the range (at 5 GB, 11
 * against 3 ms for `"function error the"`).
 */
export function matchesIn(scoped: ScopedSearch, part: RowidRange, order: "newest" | "oldest", wordsOnly: boolean): RankedRow[] {
	if (order === "newest" && wordsOnly) {
		// Only the newest RECENT_MATCHES + 1 are kept: where they start is read from the postings
		// alone, and only their rows are read (at 1 GB, 1,900 matches of `the error` in the first
		// window). Not for phrases: checking positions is their cost, and it would be paid twice.
		const rowids = scoped.matchRowids(part);
		if (rowids !== null && rowids.length > RECENT_MATCHES + 1) part = { ...part, from: rowids[rowids.length - (RECENT_MATCHES + 1)]! };
	}
	const rows = scoped.rank(Number.MAX_SAFE_INTEGER, { order: "oldest", withTime: true, range: part });
	return order === "newest" ? rows.reverse() : rows;
}

/**
 * The newest `count` in-scope matches (all of them when fewer), newest first, read forwards. FTS5
 * walks a long posting list backwards far slower than forwards, above all in a new process
 * (NEWEST_WINDOWS). Where they start is found from rowids alone, in windows of the newest
 * sessions that double (each reading only what it adds) while the matches seen so far promise
 * enough within two more. Filters the full-text match cannot carry, and sparser matches (whose
 * posting lists are short), are read backwards as before.
 */
export function newestMatches(scoped: ScopedSearch, count: number, firstWindow: number): RankedRow[] {
	let rowids: number[] = [];
	let range: RowidRange | null = null;
	for (let fragments = firstWindow; fragments < firstWindow * 2 ** NEWEST_WINDOWS; fragments *= 2) {
		const wider = scoped.window(fragments, "newest");
		if (wider === null) break; // the scope holds fewer fragments: its whole posting lists are short
		const added = scoped.matchRowids(range === null ? wider : addedPart(range, wider, "newest"));
		if (added === null) break;
		rowids = added.concat(rowids);
		range = wider;
		if (rowids.length >= count) {
			const from = rowids[rowids.length - count]!;
			// A commit between the two reads may add newer matches: still the newest `count`.
			return scoped.rank(Number.MAX_SAFE_INTEGER, { order: "oldest", withTime: true, range: { from } }).reverse().slice(0, count);
		}
		// Sparser than this, the matches would take more windows than the backward read of their
		// posting list costs, and that list is short (zqplant10000x at 5 GB: 15 matches in the first
		// window, five windows to 500, a third slower).
		if (rowids.length * 4 < count) break;
	}
	return scoped.rank(count, { order: "newest", withTime: true });
}
