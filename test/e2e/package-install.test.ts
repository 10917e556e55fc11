/**
 * The npm packages, installed the way a user would, offline: `npm pack` all seven packages (in
 * parallel: compressing six 100 MB binaries is most of this file's time), `npm install -g` the
 * pi-events tarball and this machine's @pi-events/<os>-<arch> tarball into a temporary prefix, `pi install` the installed package, then real pi 1.6.0 (faux model, as in
 * pi-extension.test.ts) with NO pi-events on PATH and no PI_EVENTS_BIN: the extension finds the
 * platform package's binary. Also: the `pi-events` command of the package (sh launcher → native
 * binary), history written with `pi --session-dir DIR` found through the tools, and a second copy
 * of the extension (the repository root as a pi package, via its `pi` manifest) staying inactive
 * with a clear message instead of a tool conflict.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { releaseDir } from "../helpers/release.ts";
import { cleanupTempDirs, makeTempDir, ROOT } from "../helpers/temp.ts";
import {
	type E2eWorld,
	entriesOf,
	expectAnswered,
	expectReadExact,
	expectSearchFoundSeeded,
	expectedEntry,
	failureReport,
	PROMPT,
	piEnv,
	processesRunning,
	runCommand,
	scriptFor,
	setupWorld,
	toolResult,
} from "./shared.ts";

const PI_CLI = join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");
const FAUX = join(import.meta.dir, "faux-model.ts");
const HOST = `${process.platform}-${process.arch}`;
const OTHERS = ["linux-x64", "linux-arm64", "linux-x64-musl", "linux-arm64-musl", "darwin-x64", "darwin-arm64"].filter((t) => t !== HOST);

let prefix: string;
let installed: string;
let packagedBinary: string;
type PackReport = { name: string; version: string; filename: string; files: { path: string; mode: number }[] };
const packed = new Map<string, PackReport>();

function npmArgs(args: string[], cache: string): string[] {
	return ["npm", ...args, "--cache", cache, "--offline", "--no-audit", "--no-fund", "--loglevel=error"];
}

function npm(args: string[], cwd: string, cache: string) {
	const proc = Bun.spawnSync(npmArgs(args, cache), { cwd, stdout: "pipe", stderr: "pipe" });
	if (proc.exitCode !== 0) throw new Error(`npm ${args.join(" ")} failed (${proc.exitCode}):\n${proc.stderr.toString()}`);
	return proc.stdout.toString();
}

/** `npm pack --json` of each package directory at once; the reports by package directory. */
async function packAll(npmDir: string, dirs: string[], destination: string, cache: string): Promise<void> {
	await Promise.all(
		dirs.map(async (dir) => {
			// One cache per pack: concurrent npm processes on one cache may race.
			const proc = Bun.spawn(npmArgs(["pack", "--json", join(npmDir, dir), "--pack-destination", destination], `${cache}-${dir}`), {
				cwd: destination,
				stdout: "pipe",
				stderr: "pipe",
			});
			const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
			if (code !== 0) throw new Error(`npm pack ${dir} failed (${code}):\n${err}`);
			packed.set(dir, (JSON.parse(out) as PackReport[])[0]!);
		}),
	);
}

/** PATH without any directory holding a pi-events executable. */
function pathWithoutPiEvents(): string {
	const dirs = (process.env.PATH ?? "/usr/bin:/bin").split(delimiter).filter((d) => d && !existsSync(join(d, "pi-events")));
	return dirs.join(delimiter);
}

/** pi 1.6.0's environment for the installed package: no PI_EVENTS_BIN, no pi-events on PATH. */
function packagedEnv(world: E2eWorld, ownSessionId: string): Record<string, string> {
	const env = piEnv(world, "", scriptFor({ ownSearch: false, ownSessionId }));
	delete (env as Record<string, string | undefined>).PI_EVENTS_BIN;
	env.PATH = pathWithoutPiEvents();
	return env;
}

function pi(world: E2eWorld, args: string[], env: Record<string, string>) {
	return runCommand([process.execPath, PI_CLI, ...args], world.project, env);
}

function askPi(world: E2eWorld, sessionId: string, extra: string[] = []) {
	const env = packagedEnv(world, sessionId);
	return pi(world, ["-p", "--mode", "json", "--provider", "faux", "--model", "faux-1", "--session-id", sessionId, "-e", FAUX, ...extra, PROMPT], env);
}

function sessionFileIn(dir: string, sessionId: string): string {
	const files = readdirSync(dir).filter((n) => n.endsWith(`_${sessionId}.jsonl`));
	expect(files).toHaveLength(1);
	return join(dir, files[0]!);
}

beforeAll(async () => {
	const npmDir = join(releaseDir(), "npm");
	const work = makeTempDir("pi-events-npm-");
	const cache = join(work, "npm-cache");
	const tarballs = join(work, "tarballs");
	mkdirSync(tarballs);
	const started = performance.now();
	await packAll(npmDir, ["pi-events", HOST, ...OTHERS], tarballs, cache);
	console.log(`npm pack of 7 packages: ${((performance.now() - started) / 1000).toFixed(1)} s`);
	prefix = join(work, "prefix");
	const mine = ["pi-events", HOST].map((dir) => join(tarballs, packed.get(dir)!.filename));
	npm(["install", "-g", "--prefix", prefix, ...mine], work, cache);
	installed = join(prefix, "lib", "node_modules", "pi-events");
	packagedBinary = join(prefix, "lib", "node_modules", "@pi-events", HOST, "bin", "pi-events");
}, 300_000);

afterAll(() => cleanupTempDirs());

describe("npm packages", () => {
	test("every package packs: the platform binaries executable, with os/cpu/libc and one version", () => {
		const npmDir = join(releaseDir(), "npm");
		for (const target of [HOST, ...OTHERS]) {
			const report = packed.get(target)!;
			expect(report.name).toBe(`@pi-events/${target}`);
			expect(report.version).toBe(pkg.version);
			expect(report.files.find((f) => f.path === "bin/pi-events")?.mode).toBe(0o755);
			const manifest = JSON.parse(readFileSync(join(npmDir, target, "package.json"), "utf8"));
			expect(manifest.os).toEqual([target.split("-")[0]]);
			expect(manifest.cpu).toEqual([target.split("-")[1]]);
			if (target.startsWith("linux")) expect(manifest.libc).toEqual([target.endsWith("-musl") ? "musl" : "glibc"]);
		}
		const main = packed.get("pi-events")!;
		expect(main.files.map((f) => f.path).sort()).toEqual(["README.md", "bin/pi-events", "extension/pi-events.ts", "package.json"]);
		expect(main.files.find((f) => f.path === "bin/pi-events")?.mode).toBe(0o755);
		const manifest = JSON.parse(readFileSync(join(npmDir, "pi-events", "package.json"), "utf8"));
		expect(Object.keys(manifest.optionalDependencies).sort()).toEqual([HOST, ...OTHERS].map((t) => `@pi-events/${t}`).sort());
		expect(Object.values(manifest.optionalDependencies)).toEqual(Array(6).fill(pkg.version));
	});

	test("npm installed the extension and this platform's binary; the pi-events command runs it", () => {
		expect(JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).pi.extensions).toEqual(["./extension/pi-events.ts"]);
		expect(existsSync(packagedBinary)).toBeTrue();
		expect(lstatSync(join(prefix, "bin", "pi-events")).isSymbolicLink()).toBeTrue();
		const run = Bun.spawnSync([join(prefix, "bin", "pi-events"), "--version"], { env: { PATH: pathWithoutPiEvents() }, stdout: "pipe", stderr: "pipe" });
		expect(run.stderr.toString()).toBe("");
		expect(run.stdout.toString()).toStartWith(`${pkg.version} (${HOST}, commit `);
	});

	test("without its platform package the pi-events command says what is missing", () => {
		const alone = join(makeTempDir("pi-events-alone-"), "pi-events");
		cpSync(installed, alone, { recursive: true });
		const run = Bun.spawnSync([join(alone, "bin", "pi-events"), "--version"], { env: { PATH: pathWithoutPiEvents() }, stdout: "pipe", stderr: "pipe" });
		expect(run.exitCode).toBe(2);
		expect(run.stderr.toString()).toContain(`the package @pi-events/${HOST} is not installed`);
	});
});

describe("pi install of the installed package, nothing on PATH", () => {
	let world: E2eWorld;

	beforeAll(() => {
		world = setupWorld("unused-binary-link");
	});

	test("pi install records the package", () => {
		const run = pi(world, ["install", installed], packagedEnv(world, "unused"));
		if (run.exitCode !== 0) throw new Error(failureReport(run));
		// pi records a local package relative to its settings file.
		const settings = JSON.parse(readFileSync(join(world.layout.agentDir, "settings.json"), "utf8"));
		const sources = (settings.packages as (string | { source: string })[]).map((p) => (typeof p === "string" ? p : p.source));
		expect(sources.map((p) => realpathSync(resolve(world.layout.agentDir, p)))).toEqual([realpathSync(installed)]);
	}, 60_000);

	test("the tools find the seeded event through the platform package's binary", () => {
		expect(Bun.which("pi-events", { PATH: pathWithoutPiEvents() })).toBeNull();
		const run = askPi(world, "e2e-packaged");
		if (run.exitCode !== 0) throw new Error(failureReport(run));
		const entries = entriesOf(sessionFileIn(world.sessionDir, "e2e-packaged"));
		expectSearchFoundSeeded(entries, world, "e2e-packaged");
		expectReadExact(entries, world);
		expectAnswered(entries);
		expect(processesRunning(packagedBinary)).toEqual([]);
	}, 60_000);
});

describe("pi --session-dir", () => {
	let world: E2eWorld;
	let custom: string;

	beforeAll(() => {
		world = setupWorld("unused-binary-link");
		// The seeded history lives only in a directory outside pi's default tree.
		custom = join(world.layout.root, "custom-sessions");
		mkdirSync(custom);
		for (const name of readdirSync(world.sessionDir)) renameSync(join(world.sessionDir, name), join(custom, name));
		const run = pi(world, ["install", installed], packagedEnv(world, "unused"));
		if (run.exitCode !== 0) throw new Error(failureReport(run));
	}, 60_000);

	test("history written there is found and read through the tools", () => {
		const run = askPi(world, "e2e-session-dir", ["--session-dir", custom]);
		if (run.exitCode !== 0) throw new Error(failureReport(run));
		const entries = entriesOf(sessionFileIn(custom, "e2e-session-dir"));
		expectSearchFoundSeeded(entries, world, "e2e-session-dir");
		expectReadExact(entries, world);
	}, 60_000);

	test("a second copy of the extension (the repository root as a pi package) stays inactive and says so", () => {
		const install = pi(world, ["install", ROOT], packagedEnv(world, "unused"));
		if (install.exitCode !== 0) throw new Error(failureReport(install));
		const run = askPi(world, "e2e-duplicate", ["--session-dir", custom]);
		if (run.exitCode !== 0) throw new Error(failureReport(run));
		expect(run.stderr).not.toContain("conflicts with");
		expect(run.stderr).toContain("the extension is installed twice");
		expect(run.stderr).toContain(join(ROOT, "extension", "pi-events.ts"));
		expect(run.stderr).toContain(join(installed, "extension", "pi-events.ts"));
		// The active copy answers (earlier runs of this block add hits of their own sessions).
		const result = toolResult(entriesOf(sessionFileIn(custom, "e2e-duplicate")), "call_e2e_search");
		expect(result.message.isError).toBe(false);
		expect(result.message.details.hits.map((h: { entryId: string }) => h.entryId)).toContain(expectedEntry);
	}, 60_000);
});
