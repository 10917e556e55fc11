/**
 * The scope rule (auth/scope.ts) rendered for the full-text index (pure). Every fragment carries
 * hidden tokens in the FTS `scope` column: one per path prefix of its session's canonical cwd, and
 * one for its session id. `scopedMatch` ANDs the rule's tokens into the MATCH expression (and NOTs
 * excluded sessions), so FTS5 yields only admitted rows. The tokens start with private-use
 * characters that queries can never contain (the query parser strips them).
 */
import { hashString } from "../source/hash.ts";
import { type Clause, normalizeAbsolute, ruleClauses, type SessionRule } from "./scope.ts";

const PATH_MARK = "\uE001";
const SESSION_MARK = "\uE002";
const DERIVED_MARK = "\uE003";

/** Carried by every derived fragment (pi-events' own echoes, project/echoes.ts): excluded unless asked for. */
const DERIVED_TOKEN = `${DERIVED_MARK}${hashString("derived")}`;

function pathToken(absolutePath: string): string {
	return PATH_MARK + hashString(`path:${absolutePath}`);
}

function sessionToken(sessionId: string): string {
	return SESSION_MARK + hashString(`session:${sessionId}`);
}

/** `/a/b/c` → `/`, `/a`, `/a/b`, `/a/b/c` (normalised, component boundaries only). */
function pathPrefixes(path: string): string[] {
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

const quote = (token: string) => `"${token}"`;
const scopeIs = (token: string) => `scope : ${quote(token)}`;
const anyOf = (tokens: string[]) => (tokens.length === 1 ? tokens[0]! : `(${tokens.join(" OR ")})`);

/**
 * The rule's clauses (auth/scope.ts) as an FTS5 expression over the hidden scope column: a path
 * clause is its roots' path tokens (every fragment carries one token per prefix of its session's
 * cwd), a session clause its session tokens. Null when the rule admits nothing.
 */
function clauseTokens(clauses: Clause[]): { and: string[]; not: string[] } | null {
	const and: string[] = [];
	const not: string[] = [];
	for (const clause of clauses) {
		switch (clause.kind) {
			case "nothing":
				return null;
			case "cwd-under":
				and.push(anyOf(clause.paths.map((p) => scopeIs(pathToken(p)))));
				break;
			case "session-in":
				and.push(anyOf(clause.ids.map((id) => scopeIs(sessionToken(id)))));
				break;
			case "session-not-in":
				not.push(...clause.ids.map((id) => scopeIs(sessionToken(id))));
				break;
		}
	}
	return { and, not };
}

/**
 * Combine a user MATCH expression with the session rule, so FTS5 yields only admitted rows.
 * `excludeDerived` also leaves out pi-events' own echoes (a filter, not authorization). Returns
 * null when the rule admits nothing (so the caller can answer "no hits" without asking FTS5).
 */
export function scopedMatch(match: string, rule: SessionRule, options: { excludeDerived?: boolean } = {}): string | null {
	const tokens = clauseTokens(ruleClauses(rule));
	if (tokens === null) return null;
	let expr = [`(${match})`, ...tokens.and].join(" AND ");
	const excluded = [...tokens.not];
	if (options.excludeDerived) excluded.push(scopeIs(DERIVED_TOKEN));
	if (excluded.length > 0) expr = `(${expr}) NOT (${excluded.join(" OR ")})`;
	return expr;
}
