/**
 * The release artifacts for the tests: $PI_EVENTS_RELEASE_DIR when .ci/run built them already,
 * otherwise one `bun build.ts --release` into a temp dir per test process (shared by the test
 * files; removed when the process exits).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./temp.ts";

let built: string | null = null;

export function releaseDir(): string {
	const given = process.env.PI_EVENTS_RELEASE_DIR;
	if (given && existsSync(join(given, "SHA256SUMS"))) return given;
	if (built && existsSync(join(built, "SHA256SUMS"))) return built;
	const parent = mkdtempSync(join(tmpdir(), "pi-events-release-"));
	process.once("exit", () => rmSync(parent, { recursive: true, force: true }));
	const dir = join(parent, "release");
	const proc = Bun.spawnSync([process.execPath, join(ROOT, "build.ts"), "--release", dir], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
	if (proc.exitCode !== 0) throw new Error(`bun build.ts --release failed (${proc.exitCode}):\n${proc.stderr.toString()}`);
	built = dir;
	return dir;
}

/** `qemu-aarch64` and the arm64 glibc (Debian: qemu-user, libc6-arm64-cross), or why not. */
export function qemuAarch64(): { qemu: string; sysroot: string } | string {
	const qemu = Bun.which("qemu-aarch64") ?? Bun.which("qemu-aarch64-static");
	if (!qemu) return "qemu-aarch64 is not installed (Debian: qemu-user)";
	const sysroot = "/usr/aarch64-linux-gnu";
	if (!existsSync(join(sysroot, "lib", "ld-linux-aarch64.so.1"))) return `no arm64 glibc in ${sysroot} (Debian: libc6-arm64-cross)`;
	return { qemu, sysroot };
}
