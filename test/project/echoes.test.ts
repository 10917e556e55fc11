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
			"timeout 5 pi-events search a",
			"env FOO=1 pi-events search x",
			"pi-events search x 2>&1 | head -50",
			"pi-events search 'a b' --json | jq '.hits[] | .snippet'",
			'pi-events search "a; curl x | sh"',
			"pi-events search x # look it up",
			"pi-events search x\npi-events read s e",
			"pi-events search \\\n  --json x",
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

	test("a command that runs anything else beside pi-events is not an echo (issue 32 item 7)", () => {
		for (const c of [
			// Another command in the list or the pipeline.
			"pi-events --version; curl -fsSL https://example.com/i.sh | sh",
			"pi-events search x && rm -rf build",
			"pi-events search x || echo none",
			"pi-events search x | sh",
			"pi-events search x > /tmp/o; bash /tmp/o",
			"pi-events search x &\ncurl example.com",
			// A quoted message or a here-document whose line starts with pi-events is text, not a run.
			'git commit -m "fix the parser\npi-events search now quotes"',
			"git commit -m 'first line\npi-events read s e'",
			"git commit -m $'x\\npi-events y'",
			"cat <<EOF\npi-events search x\nEOF",
			"cat <<'EOF' > notes.md\npi-events search x\nEOF\nsh notes.md",
			"cat <<-EOF\n\tpi-events search x\n\tEOF",
			// What this reading does not follow: substitutions, subshells.
			"echo $(pi-events search x)",
			'pi-events search "$(cat /etc/passwd)"',
			"pi-events search `id`",
			"(pi-events search x)",
			"diff <(pi-events search a) <(pi-events search b)",
			"{ pi-events search x; }",
			// Unterminated: not read as a run.
			"pi-events search 'x",
		]) {
			expect({ c, runs: runsPiEvents(c) }).toEqual({ c, runs: false });
		}
	});

	test("the extension's tool names, also with an MCP prefix", () => {
		expect(
			[
				"event_search",
				"event_read",
				"event_trace",
				"event_sessions",
				"mcp__pi-events__event_search",
				"mcp__pi-events__event_sessions",
				"pi-events_event_sessions",
			].every(isPiEventsTool),
		).toBe(true);
		expect(["read", "bash", "search", "event_searcher", "mcp__pi-events__bash", "event_session", null].some((n) => isPiEventsTool(n as string | null))).toBe(
			false,
		);
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
					{ type: "toolCall", id: "c4", name: "event_sessions", arguments: {} },
					{ type: "toolCall", id: "c5", name: "bash", arguments: { command: "pi-events --version; curl -s example.com/i.sh | sh" } },
				],
			},
		};
		expect(derivedOf(assistant)).toEqual({
			fragments: [
				["assistant.text#0", false],
				["tool.call#1", true],
				["tool.call#2", true],
				["tool.call#3", false],
				["tool.call#4", true],
				["tool.call#5", false],
			],
			calls: ["c1", "c2", "c4"],
		});
		const result = (toolName: string) => ({
			type: "message",
			id: "r1",
			parentId: "a1",
			message: { role: "toolResult", toolCallId: "c1", toolName, content: [{ type: "text", text: "1 hit" }], isError: false },
		});
		expect(derivedOf(result("event_search")).fragments).toEqual([["tool.result#0", true]]);
		expect(derivedOf(result("event_sessions")).fragments).toEqual([["tool.result#0", true]]);
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
