/**
 * The pure turn definition (src/project/turn.ts) and transcript lines (src/project/transcript.ts)
 * on the real pi fixtures, parsed and classified the way the indexer does: turn boundaries in tree
 * order (not append order), the branch rules at forks, entries before the first prompt, cycles,
 * tool calls paired with their results by toolCallId, and the short form of arguments.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { type ProjectedEvent, projectEntry } from "../../src/project/projector.ts";
import { classifySession } from "../../src/project/tree.ts";
import { ARGS_CHARS, KEY_ARGS_CHARS, shortArgs, transcriptLines } from "../../src/project/transcript.ts";
import { promptOf, startsTurn, type TurnNode, treeOf, turnAt, turnFrom, turnPromptPositions } from "../../src/project/turn.ts";
import { frameLines } from "../../src/source/jsonl.ts";
import { initialParserState, parseLines } from "../../src/source/session-parser.ts";
import { allFixtureFiles, legacyFixture, piFixture } from "../helpers/temp.ts";

type Node = TurnNode & { event: ProjectedEvent };

/** A fixture file as the index sees it: projected events with their tree classification. */
function session(path: string): { nodes: Node[]; tree: ReturnType<typeof treeOf<Node>> } {
	const buf = readFileSync(path);
	const { lines } = frameLines(buf, 0, 1);
	const out = parseLines(initialParserState(), lines, { file: path, idExists: () => false, project: (e, ctx) => projectEntry(e, ctx, { fullText: true }) });
	const states = classifySession(
		out.events.map((e) => ({ entryId: e.entryId, parentId: e.parentId, eventType: e.eventType, role: e.role, targetId: e.targetId })),
	);
	const nodes = out.events.map((event, i) => ({
		entryId: event.entryId,
		parentId: event.parentId,
		eventType: event.eventType,
		role: event.role,
		selected: states[i]!.branchState === "selected",
		event,
	}));
	return { nodes, tree: treeOf(nodes) };
}
const ids = (nodes: readonly { entryId: string }[]) => nodes.map((n) => n.entryId);

describe("turn boundaries", () => {
	test("a turn is a prompt and what follows it on the branch, up to the next prompt (basic: two prompts)", () => {
		const f = piFixture("basic");
		const { nodes, tree } = session(f.path);
		const n = f.notes;
		const first = turnAt(tree, n.readResult)!;
		expect(first.prompt?.entryId).toBe(n.firstUser);
		// Everything from the first prompt to the entry before the second, in tree order.
		const all = ids(nodes);
		expect(ids(first.entries)).toEqual(all.slice(all.indexOf(n.firstUser), all.indexOf(n.imageUser)));
		expect(first.end).toBe("next-prompt");
		expect(first.next?.entryId).toBe(n.imageUser);
		expect(first.alternatives).toEqual([]);
		// Any entry of the turn gives the same turn; the prompt itself too.
		expect(ids(turnAt(tree, n.firstUser)!.entries)).toEqual(ids(first.entries));
		expect(ids(turnAt(tree, n.customEntry)!.entries)).toEqual(ids(first.entries));
		const second = turnFrom(tree, first.next!);
		expect(ids(second.entries)).toEqual([n.imageUser, n.finalAssistant]);
		expect(second.end).toBe("end");
		// Entries before the first prompt form a turn without a prompt.
		const preamble = turnAt(tree, n.modelChange)!;
		expect(preamble.prompt).toBeNull();
		expect(ids(preamble.entries)).toEqual([n.modelChange, n.thinkingLevelChange]);
		expect(preamble.next?.entryId).toBe(n.firstUser);
		expect(promptOf(tree, n.finalAssistant)?.entryId).toBe(n.imageUser);
	});

	test("tree order, not append order, and the branch rules at a fork (branched: A B [C D] E F)", () => {
		const f = piFixture("branched");
		const { tree } = session(f.path);
		const [A, B, C, D, E, F] = ["A", "B", "C", "D", "E", "F"].map((k) => f.notes[k] as string) as [string, string, string, string, string, string];
		// B is on the materialized path: its turn ends where the path meets the next prompt E; C is another branch.
		const ab = turnAt(tree, B)!;
		expect(ids(ab.entries)).toEqual([A, B]);
		expect(ab.end).toBe("next-prompt");
		expect(ab.next?.entryId).toBe(E);
		expect(ab.alternatives.map((a) => [a.from, a.node.entryId])).toEqual([[B, C]]);
		// D is next to E in append order but not in the tree: the abandoned turn is C, D only.
		const cd = turnAt(tree, D)!;
		expect(cd.prompt?.entryId).toBe(C);
		expect(ids(cd.entries)).toEqual([C, D]);
		expect(cd.end).toBe("end");
		expect(ids(turnAt(tree, F)!.entries)).toEqual([E, F]);
	});

	test("off the materialized path, a fork stops the walk and lists every candidate", () => {
		// r → a → x (abandoned) → {x1, x2}; a → y → z (leaf).
		const node = (entryId: string, parentId: string | null, role: string, selected: boolean): TurnNode => ({
			entryId,
			parentId,
			eventType: "message",
			role,
			selected,
		});
		const tree = treeOf([
			node("r", null, "user", true),
			node("a", "r", "assistant", true),
			node("x", "a", "assistant", false),
			node("x1", "x", "assistant", false),
			node("x2", "x", "assistant", false),
			node("y", "a", "assistant", true),
			node("z", "y", "assistant", true),
		]);
		const fork = turnAt(tree, "x")!;
		expect(ids(fork.entries)).toEqual(["r", "a", "x"]);
		expect(fork.end).toBe("fork");
		expect(ids(fork.candidates)).toEqual(["x1", "x2"]);
		// From the path, the walk follows the selected child and names the other one.
		const onPath = turnAt(tree, "a")!;
		expect(ids(onPath.entries)).toEqual(["r", "a", "y", "z"]);
		expect(onPath.alternatives.map((a) => a.node.entryId)).toEqual(["x"]);
		// A bound stops the walk and says so.
		const limited = turnAt(tree, "r", 2)!;
		expect(ids(limited.entries)).toEqual(["r", "a"]);
		expect(limited.end).toBe("limit");
		expect(turnAt(tree, "nope")).toBeNull();
	});

	test("a parent cycle ends the walk instead of looping (legacy cycle.jsonl)", () => {
		const { nodes, tree } = session(legacyFixture("cycle.jsonl"));
		for (const n of nodes) {
			const span = turnAt(tree, n.entryId)!;
			expect(new Set(ids(span.entries)).size).toBe(span.entries.length);
		}
	});

	test("the turns the index stores (every entry at once) are promptOf's, on every fixture; a chain deeper than the bound has none", () => {
		let withPrompt = 0;
		for (const file of allFixtureFiles()) {
			const { nodes, tree } = session(file.path);
			const positions = turnPromptPositions(nodes);
			nodes.forEach((n, i) => {
				const position = positions[i];
				const want = promptOf(tree, n.entryId);
				expect({ entry: n.entryId, prompt: position === null || position === undefined ? null : nodes[position]!.entryId }).toEqual({
					entry: n.entryId,
					prompt: want?.entryId ?? null,
				});
				if (want) withPrompt++;
			});
			// The same with a small bound: entries deeper than it below their prompt have no turn, as with promptOf.
			const bounded = turnPromptPositions(nodes, 3);
			for (const [i, n] of nodes.entries())
				expect(bounded[i] === null ? null : nodes[bounded[i]!]!.entryId).toBe(promptOf(tree, n.entryId, 3)?.entryId ?? null);
		}
		expect(withPrompt).toBeGreaterThan(100);
	});

	test("only user messages start turns", () => {
		expect(startsTurn({ eventType: "message", role: "user" })).toBe(true);
		for (const role of ["assistant", "toolResult", "bashExecution", "custom"]) expect(startsTurn({ eventType: "message", role })).toBe(false);
		expect(startsTurn({ eventType: "custom_message", role: null })).toBe(false);
	});
});

describe("transcript lines", () => {
	test("texts whole, one line per tool call paired with its result by toolCallId, bash runs, control entries apart", () => {
		const f = piFixture("basic");
		const { tree } = session(f.path);
		const n = f.notes;
		const span = turnAt(tree, n.firstUser)!;
		const { lines, control } = transcriptLines(span.entries.map((e) => e.event));
		const firstUser = span.entries[0]!.event.fragments[0]!.text;
		expect(lines[0]).toEqual({ kind: "user", entryId: n.firstUser, fragmentId: "user.text#0", text: firstUser });
		const tools = lines.filter((l) => l.kind === "tool");
		expect(tools.map((t) => [t.entryId, t.tool, t.callId, t.resultId, t.isError])).toEqual([
			[n.assistantRead, "read", n.readCall, n.readResult, false],
			[n.assistantEditWrite, "edit", n.editCall, n.editResult, false],
			[n.assistantEditWrite, "write", n.writeCall, n.writeErrorResult, true],
			[n.assistantBash, "bash", n.bashToolCall, n.bashToolResult, true],
		]);
		expect(tools[0]!.kind === "tool" && tools[0]!.args).toBe("path: src/auth/session.ts");
		const bash = lines.find((l) => l.kind === "bash");
		expect(bash).toEqual({ kind: "bash", entryId: n.bashExecution, command: "bun install --frozen-lockfile", exitCode: 0, isError: false });
		// No result gets a line of its own: each is on its call's line.
		expect(lines.some((l) => l.kind === "result")).toBe(false);
		expect(lines.find((l) => l.kind === "name")).toMatchObject({ entryId: n.sessionInfo, text: "Auth refactor" });
		expect([control[0]!.entryId, control[2]!.entryId, control[3]!.entryId]).toEqual([n.customEntry, n.modelChange2, n.thinkingLevelChange2]);
		expect(control.map((c) => c.eventType)).toEqual(["custom", "label", "model_change", "thinking_level_change"]);
		// Every line's entry is in the turn, and assistant texts are whole.
		const inTurn = new Set(ids(span.entries));
		expect(lines.every((l) => inTurn.has(l.entryId))).toBe(true);
		const last = lines.filter((l) => l.kind === "assistant").at(-1)!;
		expect(last.kind === "assistant" && last.text).toBe(span.entries.find((e) => e.entryId === n.assistantAfterBash)!.event.fragments[0]!.text);
	});

	test("a result whose call lies outside the turn gets its own line, in tree position", () => {
		const { lines } = transcriptLines([
			{
				entryId: "u",
				eventType: "message",
				role: "user",
				toolName: null,
				toolCallId: null,
				isError: null,
				exitCode: null,
				customType: null,
				fragments: [{ fragmentId: "user.text#0", kind: "user.text", text: "go on" }],
			},
			{
				entryId: "r",
				eventType: "message",
				role: "toolResult",
				toolName: "bash",
				toolCallId: "c9",
				isError: true,
				exitCode: null,
				customType: null,
				fragments: [],
			},
			{
				entryId: "a",
				eventType: "message",
				role: "assistant",
				toolName: null,
				toolCallId: null,
				isError: false,
				exitCode: null,
				customType: null,
				fragments: [{ fragmentId: "assistant.text#0", kind: "assistant.text", text: "done" }],
			},
		]);
		expect(lines.map((l) => [l.kind, l.entryId])).toEqual([
			["user", "u"],
			["result", "r"],
			["assistant", "a"],
		]);
	});

	test("short arguments: telling keys first, multi-line values kept together, bounded", () => {
		expect(shortArgs(["timeout: 30", "command: ls -la\n  && pwd"])).toBe("command: ls -la && pwd; timeout: 30");
		expect(shortArgs(["edits.0.oldText: a", "b", "path: x.ts"])).toBe("path: x.ts; edits.0.oldText: a b");
		const long = shortArgs([`content: ${"y".repeat(500)}`]);
		expect(long.length).toBe(ARGS_CHARS);
		expect(long.endsWith("…")).toBe(true);
	});

	test("short arguments say what was run: a whole shell command, the path of an edit, a grep's pattern and path", () => {
		// A 300-character pipeline (cut at 160 before): whole, with its options after it.
		const pipeline =
			`ssh ci-runner-3 'docker builder prune --all --filter until=168h -f && docker image prune -a --filter until=168h -f' | grep -i 'total reclaimed' ${"| tee -a /var/log/prune.log ".repeat(6)}`.trim();
		expect(pipeline.length).toBeGreaterThan(300);
		expect(shortArgs([`command: ${pipeline}`, "timeout: 120"])).toBe(`command: ${pipeline}; timeout: 120`);
		// An edit: its path whole, however long the texts before it; the texts cut after it.
		const path = `apps/web/components/${"nested/".repeat(20)}Price.tsx`;
		const edit = shortArgs([`edits.0.oldText: ${"const old = 1;\n".repeat(40)}`, `edits.0.newText: ${"const fresh = 2;\n".repeat(40)}`, `path: ${path}`]);
		expect(edit).toStartWith(`path: ${path}; edits.0.oldText: const old = 1;`);
		expect(edit.length).toBe(`path: ${path}; `.length + ARGS_CHARS);
		expect(shortArgs(["glob: *.py", "ignoreCase: true", "path: proj/", "pattern: visibility_timeout"])).toBe(
			"pattern: visibility_timeout; path: proj/; glob: *.py; ignoreCase: true",
		);
		// Bounded all the same: a command longer than people write is cut, and says so.
		const huge = shortArgs([`command: ${"x".repeat(5000)}`, `env: ${"y".repeat(5000)}`]);
		expect(huge.length).toBe(KEY_ARGS_CHARS + 2 + ARGS_CHARS);
		expect(huge.split("; ").map((part) => part.endsWith("…"))).toEqual([true, true]);
	});
});
