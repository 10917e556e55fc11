/**
 * Shared by the end-to-end tests (pi-extension.test.ts for pi 1.x, pi-extension-073.test.ts for
 * pi 0.73): the temp agent dir seeded with one fixture session whose header cwd is the test's
 * project dir, pi's environment, reading the session file pi wrote, and the assertions on the
 * event_search / event_read results.
 */
import { expect } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentLayout, encodeCwd, makeAgentLayout, piFixture, ROOT } from "../helpers/temp.ts";
import { compiledBinary } from "../server/harness.ts";
import type { Script } from "./faux-script.ts";

export const EXTENSION = join(ROOT, "extension", "pi-events.ts");
export const PHRASE = "kumquat-offset-plan";
export const PROMPT = `What did we decide about the ${PHRASE} earlier?`;

export const seeded = piFixture("branch-summary");
export const expectedEntry = seeded.notes.abandonedUser as string;

export type Entry = { type: string; id: string; parentId: string | null; message?: any; [k: string]: any };

export interface E2eWorld {
	layout: AgentLayout;
	/** The (realpath'd) cwd pi runs in; the seeded session's header cwd. */
	project: string;
	/** pi's session folder for `project`. */
	sessionDir: string;
	/** A per-test symlink to the compiled binary, so its processes can be told apart from other tests'. */
	bin: string;
}

/** A fresh agent dir with the seeded fixture, a project dir and the binary (call from beforeAll). */
export function setupWorld(binName: string): E2eWorld {
	const layout = makeAgentLayout();
	mkdirSync(join(layout.root, "project"), { recursive: true });
	mkdirSync(join(layout.root, "tmp"));
	const project = realpathSync(join(layout.root, "project"));
	const bin = join(layout.root, binName);
	symlinkSync(compiledBinary(), bin);
	// Seed: the fixture with its header cwd rewritten to the project dir, in pi's per-cwd folder.
	const [header, ...rest] = readFileSync(seeded.path, "utf8").split("\n");
	const sessionDir = join(layout.sessionsDir, encodeCwd(project));
	mkdirSync(sessionDir, { recursive: true });
	writeFileSync(join(sessionDir, seeded.file), [JSON.stringify({ ...JSON.parse(header!), cwd: project }), ...rest].join("\n"));
	return { layout, project, sessionDir, bin };
}

/** The faux model's script (see faux-script.ts). */
export function scriptFor(own: { ownSearch: boolean; ownSessionId?: string }): Script {
	return { phrase: PHRASE, sessionId: seeded.sessionId, entryId: expectedEntry, ...own };
}

/**
 * pi's environment: isolated HOME/agent dir/XDG dirs, a temp dir inside the world (pi's jiti keeps
 * its compiled extensions in $TMPDIR/jiti: they stayed in /tmp after every run), offline, the
 * binary and the faux script.
 */
export function piEnv(world: E2eWorld, bin: string, script: Script): Record<string, string> {
	const { layout } = world;
	return {
		HOME: layout.home,
		PI_CODING_AGENT_DIR: layout.agentDir,
		XDG_CACHE_HOME: layout.cacheHome,
		XDG_CONFIG_HOME: layout.configHome,
		TMPDIR: join(layout.root, "tmp"),
		PATH: process.env.PATH ?? "/usr/bin:/bin",
		PI_OFFLINE: "1",
		PI_TELEMETRY: "0",
		NO_COLOR: "1",
		PI_EVENTS_BIN: bin,
		PI_EVENTS_E2E_SCRIPT: JSON.stringify(script),
	};
}

export interface PiRun {
	exitCode: number | null;
	stdout: string;
	stderr: string;
	ms: number;
}

export function runCommand(argv: string[], cwd: string, env: Record<string, string>): PiRun {
	const started = performance.now();
	const proc = Bun.spawnSync(argv, { cwd, env, stdout: "pipe", stderr: "pipe", timeout: 25_000 });
	return { exitCode: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString(), ms: performance.now() - started };
}

export function failureReport(run: PiRun): string {
	return `pi exited ${run.exitCode}\nstderr:\n${run.stderr}\nstdout:\n${run.stdout.slice(-4000)}`;
}

/** The json-mode stdout as parsed lines (throws on a non-JSON line). */
export function jsonLines(run: PiRun): any[] {
	return run.stdout
		.split("\n")
		.filter((l) => l !== "")
		.map((l) => JSON.parse(l));
}

/** The session file pi wrote for `sessionId` (exactly one). */
export function sessionFileOf(world: E2eWorld, sessionId: string): string {
	const files = readdirSync(world.sessionDir).filter((n) => n.endsWith(`_${sessionId}.jsonl`));
	expect(files).toHaveLength(1);
	return join(world.sessionDir, files[0]!);
}

export function entriesOf(file: string): Entry[] {
	return readFileSync(file, "utf8")
		.split("\n")
		.filter((l) => l.trim() !== "")
		.map((l) => JSON.parse(l) as Entry);
}

export function toolResult(entries: Entry[], toolCallId: string): Entry {
	const found = entries.find((e) => e.type === "message" && e.message?.role === "toolResult" && e.message.toolCallId === toolCallId);
	if (!found) throw new Error(`no toolResult for ${toolCallId}`);
	return found;
}

export const textOf = (e: Entry) => (e.message.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");

/** event_search found the seeded event, and nothing of the invoking session. */
export function expectSearchFoundSeeded(entries: Entry[], world: E2eWorld, ownSessionId: string): void {
	const result = toolResult(entries, "call_e2e_search");
	expect(result.message.toolName).toBe("event_search");
	expect(result.message.isError).toBe(false);
	const hits = result.message.details.hits as { sessionId: string; entryId: string; cwd: string }[];
	expect(hits.map((h) => h.entryId)).toContain(expectedEntry);
	expect(hits.every((h) => h.sessionId === seeded.sessionId && h.cwd === world.project)).toBeTrue();
	// The invoking session (its prompt and this very tool call contain the phrase) is excluded.
	expect(hits.some((h) => h.sessionId === ownSessionId)).toBeFalse();
	expect(textOf(result)).toContain(expectedEntry);
	expect(textOf(result)).toContain(seeded.sessionId);
	expect(textOf(result)).not.toContain(ownSessionId);
}

/** event_read returned the seeded event's exact text. */
export function expectReadExact(entries: Entry[], world: E2eWorld): void {
	const result = toolResult(entries, "call_e2e_read");
	expect(result.message.toolName).toBe("event_read");
	expect(result.message.isError).toBe(false);
	const details = result.message.details;
	expect(details.event.entryId).toBe(expectedEntry);
	expect(details.event.sessionId).toBe(seeded.sessionId);
	expect(details.session.cwd).toBe(world.project);
	const original = readFileSync(seeded.path, "utf8")
		.split("\n")
		.map((l) => (l ? JSON.parse(l) : null))
		.find((e) => e?.id === expectedEntry);
	const originalText = (original.message.content as { text?: string }[]).map((c) => c.text ?? "").join("\n");
	expect(details.content.map((c: { text: string }) => c.text).join("\n")).toContain(originalText.slice(0, 60));
	expect(textOf(result)).toContain(expectedEntry);
}

/** event_sessions listed the seeded session, and not the invoking one. */
export function expectSessionsListed(entries: Entry[], world: E2eWorld, ownSessionId: string | null): void {
	const result = toolResult(entries, "call_e2e_sessions");
	expect(result.message.toolName).toBe("event_sessions");
	expect(result.message.isError).toBe(false);
	const sessions = result.message.details.sessions as { sessionId: string; cwd: string }[];
	expect(sessions.map((s) => s.sessionId)).toContain(seeded.sessionId);
	expect(sessions.every((s) => s.cwd === world.project)).toBeTrue();
	if (ownSessionId !== null) expect(sessions.some((s) => s.sessionId === ownSessionId)).toBeFalse();
	expect(textOf(result)).toContain(seeded.sessionId);
}

/** Without a server binary each tool call fails with an actionable error. */
export function expectMissingBinaryErrors(entries: Entry[]): void {
	for (const id of ["call_e2e_search", "call_e2e_read", "call_e2e_sessions"]) {
		const result = toolResult(entries, id);
		expect(result.message.isError).toBe(true);
		expect(textOf(result)).toContain("pi-events binary not found");
		expect(textOf(result)).toContain("PI_EVENTS_BIN");
	}
}

/** Naming the invoking session shows only what came before the invoking call (call_e2e_own). */
export function expectOwnSearchBeforeCall(entries: Entry[], ownSessionId: string): void {
	const result = toolResult(entries, "call_e2e_own");
	expect(result.message.isError).toBe(false);
	const hits = result.message.details.hits as { sessionId: string; entryId: string }[];
	const order = entries.map((e) => e.id);
	const invoking = entries.find(
		(e) =>
			e.message?.role === "assistant" && (e.message.content as { type: string; id?: string }[]).some((c) => c.type === "toolCall" && c.id === "call_e2e_own"),
	)!;
	const userPrompt = entries.find((e) => e.message?.role === "user")!;
	expect(hits.every((h) => h.sessionId === ownSessionId)).toBeTrue();
	expect(hits.map((h) => h.entryId)).toContain(userPrompt.id);
	for (const h of hits) expect(order.indexOf(h.entryId)).toBeLessThan(order.indexOf(invoking.id));
}

/** The last assistant message is the scripted answer (the model got through all its steps). */
export function expectAnswered(entries: Entry[]): void {
	const last = entries.filter((e) => e.message?.role === "assistant").at(-1)!;
	expect(textOf(last)).toStartWith("Done.");
}

/** pids of live processes whose argv[0] is exactly `path` (Linux /proc; empty elsewhere). */
export function processesRunning(path: string): number[] {
	let pids: string[];
	try {
		pids = readdirSync("/proc").filter((n) => /^\d+$/.test(n));
	} catch {
		return [];
	}
	const out: number[] = [];
	for (const pid of pids) {
		try {
			const argv0 = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0];
			if (argv0 === path) out.push(Number(pid));
		} catch {
			// exited meanwhile
		}
	}
	return out;
}
