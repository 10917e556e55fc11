/**
 * Authorization inside the full-text index (pure). Every fragment carries hidden tokens in the
 * FTS `scope` column: one per path prefix of its session's canonical cwd, and one for its
 * session id. A scoped search ANDs the root's token into the MATCH expression (and NOTs excluded
 * sessions), so FTS5 itself only ever yields in-scope rows: counts, ranking and the common-term
 * path all work on the caller's scope alone. The tokens start with private-use characters that
 * queries can never contain (the query parser strips them).
 */
import { hashString } from "../source/hash.ts";
import { normalizeAbsolute } from "./scope.ts";

const PATH_MARK = "\uE001";
const SESSION_MARK = "\uE002";
const DERIVED_MARK = "\uE003";

/** Carried by every derived fragment (pi-events' own echoes, project/echoes.ts): excluded unless asked for. */
export const DERIVED_TOKEN = `${DERIVED_MARK}${hashString("derived")}`;

export function pathToken(absolutePath: string): string {
	return PATH_MARK + hashString(`path:${absolutePath}`);
}

export function sessionToken(sessionId: string): string {
	return SESSION_MARK + hashString(`session:${sessionId}`);
}

/** `/a/b/c` → `/`, `/a`, `/a/b`, `/a/b/c` (normalised, component boundaries only). */
export function pathPrefixes(path: string): string[] {
	const p = normalizeAbsolute(path);
	if (p === null) return [];
	if (p === "/") return ["/"];
	const parts = p.split("/").slice(1);
	const out = ["/"];
	for (let i = 1; i <= parts.length; i++) out.push(`/${parts.slice(0, i).join("/")}`);
	return out;
}

/** The scope column of every fragment of a session. A relative or missing cwd gets no path token. */
export function scopeColumn(canonicalCwd: string | null, sessionId: string): string {
	const tokens = canonicalCwd ? pathPrefixes(canonicalCwd).map(pathToken) : [];
	tokens.push(sessionToken(sessionId));
	return tokens.join(" ");
}

/** The scope column of a derived fragment: its session's, plus the derived token. */
export function derivedScopeColumn(sessionScope: string): string {
	return `${sessionScope} ${DERIVED_TOKEN}`;
}

export interface ScopeConstraint {
	/** Canonical roots; null = unscoped. An empty list admits nothing. */
	roots: readonly string[] | null;
	/** An extra cwd restriction (a filter, within the scope). */
	cwdPrefix?: string;
	sessionIds?: readonly string[];
	excludeSessionIds: readonly string[];
	/** Leave out derived fragments (pi-events' own echoes). */
	excludeDerived?: boolean;
}

const quote = (token: string) => `"${token}"`;

/**
 * Combine a user MATCH expression with the scope. Returns null when the scope admits nothing
 * (so the caller can answer "no hits" without asking FTS5).
 */
export function scopedMatch(match: string, c: ScopeConstraint): string | null {
	const and: string[] = [`(${match})`];
	if (c.roots !== null) {
		const roots = c.roots.map(normalizeAbsolute).filter((r): r is string => r !== null);
		if (roots.length === 0) return null;
		and.push(`(${roots.map((r) => `scope : ${quote(pathToken(r))}`).join(" OR ")})`);
	}
	if (c.cwdPrefix !== undefined) {
		const p = normalizeAbsolute(c.cwdPrefix);
		if (p === null) return null;
		and.push(`scope : ${quote(pathToken(p))}`);
	}
	if (c.sessionIds?.length) and.push(`(${c.sessionIds.map((id) => `scope : ${quote(sessionToken(id))}`).join(" OR ")})`);
	let expr = and.join(" AND ");
	const excluded = c.excludeSessionIds.map((id) => `scope : ${quote(sessionToken(id))}`);
	if (c.excludeDerived) excluded.push(`scope : ${quote(DERIVED_TOKEN)}`);
	if (excluded.length > 0) expr = `(${expr}) NOT (${excluded.join(" OR ")})`;
	return expr;
}
