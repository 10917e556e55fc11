/**
 * Every place that names the tools names all of them, from the tool table (src/server/tools.ts):
 * `pi-events --help`, `serve --help`, the MCP server's instructions (`initialize` and the modern
 * `server/discover`), the extension's package.json and the README. "Three tools" stayed in all of
 * them when event_sessions became the fourth.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TOOL_NAMES } from "../src/model.ts";
import { isPiEventsTool } from "../src/project/echoes.ts";
import { TOOLS } from "../src/server/tools.ts";
import { cleanupTempDirs, isolatedEnv, MAIN, makeAgentLayout, ROOT, runCli } from "./helpers/temp.ts";

afterAll(cleanupTempDirs);

const NAMES = TOOLS.map((tool) => tool.name);
const missingFrom = (text: string) => NAMES.filter((name) => !text.includes(name));

test("the tool table has the four tools, the same as the names list the echo rule reads", () => {
	expect(NAMES).toEqual(["event_search", "event_read", "event_trace", "event_sessions"]);
	expect(NAMES).toEqual([...TOOL_NAMES]);
	// A call of every tool is an echo of pi-events, also as MCP clients prefix its name.
	expect(NAMES.filter((name) => !isPiEventsTool(name) || !isPiEventsTool(`mcp__pi-events__${name}`))).toEqual([]);
});

test("pi-events --help and serve --help name every tool", () => {
	const layout = makeAgentLayout();
	const main = runCli(layout, ["--help"]);
	expect(missingFrom(main.stdout + main.stderr)).toEqual([]);
	const serve = runCli(layout, ["serve", "--help"]);
	expect(missingFrom(serve.stdout + serve.stderr)).toEqual([]);
});

test("the MCP server's instructions name every tool, in initialize and server/discover", () => {
	const layout = makeAgentLayout();
	const frames = [
		{ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "0" } } },
		{ jsonrpc: "2.0", id: 2, method: "server/discover", params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } },
	];
	const proc = Bun.spawnSync([process.execPath, MAIN, "serve", "--stdio", "--root", layout.root], {
		env: isolatedEnv(layout),
		cwd: layout.root,
		stdin: new TextEncoder().encode(frames.map((frame) => `${JSON.stringify(frame)}\n`).join("")),
		stdout: "pipe",
		stderr: "pipe",
	});
	const answers = proc.stdout
		.toString()
		.trim()
		.split("\n")
		.map((line) => JSON.parse(line) as { id: number; result?: { instructions?: string } });
	const instructions = (id: number) => answers.find((answer) => answer.id === id)?.result?.instructions ?? "";
	expect(instructions(1)).toContain("pi-events searches");
	expect(missingFrom(instructions(1))).toEqual([]);
	expect(instructions(2)).toBe(instructions(1));
});

test("the extension's package.json and the README name every tool", () => {
	const extension = JSON.parse(readFileSync(join(ROOT, "extension", "package.json"), "utf8")) as { description: string };
	expect(missingFrom(extension.description)).toEqual([]);
	expect(missingFrom(readFileSync(join(ROOT, "README.md"), "utf8"))).toEqual([]);
});
