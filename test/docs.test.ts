/**
 * The docs are the user's truth: every command and flag is documented in docs/cli.md and every
 * tool and tool input in docs/tools.md, so a change that adds one without documenting it fails.
 * The README stays short (a newcomer reads it in five minutes), every relative link in the README
 * and docs/ resolves (file and heading), and the README's everyday-use examples run as written on
 * a fresh copy of the bundled fixtures.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { callerArgs } from "../src/cli/caller.ts";
import { filterArgs } from "../src/cli/filters.ts";
import { indexCommand } from "../src/cli/index-cmd.ts";
import { readCommand } from "../src/cli/read.ts";
import { searchCommand } from "../src/cli/search.ts";
import { sessionsCommand } from "../src/cli/sessions.ts";
import { serveCommand } from "../src/cli/serve.ts";
import { commonArgs } from "../src/cli/shared.ts";
import { statusCommand } from "../src/cli/status.ts";
import { traceCommand } from "../src/cli/trace.ts";
import { TOOLS } from "../src/server/tools.ts";
import { fastFiles } from "./fast.ts";
import { cleanupTempDirs, makeTempDir, ROOT } from "./helpers/temp.ts";

afterAll(cleanupTempDirs);

const COMMANDS = [indexCommand, statusCommand, searchCommand, sessionsCommand, readCommand, traceCommand, serveCommand] as unknown as {
	meta: { name: string };
	args: Record<string, unknown>;
}[];

const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const readme = read("README.md");
const cliDoc = read("docs/cli.md");
const toolsDoc = read("docs/tools.md");

/** The markdown files whose links are checked: the README, docs/, and the other READMEs users open. */
const MARKDOWN = [
	"README.md",
	"fixtures/README.md",
	...readdirSync(join(ROOT, "docs"))
		.filter((name) => name.endsWith(".md"))
		.map((name) => `docs/${name}`),
];

describe("docs/cli.md", () => {
	test("every command is documented", () => {
		for (const command of ["index", "status", "search", "sessions", "read", "trace", "serve"]) {
			expect(cliDoc).toContain(`## \`pi-events ${command}`);
		}
	});

	test("every common, caller and filter flag is documented", () => {
		const flags = [
			...Object.keys(commonArgs),
			...Object.keys(callerArgs),
			...Object.keys(filterArgs),
			"limit",
			"no-sync",
			"fragment",
			"offset",
			"length",
			"order",
			"before",
			"after",
			"stdio",
		];
		const missing = flags.filter((flag) => !cliDoc.includes(`--${flag}`));
		expect(missing).toEqual([]);
	});

	test("every flag of every command is documented", () => {
		const toKebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
		const missing: string[] = [];
		for (const command of COMMANDS) {
			for (const [name, arg] of Object.entries(command.args as Record<string, { type: string }>)) {
				if (arg.type === "positional") continue;
				const flag = toKebab(name);
				// A boolean that defaults to true is documented by its negation (--no-sync).
				if (!cliDoc.includes(`--${flag}`) && !(arg.type === "boolean" && cliDoc.includes(`--no-${flag}`))) missing.push(`${command.meta.name} --${flag}`);
			}
		}
		expect(missing).toEqual([]);
	});

	test("the --index help names every place the default comes from, as docs/cli.md does", () => {
		const sources = ["$PI_EVENTS_INDEX", "config file", "$XDG_CACHE_HOME/pi-events/index.db", "~/.cache/pi-events/index.db"];
		const help = commonArgs.index.description;
		expect(sources.filter((source) => !help.includes(source))).toEqual([]);
		const documented = cliDoc.slice(cliDoc.indexOf("`--index PATH`"), cliDoc.indexOf("`--sessions-dir DIR`"));
		expect(sources.filter((source) => !documented.includes(source))).toEqual([]);
	});
});

describe("docs/tools.md", () => {
	test("every tool and each of its inputs is documented", () => {
		for (const tool of TOOLS) {
			expect(toolsDoc).toContain(`\`${tool.name}\``);
			const entries = (tool.input as unknown as { entries: Record<string, unknown> }).entries;
			const missing = Object.keys(entries).filter((key) => !toolsDoc.includes(`\`${key}\``));
			expect(missing).toEqual([]);
		}
	});

	test("the README names every tool", () => {
		expect(TOOLS.map((tool) => tool.name).filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
	});
});

describe("the README", () => {
	test("is at most 300 lines", () => {
		expect(readme.split("\n").length).toBeLessThanOrEqual(300);
	});

	test("its test command is the one CI runs and package.json's test script", () => {
		const command = "bun test --timeout=30000";
		expect(readme).toContain(`\n${command}\n`);
		expect(JSON.parse(read("package.json")).scripts.test).toBe(command);
		expect(read(".ci/run")).toContain(`\n${command} 2>&1`);
	});

	test("bun run test:fast runs the architecture and docs suites and none of the slow ones", () => {
		expect(JSON.parse(read("package.json")).scripts["test:fast"]).toBe("bun test/fast.ts");
		const files = fastFiles();
		expect(files).toContain("test/architecture.test.ts");
		expect(files).toContain("test/docs.test.ts");
		const slow = files.filter((file) => /e2e|release\/release|reliability|hostile|eval|search-cli|server|freshness|command-server|pi-conformance/.test(file));
		expect(slow).toEqual([]);
		for (const file of files) expect(existsSync(join(ROOT, file))).toBe(true);
	});
});

/** GitHub's heading anchors: lowercase, punctuation other than `-` and `_` dropped, spaces as `-`. */
function anchorOf(heading: string): string {
	return heading
		.trim()
		.toLowerCase()
		.replace(/[^\p{L}\p{N}\s_-]/gu, "")
		.replace(/\s/g, "-");
}

function anchorsIn(markdown: string): Set<string> {
	const anchors = new Set<string>();
	let fenced = false;
	for (const line of markdown.split("\n")) {
		if (line.startsWith("```")) fenced = !fenced;
		const heading = !fenced && /^#{1,6} (.+)$/.exec(line);
		if (heading) anchors.add(anchorOf(heading[1]!));
	}
	return anchors;
}

describe("links", () => {
	test("every relative link in the README and docs/ resolves, to its heading too", () => {
		const broken: string[] = [];
		for (const file of MARKDOWN) {
			const text = read(file).replace(/```[\s\S]*?```/g, "");
			for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
				const target = match[1]!;
				if (/^[a-z]+:/.test(target)) continue;
				const [path, anchor] = target.split("#") as [string, string | undefined];
				const resolved = path ? resolve(dirname(join(ROOT, file)), path) : join(ROOT, file);
				if (!existsSync(resolved)) {
					broken.push(`${file}: ${target} (no such file)`);
					continue;
				}
				if (anchor && resolved.endsWith(".md") && !anchorsIn(readFileSync(resolved, "utf8")).has(anchor)) {
					broken.push(`${file}: ${target} (no such heading in ${relative(ROOT, resolved)})`);
				}
			}
		}
		expect(broken).toEqual([]);
	});
});

/** The commands of the README's "Everyday use" block, in order; `export` lines are the environment they run in. */
function everydayExamples(): { env: string[]; commands: string[] } {
	const section = readme.slice(readme.indexOf("\n## Everyday use\n"));
	const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
	const lines = block
		.split("\n")
		.map((line) => line.replace(/\s+#.*$/, "").trim())
		.filter(Boolean);
	return { env: lines.filter((line) => line.startsWith("export ")), commands: lines.filter((line) => !line.startsWith("export ")) };
}

describe("the README's everyday use", () => {
	test("every example runs as written on a fresh copy of the fixtures, with output", () => {
		const { env, commands } = everydayExamples();
		expect(commands.length).toBeGreaterThanOrEqual(8);
		expect(commands.every((command) => command.startsWith("pi-events "))).toBe(true);

		// A clone's layout (fixtures/try.json, fixtures/sessions/pi), a home with no pi sessions,
		// and `pi-events` on PATH running this source tree.
		const temp = makeTempDir("pi-events-readme-");
		const clone = join(temp, "clone");
		cpSync(join(ROOT, "fixtures", "try.json"), join(clone, "fixtures", "try.json"));
		cpSync(join(ROOT, "fixtures", "sessions", "pi"), join(clone, "fixtures", "sessions", "pi"), { recursive: true });
		const bin = join(temp, "bin");
		mkdirSync(bin);
		writeFileSync(join(bin, "pi-events"), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "src", "main.ts")}" "$@"\n`, { mode: 0o755 });
		const home = join(temp, "home");
		mkdirSync(home);
		const environment: Record<string, string> = {
			PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
			HOME: home,
			XDG_CACHE_HOME: join(temp, "cache"),
			XDG_CONFIG_HOME: join(temp, "config"),
			PI_CODING_AGENT_DIR: join(temp, "agent"),
			PI_EVENTS_SERVER: "off",
			TMPDIR: process.env.TMPDIR ?? "/tmp",
		};

		const failures: string[] = [];
		for (const command of commands) {
			const proc = Bun.spawnSync(["sh", "-c", [...env, command].join("\n")], { cwd: clone, env: environment, stdout: "pipe", stderr: "pipe" });
			const stdout = proc.stdout.toString();
			if (proc.exitCode !== 0 || stdout.trim() === "") failures.push(`${command}: exit ${proc.exitCode}, ${stdout.length} bytes\n${proc.stderr.toString()}`);
		}
		expect(failures).toEqual([]);
		// The fixtures' index went where the README says: the home's cache, never the clone.
		expect(existsSync(join(home, ".cache", "pi-events", "fixtures.db"))).toBe(true);
	}, 60_000);
});
