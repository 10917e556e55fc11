/**
 * build.ts takes an option it does not know for no file name (`bun build.ts --help` once wrote a
 * 112 MB binary named `--help`).
 */
import { afterAll, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

const BUILD = join(import.meta.dir, "../../build.ts");

test("--help prints the usage, another option exits 2 with the usage, and neither writes a file", () => {
	const cwd = makeTempDir("pi-events-build-args-");
	const help = Bun.spawnSync([process.execPath, BUILD, "--help"], { cwd, stdout: "pipe", stderr: "pipe" });
	expect(help.exitCode).toBe(0);
	expect(help.stdout.toString()).toContain("bun build.ts --release [DIR]");
	const bogus = Bun.spawnSync([process.execPath, BUILD, "--bogus"], { cwd, stdout: "pipe", stderr: "pipe" });
	expect(bogus.exitCode).toBe(2);
	expect(bogus.stderr.toString()).toContain("unknown option --bogus");
	expect(readdirSync(cwd)).toEqual([]);
});
