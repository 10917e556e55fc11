/**
 * A minimal Git directory as Git itself accepts one (setup.c is_git_directory: HEAD naming a ref,
 * `objects/` and `refs/`), so that a test's worktree root is a real one, not just a `.git` name.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Make `gitDir` a Git directory (created with its parents). */
export function makeGitDir(gitDir: string): string {
	mkdirSync(join(gitDir, "objects"), { recursive: true });
	mkdirSync(join(gitDir, "refs", "heads"), { recursive: true });
	writeFileSync(join(gitDir, "HEAD"), "ref: refs/heads/main\n");
	return gitDir;
}

/** Make `worktree` a repository's worktree root: `worktree/.git` a Git directory. */
export function makeRepo(worktree: string): string {
	makeGitDir(join(worktree, ".git"));
	return worktree;
}

/**
 * A linked worktree's Git directory inside `commonGitDir` (`worktrees/<name>`: its own HEAD, and a
 * `commondir` file naming the common directory that holds objects and refs), as `git worktree add` makes it.
 */
export function makeLinkedGitDir(commonGitDir: string, name: string): string {
	makeGitDir(commonGitDir);
	const gitDir = join(commonGitDir, "worktrees", name);
	mkdirSync(gitDir, { recursive: true });
	writeFileSync(join(gitDir, "HEAD"), "ref: refs/heads/main\n");
	writeFileSync(join(gitDir, "commondir"), "../..\n");
	return gitDir;
}
