/**
 * `bun run test:fast`: the unit-level suites, for the inner loop (under a minute on two cores).
 * `bun run test` (the README's `bun test --timeout=30000`, what CI runs) stays the whole suite.
 *
 * Left out: whatever starts servers or pi, builds releases, kills processes, fills disks, fuzzes
 * or evaluates, and the conformance suites that replay every fixture through pi or the CLI.
 * test/docs.test.ts checks that this list keeps test/architecture and test/docs and none of those.
 */
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = join(import.meta.dir, "..");

/** Test files and folders of the fast subset, relative to the repository. */
export const FAST = [
	"test/architecture.test.ts",
	"test/docs.test.ts",
	"test/tool-names.test.ts",
	"test/temp-leaks.test.ts",
	"test/indexer.test.ts",
	"test/auth",
	"test/project",
	"test/query",
	"test/source",
	"test/store",
	"test/tree",
	"test/conformance",
	"test/extension",
	"test/read-trace/read.test.ts",
	"test/read-trace/trace.test.ts",
	"test/cli/argv.test.ts",
	"test/cli/home.test.ts",
	"test/release/build-args.test.ts",
	"test/surface/marks.test.ts",
	"test/sync/jit-policy.test.ts",
	"test/sync/page-cache.test.ts",
];

/** Files inside FAST's folders that are not unit-level (seconds each: every fixture through pi, the CLI or python's SQLite). */
export const SLOW_INSIDE = ["test/tree/pi-conformance.test.ts", "test/conformance/incremental.test.ts", "test/store/sqlite-compat.test.ts"];

/** The test files of the fast subset. */
export function fastFiles(): string[] {
	const files: string[] = [];
	for (const entry of FAST) {
		if (entry.endsWith(".test.ts")) files.push(entry);
		else for (const name of readdirSync(join(ROOT, entry)).sort()) if (name.endsWith(".test.ts")) files.push(`${entry}/${name}`);
	}
	return files.filter((file) => !SLOW_INSIDE.includes(file));
}

if (import.meta.main) {
	const proc = Bun.spawnSync(
		[process.execPath, "test", "--timeout=30000", ...fastFiles().map((file) => `./${relative(ROOT, join(ROOT, file))}`), ...process.argv.slice(2)],
		{
			cwd: ROOT,
			stdout: "inherit",
			stderr: "inherit",
		},
	);
	process.exit(proc.exitCode ?? 1);
}
