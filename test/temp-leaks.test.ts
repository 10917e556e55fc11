/**
 * A test run leaves nothing in the temp directory, and fails when something does.
 *
 * Each case runs a small `bun test` of its own (with test/preload.ts, as this repository's runs
 * have it) or the demo, with TMPDIR set to a fresh directory, and then looks in that directory:
 * it must be empty. Without the preload's hook, the release helper's build stayed behind
 * (`process.once("exit")` never fires under `bun test` 1.4.4), and the demo left its index in
 * /tmp/pi-events-demo-*.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir, ROOT } from "./helpers/temp.ts";

afterAll(cleanupTempDirs);

const PRELOAD = join(ROOT, "test", "preload.ts");

/** Run `bun test` on the given test files (name → source) with a TMPDIR of its own; what it printed and left. */
function childRun(files: Record<string, string>): { exitCode: number; output: string; left: string[]; home: string } {
	const work = makeTempDir("pi-events-child-");
	const tmp = join(work, "tmp");
	mkdirSync(tmp);
	const tests = join(work, "tests");
	mkdirSync(tests);
	for (const [name, source] of Object.entries(files)) writeFileSync(join(tests, name), source);
	const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, TMPDIR: tmp };
	const proc = Bun.spawnSync([process.execPath, "test", "--preload", PRELOAD, ...Object.keys(files).map((name) => join(tests, name))], {
		cwd: tests,
		env,
		stdout: "pipe",
		stderr: "pipe",
	});
	return { exitCode: proc.exitCode ?? -1, output: proc.stdout.toString() + proc.stderr.toString(), left: readdirSync(tmp), home: work };
}

const releaseHelper = JSON.stringify(join(ROOT, "test", "helpers", "release.ts"));

/** A test file that asks the release helper for its directory, built by a stub instead of `bun build.ts --release`. */
const releaseUser = `
import { expect, test } from "bun:test";
import { appendFileSync, mkdirSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { releaseDir } from ${releaseHelper};
const stub = (dir) => { appendFileSync(join(process.env.HOME, "builds"), "built\\n"); mkdirSync(dir, { recursive: true }); writeFileSync(join(dir, "SHA256SUMS"), ""); writeFileSync(join(dir, "pi-events-linux-x64"), "x"); };
test("the release directory", () => { expect(existsSync(join(releaseDir(stub), "SHA256SUMS"))).toBe(true); });
`;

describe("the temp directory of a test run", () => {
	test("the release helper's build is removed after the last test, and built once per run", () => {
		const run = childRun({ "a.test.ts": releaseUser, "b.test.ts": releaseUser });
		expect(run.output).toContain("2 pass");
		expect(run.output).not.toContain("left");
		expect(run.exitCode).toBe(0);
		expect(run.left).toEqual([]);
		expect(readFileSync(join(run.home, "builds"), "utf8")).toBe("built\n");
	}, 60_000);

	test("a run that leaves something in its temp directory fails, naming it, and it is removed", () => {
		const leaky = `
import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
test("leaves a directory", () => { expect(mkdtempSync(join(tmpdir(), "pi-events-leak-"))).toBeTruthy(); });
`;
		const run = childRun({ "leaky.test.ts": leaky });
		expect(run.exitCode).not.toBe(0);
		expect(run.output).toMatch(/this test run left 1 entries in its temp directory \(removed now\): pi-events-leak-/);
		expect(run.left).toEqual([]);
	}, 60_000);

	test("the demo on the bundled fixtures leaves nothing in the temp directory", () => {
		const work = makeTempDir("pi-events-demo-test-");
		const tmp = join(work, "tmp");
		const home = join(work, "home");
		const bin = join(work, "pi-events");
		mkdirSync(tmp);
		mkdirSync(home);
		writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "src", "main.ts")}" "$@"\n`, { mode: 0o755 });
		const proc = Bun.spawnSync([process.execPath, join(ROOT, "fixtures", "demo.ts")], {
			cwd: work,
			env: {
				PATH: process.env.PATH ?? "/usr/bin:/bin",
				HOME: home,
				PI_CODING_AGENT_DIR: join(work, "agent"),
				XDG_CACHE_HOME: join(work, "cache"),
				XDG_CONFIG_HOME: join(work, "config"),
				PI_EVENTS_BIN: bin,
				PI_EVENTS_SERVER: "off",
				TMPDIR: tmp,
			},
			stdout: "pipe",
			stderr: "pipe",
		});
		const output = proc.stdout.toString();
		expect(output).toContain("using the bundled fixtures");
		expect(output).toContain("ECONNREFUSED");
		expect(proc.exitCode).toBe(0);
		expect(readdirSync(tmp)).toEqual([]);
	}, 60_000);
});
