/**
 * `IN (…)` lists of a few sizes only. A connection keeps its prepared statements by their text
 * (store/db.ts), so a list whose length follows the data (candidates, hits, sessions) would make a
 * new statement for almost every search: preparing was about 4% of a search's time. A list is padded to the next power of
 * two by repeating its last value, which changes nothing in a set.
 */

/** The longest list that is padded. */
const PADDED_UP_TO = 1024;

export function inList<T>(values: readonly T[]): { sql: string; params: T[] } {
	if (values.length === 0) return { sql: "(NULL)", params: [] };
	// Past PADDED_UP_TO, lists are rare and long: padding would only bring them nearer SQLite's
	// limit on parameters (32,766).
	const size = values.length > PADDED_UP_TO ? values.length : 2 ** Math.ceil(Math.log2(values.length));
	const params = values.slice();
	const last = values[values.length - 1]!;
	while (params.length < size) params.push(last);
	return { sql: `(${params.map(() => "?").join(", ")})`, params };
}
