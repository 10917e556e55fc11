/**
 * Older SQLite (macOS ships 3.39.4 on 13.0, 3.39.5 on 13.1–14.1; bun:sqlite uses the system
 * library there): the one place the schema adapts to what this SQLite can do. Pure.
 *
 * The index's FTS5 table is contentless with `contentless_delete=1` (needs 3.43.0) and the
 * `secure-delete` option (needs 3.42.0). Before 3.43 it is an ordinary FTS5 table instead, which
 * stores its text (a larger index) and so can delete rows. The deletion guarantee holds the same
 * way: a DELETE removes the stored row (PRAGMA secure_delete zeroes its freed bytes) and leaves
 * tombstones in the postings, which the scrub after every deletion merges away (FTS5 'optimize',
 * sync/scrub.ts) before folding and truncating the WAL. Every statement the project runs is
 * replayed on Debian's SQLite 3.40.1 by test/store/sqlite-compat.test.ts.
 */

/** How the full-text table is made: contentless (3.43+) or storing its text (older SQLite). */
export type FullTextVariant = "contentless" | "stored";

/** The first SQLite with FTS5 contentless_delete (and secure-delete, 3.42). */
const CONTENTLESS_DELETE_SINCE = "3.43.0";

function versionNumber(version: string): number {
	const [major = 0, minor = 0, patch = 0] = version.split(".").map((n) => Number.parseInt(n, 10) || 0);
	return major * 1_000_000 + minor * 1_000 + patch;
}

export function fullTextVariantFor(sqliteVersion: string): FullTextVariant {
	return versionNumber(sqliteVersion) >= versionNumber(CONTENTLESS_DELETE_SINCE) ? "contentless" : "stored";
}

/**
 * The DDL for a variant: for "stored", the FTS5 table loses `content = ''` and
 * `contentless_delete = 1`, and the `secure-delete` option is not set. Throws if the DDL no longer
 * has the shape this expects (a changed schema must be adapted here too).
 */
export function ddlFor(ddl: string, variant: FullTextVariant): string {
	if (variant === "contentless") return ddl;
	const adapted = ddl
		.replace(/content\s*=\s*''\s*,\s*contentless_delete\s*=\s*1\s*,/, "")
		.replace(/INSERT INTO fts\s*\(\s*fts\s*,\s*rank\s*\)\s*VALUES\s*\(\s*'secure-delete'\s*,\s*1\s*\)\s*;/, "");
	if (/contentless_delete|secure-delete|content\s*=\s*''/.test(adapted)) {
		throw new Error("the FTS5 DDL changed shape: adapt ddlFor() in store/sqlite-compat.ts");
	}
	return adapted;
}
