/**
 * The npm packages, the way esbuild and biome ship native binaries:
 *   pi-events                    the pi extension (pi manifest) and the `pi-events` command (a POSIX sh
 *                                launcher, packaging/launcher.sh, that execs the native binary), with one
 *                                optionalDependency per platform package;
 *   @pi-events/<os>-<arch>[-musl] one release binary each, selected by npm through os/cpu/libc.
 * Each package is a directory ready for `npm pack` / `npm publish`.
 */
import { chmodSync, copyFileSync, linkSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
export const MAIN_PACKAGE = "pi-events";
export const platformPackage = (target: string) => `@pi-events/${target}`;

/** npm's os/cpu/libc fields for a target such as linux-arm64-musl. */
export function platformFields(target: string): { os: string[]; cpu: string[]; libc?: string[] } {
	const [os, cpu, libc] = target.split("-");
	if (!os || !cpu) throw new Error(`not a target: ${target}`);
	return { os: [os], cpu: [cpu], ...(os === "linux" ? { libc: [libc === "musl" ? "musl" : "glibc"] } : {}) };
}

export interface PackageOptions {
	/** Where the release binaries pi-events-<target> are. */
	releaseDir: string;
	outDir: string;
	version: string;
	targets: readonly string[];
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export function writePackages(options: PackageOptions): void {
	const { releaseDir, outDir, version, targets } = options;
	rmSync(outDir, { recursive: true, force: true });

	const main = join(outDir, MAIN_PACKAGE);
	mkdirSync(join(main, "bin"), { recursive: true });
	mkdirSync(join(main, "extension"), { recursive: true });
	copyFileSync(join(ROOT, "packaging", "launcher.sh"), join(main, "bin", "pi-events"));
	chmodSync(join(main, "bin", "pi-events"), 0o755);
	copyFileSync(join(ROOT, "extension", "pi-events.ts"), join(main, "extension", "pi-events.ts"));
	copyFileSync(join(ROOT, "README.md"), join(main, "README.md"));
	writeFileSync(
		join(main, "package.json"),
		json({
			name: MAIN_PACKAGE,
			version,
			description: "Local, read-only event search over pi coding agent session history: the pi extension and the pi-events command",
			keywords: ["pi-package", "pi", "search", "sessions"],
			type: "module",
			bin: { "pi-events": "bin/pi-events" },
			pi: { extensions: ["./extension/pi-events.ts"] },
			files: ["bin", "extension", "README.md"],
			os: ["linux", "darwin"],
			optionalDependencies: Object.fromEntries(targets.map((t) => [platformPackage(t), version])),
			// Provided by pi to its extensions; never installed alongside.
			peerDependencies: { "@earendil-works/pi-coding-agent": "*", typebox: "*" },
			peerDependenciesMeta: { "@earendil-works/pi-coding-agent": { optional: true }, typebox: { optional: true } },
		}),
	);

	for (const target of targets) {
		const dir = join(outDir, target);
		mkdirSync(join(dir, "bin"), { recursive: true });
		const binary = join(dir, "bin", "pi-events");
		try {
			linkSync(join(releaseDir, `pi-events-${target}`), binary);
		} catch {
			copyFileSync(join(releaseDir, `pi-events-${target}`), binary);
		}
		chmodSync(binary, 0o755);
		writeFileSync(
			join(dir, "package.json"),
			json({
				name: platformPackage(target),
				version,
				description: `The pi-events binary for ${target} (installed by the pi-events package)`,
				...platformFields(target),
				files: ["bin"],
				preferUnplugged: true,
			}),
		);
	}
}
