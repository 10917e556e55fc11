/**
 * Compile the single pi-events binary: `bun build.ts [OUTFILE]` → dist/pi-events by default.
 * Minified with bytecode for fast start; never autoloads .env or bunfig.toml from the directory
 * it runs in (it runs inside arbitrary user projects).
 */
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";

const outfile = process.argv[2] ?? "dist/pi-events";
mkdirSync(dirname(outfile), { recursive: true });
const started = performance.now();
const proc = Bun.spawnSync(
	[
		process.execPath,
		"build",
		"--compile",
		"--minify",
		"--bytecode",
		"--no-compile-autoload-dotenv",
		"--no-compile-autoload-bunfig",
		join(import.meta.dir, "src", "main.ts"),
		"--outfile",
		outfile,
	],
	{ stdout: "inherit", stderr: "inherit" },
);
if (proc.exitCode !== 0) {
	console.error(`build failed (exit ${proc.exitCode})`);
	process.exit(1);
}
console.error(`built ${outfile} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
