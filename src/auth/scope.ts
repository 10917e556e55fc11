/**
 * THE SCOPE RULE (pure). Which sessions and events a caller may see:
 *
 *   a session is visible  ⇔  its canonical recorded cwd equals one of the caller's roots or lies
 *                            under it on a path-component boundary (`/a/b` admits `/a/b/c`, never
 *                            `/a/bc`; a relative or missing cwd is never visible to a scoped
 *                            caller), and the request's own narrowing (a cwd prefix, session ids)
 *                            holds, and it is not the excluded current session;
 *   an event is visible   ⇔  its session is, and when its session is the targeted current session,
 *                            it lies before the invocation cutoff.
 *
 * The rule is written once, here, as a list of clauses (`ruleClauses`). Everything else is derived
 * from those clauses: `admits` evaluates them on one session (the gate checks every row with it),
 * auth/scope-tokens.ts renders them as FTS5 scope-token expressions, auth/scope-sql.ts as SQL.
 * test/auth/scope-conformance.test.ts runs one table of cases against every rendering.
 */
import { posix } from "node:path";

interface CurrentSession {
	sessionId: string | null;
	/** The caller's own session file (canonical): the cutoff is read from it alone. */
	sessionFile: string | null;
	/** The tool call that invoked pi-events: its entry and everything after it are excluded. */
	toolCallId: string | null;
}

/** Where the authorization root came from: `--root` (or the server's), the config file, the Git worktree root of the cwd, or the cwd itself. */
export type RootSource = "flag" | "config" | "git" | "cwd";

/** A resolved caller (gate/caller.ts `resolveCaller`): whose history it may see. */
export interface Scope {
	/** Canonical absolute roots; null means unscoped (`--all`, a person at the terminal). */
	roots: string[] | null;
	/** How the root was chosen (named in answers: "sessions under /x (Git root)"); absent when not known. */
	rootSource?: RootSource;
	current: CurrentSession | null;
}

/** What one request may see, at session level: the caller's roots narrowed by the request. */
export interface SessionRule {
	/** Canonical roots; null = unscoped. An empty list admits nothing. */
	roots: readonly string[] | null;
	/** A cwd filter (within the roots, never widening them). */
	cwdPrefix?: string;
	/** Only these sessions (empty or absent: no restriction). */
	sessionIds?: readonly string[];
	/** Never these sessions (the current session when it is not targeted). */
	excludeSessionIds: readonly string[];
}

/** The current session when targeted: only events with seq below `seq` are visible. */
export interface Cutoff {
	sessionId: string;
	seq: number;
}

/** A session as the rule sees it. */
interface SessionKey {
	/** Canonical recorded cwd; null when relative or missing. */
	cwdReal: string | null;
	sessionId: string;
}

/** One conjunct of the rule. A session is visible when every clause holds. */
export type Clause =
	/** Admits nothing (no roots, or a root or cwd filter that is not an absolute path). */
	| { kind: "nothing" }
	/** The cwd equals one of `paths` or lies under it on a component boundary (normalised, absolute). */
	| { kind: "cwd-under"; paths: string[] }
	| { kind: "session-in"; ids: string[] }
	| { kind: "session-not-in"; ids: string[] };

/**
 * An empty, `.` or `..` component, or a trailing slash: what normalising would change. A path
 * without one is returned as it is (the gate checks every session it lists against the rule: at
 * 5 GB, normalising each one cost 20 ms of a session list from `/`).
 */
const NOT_NORMAL = /\/(\.{1,2})?(\/|$)/;

/** Normalise an absolute POSIX path: resolve `.`/`..`, drop duplicate and trailing slashes. */
export function normalizeAbsolute(path: string): string | null {
	if (!path.startsWith("/")) return null;
	if (!NOT_NORMAL.test(path)) return path;
	return posix.normalize(path).replace(/(.)\/+$/, "$1");
}

/** True when `path` equals `root` or lies under it on a path-component boundary. */
export function isWithin(path: string | null, root: string): boolean {
	if (path === null) return false;
	const p = normalizeAbsolute(path);
	const r = normalizeAbsolute(root);
	if (p === null || r === null) return false;
	if (r === "/") return true;
	return p === r || p.startsWith(`${r}/`);
}

/** The rule as clauses: the one description every rendering is derived from. */
export function ruleClauses(rule: SessionRule): Clause[] {
	const clauses: Clause[] = [];
	const under = (paths: readonly string[]) => {
		const normal = paths.map(normalizeAbsolute).filter((p): p is string => p !== null);
		clauses.push(normal.length === 0 ? { kind: "nothing" } : { kind: "cwd-under", paths: [...new Set(normal)] });
	};
	if (rule.roots !== null) under(rule.roots);
	if (rule.cwdPrefix !== undefined) under([rule.cwdPrefix]);
	if (rule.sessionIds?.length) clauses.push({ kind: "session-in", ids: [...rule.sessionIds] });
	if (rule.excludeSessionIds.length > 0) clauses.push({ kind: "session-not-in", ids: [...rule.excludeSessionIds] });
	return clauses;
}

function holds(clause: Clause, session: SessionKey): boolean {
	switch (clause.kind) {
		case "nothing":
			return false;
		case "cwd-under":
			return clause.paths.some((root) => isWithin(session.cwdReal, root));
		case "session-in":
			return clause.ids.includes(session.sessionId);
		case "session-not-in":
			return !clause.ids.includes(session.sessionId);
	}
}

/** Whether the rule admits this session. */
export function admits(rule: SessionRule, session: SessionKey): boolean {
	return clausesAdmit(ruleClauses(rule), session);
}

/** Whether clauses already derived from a rule admit this session (checking many rows of one rule). */
export function clausesAdmit(clauses: readonly Clause[], session: SessionKey): boolean {
	return clauses.every((clause) => holds(clause, session));
}

/** Whether an event at append position `seq` of an admitted session is before the cutoff. */
export function beforeCutoff(cutoff: Cutoff | null, sessionId: string, seq: number): boolean {
	return cutoff === null || sessionId !== cutoff.sessionId || seq < cutoff.seq;
}

/** Whether a session with this canonical cwd is inside the scope's roots (no request narrowing). */
export function sessionInScope(scope: Scope, canonicalCwd: string | null): boolean {
	return admits({ roots: scope.roots, excludeSessionIds: [] }, { cwdReal: canonicalCwd, sessionId: "" });
}
