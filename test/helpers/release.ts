/**
 * The release artifacts for the tests: $PI_EVENTS_RELEASE_DIR when .ci/run built them already,
 * otherwise one `bun build.ts --release` into a temp dir per test run (shared by the test files;
 * removed after the last test by test/preload.ts's global hook: `process.once("exit")` never fires
 * under `bun test` 1.4.4, and the 600 MB folder stayed behind in /tmp).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./temp.ts";

/** The temp folder holding this run's own release build, until removeBuiltRelease(). */
let builtParent: string | null = null;

/** `bun build.ts --release DIR`. */
function buildRelease(dir: string): void {
	const proc = Bun.spawnSync([process.execPath, join(ROOT, "build.ts"), "--release", dir], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
	if (proc.exitCode !== 0) throw new Error(`bun build.ts --release failed (${proc.exitCode}):\n${proc.stderr.toString()}`);
}

/** The release directory; `build` makes it when there is none yet (a stub in the helper's own test). */
export function releaseDir(build: (dir: string) => void = buildRelease): string {
	const given = process.env.PI_EVENTS_RELEASE_DIR;
	if (given && existsSync(join(given, "SHA256SUMS"))) return given;
	if (builtParent && existsSync(join(builtParent, "release", "SHA256SUMS"))) return join(builtParent, "release");
	removeBuiltRelease();
	builtParent = mkdtempSync(join(tmpdir(), "pi-events-release-"));
	build(join(builtParent, "release"));
	return join(builtParent, "release");
}

/** Remove this run's release build, if it made one (test/preload.ts calls it after the last test). */
export function removeBuiltRelease(): void {
	if (builtParent) rmSync(builtParent, { recursive: true, force: true });
	builtParent = null;
}

/** `qemu-aarch64` and the arm64 glibc (Debian: qemu-user, libc6-arm64-cross), or why not. */
export function qemuAarch64(): { qemu: string; sysroot: string } | string {
	const qemu = Bun.which("qemu-aarch64") ?? Bun.which("qemu-aarch64-static");
	if (!qemu) return "qemu-aarch64 is not installed (Debian: qemu-user)";
	const sysroot = "/usr/aarch64-linux-gnu";
	if (!existsSync(join(sysroot, "lib", "ld-linux-aarch64.so.1"))) return `no arm64 glibc in ${sysroot} (Debian: libc6-arm64-cross)`;
	return { qemu, sysroot };
}
