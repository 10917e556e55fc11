/**
 * The extension's choices, on real directories: which binary it starts ($PI_EVENTS_BIN, the
 * installed platform package found like Node resolves packages, then PATH) and when it passes pi's
 * session directory to the server (only outside pi's default tree). End to end with real pi:
 * test/e2e/package-install.test.ts.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { extraSessionDirOf, packagedBinary, serverCommand } from "../../extension/pi-events.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";

afterAll(() => cleanupTempDirs());

const HOST = `${process.platform}-${process.arch}`;

function fakePlatformPackage(nodeModules: string, target = HOST, executable = true): string {
	const bin = join(nodeModules, "@pi-events", target, "bin", "pi-events");
	mkdirSync(join(bin, ".."), { recursive: true });
	writeFileSync(bin, "#!/bin/sh\n");
	chmodSync(bin, executable ? 0o755 : 0o644);
	return bin;
}

describe("the binary", () => {
	test("hoisted (npm -g, or a project's node_modules): found from the extension's directory up", () => {
		const prefix = makeTempDir("pi-events-lookup-");
		const ext = join(prefix, "lib", "node_modules", "pi-events", "extension");
		mkdirSync(ext, { recursive: true });
		const bin = fakePlatformPackage(join(prefix, "lib", "node_modules"));
		expect(packagedBinary(ext)).toBe(bin);
	});

	test("nested in the package's own node_modules", () => {
		const pkg = join(makeTempDir("pi-events-lookup-"), "pi-events");
		mkdirSync(join(pkg, "extension"), { recursive: true });
		const bin = fakePlatformPackage(join(pkg, "node_modules"));
		expect(packagedBinary(join(pkg, "extension"))).toBe(bin);
	});

	test("another platform's package or a non-executable file is not taken", () => {
		const dir = makeTempDir("pi-events-lookup-");
		fakePlatformPackage(join(dir, "node_modules"), process.arch === "x64" ? `${process.platform}-arm64` : `${process.platform}-x64`);
		expect(packagedBinary(dir)).toBeNull();
		fakePlatformPackage(join(dir, "node_modules"), HOST, false);
		expect(packagedBinary(dir)).toBeNull();
	});

	test("order: $PI_EVENTS_BIN, then the platform package, then pi-events on PATH", () => {
		const dir = makeTempDir("pi-events-lookup-");
		expect(serverCommand({}, null, dir)).toMatchObject({ bin: "pi-events", from: "PATH" });
		const bin = fakePlatformPackage(join(dir, "node_modules"));
		expect(serverCommand({}, null, dir)).toMatchObject({ bin, from: "package" });
		expect(serverCommand({ PI_EVENTS_BIN: "/opt/pe" }, null, dir)).toMatchObject({ bin: "/opt/pe", from: "PI_EVENTS_BIN" });
	});
});

describe("pi's session directory", () => {
	const env = { PI_CODING_AGENT_DIR: "/home/me/.pi/agent" };

	test("inside pi's default tree: nothing to pass (the server indexes it anyway)", () => {
		expect(extraSessionDirOf("/home/me/.pi/agent/sessions/--work-app--", env)).toBeNull();
		expect(extraSessionDirOf("/home/me/.pi/agent/sessions", env)).toBeNull();
		expect(extraSessionDirOf(undefined, env)).toBeNull();
	});

	test("anywhere else (pi --session-dir): passed as --sessions-dir, before PI_EVENTS_ARGS", () => {
		expect(extraSessionDirOf("/work/app/.pi-sessions", env)).toBe("/work/app/.pi-sessions");
		expect(extraSessionDirOf("/home/me/.pi/agent/sessions-other", env)).toBe("/home/me/.pi/agent/sessions-other");
		expect(serverCommand({ PI_EVENTS_BIN: "/opt/pe", PI_EVENTS_ARGS: "--root /work" }, "/work/app/.pi-sessions").args).toEqual([
			"serve",
			"--stdio",
			"--socket",
			"--sessions-dir",
			"/work/app/.pi-sessions",
			"--root",
			"/work",
		]);
	});

	test("the server also listens for the command line, unless PI_EVENTS_SERVER=off or the binary predates --socket", () => {
		expect(serverCommand({ PI_EVENTS_BIN: "/opt/pe" }, null).args).toEqual(["serve", "--stdio", "--socket"]);
		expect(serverCommand({ PI_EVENTS_BIN: "/opt/pe", PI_EVENTS_SERVER: "off" }, null).args).toEqual(["serve", "--stdio"]);
		expect(serverCommand({ PI_EVENTS_BIN: "/opt/pe" }, null, null, false).args).toEqual(["serve", "--stdio"]);
	});
});
