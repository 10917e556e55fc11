/**
 * `bun build.ts --release`: the six artifacts and SHA256SUMS, each binary for the right OS and
 * architecture (ELF machine and loader, Mach-O CPU type), `--version` with target and commit, and
 * the linux-arm64 binary's smoke test (index, search, serve tools/list on the fixtures) under
 * qemu-aarch64. Without qemu the arm64 test is skipped locally and fails under CI=true.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TOOLS } from "../../src/server/tools.ts";
import { qemuAarch64, releaseDir } from "../helpers/release.ts";
import { cleanupTempDirs, makeTempDir, PI_FIXTURES, ROOT } from "../helpers/temp.ts";
import pkg from "../../package.json" with { type: "json" };

const TARGETS = ["linux-x64", "linux-arm64", "linux-x64-musl", "linux-arm64-musl", "darwin-x64", "darwin-arm64"];

let dir: string;
beforeAll(() => {
	dir = releaseDir();
}, 180_000);
afterAll(() => cleanupTempDirs());

/** What the file header says: ELF (machine, loader) or Mach-O (CPU type). */
function describeBinary(path: string): string {
	const head = readFileSync(path).subarray(0, 8192);
	if (head.readUInt32BE(0) === 0x7f454c46) {
		const machine = head.readUInt16LE(18);
		const arch = machine === 62 ? "x64" : machine === 183 ? "arm64" : `machine ${machine}`;
		const text = head.toString("latin1");
		const loader = text.includes("/ld-musl-") ? "-musl" : text.includes("/ld-linux-") ? "" : "-unknown-loader";
		return `linux-${arch}${loader}`;
	}
	if (head.readUInt32LE(0) === 0xfeedfacf) {
		const cpu = head.readUInt32LE(4);
		return `darwin-${cpu === 0x01000007 ? "x64" : cpu === 0x0100000c ? "arm64" : `cpu ${cpu.toString(16)}`}`;
	}
	return "unknown";
}

function isolatedEnv(): Record<string, string> {
	const tmp = makeTempDir("pi-events-release-run-");
	mkdirSync(join(tmp, "home"));
	return {
		HOME: join(tmp, "home"),
		PI_CODING_AGENT_DIR: join(tmp, "agent"),
		XDG_CACHE_HOME: join(tmp, "cache"),
		XDG_CONFIG_HOME: join(tmp, "config"),
		PATH: process.env.PATH ?? "/usr/bin:/bin",
	};
}

describe("release artifacts", () => {
	test("one binary per target and SHA256SUMS in sha256sum format that verifies", () => {
		const names = readdirSync(dir).filter((n) => n.startsWith("pi-events-"));
		expect(names.sort()).toEqual(TARGETS.map((t) => `pi-events-${t}`).sort());
		const lines = readFileSync(join(dir, "SHA256SUMS"), "utf8").trimEnd().split("\n");
		expect(lines).toHaveLength(TARGETS.length);
		for (const line of lines) {
			const m = /^([0-9a-f]{64}) {2}(pi-events-[a-z0-9-]+)$/.exec(line);
			expect(m).not.toBeNull();
		}
		// Verified with the tool users run (the command the README gives).
		const check = Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: dir, stdout: "pipe", stderr: "pipe" });
		expect(check.stdout.toString()).not.toContain("FAILED");
		expect(check.exitCode).toBe(0);
	}, 60_000);

	test("each binary is built for its OS and architecture (ELF machine and loader, Mach-O CPU)", () => {
		for (const target of TARGETS) expect(`${target}: ${describeBinary(join(dir, `pi-events-${target}`))}`).toBe(`${target}: ${target}`);
	});

	test("the musl binaries need libstdc++ besides musl's libc, as the README says (Alpine: apk add libstdc++)", () => {
		// Running one here is not possible: Debian packages musl's loader but no libstdc++ built for musl.
		const readelf = Bun.which("readelf");
		if (!readelf) throw new Error("readelf (Debian: binutils) is needed to read the binaries' dynamic section");
		for (const target of TARGETS.filter((t) => t.endsWith("-musl"))) {
			const out = Bun.spawnSync([readelf, "-d", join(dir, `pi-events-${target}`)], { stdout: "pipe", stderr: "pipe" }).stdout.toString();
			const needed = [...out.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]).sort();
			expect(`${target}: ${needed.join(" ")}`).toBe(
				`${target}: ${[`libc.musl-${target.startsWith("linux-x64") ? "x86_64" : "aarch64"}.so.1`, "libstdc++.so.6"].sort().join(" ")}`,
			);
		}
		expect(readFileSync(join(ROOT, "README.md"), "utf8")).toContain("apk add libstdc++");
	});

	test("--version prints the version, the target and the commit", () => {
		const head = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT, stdout: "pipe" }).stdout.toString().trim();
		const run = Bun.spawnSync([join(dir, "pi-events-linux-x64"), "--version"], { env: isolatedEnv(), stdout: "pipe", stderr: "pipe" });
		expect(run.exitCode).toBe(0);
		expect(run.stdout.toString()).toMatch(new RegExp(`^${pkg.version.replaceAll(".", "\\.")} \\(linux-x64, commit ${head}(-dirty)?\\)\\n$`));
	});
});

describe("linux-arm64 under qemu-aarch64", () => {
	const qemu = qemuAarch64();
	if (typeof qemu === "string" && process.env.CI !== "true") {
		test.skip(`smoke test (${qemu})`, () => {});
		return;
	}

	test("index, search and serve tools/list on the fixtures", () => {
		if (typeof qemu === "string") throw new Error(qemu);
		const env = isolatedEnv();
		const run = (args: string[], stdin?: string) => {
			const proc = Bun.spawnSync([qemu.qemu, "-L", qemu.sysroot, join(dir, "pi-events-linux-arm64"), ...args], {
				env,
				cwd: ROOT,
				stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
				stdout: "pipe",
				stderr: "pipe",
				timeout: 60_000,
			});
			return { code: proc.exitCode, out: proc.stdout.toString(), err: proc.stderr.toString() };
		};
		expect(run(["--version"]).out).toStartWith(`${pkg.version} (linux-arm64, commit `);
		const indexed = run(["index", "--sessions-dir", PI_FIXTURES]);
		expect(indexed.err).toBe("");
		expect(indexed.code).toBe(0);
		const search = run(["search", "--all", "--json", "ECONNREFUSED"]);
		expect(search.code).toBe(0);
		expect(JSON.parse(search.out).hits.length).toBeGreaterThan(0);
		const frames = [
			{ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "ci", version: "0" } } },
			{ jsonrpc: "2.0", id: 2, method: "tools/list" },
		];
		const served = run(["serve", "--stdio", "--sessions-dir", PI_FIXTURES], `${frames.map((f) => JSON.stringify(f)).join("\n")}\n`);
		const listed = served.out
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l))
			.find((m) => m.id === 2);
		expect(listed.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
	}, 120_000);
});
