/**
 * The commands' own argument parser (src/cli/argv.ts) against citty's `parseArgs`, on every
 * command's real definition: the same value for each defined flag and positional, and the same
 * positionals, for the forms a user types. Then what citty does differently on purpose: a missing
 * required positional is a usage error of ours.
 */
import { describe, expect, test } from "bun:test";
import { type ArgsDef, parseArgs } from "citty";
import { parseArgv } from "../../src/cli/argv.ts";
import { indexCommand } from "../../src/cli/index-cmd.ts";
import { readCommand } from "../../src/cli/read.ts";
import { searchCommand } from "../../src/cli/search.ts";
import { serveCommand } from "../../src/cli/serve.ts";
import { sessionsCommand } from "../../src/cli/sessions.ts";
import { statusCommand } from "../../src/cli/status.ts";
import { traceCommand } from "../../src/cli/trace.ts";
import { isPiEventsError } from "../../src/errors.ts";

const commands = {
	search: searchCommand,
	read: readCommand,
	trace: traceCommand,
	index: indexCommand,
	sessions: sessionsCommand,
	status: statusCommand,
	serve: serveCommand,
};

function defOf(name: keyof typeof commands): ArgsDef {
	return commands[name].args as ArgsDef;
}

/** What a command sees: each defined name's value, and the positionals. */
function view(parsed: Record<string, unknown>, def: ArgsDef): Record<string, unknown> {
	const out: Record<string, unknown> = { _: parsed._ };
	for (const name of Object.keys(def)) out[name] = parsed[name];
	return out;
}

const cases: [keyof typeof commands, string[]][] = [
	["search", ["error"]],
	["search", ["the", "error", "--json"]],
	["search", ["--all", "--no-sync", "--json", "--index", "/tmp/x.db", "zqplant1x"]],
	["search", ['"the error"', "--limit", "5", "--sort", "newest"]],
	["search", ["--limit=5", "--sort=oldest", "--group=session", "crash"]],
	["search", ["--kind", "tool.result", "--error", "--since", "2d"]],
	["search", ["--no-error", "--json=false", "x"]],
	["search", ["--sync=false", "--exact", "--include-derived", "x"]],
	["search", ["--paths", "--", "--not-a-flag", "-x", "word"]],
	["search", ["--index", "--json"]],
	["search", ["--limit"]],
	["search", ["--limit="]],
	["search", ["--session", "abc", "--session", "def", "q"]],
	["search", ["--file", "src/a.ts", "--file=src/b.ts", "q"]],
	["search", ["--cwd", "/work/p", "--root", "/work", "q"]],
	["search", ["--all", "--json", "-", "q"]],
	["search", ["--index", "-5", "q"]],
	["search", []],
	["read", ["019d8d8e", "9b77aef6"]],
	["read", ["019d8d8e", "9b77aef6", "--fragment", "tool.result#0", "--offset", "400", "--length", "100"]],
	["read", ["--before", "2", "--after=3", "--order", "branch", "s", "e", "extra"]],
	["read", ["s", "e", "--no-sync", "--only", "conversation", "--json"]],
	["trace", ["s", "e", "--json", "--no-sync"]],
	["index", []],
	["index", ["--full", "--json", "--sessions-dir", "/a", "--sessions-dir", "/b"]],
	["sessions", ["--all", "--limit", "3", "--json"]],
	["status", ["--json", "--index", "/tmp/i.db"]],
	["serve", ["--stdio"]],
];

describe("parseArgv reads what citty's parseArgs reads", () => {
	for (const [name, argv] of cases) {
		test(`${name} ${argv.join(" ")}`, () => {
			const def = defOf(name);
			const ours = parseArgv(argv, def);
			const citty = parseArgs(argv, def as never) as Record<string, unknown>;
			expect(view(ours, def)).toEqual(view(citty, def));
		});
	}
});

describe("where it differs from citty on purpose", () => {
	test("a missing required positional is a usage error naming it", () => {
		let caught: unknown;
		try {
			parseArgv(["only-session"], defOf("read"));
		} catch (err) {
			caught = err;
		}
		expect(isPiEventsError(caught)).toBe(true);
		expect((caught as Error & { code: string }).code).toBe("E_USAGE");
		expect((caught as Error).message).toContain("ENTRY");
	});

	test("booleans keep their defaults until given, and --no- wins over an earlier --", () => {
		const def = defOf("search");
		expect(parseArgv(["q"], def).sync).toBe(true);
		expect(parseArgv(["--sync", "--no-sync", "q"], def).sync).toBe(false);
		expect(parseArgv(["q"], def).json).toBeUndefined();
	});
});
