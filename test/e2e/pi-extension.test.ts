/**
 * End to end: real pi (@earendil-works/pi-coding-agent 1.6.0, its CLI run under bun) in print/json
 * mode, offline, with pi's in-process faux provider scripted by test/e2e/faux-model.ts, loading
 * extension/pi-events.ts with -e and the compiled pi-events binary as $PI_EVENTS_BIN.
 *
 * The agent dir holds one seeded fixture session (branch-summary) whose header cwd is rewritten
 * to the test's project dir. The faux model searches for its distinctive phrase, reads the hit,
 * searches its own (invoking) session explicitly, and answers. Everything is asserted from the
 * NEW session file pi wrote.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentLayout, cleanupTempDirs, encodeCwd, makeAgentLayout, piFixture, ROOT } from "../helpers/temp.ts";
import { compiledBinary } from "../server/harness.ts";

const PI_CLI = join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");
const EXTENSION = join(ROOT, "extension", "pi-events.ts");
const FAUX = join(import.meta.dir, "faux-model.ts");
const PHRASE = "kumquat-offset-plan";
const OWN_SESSION = "e2e-own-session";
const PROMPT = `What did we decide about the ${PHRASE} earlier?`;

const seeded = piFixture("branch-summary");
const expectedEntry = seeded.notes.abandonedUser as string;

type Entry = { type: string; id: string; parentId: string | null; message?: any; [k: string]: any };

let layout: AgentLayout;
let project: string;
let bin: string;

function runPi(opts: { bin: string; sessionId: string; ownSearch: boolean }) {
	const script = { phrase: PHRASE, sessionId: seeded.sessionId, entryId: expectedEntry, ...(opts.ownSearch ? { ownSessionId: opts.sessionId } : {}) };
	const env: Record<string, string> = {
		HOME: layout.home,
		PI_CODING_AGENT_DIR: layout.agentDir,
		XDG_CACHE_HOME: layout.cacheHome,
		XDG_CONFIG_HOME: layout.configHome,
		PATH: process.env.PATH ?? "/usr/bin:/bin",
		PI_OFFLINE: "1",
		PI_TELEMETRY: "0",
		NO_COLOR: "1",
		PI_EVENTS_BIN: opts.bin,
		PI_EVENTS_E2E_SCRIPT: JSON.stringify(script),
	};
	const started = performance.now();
	const proc = Bun.spawnSync(
		[
			process.execPath,
			PI_CLI,
			"-p",
			"--mode",
			"json",
			"--provider",
			"faux",
			"--model",
			"faux-1",
			"--session-id",
			opts.sessionId,
			"-e",
			FAUX,
			"-e",
			EXTENSION,
			PROMPT,
		],
		{ cwd: project, env, stdout: "pipe", stderr: "pipe", timeout: 25_000 },
	);
	return {
		exitCode: proc.exitCode,
		stdout: proc.stdout.toString(),
		stderr: proc.stderr.toString(),
		ms: performance.now() - started,
	};
}

function sessionFileOf(sessionId: string): string {
	const dir = join(layout.sessionsDir, encodeCwd(project));
	const files = readdirSync(dir).filter((n) => n.endsWith(`_${sessionId}.jsonl`));
	expect(files).toHaveLength(1);
	return join(dir, files[0]!);
}

function entriesOf(file: string): Entry[] {
	return readFileSync(file, "utf8")
		.split("\n")
		.filter((l) => l.trim() !== "")
		.map((l) => JSON.parse(l) as Entry);
}

function toolResult(entries: Entry[], toolCallId: string): Entry {
	const found = entries.find((e) => e.type === "message" && e.message?.role === "toolResult" && e.message.toolCallId === toolCallId);
	if (!found) throw new Error(`no toolResult for ${toolCallId}`);
	return found;
}

const textOf = (e: Entry) => (e.message.content as { type: string; text?: string }[]).map((c) => c.text ?? "").join("\n");

/** pids of live processes whose argv[0] is exactly `path` (Linux /proc; empty elsewhere). */
function processesRunning(path: string): number[] {
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

beforeAll(() => {
	layout = makeAgentLayout();
	project = join(layout.root, "project");
	mkdirSync(project, { recursive: true });
	project = realpathSync(project);
	// A per-test name for the binary, so its processes can be told apart from other tests'.
	bin = join(layout.root, "pi-events-e2e");
	symlinkSync(compiledBinary(), bin);
	// Seed: the fixture with its header cwd rewritten to the project dir, in pi's per-cwd folder.
	const [header, ...rest] = readFileSync(seeded.path, "utf8").split("\n");
	const dir = join(layout.sessionsDir, encodeCwd(project));
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, seeded.file), [JSON.stringify({ ...JSON.parse(header!), cwd: project }), ...rest].join("\n"));
});

afterAll(() => {
	cleanupTempDirs();
});

describe("pi + extension/pi-events.ts + compiled server", () => {
	let run: ReturnType<typeof runPi>;
	let entries: Entry[];

	beforeAll(() => {
		run = runPi({ bin, sessionId: OWN_SESSION, ownSearch: true });
		if (run.exitCode !== 0) throw new Error(`pi exited ${run.exitCode}\nstderr:\n${run.stderr}\nstdout:\n${run.stdout.slice(-4000)}`);
		entries = entriesOf(sessionFileOf(OWN_SESSION));
	});

	test("pi ran headless and its json stdout is clean protocol (the child's stdout is piped)", () => {
		const lines = run.stdout.split("\n").filter((l) => l !== "");
		expect(lines.length).toBeGreaterThan(5);
		for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
		expect(JSON.parse(lines[0]!)).toMatchObject({ type: "session", id: OWN_SESSION, cwd: project });
		console.log(`pi e2e run: ${run.ms.toFixed(0)} ms`);
	});

	test("event_search found the seeded event and not the invoking session", () => {
		const result = toolResult(entries, "call_e2e_search");
		expect(result.message.toolName).toBe("event_search");
		expect(result.message.isError).toBe(false);
		const hits = result.message.details.hits as { sessionId: string; entryId: string; cwd: string }[];
		expect(hits.map((h) => h.entryId)).toContain(expectedEntry);
		expect(hits.every((h) => h.sessionId === seeded.sessionId && h.cwd === project)).toBeTrue();
		// The invoking session (its prompt and this very tool call contain the phrase) is excluded.
		expect(hits.some((h) => h.sessionId === OWN_SESSION)).toBeFalse();
		expect(textOf(result)).toContain(expectedEntry);
		expect(textOf(result)).toContain(seeded.sessionId);
	});

	test("event_read returned the exact event", () => {
		const result = toolResult(entries, "call_e2e_read");
		expect(result.message.toolName).toBe("event_read");
		expect(result.message.isError).toBe(false);
		const details = result.message.details;
		expect(details.event.entryId).toBe(expectedEntry);
		expect(details.event.sessionId).toBe(seeded.sessionId);
		expect(details.session.cwd).toBe(project);
		const original = readFileSync(seeded.path, "utf8").split("\n").map((l) => (l ? JSON.parse(l) : null)).find((e) => e?.id === expectedEntry);
		const originalText = (original.message.content as { text?: string }[]).map((c) => c.text ?? "").join("\n");
		expect(details.content.map((c: { text: string }) => c.text).join("\n")).toContain(originalText.slice(0, 60));
		expect(textOf(result)).toContain(expectedEntry);
	});

	test("naming the invoking session shows only what came before the invoking call", () => {
		const result = toolResult(entries, "call_e2e_own");
		expect(result.message.isError).toBe(false);
		const hits = result.message.details.hits as { sessionId: string; entryId: string }[];
		const order = entries.map((e) => e.id);
		const invoking = entries.find(
			(e) => e.message?.role === "assistant" && (e.message.content as { type: string; id?: string }[]).some((c) => c.type === "toolCall" && c.id === "call_e2e_own"),
		)!;
		const userPrompt = entries.find((e) => e.message?.role === "user")!;
		expect(hits.every((h) => h.sessionId === OWN_SESSION)).toBeTrue();
		expect(hits.map((h) => h.entryId)).toContain(userPrompt.id);
		for (const h of hits) expect(order.indexOf(h.entryId)).toBeLessThan(order.indexOf(invoking.id));
	});

	test("the model got its answer and the server child was stopped with pi", () => {
		const last = entries.filter((e) => e.message?.role === "assistant").at(-1)!;
		expect(textOf(last)).toStartWith("Done.");
		expect(processesRunning(bin)).toEqual([]);
	});
});

describe("without a server binary", () => {
	test("each tool call fails with an actionable error and pi carries on", () => {
		const run = runPi({ bin: join(layout.root, "no-such-pi-events"), sessionId: "e2e-missing-binary", ownSearch: false });
		expect(run.exitCode).toBe(0);
		const entries = entriesOf(sessionFileOf("e2e-missing-binary"));
		for (const id of ["call_e2e_search", "call_e2e_read"]) {
			const result = toolResult(entries, id);
			expect(result.message.isError).toBe(true);
			expect(textOf(result)).toContain("pi-events binary not found");
			expect(textOf(result)).toContain("PI_EVENTS_BIN");
		}
	});
});
