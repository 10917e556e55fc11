/**
 * A turn as a transcript (src/query/turn-read.ts readTurn, `read --turn`, `event_read` view
 * "turn") on indexed copies of the pi fixtures and two hand-written sessions: the lines of a turn
 * with tool calls, exactly as in the source; turns in tree order on a branched session and a fork
 * off the materialized path; the calling session cut off at the invoking tool call; the byte
 * budget and what it says it left out; further turns; a session outside the scope refused exactly
 * like a missing one; the CLI's text, JSON and flag checks.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Scope } from "../../src/auth/scope.ts";
import { PiEventsError } from "../../src/errors.ts";
import { renderTurn } from "../../src/present/render-turn.ts";
import { readTurn, type TurnReadRequest, type TurnReadResult } from "../../src/query/turn-read.ts";
import { type AgentLayout, cleanupTempDirs, makeAgentLayout, runCli } from "../helpers/temp.ts";
import { type Setup, setupFixtures, sourceLines } from "./setup.ts";

afterAll(cleanupTempDirs);

let s: Setup;
let layout: AgentLayout;

const LONG = "0badf0c0-0000-4000-8000-0000000000a1";
const FORK = "0badf0c0-0000-4000-8000-0000000000a2";
const ts = (n: number) => new Date(Date.UTC(2026, 10, 20, 9, 0, n)).toISOString();
const user = (id: string, parentId: string | null, text: string, n: number) =>
	JSON.stringify({
		type: "message",
		id,
		parentId,
		timestamp: ts(n),
		message: { role: "user", content: [{ type: "text", text }], timestamp: Date.parse(ts(n)) },
	});
const assistant = (id: string, parentId: string | null, text: string, n: number, call?: { id: string; command: string }) =>
	JSON.stringify({
		type: "message",
		id,
		parentId,
		timestamp: ts(n),
		message: {
			role: "assistant",
			content: [{ type: "text", text }, ...(call ? [{ type: "toolCall", id: call.id, name: "bash", arguments: { command: call.command } }] : [])],
			provider: "anthropic",
			model: "claude-sonnet-4-5",
			stopReason: call ? "toolUse" : "stop",
			timestamp: Date.parse(ts(n)),
		},
	});
const result = (id: string, parentId: string, callId: string, text: string, isError: boolean, n: number) =>
	JSON.stringify({
		type: "message",
		id,
		parentId,
		timestamp: ts(n),
		message: { role: "toolResult", toolCallId: callId, toolName: "bash", content: [{ type: "text", text }], isError, timestamp: Date.parse(ts(n)) },
	});
const header = (id: string) => JSON.stringify({ type: "session", version: 3, id, timestamp: ts(0), cwd: "/work/demo/app" });

/**
 * A long investigation: a long prompt, ROUNDS rounds of text and a bash call, an outcome, then two
 * short turns. Its first turn is long enough that the walk reads the session whole (turn-read.ts).
 */
const ROUNDS = 60;
function longSession(): string {
	const lines = [header(LONG), user("u1", null, `Why does the build fail? long-turn-marker ${"context ".repeat(400)}`, 1)];
	let parent = "u1";
	for (let i = 0; i < ROUNDS; i++) {
		lines.push(
			assistant(`a${i}`, parent, `Step ${i}: ${"checking the linker output again ".repeat(20)}`, 2 + 2 * i, { id: `call${i}`, command: `make step-${i}` }),
		);
		lines.push(result(`r${i}`, `a${i}`, `call${i}`, `output of step ${i}`, i % 7 === 3, 3 + 2 * i));
		parent = `r${i}`;
	}
	lines.push(assistant("out1", parent, "Fixed: the linker flag was dropped by the Makefile refactor. outcome-marker", 200));
	lines.push(user("u2", "out1", "ok, commit it", 201), assistant("out2", "u2", "Committed as 4f2a.", 202));
	lines.push(user("u3", "out2", "thanks", 203), assistant("out3", "u3", "You are welcome.", 204));
	return `${lines.join("\n")}\n`;
}

/** r → a → x (abandoned, two replies: an unresolved fork); a → y → z (the leaf). */
function forkSession(): string {
	return `${[
		header(FORK),
		user("r", null, "root question", 1),
		assistant("a", "r", "root answer", 2),
		assistant("x", "a", "an abandoned reply", 3),
		assistant("x1", "x", "first retry", 4),
		assistant("x2", "x", "second retry", 5),
		assistant("y", "a", "the kept reply", 6),
		assistant("z", "y", "the kept answer (leaf)", 7),
	].join("\n")}\n`;
}

beforeAll(() => {
	s = setupFixtures();
	const dir = dirname(s.fx("branched").path);
	writeFileSync(join(dir, "long-turn.jsonl"), longSession());
	writeFileSync(join(dir, "fork-turn.jsonl"), forkSession());
	s.sync();
	layout = makeAgentLayout();
});

const turn = (req: TurnReadRequest, scope?: Scope): TurnReadResult => readTurn(s.access(scope), req);
const ids = (lines: { entryId: string }[]) => lines.map((l) => l.entryId);
const CLI_HOW = { read: (e: string) => `read ${e}`, turn: (e: string) => `turn ${e}`, after: (e: string) => `after ${e}`, moreTurns: "--turns 1" };

describe("the transcript of a turn", () => {
	test("a turn with tool calls: texts exactly as in the source, one line per call with its result, ids everywhere", () => {
		const f = s.fx("basic");
		const n = f.notes;
		const r = turn({ sessionId: f.sessionId, entryId: n.writeErrorResult });
		expect(r.view).toBe("turn");
		expect(r.turns).toHaveLength(1);
		const t = r.turns[0]!;
		expect(t.prompt).toBe(n.firstUser);
		expect(t.end).toBe("next-prompt");
		expect(t.next).toBe(n.imageUser);
		const source = new Map<string, any>(sourceLines(f.path).map((l) => [l.json.id, l.json]));
		const first = t.lines[0]!;
		expect(first).toEqual({
			kind: "user",
			entryId: n.firstUser,
			fragmentId: "user.text#0",
			text: source.get(n.firstUser).message.content[0].text,
			totalChars: source.get(n.firstUser).message.content[0].text.length,
			truncated: false,
		});
		const tools = t.lines.filter((l) => l.kind === "tool");
		expect(tools.map((l) => l.kind === "tool" && [l.entryId, l.tool, l.resultId, l.isError])).toEqual([
			[n.assistantRead, "read", n.readResult, false],
			[n.assistantEditWrite, "edit", n.editResult, false],
			[n.assistantEditWrite, "write", n.writeErrorResult, true],
			[n.assistantBash, "bash", n.bashToolResult, true],
		]);
		expect(t.lines.find((l) => l.kind === "bash")).toMatchObject({ entryId: n.bashExecution, command: "bun install --frozen-lockfile", exitCode: 0 });
		const outcome = source.get(n.assistantAfterBash).message.content.find((b: any) => b.type === "text").text;
		expect(t.lines.some((l) => l.kind === "assistant" && l.entryId === n.assistantAfterBash && l.text === outcome)).toBe(true);
		expect(t.control.map((c) => c.eventType)).toEqual(["custom", "label", "model_change", "thinking_level_change"]);
		// The secret extension state never shows.
		expect(JSON.stringify(r)).not.toContain("SECRET_CUSTOM_STATE_TOKEN");
		const text = renderTurn(r, CLI_HOW);
		expect(text).toContain(`[${n.assistantEditWrite}] tool write path: src/auth/pool.ts`);
		expect(text).toContain(`-> ${n.writeErrorResult} ERROR`);
		expect(text).toContain(`--- the next turn starts at ${n.imageUser}`);
	});

	test("a branched session: tree order, the other branch named, the abandoned turn apart", () => {
		const b = s.fx("branched");
		const [A, B, C, D, E] = ["A", "B", "C", "D", "E"].map((k) => b.notes[k] as string) as [string, string, string, string, string];
		const onPath = turn({ sessionId: b.sessionId, entryId: B }).turns[0]!;
		expect(ids(onPath.lines)).toEqual([A, B]);
		expect(onPath.next).toBe(E);
		expect(onPath.alternatives.map((a) => [a.from, a.entryId, a.preview])).toEqual([[B, C, "charlie step: fix the one in src/db.ts first"]]);
		const abandoned = turn({ sessionId: b.sessionId, entryId: D }).turns[0]!;
		expect(ids(abandoned.lines)).toEqual([C, D]);
		expect(abandoned.end).toBe("end");
		expect(renderTurn(turn({ sessionId: b.sessionId, entryId: B }), CLI_HOW)).toContain(
			`other branches leave this turn:\n  ${C} user (after ${B}) "charlie step: fix the one in src/db.ts first"`,
		);
	});

	test("off the materialized path, an unresolved fork stops the turn and lists the candidates", () => {
		const t = turn({ sessionId: FORK, entryId: "x" }).turns[0]!;
		expect(ids(t.lines)).toEqual(["r", "a", "x"]);
		expect(t.end).toBe("fork");
		expect(t.candidates.map((c) => c.entryId)).toEqual(["x1", "x2"]);
		expect(renderTurn(turn({ sessionId: FORK, entryId: "x" }), CLI_HOW)).toContain("--- stopped at a fork (no branch is chosen)");
		// From the path, the turn follows the leaf's side.
		expect(ids(turn({ sessionId: FORK, entryId: "a" }).turns[0]!.lines)).toEqual(["r", "a", "y", "z"]);
	});

	test("--turns N adds the next turns of the branch, and stops where the branch does", () => {
		const b = s.fx("basic");
		const r = turn({ sessionId: b.sessionId, entryId: b.notes.modelChange, turns: 5 });
		expect(r.turns.map((t) => t.prompt)).toEqual([null, b.notes.firstUser, b.notes.imageUser]);
		expect(r.turns.at(-1)!.end).toBe("end");
		const long = turn({ sessionId: LONG, entryId: "out2", turns: 1, maxBytes: 100_000 });
		expect(long.turns.map((t) => ids(t.lines))).toEqual([
			["u2", "out2"],
			["u3", "out3"],
		]);
	});
});

describe("the byte budget", () => {
	test("within the budget nothing is cut; over it, long texts are cut to a common length and say so", () => {
		const whole = turn({ sessionId: LONG, entryId: "r5", maxBytes: 100_000 });
		expect(whole.turns[0]!.lines.every((l) => !("truncated" in l) || !l.truncated)).toBe(true);
		expect(whole.turns[0]!.leftOut).toBeNull();
		expect(whole.turns[0]!.lines.filter((l) => l.kind === "tool")).toHaveLength(ROUNDS);
		const r = turn({ sessionId: LONG, entryId: "r5" });
		expect(r.maxBytes).toBe(8192);
		expect(r.bytes).toBeLessThanOrEqual(8192);
		const t = r.turns[0]!;
		const prompt = t.lines[0]!;
		expect(prompt.kind === "user" && prompt.truncated && prompt.text.length < prompt.totalChars).toBe(true);
		// The outcome is always shown.
		expect(t.lines.at(-1)).toMatchObject({ entryId: "out1", truncated: false });
		const text = renderTurn(r, CLI_HOW);
		expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(8192);
		expect(text).toContain("more characters: read u1]");
	});

	test("a small budget leaves lines out, keeps the prompt and the outcome, and names what it left out", () => {
		const r = turn({ sessionId: LONG, entryId: "a3", maxBytes: 2048, turns: 2 });
		expect(r.turns).toHaveLength(1);
		expect(r.turnsLeftOut).toEqual(["u2", "u3"]);
		const t = r.turns[0]!;
		expect(t.lines[0]!.entryId).toBe("u1");
		expect(t.lines.at(-1)!.entryId).toBe("out1");
		expect(t.leftOut!.lines).toBeGreaterThan(0);
		expect(t.leftOut!.lines + t.lines.length).toBe(1 + ROUNDS * 2 + 1);
		expect(t.leftOut!.entryIds).not.toContain("u1");
		expect(t.leftOut!.entryIds).not.toContain("out1");
		const text = renderTurn(r, CLI_HOW);
		expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(2048);
		expect(text).toContain(`lines left out for the budget, from entries ${t.leftOut!.entryIds.slice(0, 6).join(" ")} …: read ${t.leftOut!.entryIds[0]}`);
		expect(text).toContain("[2 further turns left out for the budget: turn u2; turn u3]");
	});

	test("the text output stays within the budget for every entry of every fixture, at 2,048 and 8,192 bytes, with and without further turns", () => {
		// The CLI's commands, also as a read given --root names them (each note's command that much longer).
		const CLI = (sessionId: string, where: string) => ({
			read: (e: string) => `pi-events read ${sessionId} ${e}${where}`,
			turn: (e: string) => `pi-events read ${sessionId} ${e} --turn${where}`,
			after: (e: string) => `pi-events read ${sessionId} ${e} --order branch --after 20 --only conversation${where}`,
			moreTurns: "add --turns 1",
		});
		const targets: [string, string][] = [...s.fixtures.values()].flatMap((f) =>
			sourceLines(f.path).flatMap((l) => (l.json.id && l.json.type !== "session" ? [[f.sessionId, l.json.id as string] as [string, string]] : [])),
		);
		for (const id of ["u1", "a7", "r29", "r59", "out1", "u3"]) targets.push([LONG, id]);
		let checked = 0;
		for (const [sessionId, entryId] of targets) {
			for (const maxBytes of [2048, 8192]) {
				for (const turns of [0, 3]) {
					for (const where of ["", " --root /home/someone/work/projects/customer-portal-monorepo-2026"]) {
						const r = turn({ sessionId, entryId, maxBytes, turns, commandBytes: where.length });
						const bytes = new TextEncoder().encode(renderTurn(r, CLI(r.session.sessionId, where))).length;
						if (bytes > maxBytes) throw new Error(`${sessionId}/${entryId} maxBytes ${maxBytes} turns ${turns}${where}: ${bytes} bytes`);
						checked++;
					}
				}
			}
		}
		expect(checked).toBeGreaterThan(1200);
	});

	test("the budget's bounds are checked", () => {
		expect(() => turn({ sessionId: LONG, entryId: "u1", maxBytes: 100 })).toThrow(/max bytes must be an integer from 2048 to 100000/);
		expect(() => turn({ sessionId: LONG, entryId: "u1", turns: 11 })).toThrow(/turns must be an integer from 0 to 10/);
	});
});

describe("authorization", () => {
	const refused = (req: TurnReadRequest, scope: Scope): PiEventsError => {
		try {
			turn(req, scope);
		} catch (err) {
			if (err instanceof PiEventsError) return err;
			throw err;
		}
		throw new Error("not refused");
	};

	test("a session outside the scope is refused exactly like a missing one", () => {
		const f = s.fx("basic");
		const other: Scope = { roots: ["/work/demo/other"], current: null };
		const hidden = refused({ sessionId: f.sessionId, entryId: f.notes.firstUser }, other);
		const missing = refused({ sessionId: "0badf0c0-0000-4000-8000-00000000dead", entryId: f.notes.firstUser }, other);
		expect(hidden.code).toBe("E_NOT_FOUND");
		expect(hidden.message).toBe(`no event ${JSON.stringify(f.notes.firstUser)} in session ${JSON.stringify(f.sessionId)} in your scope`);
		expect(missing.code).toBe("E_NOT_FOUND");
	});

	test("in the calling session, the turn stops at the invoking tool call and nothing after it shows", () => {
		const f = s.fx("basic");
		const n = f.notes;
		const scope: Scope = { roots: ["/work/demo/app"], current: { sessionId: f.sessionId, sessionFile: null, toolCallId: n.bashToolCall } };
		const r = turn({ sessionId: f.sessionId, entryId: n.firstUser, turns: 3 }, scope);
		expect(r.cutoff).toBe(true);
		expect(r.turns).toHaveLength(1);
		const t = r.turns[0]!;
		expect(t.lines.at(-1)!.entryId).toBe(n.bashExecution);
		expect(t.end).toBe("end");
		expect(r.session.name).toBeNull();
		const json = JSON.stringify(r);
		for (const id of [n.assistantBash, n.bashToolResult, n.sessionInfo, n.imageUser, n.finalAssistant]) expect(json).not.toContain(id);
		expect(renderTurn(r, CLI_HOW)).toContain("(the calling session: only what came before this call is shown)");
		// Without the cutoff the same turn goes on.
		expect(turn({ sessionId: f.sessionId, entryId: n.firstUser }).turns[0]!.lines.map((l) => l.entryId)).toContain(n.assistantBash);
	});
});

describe("the CLI", () => {
	const cli = (args: string[]) => runCli(layout, [...args, "--sessions-dir", s.sessions, "--all"]);

	test("--turn prints the transcript; --json the in-process result", () => {
		const f = s.fx("basic");
		const text = cli(["read", f.sessionId, f.notes.readResult, "--turn"]);
		expect(text.exitCode).toBe(0);
		expect(text.stdout).toContain(`=== turn: prompt ${f.notes.firstUser}`);
		// Its commands repeat --all (or --root DIR) as this read was given it: they see what it saw.
		expect(text.stdout).toContain(`pi-events read ${f.sessionId} ${f.notes.imageUser} --turn --all`);
		const json = cli(["read", f.sessionId, f.notes.readResult, "--turn", "--turns", "1", "--max-bytes", "4096", "--json"]);
		expect(json.exitCode).toBe(0);
		const want = turn({ sessionId: f.sessionId, entryId: f.notes.readResult, turns: 1, maxBytes: 4096, commandBytes: " --all".length });
		expect(json.json()).toEqual(JSON.parse(JSON.stringify(want)));
	});

	test("flags that read one event do not go with --turn, and --turns needs --turn", () => {
		const f = s.fx("basic");
		const clash = cli(["read", f.sessionId, f.notes.readResult, "--turn", "--after", "2"]);
		expect(clash.exitCode).toBe(2);
		expect(clash.stderr).toContain("--after reads one event; it does not go with --turn");
		const alone = cli(["read", f.sessionId, f.notes.readResult, "--turns", "1"]);
		expect(alone.exitCode).toBe(2);
		expect(alone.stderr).toContain("--turns goes with --turn");
	});
});
