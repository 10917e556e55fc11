/** pi-events' own echoes are recognised (pure): its tools, and runs of the executable, not mentions. */
import { describe, expect, test } from "bun:test";
import { isPiEventsTool, runsPiEvents } from "../../src/project/echoes.ts";
import { projectEntry } from "../../src/project/projector.ts";

const ctx = { seq: 0, version: 3, previousEntryId: null, locator: { file: "/s.jsonl", line: 1, offset: 0, length: 1, hash: "h" } };
const derivedOf = (entry: Record<string, unknown>) => {
	const e = projectEntry(entry, ctx);
	return { fragments: e.fragments.map((f) => [f.fragmentId, f.derived]), calls: e.derivedCallIds };
};

describe("echoes", () => {
	test("shell commands that run pi-events, and mentions that do not", () => {
		for (const c of [
			"pi-events search ECONNREFUSED",
			"cd app && pi-events read 01a 8161e986 --after 2",
			"./dist/pi-events search x --json | jq .hits",
			"PI_EVENTS_INDEX=/tmp/i.db pi-events search y",
			"bunx pi-events trace a b",
			"echo $(pi-events search x)",
			"timeout 5 pi-events search a",
		]) {
			expect({ c, runs: runsPiEvents(c) }).toEqual({ c, runs: true });
		}
		for (const c of [
			"grep -rn pi-events README.md",
			"cd pi-events",
			"ls ~/pi-events/",
			"git clone git@github.com:me/pi-events-fork",
			"vim pi-events.ts",
			null,
			"",
		]) {
			expect({ c, runs: runsPiEvents(c) }).toEqual({ c, runs: false });
		}
	});

	test("the extension's tool names, also with an MCP prefix", () => {
		expect(["event_search", "event_read", "event_trace", "mcp__pi-events__event_search"].every(isPiEventsTool)).toBe(true);
		expect(["read", "bash", "search", "event_searcher", null].some((n) => isPiEventsTool(n as string | null))).toBe(false);
	});

	test("projector: calls of pi-events tools and bash runs of pi-events are derived, the text beside them is not", () => {
		const assistant = {
			type: "message",
			id: "a1",
			parentId: null,
			timestamp: "2026-11-01T00:00:00.000Z",
			message: {
				role: "assistant",
				stopReason: "toolUse",
				content: [
					{ type: "text", text: "Let me search the history." },
					{ type: "toolCall", id: "c1", name: "event_search", arguments: { query: "redis" } },
					{ type: "toolCall", id: "c2", name: "bash", arguments: { command: "pi-events read s e" } },
					{ type: "toolCall", id: "c3", name: "bash", arguments: { command: "grep -rn redis src" } },
				],
			},
		};
		expect(derivedOf(assistant)).toEqual({
			fragments: [
				["assistant.text#0", false],
				["tool.call#1", true],
				["tool.call#2", true],
				["tool.call#3", false],
			],
			calls: ["c1", "c2"],
		});
		const result = (toolName: string) => ({
			type: "message",
			id: "r1",
			parentId: "a1",
			message: { role: "toolResult", toolCallId: "c1", toolName, content: [{ type: "text", text: "1 hit" }], isError: false },
		});
		expect(derivedOf(result("event_search")).fragments).toEqual([["tool.result#0", true]]);
		// A bash result cannot tell by itself: the writer looks its call up (test/conformance/echoes.test.ts).
		expect(derivedOf(result("bash")).fragments).toEqual([["tool.result#0", false]]);
		const userBash = {
			type: "message",
			id: "b1",
			parentId: null,
			message: { role: "bashExecution", command: "pi-events search x", output: "1. hit", exitCode: 0 },
		};
		expect(derivedOf(userBash).fragments).toEqual([
			["bash.command#0", true],
			["bash.output#0", true],
		]);
	});
});
