/** The caller's scope as answers name it: the authorization root and how it was chosen. */
import type { RootSource, Scope } from "../auth/scope.ts";

export interface ScopeView {
	/** The canonical authorization roots; null: every workspace (`--all`). */
	roots: string[] | null;
	/** How the root was chosen: `--root` ("flag"), the config file, the Git worktree root, the cwd; null when not known. */
	rootSource: RootSource | null;
}

export function scopeView(scope: Scope): ScopeView {
	return { roots: scope.roots ? [...scope.roots] : null, rootSource: scope.roots ? (scope.rootSource ?? null) : null };
}
