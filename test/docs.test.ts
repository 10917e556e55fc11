/**
 * The README is the user's truth: every command, every search/read/trace flag and every tool
 * must be documented there, so a change that adds one without documenting it fails.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { callerArgs } from "../src/cli/caller.ts";
import { filterArgs } from "../src/cli/filters.ts";
import { commonArgs } from "../src/cli/shared.ts";
import { TOOLS } from "../src/server/tools.ts";
import { indexCommand } from "../src/cli/index-cmd.ts";
import { readCommand } from "../src/cli/read.ts";
import { searchCommand } from "../src/cli/search.ts";
import { sessionsCommand } from "../src/cli/sessions.ts";
import { serveCommand } from "../src/cli/serve.ts";
import { statusCommand } from "../src/cli/status.ts";
import { traceCommand } from "../src/cli/trace.ts";

const COMMANDS = [indexCommand, statusCommand, searchCommand, sessionsCommand, readCommand, traceCommand, serveCommand] as unknown as {
	meta: { name: string };
	args: Record<string, unknown>;
}[];

const readme = readFileSync(join(import.meta.dir, "..", "README.md"), "utf8");

test("every command is documented", () => {
	for (const command of ["index", "status", "search", "sessions", "read", "trace", "serve"]) {
		expect(readme).toContain(`pi-events ${command}`);
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
	const missing = flags.filter((flag) => !readme.includes(`--${flag}`));
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
			if (!readme.includes(`--${flag}`) && !(arg.type === "boolean" && readme.includes(`--no-${flag}`))) missing.push(`${command.meta.name} --${flag}`);
		}
	}
	expect(missing).toEqual([]);
});

test("every tool and each of its inputs is documented", () => {
	for (const tool of TOOLS) {
		expect(readme).toContain(tool.name);
		const entries = (tool.input as unknown as { entries: Record<string, unknown> }).entries;
		const missing = Object.keys(entries).filter((key) => !readme.includes(`\`${key}\``));
		expect(missing).toEqual([]);
	}
});
