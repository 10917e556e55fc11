/**
 * `pi-events read` and `pi-events trace` as a person runs them: a real process with an isolated
 * environment (HOME, PI_CODING_AGENT_DIR, XDG dirs in a temp dir), `--sessions-dir` pointing at
 * a temp copy of the fixtures, JSON equal to the in-process answer, the text renderings (the
 * ASCII tree of a trace), and exit codes: 0 for an answer, 2 with a message on stderr for
 * anything else. Never touches the session files.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { readEvent } from "../../src/query/read.ts";
import { traceEvent } from "../../src/query/trace.ts";
import { type AgentLayout, cleanupTempDirs, makeAgentLayout, runCli, snapshotTree } from "../helpers/temp.ts";
import { type Setup, setupFixtures } from "./setup.ts";

afterAll(cleanupTempDirs);

let s: Setup;
let layout: AgentLayout;
let before: ReturnType<typeof snapshotTree>;

beforeAll(() => {
	s = setupFixtures();
	layout = makeAgentLayout();
	before = snapshotTree(s.sessions);
});

const cli = (args: string[], extra: string[] = ["--all"]) => runCli(layout, [...args, "--sessions-dir", s.sessions, ...extra]);

describe("read", () => {
	test("--json prints exactly the in-process read, exit 0, into the isolated default index", () => {
		const b = s.fx("branched");
		const r = cli(["read", b.sessionId, b.notes.B, "--json", "--order", "branch", "--before", "2", "--after", "5"]);
		expect(r.stderr).toBe("");
		expect(r.exitCode).toBe(0);
		const want = readEvent(s.access(), { sessionId: b.sessionId, entryId: b.notes.B, order: "branch", before: 2, after: 5 });
		expect(r.json()).toEqual(JSON.parse(JSON.stringify(want)));
		expect(r.json().neighbours.after.map((v: any) => v.entryId)).toEqual([b.notes.E, b.notes.F]);
		expect(r.json().neighbours.alternatives.map((v: any) => v.entryId)).toEqual([b.notes.C]);
		expect(existsSync(layout.defaultIndex)).toBe(true);
	});

	test("--json fragment window", () => {
		const f = s.fx("big-output");
		const r = cli(["read", f.sessionId, f.notes.bigToolResult, "--json", "--fragment", "tool.result#0", "--offset", "150000", "--length", "100"]);
		expect(r.exitCode).toBe(0);
		const w = r.json().window;
		expect(w).toMatchObject({ fragmentId: "tool.result#0", offset: 150000, length: 100, totalChars: f.notes.bigToolResultChars, hasMore: true });
		const full = readFileSync(f.path, "utf8")
			.split("\n")
			.map((l) => (l ? JSON.parse(l) : null))
			.find((e) => e?.id === f.notes.bigToolResult).message.content[0].text;
		expect(w.text).toBe(full.slice(150000, 150100));
	});

	test("text mode: header lines, content parts, neighbours", () => {
		const b = s.fx("branched");
		const r = cli(["read", b.sessionId, b.notes.B, "--order", "branch", "--before", "1", "--after", "5"]);
		expect(r.exitCode).toBe(0);
		const lines = r.stdout.split("\n");
		expect(lines[0]).toBe(`session ${b.sessionId}  /work/demo/app`);
		expect(lines[1]).toStartWith(`event   ${b.notes.B}  message/assistant  2026-11-03T`);
		expect(lines[2]).toBe("state   branch selected, context conversation, selection direct");
		expect(lines[3]).toMatch(new RegExp(`^source  ${b.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3 \\(bytes \\d+\\+\\d+\\)$`));
		expect(lines[4]).toBe(`parent  ${b.notes.A}`);
		expect(r.stdout).toContain("--- assistant.text#0 (");
		expect(r.stdout).toContain("bravo step");
		expect(r.stdout).toContain("--- neighbours (branch order)");
		expect(r.stdout).toMatch(new RegExp(`  before \\* ${b.notes.A}  message/user`));
		expect(r.stdout).toMatch(new RegExp(`  target \\* ${b.notes.B}  message/assistant`));
		expect(r.stdout).toMatch(new RegExp(`  after  \\* ${b.notes.E}  message/user[^\\n]*\\n  after  \\* ${b.notes.F}  message/assistant`));
		expect(r.stdout).toMatch(new RegExp(`  alt      ${b.notes.C}  message/user`));
	});

	test("text mode: omitted fields and a truncated part point to --fragment", () => {
		const f = s.fx("basic");
		const r = cli(["read", f.sessionId, f.notes.assistantRead]);
		expect(r.exitCode).toBe(0);
		expect(r.stdout).toContain("omitted thinking, signatures");
		expect(r.stdout).toContain("files   read src/auth/session.ts");
		const big = s.fx("big-output");
		const t = cli(["read", big.sessionId, big.notes.bigToolResult]);
		expect(t.stdout).toContain(`--- tool.result#0 (${big.notes.bigToolResultChars} chars, first 2000 shown; use --fragment tool.result#0 --offset N)`);
	});

	test("not found, out of scope, and the default scope (the cwd) all exit 2 with the same message shape", () => {
		const b = s.fx("branched");
		const missing = cli(["read", b.sessionId, "deadbeef", "--json"]);
		expect(missing.exitCode).toBe(2);
		expect(missing.stdout).toBe("");
		expect(missing.stderr).toBe(`pi-events: no event "deadbeef" in session "${b.sessionId}" in your scope\n`);
		const other = s.fx("multi-root");
		const hidden = cli(["read", other.sessionId, other.notes.root1User, "--json"], ["--root", "/work/demo/app"]);
		expect(hidden.exitCode).toBe(2);
		expect(hidden.stdout).toBe("");
		expect(hidden.stderr).toBe(`pi-events: no event "${other.notes.root1User}" in session "${other.sessionId}" in your scope\n`);
		const inScope = cli(["read", b.sessionId, b.notes.E, "--json"], ["--root", "/work/demo/app"]);
		expect(inScope.exitCode).toBe(0);
		// No --all and no --root: the root is the (non-Git) temp cwd, which holds no session.
		const noScope = cli(["read", b.sessionId, b.notes.E], []);
		expect(noScope.exitCode).toBe(2);
		expect(noScope.stderr).toBe(`pi-events: no event "${b.notes.E}" in session "${b.sessionId}" in your scope\n`);
	});

	test("bad flags and arguments exit 2 with a message", () => {
		const b = s.fx("branched");
		const cases: [string[], string][] = [
			[["read", b.sessionId, b.notes.E, "--bogus"], "pi-events: unknown option --bogus (see --help)\n"],
			[["read", b.sessionId, b.notes.E, "--order", "sideways"], 'pi-events: --order must be append or branch, got "sideways"\n'],
			[["read", b.sessionId, b.notes.E, "--offset", "-3", "--fragment", "user.text#0"], 'pi-events: --offset must be a non-negative integer, got "-3"\n'],
			[["read", b.sessionId, b.notes.E, "--after", "21"], "pi-events: after must be an integer from 0 to 20\n"],
			[["read", b.sessionId, b.notes.E, "--fragment", "nope#1"], `pi-events: event ${b.notes.E} has no fragment "nope#1" (it has: user.text#0)\n`],
			[["read", b.sessionId, b.notes.E, "--root", "relative/dir"], 'pi-events: --root must be an absolute path, got "relative/dir"\n'],
		];
		for (const [args, message] of cases) {
			const r = cli(args, args.includes("--root") ? [] : ["--all"]);
			expect({ args, exit: r.exitCode, stderr: r.stderr, stdout: r.stdout }).toEqual({ args, exit: 2, stderr: message, stdout: "" });
		}
		const noEntry = runCli(layout, ["read", b.sessionId, "--all"]);
		expect(noEntry.exitCode).toBe(2);
		expect(noEntry.stderr).toContain("ENTRY");
		const noSub = runCli(layout, ["reed", b.sessionId]);
		expect(noSub.exitCode).toBe(2);
		expect(noSub.stderr).toStartWith('pi-events: unknown command "reed"');
	});

	test("a source changed after indexing: --no-sync read exits 2 asking for a re-index; a synced read succeeds", () => {
		const t = setupFixtures({ names: ["branched"] });
		const b = t.fx("branched");
		const own = makeAgentLayout();
		const args = ["read", b.sessionId, b.notes.E, "--sessions-dir", t.sessions, "--all", "--json"];
		expect(runCli(own, args).exitCode).toBe(0);
		const text = readFileSync(b.path, "utf8");
		writeFileSync(b.path, text.replace("echo step", "ECHO STEP"));
		const stale = runCli(own, [...args, "--no-sync"]);
		expect(stale.exitCode).toBe(2);
		expect(stale.stderr).toBe(`pi-events: the source file ${b.path} changed since it was indexed; run \`pi-events index\` and search again\n`);
		const fresh = runCli(own, args);
		expect(fresh.exitCode).toBe(0);
		expect(fresh.json().content[0].text).toStartWith("ECHO STEP");
	});
});

describe("trace", () => {
	test("--json prints exactly the in-process trace", () => {
		const b = s.fx("branched");
		const r = cli(["trace", b.sessionId, b.notes.E, "--json"]);
		expect(r.exitCode).toBe(0);
		expect(r.json()).toEqual(JSON.parse(JSON.stringify(traceEvent(s.access(), b.sessionId, b.notes.E))));
		const j = r.json();
		expect(j.parent.entryId).toBe(b.notes.B);
		expect(j.children.map((c: any) => c.entryId)).toEqual([b.notes.F]);
		expect(j.siblings.map((c: any) => c.entryId)).toEqual([b.notes.C]);
		expect(j.relations.find((x: any) => x.relation === "sibling").label).toBe("derived");
	});

	test("text mode draws the local tree: parent, siblings in append order, the target marker, its children", () => {
		const b = s.fx("branched");
		const n = b.notes;
		const r = cli(["trace", b.sessionId, n.E]);
		expect(r.exitCode).toBe(0);
		expect(r.stderr).toBe("");
		const lines = r.stdout.split("\n");
		expect(lines[0]).toBe(`session ${b.sessionId}  /work/demo/app  (materialized leaf ${n.F})`);
		expect(lines[1]).toBe("");
		expect(lines[2]).toMatch(new RegExp(`^\\* ${n.B}  message/assistant  "bravo step[^"]*"   \\(parent\\)$`));
		expect(lines[3]).toMatch(new RegExp(`^  ├─   ${n.C}  message/user  "charlie step[^"]*"   \\(sibling\\)$`));
		expect(lines[4]).toMatch(new RegExp(`^  └─ \\* ${n.E}  message/user  "echo step[^"]*"   ◀ target$`));
		expect(lines[5]).toMatch(new RegExp(`^     └─ \\* ${n.F}  message/assistant  "foxtrot step[^"]*"$`));
		expect(r.stdout).toContain(`toward the leaf: ${n.F}`);
		// No colour escapes when stdout is not a terminal.
		expect(r.stdout).not.toContain("\x1b[");
	});

	test("text mode for B: both child branches under the target", () => {
		const b = s.fx("branched");
		const n = b.notes;
		const r = cli(["trace", b.sessionId, n.B], ["--root", "/work/demo/app"]);
		expect(r.exitCode).toBe(0);
		const lines = r.stdout.split("\n");
		expect(lines[2]).toMatch(new RegExp(`^\\* ${n.A}  message/user  .*\\(parent\\)$`));
		expect(lines[3]).toMatch(new RegExp(`^  └─ \\* ${n.B}  message/assistant  .*◀ target$`));
		expect(lines[4]).toMatch(new RegExp(`^     ├─   ${n.C}  message/user  "charlie step`));
		expect(lines[5]).toMatch(new RegExp(`^     └─ \\* ${n.E}  message/user  "echo step`));
		expect(r.stdout).toContain(`toward the leaf: ${n.E}`);
	});

	test("text mode lists typed relationships with direction and label", () => {
		const p = s.fx("fork-parent");
		const c = s.fx("fork-child-forkfrom");
		const r = cli(["trace", c.sessionId, p.notes.user1]);
		expect(r.exitCode).toBe(0);
		expect(r.stdout).toContain("relationships:");
		expect(r.stdout).toContain(`  → session-parent [recorded] session ${p.sessionId} /work/demo/app`);
		expect(r.stdout).toContain(`  → copied-from [derived] ${p.sessionId} ${p.notes.user1} (message/user)`);
		expect(r.stdout).toContain("  ← labels [recorded] ");
		// Out of the parent's root: no parent id anywhere in the output.
		const out = s.fx("fork-outside-root");
		const par = s.fx("fork-outside-parent");
		const hidden = cli(["trace", out.sessionId, par.notes.user1], ["--root", "/work/demo/app"]);
		expect(hidden.exitCode).toBe(0);
		expect(hidden.stdout).toContain("→ session-parent [recorded] the parent session is not available");
		expect(hidden.stdout).not.toContain(par.sessionId);
	});

	test("not found and bad flags exit 2 with a message", () => {
		const b = s.fx("branched");
		const missing = cli(["trace", b.sessionId, "deadbeef"]);
		expect(missing.exitCode).toBe(2);
		expect(missing.stdout).toBe("");
		expect(missing.stderr).toBe(`pi-events: no event "deadbeef" in session "${b.sessionId}" in your scope\n`);
		const flag = cli(["trace", b.sessionId, b.notes.E, "--order", "branch"]);
		expect(flag.exitCode).toBe(2);
		expect(flag.stderr).toBe("pi-events: unknown option --order (see --help)\n");
	});
});

test("the CLI never wrote to the session files", () => {
	expect(snapshotTree(s.sessions)).toEqual(before);
});
