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

const readme = readFileSync(join(import.meta.dir, "..", "README.md"), "utf8");

test("every command is documented", () => {
	for (const command of ["index", "status", "search", "read", "trace", "serve"]) {
		expect(readme).toContain(`pi-events ${command}`);
	}
});

test("every common, caller and filter flag is documented", () => {
	const flags = [...Object.keys(commonArgs), ...Object.keys(callerArgs), ...Object.keys(filterArgs), "limit", "no-sync", "fragment", "offset", "length", "order", "before", "after", "stdio"];
	const missing = flags.filter((flag) => !readme.includes(`--${flag}`));
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
