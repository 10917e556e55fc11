/**
 * `IN (…)` lists of a few sizes only. bun:sqlite caches a prepared statement by its text, so a
 * list whose length follows the data (candidates, hits, sessions) made a new statement for almost
 * every search: preparing was about 4% of a search's time. A list is padded to the next power of
 * two by repeating its last value, which changes nothing in a set.
 */
/** The longest list that is padded. */
const PADDED_UP_TO = 1024;

export function inList<T>(values: readonly T[]): { sql: string; params: T[] } {
	if (values.length === 0) return { sql: "(NULL)", params: [] };
	// Past this, lists are rare and long: padding would only bring them nearer SQLite's limit on
	// parameters (32,766).
	if (values.length > PADDED_UP_TO) return { sql: `(${values.map(() => "?").join(", ")})`, params: values.slice() };
	let size = 1;
	while (size < values.length) size *= 2;
	const params = values.slice();
	const last = values[values.length - 1]!;
	while (params.length < size) params.push(last);
	return { sql: `(${params.map(() => "?").join(", ")})`, params };
}
