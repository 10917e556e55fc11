/**
 * End to end on the old line: real pi 0.73.1 (@mariozechner/pi-coding-agent, the last release
 * under that name, its CLI run under Node) in print/json mode, offline, with pi's in-process faux
 * provider scripted by faux-model-073.ts, loading extension/pi-events.ts with -e and the compiled
 * pi-events binary as $PI_EVENTS_BIN. Same world and assertions as the 1.x test
 * (pi-extension.test.ts, shared parts in shared.ts).
 *
 * 0.73 differences: no --session-id, so the new session's id is read from pi's first json line
 * (and the faux model names its own session from the stream options); the faux helpers come
 * from "@mariozechner/pi-ai" (0.73's loader aliases only that scope, and typebox).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir, ROOT } from "../helpers/temp.ts";
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
	expectedEntry,
	failureReport,
	jsonLines,
	PROMPT,
	piEnv,
	processesRunning,
	runCommand,
	scriptFor,
	seeded,
	sessionFileOf,
	setupWorld,
	toolResult,
} from "./shared.ts";

const PI_CLI = join(ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const FAUX = join(import.meta.dir, "faux-model-073.ts");
/** pi 0.73 runs under Node (>= 20.6): the one on PATH, else the system one. */
const NODE = Bun.which("node") ?? "/usr/bin/node";

/** The real Node's version, not Bun's `node` shim (which `bun run` puts on PATH when Node is absent). */
function nodeVersion(): string {
	const proc = Bun.spawnSync([NODE, "-p", "process.versions.bun ? 'bun' : process.version"], { stdout: "pipe", stderr: "pipe" });
	return proc.exitCode === 0 ? proc.stdout.toString().trim() : "";
}

let world: E2eWorld;

function runPi(opts: { bin: string; ownSearch: boolean; extensions?: string[] }) {
	const env = piEnv(world, opts.bin, scriptFor({ ownSearch: opts.ownSearch }));
	const extensions = (opts.extensions ?? [EXTENSION]).flatMap((e) => ["-e", e]);
	const argv = [NODE, PI_CLI, "-p", "--mode", "json", "--provider", "faux", "--model", "faux-1", "-e", FAUX, ...extensions, PROMPT];
	const run = runCommand(argv, world.project, env);
	if (run.exitCode !== 0) throw new Error(failureReport(run));
	const lines = jsonLines(run);
	const header = lines[0] as { type: string; id: string; cwd: string };
	return { run, lines, header, entries: entriesOf(sessionFileOf(world, header.id)) };
}

beforeAll(() => {
	const version = existsSync(NODE) ? nodeVersion() : "";
	if (!version.startsWith("v")) throw new Error(`pi 0.73 runs under Node: ${NODE} is not Node (${version || "missing"})`);
	world = setupWorld("pi-events-e2e-073");
});

afterAll(() => {
	cleanupTempDirs();
});

describe("pi 0.73.1 + extension/pi-events.ts + compiled server", () => {
	let result: ReturnType<typeof runPi>;
	let entries: Entry[];
	let ownSessionId: string;

	beforeAll(() => {
		result = runPi({ bin: world.bin, ownSearch: true });
		entries = result.entries;
		ownSessionId = result.header.id;
	}, 60_000);

	test("pi ran headless under node and its json stdout is clean protocol", () => {
		expect(result.lines.length).toBeGreaterThan(5);
		expect(result.header).toMatchObject({ type: "session", cwd: world.project });
		expect(ownSessionId).not.toBe(seeded.sessionId);
		console.log(`pi 0.73.1 e2e run: ${result.run.ms.toFixed(0)} ms`);
	});

	test("event_search found the seeded event and not the invoking session", () => {
		expectSearchFoundSeeded(entries, world, ownSessionId);
	});

	test("event_read returned the exact event", () => {
		expectReadExact(entries, world);
	});

	test("event_sessions listed the seeded session and not the invoking one", () => {
		expectSessionsListed(entries, world, ownSessionId);
	});

	test("naming the invoking session shows only what came before the invoking call", () => {
		expectOwnSearchBeforeCall(entries, ownSessionId);
	});

	test("the model got its answer and the server child was stopped with pi", () => {
		expectAnswered(entries);
		expect(processesRunning(world.bin)).toEqual([]);
	});

	test("pi's compiled extensions (jiti) are in the world's temp dir, removed with it, not in /tmp/jiti", () => {
		const compiled = readdirSync(join(world.layout.root, "tmp", "jiti"));
		expect(compiled.some((name) => name.startsWith("extension-pi-events."))).toBe(true);
	});
});

describe("pi 0.73.1 without a server binary", () => {
	test("each tool call fails with an actionable error and pi carries on", () => {
		const { entries } = runPi({ bin: join(world.layout.root, "no-such-pi-events"), ownSearch: false });
		expectMissingBinaryErrors(entries);
	}, 60_000);
});

describe("pi 0.73.1 with the extension loaded twice", () => {
	test("the second copy stays inactive and says so; pi runs and the tools work", () => {
		const copy = join(makeTempDir("pi-events-copy-"), "pi-events.ts");
		copyFileSync(EXTENSION, copy);
		const { run, entries } = runPi({ bin: world.bin, ownSearch: false, extensions: [EXTENSION, copy] });
		expect(run.stderr).not.toContain("conflicts with");
		expect(run.stderr).toContain(`the extension is installed twice; the copy at ${copy} stays inactive and the one at ${EXTENSION}`);
		// The active copy answers (the earlier runs' own sessions may be hits too).
		const result = toolResult(entries, "call_e2e_search");
		expect(result.message.isError).toBe(false);
		expect(result.message.details.hits.map((h: { entryId: string }) => h.entryId)).toContain(expectedEntry);
	}, 60_000);
});
