/**
 * `IN (…)` lists of a few sizes only. bun:sqlite caches a prepared statement by its text, so a
 * list whose length follows the data (candidates, hits, sessions) made a new statement for almost
 * every search: preparing was about 4% of a search's time. A list is padded to the next power of
 * two by repeating its last value, which changes nothing in a set.
 */
export function inList<T>(values: readonly T[]): { sql: string; params: T[] } {
	if (values.length === 0) return { sql: "(NULL)", params: [] };
	let size = 1;
	while (size < values.length) size *= 2;
	const params = values.slice();
	const last = values[values.length - 1]!;
	while (params.length < size) params.push(last);
	return { sql: `(${params.map(() => "?").join(", ")})`, params };
}
