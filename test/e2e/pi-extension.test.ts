/**
 * End to end: real pi (@earendil-works/pi-coding-agent 1.6.0, its CLI run under bun) in print/json
 * mode, offline, with pi's in-process faux provider scripted by test/e2e/faux-model.ts, loading
 * extension/pi-events.ts with -e and the compiled pi-events binary as $PI_EVENTS_BIN.
 *
 * The agent dir holds one seeded fixture session (branch-summary) whose header cwd is rewritten
 * to the test's project dir. The faux model searches for its distinctive phrase, reads the hit,
 * searches its own (invoking) session explicitly, and answers. Everything is asserted from the
 * NEW session file pi wrote. (pi 0.73: pi-extension-073.test.ts; shared parts: shared.ts.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, ROOT } from "../helpers/temp.ts";
import {
	type E2eWorld,
	type Entry,
	EXTENSION,
	entriesOf,
	expectAnswered,
	expectMissingBinaryErrors,
	expectOwnSearchBeforeCall,
	expectReadExact,
	expectSessionsListed,
	expectSearchFoundSeeded,
	failureReport,
	jsonLines,
	PROMPT,
	piEnv,
	processesRunning,
	runCommand,
	scriptFor,
	sessionFileOf,
	setupWorld,
} from "./shared.ts";

const PI_CLI = join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js");
const FAUX = join(import.meta.dir, "faux-model.ts");
const OWN_SESSION = "e2e-own-session";

let world: E2eWorld;

function runPi(opts: { bin: string; sessionId: string; ownSearch: boolean }) {
	const env = piEnv(world, opts.bin, scriptFor({ ownSearch: opts.ownSearch, ownSessionId: opts.sessionId }));
	const argv = [process.execPath, PI_CLI, "-p", "--mode", "json", "--provider", "faux", "--model", "faux-1"];
	argv.push("--session-id", opts.sessionId, "-e", FAUX, "-e", EXTENSION, PROMPT);
	return runCommand(argv, world.project, env);
}

beforeAll(() => {
	world = setupWorld("pi-events-e2e");
});

afterAll(() => {
	cleanupTempDirs();
});

describe("pi + extension/pi-events.ts + compiled server", () => {
	let run: ReturnType<typeof runPi>;
	let entries: Entry[];

	beforeAll(() => {
		run = runPi({ bin: world.bin, sessionId: OWN_SESSION, ownSearch: true });
		if (run.exitCode !== 0) throw new Error(failureReport(run));
		entries = entriesOf(sessionFileOf(world, OWN_SESSION));
	}, 60_000);

	test("pi ran headless and its json stdout is clean protocol (the child's stdout is piped)", () => {
		const lines = jsonLines(run);
		expect(lines.length).toBeGreaterThan(5);
		expect(lines[0]).toMatchObject({ type: "session", id: OWN_SESSION, cwd: world.project });
		console.log(`pi e2e run: ${run.ms.toFixed(0)} ms`);
	});

	test("event_search found the seeded event and not the invoking session", () => {
		expectSearchFoundSeeded(entries, world, OWN_SESSION);
	});

	test("event_read returned the exact event", () => {
		expectReadExact(entries, world);
	});

	test("event_sessions listed the seeded session and not the invoking one", () => {
		expectSessionsListed(entries, world, OWN_SESSION);
	});

	test("naming the invoking session shows only what came before the invoking call", () => {
		expectOwnSearchBeforeCall(entries, OWN_SESSION);
	});

	test("the model got its answer and the server child was stopped with pi", () => {
		expectAnswered(entries);
		expect(processesRunning(world.bin)).toEqual([]);
	});

	test("pi's module cache (jiti) is in the world's temp dir, removed with it, not in /tmp/jiti", () => {
		expect(existsSync(join(world.layout.root, "tmp", "jiti"))).toBe(true);
	});
});

describe("without a server binary", () => {
	test("each tool call fails with an actionable error and pi carries on", () => {
		const run = runPi({ bin: join(world.layout.root, "no-such-pi-events"), sessionId: "e2e-missing-binary", ownSearch: false });
		expect(run.exitCode).toBe(0);
		expectMissingBinaryErrors(entriesOf(sessionFileOf(world, "e2e-missing-binary")));
	}, 60_000);
});
