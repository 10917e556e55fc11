/**
 * The `index` and `status` commands as a user runs them: a real process, a fake HOME and pi
 * agent dir in a temp dir (never the real ~/.pi), JSON output checked field by field, exit codes
 * and stream discipline (data on stdout, messages on stderr), and where sources and the index
 * are found (pi's env var and settings.json, repeatable --sessions-dir, --index, PI_EVENTS_INDEX).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { syncIndex } from "../../src/sync/sync.ts";
import { openIndex } from "../../src/store/db.ts";
import {
	type AgentLayout,
	cleanupTempDirs,
	copyIntoSessions,
	dumpIndex,
	isolatedEnv,
	MAIN,
	legacyFixture,
	makeAgentLayout,
	piFixture,
	runCli,
	snapshotTree,
} from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

const basic = piFixture("basic");
const branched = piFixture("branched");
const retry = piFixture("retry");
const multiRoot = piFixture("multi-root");

/** A layout with two sessions, a malformed line and a non-session file in pi's default dir. */
function populated(): AgentLayout {
	const layout = makeAgentLayout();
	copyIntoSessions(layout.sessionsDir, basic.path, { cwd: basic.cwd });
	copyIntoSessions(layout.sessionsDir, branched.path, { cwd: branched.cwd });
	copyIntoSessions(layout.sessionsDir, legacyFixture("malformed-middle"), { cwd: "/work/demo/legacy" });
	copyIntoSessions(layout.sessionsDir, legacyFixture("no-header"), { cwd: "/work/demo/legacy" });
	return layout;
}

describe("index --json and status --json", () => {
	const layout = populated();
	const agentBefore = snapshotTree(layout.agentDir);
	const index1 = runCli(layout, ["index", "--json"]);
	const status1 = runCli(layout, ["status", "--json"]);
	const index2 = runCli(layout, ["index", "--json"]);
	const agentAfter = snapshotTree(layout.agentDir);
	const expectedEvents = basic.notes.entryCount + branched.notes.entryCount + 4;

	test("index exits 0 and reports what it did", () => {
		expect(index1.exitCode).toBe(0);
		const r = index1.json();
		expect(r.index).toBe(layout.defaultIndex);
		expect(r.sessions).toEqual({ new: 3, appended: 0, rebuilt: 0, removed: 0, unchanged: 0, keptLastGood: 0, rejected: 1, pending: 0 });
		expect(r.eventsAdded).toBe(expectedEvents);
		expect(r.fragmentsAdded).toBeGreaterThan(expectedEvents / 2);
		expect(r.bytesRead).toBeGreaterThan(0);
		expect(r.complete).toBe(true);
		expect(typeof r.durationMs).toBe("number");
		expect(r.problems).toEqual([]);
	});

	test("index reports diagnostics with file, byte offset and line, in JSON and on stderr", () => {
		const r = index1.json();
		expect(r.diagnosticCount).toBe(2);
		const kinds = r.diagnostics.map((d: any) => d.kind).sort();
		expect(kinds).toEqual(["malformed-json", "missing-header"]);
		const malformed = r.diagnostics.find((d: any) => d.kind === "malformed-json");
		expect(malformed.file).toBe(join(layout.sessionsDir, "--work-demo-legacy--", "malformed-middle.jsonl"));
		expect(malformed.line).toBe(4);
		expect(malformed.offset).toBeGreaterThan(0);
		expect(index1.stderr).toContain(`malformed-middle.jsonl:4 (byte ${malformed.offset})`);
		// stdout is exactly one JSON document.
		expect(() => JSON.parse(index1.stdout)).not.toThrow();
	});

	test("status reports the index location, counts, last sync and fresh sources", () => {
		expect(status1.exitCode).toBe(0);
		expect(status1.stderr).toBe("");
		const s = status1.json();
		expect(s).toMatchObject({
			index: layout.defaultIndex,
			existed: true,
			configFile: null,
			files: 4,
			sessions: 3,
			events: expectedEvents,
			rejectedFiles: 1,
			failedFiles: 0,
			diagnostics: 2,
		});
		expect(s.fragments).toBe(index1.json().fragmentsAdded);
		expect(typeof s.schema).toBe("number");
		expect(s.sizeBytes).toBeGreaterThan(0);
		expect(s.lastSync.complete).toBe(true);
		expect(Math.abs(s.lastSync.at - Date.now())).toBeLessThan(120_000);
		expect(s.sources).toEqual([{ dir: layout.sessionsDir, origin: "pi", readable: true, files: 4, changed: 0, missing: 0, kept: 0 }]);
		expect(s.indexedDirs).toEqual([{ dir: layout.sessionsDir, files: 4 }]);
	});

	test("a second index is a no-op that reads nothing", () => {
		expect(index2.exitCode).toBe(0);
		const r = index2.json();
		expect(r.sessions).toMatchObject({ new: 0, unchanged: 4, appended: 0, rebuilt: 0, removed: 0 });
		expect(r.bytesRead).toBe(0);
		expect(r.eventsAdded).toBe(0);
		expect(r.diagnosticCount).toBe(0);
	});

	test("pi's agent dir is byte-identical and nothing is written to HOME", () => {
		expect(agentAfter).toEqual(agentBefore);
		expect(readdirSync(layout.home)).toEqual([]);
		expect(existsSync(layout.defaultIndex)).toBe(true);
	});

	test("status shows changed and missing sources without indexing them", () => {
		const l = populated();
		expect(runCli(l, ["index", "--json"]).exitCode).toBe(0);
		copyIntoSessions(l.sessionsDir, retry.path, { cwd: retry.cwd });
		const s = runCli(l, ["status", "--json"]).json();
		expect(s.sources[0]).toMatchObject({ files: 5, changed: 1, missing: 0 });
		expect(s.sessions).toBe(3);
		const text = runCli(l, ["status"]);
		expect(text.exitCode).toBe(0);
		expect(text.stdout).toContain(l.sessionsDir);
		expect(text.stdout).toContain("1 changed");
	});

	test("status before any index: nothing indexed, never synced", () => {
		const l = populated();
		const s = runCli(l, ["status", "--json"]);
		expect(s.exitCode).toBe(0);
		expect(s.json()).toMatchObject({ existed: false, files: 0, sessions: 0, events: 0, lastSync: null });
		expect(s.json().sources[0]).toMatchObject({ readable: true, files: 4, changed: 4 });
	});
});

describe("concurrent writers", () => {
	test("four index processes started together all succeed and leave the same index as one run", async () => {
		const layout = populated();
		copyIntoSessions(layout.sessionsDir, retry.path, { cwd: retry.cwd });
		copyIntoSessions(layout.sessionsDir, multiRoot.path, { cwd: multiRoot.cwd });
		const procs = [0, 1, 2, 3].map(() =>
			Bun.spawn([process.execPath, MAIN, "index", "--json"], { cwd: layout.root, env: isolatedEnv(layout), stdout: "pipe", stderr: "pipe" }),
		);
		const codes = await Promise.all(procs.map((p) => p.exited));
		const outs = await Promise.all(procs.map((p) => new Response(p.stdout).text()));
		expect(codes).toEqual([0, 0, 0, 0]);
		const reports = outs.map((o) => JSON.parse(o));
		// Every session was indexed exactly once across the four runs.
		expect(reports.reduce((n, r) => n + r.sessions.new, 0)).toBe(5);
		const db = openIndex(layout.defaultIndex);
		const fresh = openIndex(":memory:");
		try {
			syncIndex(fresh, { sourceDirs: [{ path: layout.sessionsDir, origin: "pi" }] });
			expect(dumpIndex(db)).toEqual(dumpIndex(fresh));
		} finally {
			db.close();
			fresh.close();
		}
	});
});

describe("version, help and usage errors", () => {
	const layout = makeAgentLayout();

	test("--version prints the package version, then the target and the commit", () => {
		const r = runCli(layout, ["--version"]);
		expect(r.exitCode).toBe(0);
		expect(r.stdout).toBe(`${pkg.version} (${process.platform}-${process.arch} from source, commit unknown)\n`);
		expect(r.stderr).toBe("");
	});

	test("--help lists the commands; index --help lists its options", () => {
		const r = runCli(layout, ["--help"]);
		expect(r.exitCode).toBe(0);
		expect(r.stdout).toContain("index");
		expect(r.stdout).toContain("status");
		expect(r.stderr).toBe("");
		const i = runCli(layout, ["index", "--help"]);
		expect(i.exitCode).toBe(0);
		for (const flag of ["--index", "--sessions-dir", "--json"]) expect(i.stdout).toContain(flag);
		expect(existsSync(layout.defaultIndex)).toBe(false);
	});

	test.each([
		[["index", "--bogus"], "--bogus"],
		[["status", "--nope=1"], "--nope"],
		[["index", "--json", "-z"], "-z"],
		[["index", "--sessions-dir"], "--sessions-dir"],
		[["frobnicate"], "frobnicate"],
		// Names every object has: still unknown commands.
		[["constructor"], "constructor"],
		[["toString"], "toString"],
		[["--bogus"], "--bogus"],
	])("%j exits 2 with a message on stderr and nothing on stdout", (args, mention) => {
		const r = runCli(layout, args);
		expect(r.exitCode).toBe(2);
		expect(r.stdout).toBe("");
		expect(r.stderr).toContain(mention);
		expect(r.stderr.startsWith("pi-events:")).toBe(true);
		expect(existsSync(layout.defaultIndex)).toBe(false);
	});

	test("an index location that cannot be created exits 2 with a readable message", () => {
		const blocker = join(layout.root, "a-file");
		writeFileSync(blocker, "x");
		const r = runCli(layout, ["index", "--json", "--index", join(blocker, "index.db")]);
		expect(r.exitCode).toBe(2);
		expect(r.stdout).toBe("");
		expect(r.stderr).toContain("pi-events:");
		expect(r.stderr).not.toContain("    at ");
	});
});

describe("source discovery", () => {
	test("PI_CODING_AGENT_SESSION_DIR is discovered (pi writes flat files there)", () => {
		const layout = makeAgentLayout();
		const custom = join(layout.root, "custom-sessions");
		copyIntoSessions(custom, retry.path, { flat: true });
		const env = { PI_CODING_AGENT_SESSION_DIR: custom };
		const r = runCli(layout, ["index", "--json"], { env });
		expect(r.exitCode).toBe(0);
		expect(r.json().sessions.new).toBe(1);
		const s = runCli(layout, ["status", "--json"], { env }).json();
		expect(s.sources).toEqual([
			{ dir: layout.sessionsDir, origin: "pi", readable: true, files: 0, changed: 0, missing: 0, kept: 0 },
			{ dir: custom, origin: "pi-session-dir", readable: true, files: 1, changed: 0, missing: 0, kept: 0 },
		]);
	});

	test("sessionDir in <agentDir>/settings.json is discovered (with ~ expanded against HOME)", () => {
		const layout = makeAgentLayout();
		const custom = join(layout.home, "pi-sessions");
		copyIntoSessions(custom, multiRoot.path, { flat: true });
		writeFileSync(join(layout.agentDir, "settings.json"), JSON.stringify({ sessionDir: "~/pi-sessions", theme: "dark" }));
		const r = runCli(layout, ["index", "--json"]);
		expect(r.exitCode).toBe(0);
		expect(r.json().sessions.new).toBe(1);
		const s = runCli(layout, ["status", "--json"]).json();
		expect(s.sources.map((x: any) => [x.dir, x.origin])).toEqual([
			[layout.sessionsDir, "pi"],
			[custom, "pi-session-dir"],
		]);
		expect(s.sessions).toBe(1);
	});

	test("PI_CODING_AGENT_SESSION_DIR wins over settings.json sessionDir, like pi", () => {
		const layout = makeAgentLayout();
		const fromEnv = join(layout.root, "env-sessions");
		const fromSettings = join(layout.root, "settings-sessions");
		copyIntoSessions(fromEnv, retry.path, { flat: true });
		copyIntoSessions(fromSettings, multiRoot.path, { flat: true });
		writeFileSync(join(layout.agentDir, "settings.json"), JSON.stringify({ sessionDir: fromSettings }));
		const s = runCli(layout, ["status", "--json"], { env: { PI_CODING_AGENT_SESSION_DIR: fromEnv } }).json();
		expect(s.sources.map((x: any) => x.dir)).toEqual([layout.sessionsDir, fromEnv]);
	});

	test("a broken settings.json is ignored (pi's default dir is still indexed)", () => {
		const layout = makeAgentLayout();
		copyIntoSessions(layout.sessionsDir, retry.path, { cwd: retry.cwd });
		writeFileSync(join(layout.agentDir, "settings.json"), "{ not json");
		const r = runCli(layout, ["index", "--json"]);
		expect(r.exitCode).toBe(0);
		expect(r.json().sessions.new).toBe(1);
	});

	test("--sessions-dir is repeatable (both --flag value and --flag=value) and adds to pi's own", () => {
		const layout = makeAgentLayout();
		copyIntoSessions(layout.sessionsDir, basic.path, { cwd: basic.cwd });
		const a = join(layout.root, "archive-a");
		const b = join(layout.root, "archive-b");
		const c = join(layout.root, "archive-c");
		copyIntoSessions(a, retry.path, { flat: true });
		copyIntoSessions(b, multiRoot.path, { cwd: multiRoot.cwd });
		copyIntoSessions(c, branched.path, { flat: true });
		const args = ["--sessions-dir", a, "--sessions-dir", b, `--sessions-dir=${c}`];
		const r = runCli(layout, ["index", "--json", ...args]);
		expect(r.exitCode).toBe(0);
		expect(r.json().sessions.new).toBe(4);
		const s = runCli(layout, ["status", "--json", ...args]).json();
		expect(s.sources.map((x: any) => [x.dir, x.origin, x.files])).toEqual([
			[layout.sessionsDir, "pi", 1],
			[a, "flag", 1],
			[b, "flag", 1],
			[c, "flag", 1],
		]);
		expect(s.sessions).toBe(4);
	});

	test("a --sessions-dir that does not exist is reported as unreadable, not an error", () => {
		const layout = makeAgentLayout();
		const missing = join(layout.root, "nowhere");
		const r = runCli(layout, ["index", "--json", "--sessions-dir", missing]);
		expect(r.exitCode).toBe(0);
		const s = runCli(layout, ["status", "--json", "--sessions-dir", missing]).json();
		expect(s.sources.find((x: any) => x.dir === missing)).toMatchObject({ readable: false, error: "ENOENT", files: 0 });
	});
});

describe("index location", () => {
	test("--index chooses the index file; the default location is not created", () => {
		const layout = populated();
		const path = join(layout.root, "custom", "my-index.db");
		const r = runCli(layout, ["index", "--json", "--index", path]);
		expect(r.exitCode).toBe(0);
		expect(r.json().index).toBe(path);
		expect(existsSync(path)).toBe(true);
		expect(existsSync(layout.defaultIndex)).toBe(false);
		const s = runCli(layout, ["status", "--json", `--index=${path}`]).json();
		expect(s).toMatchObject({ index: path, existed: true, sessions: 3 });
	});

	test("PI_EVENTS_INDEX chooses the index file", () => {
		const layout = populated();
		const path = join(layout.root, "env-index", "index.db");
		const env = { PI_EVENTS_INDEX: path };
		const r = runCli(layout, ["index", "--json"], { env });
		expect(r.exitCode).toBe(0);
		expect(r.json().index).toBe(path);
		expect(existsSync(layout.defaultIndex)).toBe(false);
		expect(runCli(layout, ["status", "--json"], { env }).json()).toMatchObject({ index: path, sessions: 3 });
		// Without the variable, status looks at the (empty) default location.
		expect(runCli(layout, ["status", "--json"]).json()).toMatchObject({ index: layout.defaultIndex, existed: false, sessions: 0 });
	});

	test("--index wins over PI_EVENTS_INDEX; a relative --index resolves against the cwd", () => {
		const layout = populated();
		const envPath = join(layout.root, "env.db");
		const cwd = join(layout.root, "work");
		mkdirSync(cwd);
		const r = runCli(layout, ["index", "--json", "--index", "rel/flag.db"], { env: { PI_EVENTS_INDEX: envPath }, cwd });
		expect(r.exitCode).toBe(0);
		expect(r.json().index).toBe(join(cwd, "rel", "flag.db"));
		expect(existsSync(join(cwd, "rel", "flag.db"))).toBe(true);
		expect(existsSync(envPath)).toBe(false);
	});
});
