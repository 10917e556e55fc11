/**
 * Compile pi-events.
 *   bun build.ts [OUTFILE]        the binary for this machine → dist/pi-events by default
 *   bun build.ts --release [DIR]  every release target → DIR (default dist/release)/pi-events-<os>-<arch>[-musl],
 *                                 SHA256SUMS, and the npm packages under DIR/npm (packaging/packages.ts)
 * Minified with bytecode and split into chunks for fast start, with the JIT held back at start (src/jit.ts); never autoloads .env or bunfig.toml from the directory
 * it runs in (it runs inside arbitrary user projects). The target and the commit are compiled in
 * (`pi-events --version`). Cross-compiling fetches bun's runtime for the target from the npm
 * registry once (cached in ~/.bun/install/cache).
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { writePackages } from "./packaging/packages.ts";
import { STARTUP_JIT_POLICY } from "./src/jit.ts";

/** The release targets: bun's `--target` name and our artifact suffix. Windows is not built (README, "Install"). */
export const RELEASE_TARGETS = ["linux-x64", "linux-arm64", "linux-x64-musl", "linux-arm64-musl", "darwin-x64", "darwin-arm64"] as const;
export type ReleaseTarget = (typeof RELEASE_TARGETS)[number];

function commitOf(): string {
	const head = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: import.meta.dir, stdout: "pipe", stderr: "pipe" });
	if (head.exitCode !== 0) return "unknown";
	const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { cwd: import.meta.dir, stdout: "pipe", stderr: "pipe" });
	return `${head.stdout.toString().trim()}${dirty.stdout.toString().trim() ? "-dirty" : ""}`;
}

function compile(outfile: string, target: string | null, commit: string): void {
	mkdirSync(dirname(outfile), { recursive: true });
	const label = target ?? `${process.platform}-${process.arch}`;
	const proc = Bun.spawnSync(
		[
			process.execPath,
			"build",
			"--compile",
			...(target ? [`--target=bun-${target}`] : []),
			"--minify",
			"--bytecode",
			// Each command's modules in chunks of their own, loaded when it runs: one bundle made every
			// process load all of it (`--version` 1.2–1.4 ms faster, searches 0.1–1.0 ms; docs/performance.md).
			"--format=esm",
			"--splitting",
			// Short commands stay in the interpreter; long work compiles as usual (src/jit.ts).
			`--compile-jit-policy=${STARTUP_JIT_POLICY}`,
			"--no-compile-autoload-dotenv",
			"--no-compile-autoload-bunfig",
			"--define",
			`PI_EVENTS_BUILD_TARGET=${JSON.stringify(label)}`,
			"--define",
			`PI_EVENTS_BUILD_COMMIT=${JSON.stringify(commit)}`,
			join(import.meta.dir, "src", "main.ts"),
			// The cold-index worker (sync/pipeline.ts) is loaded by path: a second entrypoint.
			join(import.meta.dir, "src", "sync", "prepare-worker.ts"),
			"--outfile",
			outfile,
		],
		{ stdout: "pipe", stderr: "inherit" },
	);
	if (proc.exitCode !== 0) {
		process.stderr.write(proc.stdout);
		throw new Error(`build of ${label} failed (exit ${proc.exitCode})`);
	}
}

function release(dir: string, commit: string): void {
	rmSync(dir, { recursive: true, force: true });
	mkdirSync(dir, { recursive: true });
	const sums: string[] = [];
	for (const target of RELEASE_TARGETS) {
		const started = performance.now();
		const out = join(dir, `pi-events-${target}`);
		compile(out, target, commit);
		sums.push(`${createHash("sha256").update(readFileSync(out)).digest("hex")}  ${basename(out)}`);
		console.error(`built ${out} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
	}
	// The format of `sha256sum`, so `sha256sum -c SHA256SUMS` (or `shasum -a 256 -c`) verifies it.
	writeFileSync(join(dir, "SHA256SUMS"), `${sums.join("\n")}\n`);
	const version = (JSON.parse(readFileSync(join(import.meta.dir, "package.json"), "utf8")) as { version: string }).version;
	writePackages({ releaseDir: dir, outDir: join(dir, "npm"), version, targets: RELEASE_TARGETS });
	console.error(`wrote ${join(dir, "SHA256SUMS")} and the npm packages in ${join(dir, "npm")}`);
}

const USAGE = `usage:
  bun build.ts [OUTFILE]        the binary for this machine → dist/pi-events by default
  bun build.ts --release [DIR]  every release target → DIR (default dist/release)`;

if (import.meta.main) {
	const args = process.argv.slice(2);
	const started = performance.now();
	// An option this script does not know is not a file name (`bun build.ts --help` once wrote a binary named --help).
	if (args[0]?.startsWith("-") && args[0] !== "--release") {
		const help = args[0] === "--help" || args[0] === "-h";
		(help ? console.log : console.error)(help ? USAGE : `unknown option ${args[0]}\n${USAGE}`);
		process.exit(help ? 0 : 2);
	}
	try {
		if (args[0] === "--release") {
			release(args[1] ?? "dist/release", commitOf());
		} else {
			const outfile = args[0] ?? "dist/pi-events";
			compile(outfile, null, commitOf());
			console.error(`built ${outfile} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
		}
	} catch (err) {
		console.error(err instanceof Error ? err.message : String(err));
		process.exit(1);
	}
}
