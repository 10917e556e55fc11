/**
 * Preloaded into every `bun test` run (bunfig.toml): the run gets a temp directory of its own, and
 * fails if anything is left in it after the last test.
 *
 * `TMPDIR` points at a fresh `pi-events-testrun-*` directory for the whole run, so `tmpdir()` in
 * every test file, and in the processes the helpers start (isolatedEnv passes it on), lands there;
 * other runs on the same machine (other worktrees, CI) use their own, so the check is exact. After
 * all tests, the framework's global hook removes what the helpers own (the release build of
 * test/helpers/release.ts; `process.once("exit")` never fires under `bun test` 1.4.4, which is how
 * a 600 MB release folder leaked into /tmp with every run), then fails the run naming whatever
 * else is left, removes it, and removes the run's directory.
 */
import { afterAll } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeBuiltRelease } from "./helpers/release.ts";

const runTemp = mkdtempSync(join(tmpdir(), "pi-events-testrun-"));
process.env.TMPDIR = runTemp;

afterAll(() => {
	removeBuiltRelease();
	const left = readdirSync(runTemp);
	rmSync(runTemp, { recursive: true, force: true });
	if (left.length > 0) {
		throw new Error(`this test run left ${left.length} entries in its temp directory (removed now): ${left.sort().join(", ")}`);
	}
});
