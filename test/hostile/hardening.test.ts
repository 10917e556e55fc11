/**
 * Hostile input, part 6: the attacks of the adversarial pass that once got through (issue 15),
 * each replayed against the compiled binary so it stays fixed. Every test here failed on the code
 * before its fix.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGitDir, makeLinkedGitDir, makeRepo } from "../helpers/git.ts";
import { type AgentLayout, cleanupTempDirs, encodeCwd, isolatedEnv, makeAgentLayout } from "../helpers/temp.ts";
import { Gate } from "../../src/gate/gate.ts";
import { openIndex } from "../../src/store/db.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { compiledBinary } from "../server/harness.ts";
import { header, jsonl, runChild } from "./helpers.ts";

let bin: string;

beforeAll(() => {
	bin = compiledBinary();
}, 180_000);

afterAll(() => cleanupTempDirs());

function sessionFile(layout: AgentLayout, cwd: string, id: string, records: unknown[]): string {
	const dir = join(layout.sessionsDir, encodeCwd(cwd));
	mkdirSync(dir, { recursive: true });
	const path = join(dir, `2026-10-01T10-00-00-000Z_${id}.jsonl`);
	writeFileSync(path, jsonl(records));
	return path;
}

function msg(id: string, parentId: string | null, message: Record<string, unknown>): Record<string, unknown> {
	return { type: "message", id, parentId, timestamp: "2026-10-01T10:00:05.000Z", message };
}
const userText = (id: string, parentId: string | null, text: string) => msg(id, parentId, { role: "user", content: [{ type: "text", text }] });
const bashCall = (id: string, parentId: string | null, callId: string) =>
	msg(id, parentId, {
		role: "assistant",
		content: [{ type: "toolCall", id: callId, name: "bash", arguments: { command: "pi-events search" } }],
		stopReason: "toolUse",
	});
const toolResult = (id: string, parentId: string | null, callId: string, text: string) =>
	msg(id, parentId, { role: "toolResult", toolCallId: callId, toolName: "bash", content: [{ type: "text", text }], isError: false });

async function bin_(layout: AgentLayout, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
	return runChild(layout, args, { bin, timeoutMs: 30_000, ...opts });
}

// ---------------------------------------------------------------------------------------------
// Item 2: the invocation cutoff comes from the caller's own session file only
// ---------------------------------------------------------------------------------------------

describe("cutoff bypass: a second file with the caller's session id", () => {
	let layout: AgentLayout;
	let W: string;
	let OUT: string;
	let own: string;
	const SID = "cut-0001";

	beforeAll(async () => {
		layout = makeAgentLayout();
		const base = realpathSync(layout.root);
		W = join(base, "work", "app");
		OUT = join(base, "work", "other");
		makeRepo(W);
		mkdirSync(OUT, { recursive: true });
		// The caller's own file: u1, then the invoking bash call a1, then what came after it.
		own = sessionFile(layout, W, SID, [
			header(SID, W),
			userText("u1", null, "cutoffword before the call"),
			bashCall("a1", "u1", "call-1"),
			toolResult("r1", "a1", "call-1", "cutoffword secret result after the call"),
			userText("u2", "r1", "cutoffword later prompt"),
		]);
		// Planted files with the same session id and more entries (the last one a tool call), in
		// another workspace and in the caller's own workspace.
		const padding = Array.from({ length: 20 }, (_, i) => userText(`p${i}`, i === 0 ? null : `p${i - 1}`, `padding ${i}`));
		for (const [cwd, name] of [
			[OUT, "planted-out"],
			[W, "planted-in"],
		] as const) {
			sessionFile(layout, cwd, `${SID}-${name}`, [header(SID, cwd), ...padding, bashCall("z1", "p19", "call-z")]);
		}
		const index = await bin_(layout, ["index", "--json"]);
		expect(index.exitCode).toBe(0);
	}, 60_000);

	const env = () => ({ PI_SESSION_ID: SID, PI_SESSION_FILE: own });

	test("search --session $SID returns nothing at or after the invoking entry", async () => {
		const run = await bin_(layout, ["search", "cutoffword", "--session", SID, "--json", "--no-sync"], { cwd: W, env: env() });
		expect(run.exitCode).toBe(0);
		const ids = run.json().hits.map((h: { entryId: string }) => h.entryId);
		expect(ids).toEqual(["u1"]);
	}, 30_000);

	test("read $SID <later entry> fails exactly like a missing entry", async () => {
		for (const entry of ["r1", "u2", "a1"]) {
			const run = await bin_(layout, ["read", SID, entry, "--no-sync"], { cwd: W, env: env() });
			expect({ entry, code: run.exitCode, out: run.stdout }).toEqual({ entry, code: 2, out: "" });
			expect(run.stderr).toContain(`no event "${entry}"`);
		}
		const before = await bin_(layout, ["read", SID, "u1", "--no-sync"], { cwd: W, env: env() });
		expect(before.exitCode).toBe(0);
	}, 30_000);

	test("with only the session id known, the smallest cutoff of its files wins (never a larger one)", async () => {
		const run = await bin_(layout, ["search", "cutoffword", "--session", SID, "--json", "--no-sync"], { cwd: W, env: { PI_SESSION_ID: SID } });
		expect(run.exitCode === 0 ? run.json().hits.map((h: { entryId: string }) => h.entryId) : []).not.toContain("r1");
	}, 30_000);
});

// ---------------------------------------------------------------------------------------------
// Item 8: only a real `.git` entry makes a worktree root
// ---------------------------------------------------------------------------------------------

describe("a planted .git entry does not widen the scope", () => {
	let layout: AgentLayout;
	let P: string;
	let C: string;

	beforeAll(async () => {
		layout = makeAgentLayout();
		const base = realpathSync(layout.root);
		P = join(base, "shared");
		C = join(P, "mine");
		mkdirSync(C, { recursive: true });
		sessionFile(layout, P, "parent-1", [header("parent-1", P), userText("e1", null, "gitword in the parent")]);
		sessionFile(layout, C, "child-1", [header("child-1", C), userText("e1", null, "gitword in my directory")]);
		const index = await bin_(layout, ["index", "--json"]);
		expect(index.exitCode).toBe(0);
	}, 60_000);

	const sessionsSeenFrom = async (cwd: string) => {
		const run = await bin_(layout, ["search", "gitword", "--json", "--no-sync"], { cwd });
		return run.exitCode === 0 ? [...new Set(run.json().hits.map((h: { sessionId: string }) => h.sessionId))].sort() : [];
	};

	test("a .git file pointing nowhere, a junk .git file, an empty one: ignored", async () => {
		for (const content of ["gitdir: /nonexistent\n", "gitdir: ../nowhere\n", "not a git file\n", ""]) {
			writeFileSync(join(P, ".git"), content);
			expect({ content, seen: await sessionsSeenFrom(C) }).toEqual({ content, seen: ["child-1"] });
		}
		// A gitdir naming an existing directory that is not a Git directory (no HEAD) does not count either.
		mkdirSync(join(P, "notgit"), { recursive: true });
		writeFileSync(join(P, ".git"), `gitdir: ${join(P, "notgit")}\n`);
		expect(await sessionsSeenFrom(C)).toEqual(["child-1"]);
	}, 60_000);

	test("an empty .git directory, or one with HEAD but no objects or refs: ignored (Git: not a git repository)", async () => {
		const dotGit = join(P, ".git");
		rmSync(dotGit, { recursive: true, force: true });
		mkdirSync(dotGit);
		expect(await sessionsSeenFrom(C)).toEqual(["child-1"]);
		writeFileSync(join(dotGit, "HEAD"), "ref: refs/heads/main\n");
		expect(await sessionsSeenFrom(C)).toEqual(["child-1"]);
		rmSync(dotGit, { recursive: true, force: true });
	}, 60_000);

	// Only root can give a file away (chown): as another account this case cannot be set up.
	test.skipIf(process.geteuid?.() !== 0)(
		"a Git directory owned by another account, or a .git file naming one: ignored (Git: dubious ownership)",
		async () => {
			const NOBODY = 65534;
			const dotGit = join(P, ".git");
			rmSync(dotGit, { recursive: true, force: true });
			makeRepo(P);
			expect(await sessionsSeenFrom(C)).toEqual(["child-1", "parent-1"]);
			chownSync(dotGit, NOBODY, NOBODY);
			expect(await sessionsSeenFrom(C)).toEqual(["child-1"]);
			rmSync(dotGit, { recursive: true, force: true });
			const theirs = makeGitDir(join(layout.root, "their.git"));
			writeFileSync(dotGit, `gitdir: ${theirs}\n`);
			expect(await sessionsSeenFrom(C)).toEqual(["child-1", "parent-1"]);
			chownSync(theirs, NOBODY, NOBODY);
			expect(await sessionsSeenFrom(C)).toEqual(["child-1"]);
			rmSync(dotGit, { force: true });
		},
		60_000,
	);

	test("a linked worktree's .git file naming a real Git directory still counts", async () => {
		const gitDir = makeLinkedGitDir(join(layout.root, "repo.git"), "shared");
		writeFileSync(join(P, ".git"), `gitdir: ${gitDir}\n`);
		expect(await sessionsSeenFrom(C)).toEqual(["child-1", "parent-1"]);
	}, 30_000);
});

// ---------------------------------------------------------------------------------------------
// Item 3: opening a session path never blocks (a FIFO swapped in after discovery)
// ---------------------------------------------------------------------------------------------

describe("a FIFO swapped in for a session file never hangs", () => {
	const mkfifo = (path: string) => {
		rmSync(path, { force: true });
		const made = Bun.spawnSync(["mkfifo", path]);
		if (made.exitCode !== 0) throw new Error(`mkfifo ${path} failed`);
	};

	/**
	 * Start `args`, wait until the process has the big first session open (discovery is over, the
	 * second file not opened yet), swap the second file for a FIFO, and wait for the exit.
	 */
	async function swapDuringSync(args: string[], bigLines: number): Promise<{ exitCode: number | null; stdout: string; stderr: string; hung: boolean }> {
		const layout = makeAgentLayout();
		const cwd = "/work/demo/fifo";
		const bigRecords: unknown[] = [header("fifo-big", cwd)];
		for (let i = 0; i < bigLines; i++) bigRecords.push(userText(`b${i}`, i === 0 ? null : `b${i - 1}`, `fifoword filler line ${i} ${"x".repeat(200)}`));
		const big = sessionFile(layout, cwd, "a-fifo-big", bigRecords);
		const victim = sessionFile(layout, cwd, "b-fifo-victim", [header("fifo-victim", cwd), userText("v1", null, "fifoword victim")]);
		const proc = Bun.spawn([bin, ...args], { env: isolatedEnv(layout), cwd: layout.root, stdout: "pipe", stderr: "pipe" });
		const opened = (target: string) => {
			try {
				return readdirSync(`/proc/${proc.pid}/fd`).some((fd) => {
					try {
						return readlinkSync(`/proc/${proc.pid}/fd/${fd}`) === target;
					} catch {
						return false;
					}
				});
			} catch {
				return false;
			}
		};
		const deadline = performance.now() + 20_000;
		while (!opened(big) && proc.exitCode === null && performance.now() < deadline) await Bun.sleep(1);
		mkfifo(victim);
		let hung = false;
		const timer = setTimeout(() => {
			hung = true;
			proc.kill("SIGKILL");
		}, 20_000);
		const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
		await proc.exited;
		clearTimeout(timer);
		return { exitCode: proc.exitCode, stdout, stderr, hung };
	}

	test("index finishes and reports the swapped path as a problem", async () => {
		const run = await swapDuringSync(["index", "--json"], 40_000);
		expect(run.hung).toBe(false);
		expect(run.exitCode).toBe(0);
		expect(run.stdout + run.stderr).toContain("EFTYPE");
	}, 60_000);

	test("search's sync finishes and answers", async () => {
		// Small enough to be indexed well inside search's 3 s sync budget, so the victim is opened.
		const run = await swapDuringSync(["search", "fifoword", "--all", "--json", "--limit", "1"], 4_000);
		expect(run.hung).toBe(false);
		expect(run.exitCode).toBe(0);
	}, 60_000);

	test("read and search --no-sync after an indexed file became a FIFO", async () => {
		const layout = makeAgentLayout();
		const cwd = "/work/demo/fifo2";
		const path = sessionFile(layout, cwd, "fifo-read", [header("fifo-read", cwd), userText("r1", null, "fifoword to read")]);
		expect((await bin_(layout, ["index"])).exitCode).toBe(0);
		mkfifo(path);
		const read = await runChild(layout, ["read", "fifo-read", "r1", "--all", "--no-sync"], { bin, timeoutMs: 20_000 });
		expect(read.timedOut).toBe(false);
		expect(read.exitCode).toBe(2);
		expect(read.stderr).toContain("cannot be read any more");
		const search = await runChild(layout, ["search", "fifoword", "--all", "--no-sync", "--json"], { bin, timeoutMs: 20_000 });
		expect(search.timedOut).toBe(false);
	}, 90_000);
});

// ---------------------------------------------------------------------------------------------
// Item 5: the index is never written over a session file or any other non-SQLite file
// ---------------------------------------------------------------------------------------------

describe("index path refusal", () => {
	let layout: AgentLayout;
	let victim: string;

	beforeAll(() => {
		layout = makeAgentLayout();
		sessionFile(layout, "/work/demo/idx", "idx-1", [header("idx-1", "/work/demo/idx"), userText("u1", null, "indexpathword")]);
		victim = join(layout.sessionsDir, encodeCwd("/work/demo/idx"), "2026-10-02T10-00-00-000Z_empty.jsonl");
	});

	const refused = async (indexPath: string, command: string[] = ["index"]) => {
		const run = await bin_(layout, [...command, "--index", indexPath]);
		return { code: run.exitCode, stdout: run.stdout, refused: /refusing the index path/.test(run.stderr) };
	};

	test("an empty .jsonl in the session directory, directly, through a symlink, and through a dangling symlink", async () => {
		writeFileSync(victim, "");
		expect(await refused(victim)).toEqual({ code: 2, stdout: "", refused: true });
		expect(statSync(victim).size).toBe(0);
		const link = join(layout.root, "index-link.db");
		symlinkSync(victim, link);
		for (const command of [["index"], ["search", "indexpathword", "--all"], ["status"], ["serve", "--stdio"]]) {
			expect({ command, ...(await refused(link, command)) }).toEqual({ command, code: 2, stdout: "", refused: true });
		}
		expect(statSync(victim).size).toBe(0);
		// A dangling symlink into the session directory: SQLite would create the target there.
		const future = join(layout.sessionsDir, encodeCwd("/work/demo/idx"), "2026-10-03T10-00-00-000Z_future.jsonl");
		const dangling = join(layout.root, "dangling.db");
		symlinkSync(future, dangling);
		expect(await refused(dangling)).toEqual({ code: 2, stdout: "", refused: true });
		expect(existsSync(future)).toBe(false);
		// A directory symlinked to the session directory, and a path inside the directory itself.
		symlinkSync(layout.sessionsDir, join(layout.root, "sessions-link"));
		expect(await refused(join(layout.root, "sessions-link", "index.db"))).toEqual({ code: 2, stdout: "", refused: true });
		expect(await refused(join(layout.sessionsDir, "index.db"))).toEqual({ code: 2, stdout: "", refused: true });
		expect(existsSync(join(layout.sessionsDir, "index.db"))).toBe(false);
	}, 60_000);

	test("an existing non-SQLite file (outside the sessions) is left untouched; a real index still opens", async () => {
		const notes = join(layout.root, "notes.txt");
		writeFileSync(notes, "my notes\n");
		expect(await refused(notes)).toEqual({ code: 2, stdout: "", refused: true });
		expect(readFileSync(notes, "utf8")).toBe("my notes\n");
		const good = join(layout.root, "good.db");
		expect(await refused(good)).toEqual({ code: 0, stdout: expect.any(String), refused: false });
		expect(await refused(good, ["status"])).toEqual({ code: 0, stdout: expect.any(String), refused: false });
	}, 60_000);
});

// ---------------------------------------------------------------------------------------------
// Item 9: an index the caller cannot write still answers
// ---------------------------------------------------------------------------------------------

/** Make a directory read-only even for root: a read-only bind mount (root), else permissions. */
function makeReadOnly(dir: string): (() => void) | null {
	if (process.getuid?.() !== 0) {
		Bun.spawnSync(["chmod", "-R", "a-w", dir]);
		return () => Bun.spawnSync(["chmod", "-R", "u+w", dir]);
	}
	if (Bun.spawnSync(["mount", "--bind", dir, dir]).exitCode !== 0) return null;
	if (Bun.spawnSync(["mount", "-o", "remount,ro,bind", dir]).exitCode !== 0) {
		Bun.spawnSync(["umount", dir]);
		return null;
	}
	return () => Bun.spawnSync(["umount", dir]);
}

describe("a read-only index answers searches", () => {
	test("search --no-sync, search (the failed sync in freshness.problems), status, read; index says read-only", async () => {
		const layout = makeAgentLayout();
		const path = sessionFile(layout, "/work/demo/ro", "ro-1", [header("ro-1", "/work/demo/ro"), userText("u1", null, "readonlyword here")]);
		expect((await bin_(layout, ["index"])).exitCode).toBe(0);
		const dir = join(layout.cacheHome, "pi-events");
		const undo = makeReadOnly(dir);
		if (!undo) {
			console.warn("skipped: cannot make a read-only directory here");
			return;
		}
		try {
			expect(() => writeFileSync(join(dir, "probe"), "x")).toThrow();
			const noSync = await bin_(layout, ["search", "readonlyword", "--all", "--no-sync", "--json"]);
			expect({ code: noSync.exitCode, stderr: noSync.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
			expect(noSync.json().hits.map((h: { entryId: string }) => h.entryId)).toEqual(["u1"]);
			writeFileSync(path, `${readFileSync(path, "utf8")}${JSON.stringify(userText("u2", "u1", "readonlyword appended"))}\n`);
			const synced = await bin_(layout, ["search", "readonlyword", "--all", "--json"]);
			expect(synced.exitCode).toBe(0);
			expect(synced.json().hits.map((h: { entryId: string }) => h.entryId)).toEqual(["u1"]);
			expect(JSON.stringify(synced.json().freshness.problems)).toContain("read-only");
			const status = await bin_(layout, ["status", "--json"]);
			expect(status.exitCode).toBe(0);
			expect((await bin_(layout, ["read", "ro-1", "u1", "--all", "--no-sync"])).exitCode).toBe(0);
			const index = await bin_(layout, ["index"]);
			expect(index.exitCode).toBe(2);
			expect(index.stderr).toContain("read-only");
		} finally {
			undo();
		}
	}, 60_000);
});

// ---------------------------------------------------------------------------------------------
// Items 4 and 6: terminal escapes never reach a text rendering; JSON is well-formed UTF-8
// ---------------------------------------------------------------------------------------------

describe("escape sequences and lone surrogates in session text", () => {
	let layout: AgentLayout;
	let W: string;
	const HOSTILE = "escword \u001b]0;pwned title\u0007 clear\u001b[2J red\u001b[31m csi\u009b31m bell\u0007 cr\rback lone\ud800high \udc00low";
	const SID = "esc-1";
	let indexRun: Awaited<ReturnType<typeof bin_>>;

	beforeAll(async () => {
		layout = makeAgentLayout();
		W = join(realpathSync(layout.root), "work", "esc\u001b[7m");
		mkdirSync(W, { recursive: true });
		sessionFile(layout, W, SID, [
			header(SID, W),
			{ type: "session_info", id: "n1", parentId: null, timestamp: "2026-10-01T10:00:01.000Z", name: `name \u001b]0;x\u0007 escword` },
			userText("u1", "n1", HOSTILE),
			bashCall("a1", "u1", "call-1"),
			toolResult("r1", "a1", "call-1", `output ${HOSTILE}`),
		]);
		// A file pi would not write, named with an escape sequence: its problem is reported on stderr.
		writeFileSync(join(layout.sessionsDir, "evil\u001b]0;pwned\u0007.jsonl"), "not json\n");
		indexRun = await bin_(layout, ["index"]);
		expect(indexRun.exitCode).toBe(0);
	}, 60_000);

	/** No C0 control but newline and tab, no DEL, no C1 control, and valid UTF-8. */
	function expectTerminalSafe(text: string, label: string): void {
		const bad = [...text].filter((c) => /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(c)).map((c) => c.codePointAt(0)!.toString(16));
		expect({ label, bad }).toEqual({ label, bad: [] });
	}

	/** Well-formed UTF-8 bytes, no lone-surrogate escapes, no raw controls, and parseable. */
	function expectWellFormedJson(bytes: Uint8Array, label: string, framed = false): unknown[] {
		const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
		const lone = text.match(/(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g) ?? [];
		expect({ label, lone }).toEqual({ label, lone: [] });
		expectTerminalSafe(text, label);
		if (!framed) return [JSON.parse(text)];
		return text
			.split("\n")
			.filter((l) => l.trim().length > 0 && (l.startsWith("{") || l.startsWith("[")))
			.map((l) => JSON.parse(l));
	}

	const cli = async (args: string[]) => {
		const proc = Bun.spawn([bin, ...args], { env: isolatedEnv(layout), cwd: W, stdout: "pipe", stderr: "pipe" });
		const [out, err] = await Promise.all([new Response(proc.stdout).arrayBuffer(), new Response(proc.stderr).text()]);
		await proc.exited;
		return { code: proc.exitCode, out: new Uint8Array(out), err };
	};

	test("CLI text: index, search, read, trace, status print no control character", async () => {
		expectTerminalSafe(indexRun.stdout + indexRun.stderr, "index");
		for (const args of [["search", "escword"], ["search", "escword", "--paths"], ["read", SID, "u1"], ["read", SID, "r1"], ["trace", SID, "u1"], ["status"]]) {
			const run = await cli([...args, "--no-sync"].filter((a) => !(a === "--no-sync" && args[0] === "status")));
			expect({ args, code: run.code }).toEqual({ args, code: 0 });
			const text = new TextDecoder().decode(run.out);
			expectTerminalSafe(text, args.join(" "));
			expectTerminalSafe(run.err, `${args.join(" ")} (stderr)`);
			if (args[0] !== "status") expect(text).toContain("\u241b]0;"); // ESC shown as ␛, not dropped
		}
	}, 60_000);

	test("CLI JSON keeps the exact text, escaped, as well-formed UTF-8", async () => {
		const search = await cli(["search", "escword", "--json", "--no-sync"]);
		const [parsed] = expectWellFormedJson(search.out, "search --json") as { hits: { entryId: string; snippet: string }[] }[];
		const u1 = parsed!.hits.find((h) => h.entryId === "u1")!;
		expect(u1.snippet).toContain("\u001b]0;pwned title\u0007");
		expect(u1.snippet).toContain("\u009b31m");
		expect(u1.snippet).toContain("lone\ufffdhigh");
		const read = await cli(["read", SID, "u1", "--json", "--no-sync"]);
		const [event] = expectWellFormedJson(read.out, "read --json") as { content: { text: string }[] }[];
		expect(event!.content[0]!.text).toBe(HOSTILE.replace("\ud800", "\ufffd").replace("\udc00", "\ufffd"));
		expectWellFormedJson((await cli(["trace", SID, "u1", "--json", "--no-sync"])).out, "trace --json");
	}, 60_000);

	test("MCP frames are well-formed; tool text has no control character", async () => {
		const proc = Bun.spawn([bin, "serve", "--stdio"], { env: isolatedEnv(layout), cwd: W, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
		const frames = [
			{ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } } },
			{ jsonrpc: "2.0", method: "notifications/initialized" },
			{ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "event_search", arguments: { query: "escword" } } },
			{ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "event_read", arguments: { sessionId: SID, entryId: "r1" } } },
			{ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "event_trace", arguments: { sessionId: SID, entryId: "u1" } } },
			{ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "event_read", arguments: { sessionId: "x\u001b]0;t\u0007\u009b", entryId: "y" } } },
		];
		const sink = proc.stdin as import("bun").FileSink;
		for (const f of frames) sink.write(`${JSON.stringify(f)}\n`);
		// Wait for the four answers before closing stdin.
		const chunks: Uint8Array[] = [];
		let seen = "";
		const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
		const deadline = Date.now() + 20_000;
		while ((seen.match(/"id":[2-5][,}]/g) ?? []).length < 4 && Date.now() < deadline) {
			const { value, done } = await reader.read();
			if (done) break;
			chunks.push(value);
			seen += new TextDecoder().decode(value);
		}
		sink.end();
		proc.kill();
		const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
		let at = 0;
		for (const c of chunks) {
			bytes.set(c, at);
			at += c.length;
		}
		const parsed = expectWellFormedJson(bytes, "MCP frames", true) as { id: number; result?: { content: { text: string }[]; structuredContent?: any } }[];
		const byId = new Map(parsed.map((f) => [f.id, f]));
		for (const id of [2, 3, 4, 5]) {
			const text = byId.get(id)!.result!.content[0]!.text;
			expectTerminalSafe(text, `tool text ${id}`);
		}
		expect(byId.get(2)!.result!.content[0]!.text).toContain("\u241b]0;pwned title\u2407");
		expect(JSON.stringify(byId.get(2)!.result!.structuredContent)).toContain("\\u001b]0;pwned title\\u0007");
	}, 60_000);
});

// ---------------------------------------------------------------------------------------------
// Item 1: nothing in a scoped answer depends on data outside the scope
// ---------------------------------------------------------------------------------------------

describe("the score side channel", () => {
	test("a rare word planted in another workspace leaves the scoped answer byte-identical", async () => {
		const layout = makeAgentLayout();
		const base = realpathSync(layout.root);
		const A = join(base, "home", "me", "a");
		const B = join(base, "home", "me", "b");
		mkdirSync(A, { recursive: true });
		mkdirSync(B, { recursive: true });
		// In scope: hits of different lengths and term frequencies, so that statistics matter.
		const texts = [
			"zorblax deploy",
			"zorblax zorblax deploy failed on the staging host after the migration",
			"the deploy of zorblax went fine, zorblax is up; deploy again tomorrow with the usual checks and a longer note here",
			"zorblax",
			`zorblax ${"padding words to make this fragment long ".repeat(8)} deploy deploy deploy`,
		];
		sessionFile(layout, A, "scope-a", [header("scope-a", A), ...texts.map((t, i) => userText(`a${i}`, i === 0 ? null : `a${i - 1}`, t))]);
		// Other history (in scope and not), so that the words are rare in the index as a whole.
		for (const [cwd, id] of [
			[A, "filler-a"],
			[join(base, "home", "me", "c"), "filler-c"],
		] as const) {
			sessionFile(layout, cwd, id, [
				header(id, cwd),
				...Array.from({ length: 150 }, (_, i) => userText(`f${i}`, i === 0 ? null : `f${i - 1}`, `ordinary line ${i} about builds and tests`)),
			]);
		}
		const answer = async () => {
			const outs: string[] = [];
			for (const query of ["zorblax", "zorblax deploy", "deploy"]) {
				for (const extra of [[], ["--sort", "newest"], ["--group", "session"]]) {
					const run = await bin_(layout, ["search", query, "--json", "--no-sync", ...extra], { cwd: A });
					expect(run.exitCode).toBe(0);
					const json = run.json();
					delete json.elapsedMs;
					delete json.freshness.syncMs;
					delete json.freshness.lastSyncAt;
					outs.push(JSON.stringify(json, null, 1));
					const text = await bin_(layout, ["search", query, "--no-sync", ...extra], { cwd: A });
					outs.push(text.stdout);
				}
			}
			return outs;
		};
		expect((await bin_(layout, ["index"])).exitCode).toBe(0);
		const without = await answer();
		expect(without[0]).toContain('"rank": 1');
		// Another workspace: the rare word many times, long and short fragments, another session.
		sessionFile(layout, B, "scope-b", [
			header("scope-b", B),
			...Array.from({ length: 30 }, (_, i) =>
				userText(`b${i}`, i === 0 ? null : `b${i - 1}`, i % 2 ? "zorblax" : `zorblax deploy ${"elsewhere ".repeat(i * 3)}`),
			),
		]);
		expect((await bin_(layout, ["index"])).exitCode).toBe(0);
		const withPlanted = await answer();
		for (let i = 0; i < without.length; i++) expect(withPlanted[i]).toBe(without[i]!);
		// The planted session is there for a caller whose scope includes it.
		const wide = await bin_(layout, ["search", "zorblax", "--json", "--no-sync", "--root", join(base, "home", "me"), "--limit", "100"], { cwd: A });
		expect(wide.json().hits.some((h: { sessionId: string }) => h.sessionId === "scope-b")).toBe(true);
	}, 90_000);
});

// ---------------------------------------------------------------------------------------------
// Item 10: the smaller ones
// ---------------------------------------------------------------------------------------------

describe("status and an unreadable directory whose sessions are kept", () => {
	test("its sessions are not reported as gone (the sync keeps them)", async () => {
		const layout = makeAgentLayout();
		const real = join(layout.root, "elsewhere", "project-sessions");
		mkdirSync(real, { recursive: true });
		for (let i = 0; i < 32; i++) {
			writeFileSync(
				join(real, `2026-10-01T10-00-00-${String(i).padStart(3, "0")}Z_keep-${i}.jsonl`),
				jsonl([header(`keep-${i}`, "/work/demo/keep"), userText("u1", null, `keepword ${i}`)]),
			);
		}
		const link = join(layout.sessionsDir, encodeCwd("/work/demo/keep"));
		symlinkSync(real, link);
		expect((await bin_(layout, ["index"])).exitCode).toBe(0);
		// The directory becomes unreadable, even for root: its link now loops (ELOOP).
		rmSync(link);
		symlinkSync(link, link);
		const status = await bin_(layout, ["status", "--json"]);
		expect(status.exitCode).toBe(0);
		const source = status.json().sources[0];
		expect({ missing: source.missing, kept: source.kept }).toEqual({ missing: 0, kept: 32 });
		const text = await bin_(layout, ["status"]);
		expect(text.stdout).not.toMatch(/[1-9]\d* gone since last sync/);
		const index = await bin_(layout, ["index", "--json"]);
		expect(index.json().sessions.removed).toBe(0);
		const search = await bin_(layout, ["search", "keepword", "--all", "--json", "--no-sync", "--limit", "100"]);
		expect(search.json().hits.length).toBe(32);
		expect(search.json().freshness.missingFiles).toBe(0);
	}, 60_000);
});

describe("diagnostics never quote the content of a file", () => {
	test("a passwd copy and a JSON file that is not a session: kinds, lines and offsets, no words", async () => {
		const layout = makeAgentLayout();
		const passwd = [
			"root:x:0:0:root:/root:/bin/bash",
			"daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin",
			"secretuser:x:1000:1000:Secret User:/home/secretuser:/bin/bash",
		];
		writeFileSync(join(layout.sessionsDir, "passwd.jsonl"), `${passwd.join("\n")}\n`);
		writeFileSync(join(layout.sessionsDir, "notes.jsonl"), `${JSON.stringify({ type: "hunter2secret", id: "topsecretid", token: "sk-live-abc" })}\n`);
		const words = ["root", "daemon", "secretuser", "nologin", "hunter2secret", "topsecretid", "sk-live-abc"];
		const leaks = (text: string) => words.filter((w) => text.includes(w));
		const json = await bin_(layout, ["index", "--json", "--verbose"]);
		expect(json.exitCode).toBe(0);
		const report = json.json();
		expect(report.diagnostics.map((d: { kind: string }) => d.kind).sort()).toEqual(["malformed-json", "malformed-json", "malformed-json", "missing-header"]);
		expect(leaks(JSON.stringify(report.diagnostics) + JSON.stringify(report.problems) + json.stderr)).toEqual([]);
		const text = await bin_(layout, ["index", "--verbose"]);
		expect(leaks(text.stdout + text.stderr)).toEqual([]);
		const status = await bin_(layout, ["status", "--json"]);
		expect(leaks(status.stdout + status.stderr)).toEqual([]);
	}, 60_000);
});

describe("an out-of-scope read does the work of a missing one", () => {
	/** Every statement the gate runs, with how many rows each returned. */
	function recording(db: Database): { db: Database; log: string[] } {
		const log: string[] = [];
		const wrap = (sql: string, stmt: any) =>
			new Proxy(stmt, {
				get(target, prop) {
					const value = target[prop];
					if (typeof value !== "function") return value;
					if (prop !== "all" && prop !== "get" && prop !== "values") return value.bind(target);
					return (...args: unknown[]) => {
						const out = value.apply(target, args);
						log.push(`${sql.replace(/\s+/g, " ")} -> ${Array.isArray(out) ? out.length : out ? 1 : 0}`);
						return out;
					};
				},
			});
		const proxy = new Proxy(db, {
			get(target, prop) {
				const value = (target as any)[prop];
				if (prop === "query" || prop === "prepare") return (sql: string) => wrap(sql, value.call(target, sql));
				return typeof value === "function" ? value.bind(target) : value;
			},
		});
		return { db: proxy, log };
	}

	test("the same statements, returning the same (no) rows, and the same error", async () => {
		const layout = makeAgentLayout();
		const base = realpathSync(layout.root);
		const W = join(base, "work", "mine");
		const OUT = join(base, "work", "other");
		const OUT_ID = "0000aaaa-0000-4000-8000-000000000001";
		const MISSING_ID = "0000aaaa-0000-4000-8000-000000000002";
		sessionFile(layout, OUT, OUT_ID, [header(OUT_ID, OUT), userText("e1", null, "outside")]);
		sessionFile(layout, W, "mine-1", [header("mine-1", W), userText("e1", null, "inside")]);
		const db = openIndex(join(layout.root, "index.db"));
		try {
			syncIndex(db, { sourceDirs: [{ path: layout.sessionsDir, origin: "flag" }] });
			const attempt = (id: string) => {
				const { db: watched, log } = recording(db);
				const gate = new Gate(watched, { roots: [W], current: null });
				let message = "";
				try {
					gate.event(gate.resolveSessionId(id), "e1");
				} catch (err) {
					message = (err as Error).message.replace(id, "<id>");
				}
				return { log, message };
			};
			const out = attempt(OUT_ID);
			const missing = attempt(MISSING_ID);
			expect(out.message).toContain("in your scope");
			expect(out).toEqual(missing);
		} finally {
			db.close();
		}
	});
});
