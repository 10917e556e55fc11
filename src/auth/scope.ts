/**
 * Pure authorization model. A Scope says which sessions a caller may see: sessions whose
 * canonical recorded cwd equals the root or lies under it on a path-component boundary
 * (`/a/b` admits `/a/b/c`, never `/a/bc`), minus the current session, which is visible only
 * when targeted explicitly and only before the invocation cutoff.
 */
import { posix } from "node:path";

export interface CurrentSession {
	sessionId: string | null;
	sessionFile: string | null;
	/** The tool call that invoked pi-events: its entry and everything after it are excluded. */
	toolCallId: string | null;
}

export interface Scope {
	/** Canonical absolute roots; null means unscoped (`--all`, a person at the terminal). */
	roots: string[] | null;
	current: CurrentSession | null;
}

/** Normalise an absolute POSIX path: resolve `.`/`..`, drop duplicate and trailing slashes. */
export function normalizeAbsolute(path: string): string | null {
	if (!path.startsWith("/")) return null;
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

/** Whether a session with this canonical cwd is inside the scope's roots. */
export function sessionInScope(scope: Scope, canonicalCwd: string | null): boolean {
	if (scope.roots === null) return true;
	return scope.roots.some((root) => isWithin(canonicalCwd, root));
}
