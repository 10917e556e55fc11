/**
 * The schema variant for older SQLite (macOS 13.0–14.1 ship 3.39.4/3.39.5), tested on Linux,
 * where bun links its own SQLite 3.53: the CLI runs with a preload (sql-capture.ts) that makes
 * `sqlite_version()` answer 3.39.4, so pi-events picks its schema exactly as on macOS 13.0, and
 * that records every statement with its parameters and rows. The workload: index the fixtures
 * plus a session with a unique token, search (filters, sorts, grouping, filter-only, derived
 * events, as a caller with a cutoff), sessions, read, trace, status, rewrite one session,
 * delete the token's session and sync. Then
 *   - every recorded statement is replayed on Debian's SQLite 3.40.1 (python3's sqlite3 module,
 *     linked to the system libsqlite3) and must run and return the same rows;
 *   - nothing of the deleted session is left in index.db, -wal or -shm (the deletion guarantee);
 *   - the default (contentless) schema is refused by 3.40.1, so the replay can fail.
 * Without a python3 whose SQLite is older than 3.43 the replay is skipped locally and fails under CI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SCHEMA_DDL } from "../../src/store/db.ts";
import { ddlFor, fullTextVariantFor } from "../../src/store/sqlite-compat.ts";
import { type AgentLayout, cleanupTempDirs, isolatedEnv, MAIN, makeAgentLayout, PI_FIXTURES } from "../helpers/temp.ts";

const CAPTURE = join(import.meta.dir, "sql-capture.ts");
const REPLAY = join(import.meta.dir, "replay.py");
const MACOS_13_0 = "3.39.4";
const TOKEN = "qzcompat7k3m9xw2"; // appears nowhere else
const CWD = "/work/demo/compat";

afterAll(() => cleanupTempDirs());

/** python3 with a SQLite older than 3.43 (the system library on Debian 12: 3.40.1), or why not. */
function oldSqlitePython(): { python: string; version: string } | string {
	const python = Bun.which("python3");
	if (!python) return "python3 is not installed";
	const proc = Bun.spawnSync([python, "-c", "import sqlite3; print(sqlite3.sqlite_version)"], { stdout: "pipe", stderr: "pipe" });
	const version = proc.stdout.toString().trim();
	if (proc.exitCode !== 0 || !version) return `python3 has no sqlite3 module: ${proc.stderr.toString().trim()}`;
	if (fullTextVariantFor(version) !== "stored") return `python3's SQLite is ${version}, not older than 3.43`;
	return { python, version };
}

describe("choosing the variant", () => {
	test("by sqlite_version(): stored text before 3.43.0, contentless from 3.43.0", () => {
		expect(["3.39.4", "3.39.5", "3.40.1", "3.42.0", "3.43.0", "3.43.2", "3.53.4"].map(fullTextVariantFor)).toEqual([
			"stored",
			"stored",
			"stored",
			"stored",
			"contentless",
			"contentless",
			"contentless",
		]);
	});

	test("the stored variant drops only the FTS5 options older SQLite lacks; the default DDL is unchanged", () => {
		const stored = ddlFor(SCHEMA_DDL, "stored");
		expect(stored).not.toMatch(/contentless_delete|secure-delete|content\s*=\s*''/);
		expect(stored).toContain("CREATE VIRTUAL TABLE fts USING fts5(");
		expect(ddlFor(SCHEMA_DDL, "contentless")).toBe(SCHEMA_DDL);
		expect(SCHEMA_DDL).toContain("contentless_delete = 1");
	});
});

interface Run {
	exitCode: number;
	stdout: string;
	stderr: string;
}

describe(`the CLI on SQLite ${MACOS_13_0} (faked version, every statement replayed on the system SQLite)`, () => {
	let layout: AgentLayout;
	let sources: string;
	let planted: string;
	const logs: string[] = [];
	const runs: Record<string, Run> = {};
	let beforeDelete: string[] = [];

	function cli(name: string, args: string[], extraEnv: Record<string, string> = {}): Run {
		const log = join(layout.root, `sql-${logs.length}.jsonl`);
		const proc = Bun.spawnSync([process.execPath, "--preload", CAPTURE, MAIN, ...args], {
			cwd: layout.root,
			env: isolatedEnv(layout, { PI_EVENTS_SQL_LOG: log, PI_EVENTS_FAKE_SQLITE_VERSION: MACOS_13_0, ...extraEnv }),
			stdout: "pipe",
			stderr: "pipe",
		});
		if (existsSync(log)) logs.push(log);
		const run = { exitCode: proc.exitCode ?? -1, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
		runs[name] = run;
		return run;
	}

	/** Which of the token's forms are in the index files (FTS5 lowercases; leaf pages prefix-compress). */
	function tokenIn(): string[] {
		const found: string[] = [];
		for (const suffix of ["", "-wal", "-shm"]) {
			const file = `${layout.defaultIndex}${suffix}`;
			if (!existsSync(file)) continue;
			const bytes = readFileSync(file);
			for (const needle of [TOKEN, TOKEN.slice(4)]) if (bytes.includes(Buffer.from(needle))) found.push(`${needle} in index.db${suffix}`);
		}
		return found;
	}

	beforeAll(() => {
		layout = makeAgentLayout();
		sources = join(layout.root, "sources");
		mkdirSync(sources);
		for (const name of readdirSync(PI_FIXTURES).filter((n) => n.endsWith(".jsonl"))) copyFileSync(join(PI_FIXTURES, name), join(sources, name));
		planted = join(sources, "2026-11-20T10-00-00-000Z_0badc0de-0000-4000-8000-000000000001.jsonl");
		const ts = "2026-11-20T10:00:00.000Z";
		writeFileSync(
			planted,
			[
				{ type: "session", version: 3, id: "0badc0de-0000-4000-8000-000000000001", timestamp: ts, cwd: CWD },
				{ type: "message", id: "c0000001", parentId: null, timestamp: ts, message: { role: "user", content: `remember ${TOKEN} please`, timestamp: 1 } },
				{
					type: "message",
					id: "c0000002",
					parentId: "c0000001",
					timestamp: ts,
					message: { role: "assistant", content: [{ type: "text", text: `noted: ${TOKEN.toUpperCase()}` }], timestamp: 2 },
				},
			]
				.map((e) => JSON.stringify(e))
				.join("\n")
				.concat("\n"),
		);

		cli("index", ["index", "--sessions-dir", sources]);
		const first = cli("search", ["search", "ECONNREFUSED", "--all", "--json", "--no-sync"]);
		cli("search-newest", ["search", "frozen lockfile", "--all", "--json", "--sort", "newest", "--no-sync"]);
		cli("search-filters", ["search", "ECONNREFUSED", "--all", "--json", "--kind", "tool.result", "--since", "3650d", "--group", "session", "--no-sync"]);
		cli("search-token", ["search", TOKEN, "--all", "--json", "--no-sync"]);
		cli("search-filter-only", ["search", "--kind", "bash.command", "--all", "--json", "--no-sync"]);
		cli("search-derived", ["search", "ECONNREFUSED", "--include-derived", "--sort", "oldest", "--all", "--json", "--no-sync"]);
		cli("sessions", ["sessions", "--all", "--json", "--no-sync"]);
		const hit = first.exitCode === 0 ? (JSON.parse(first.stdout).hits[0] as { sessionId: string; entryId: string }) : null;
		if (hit) {
			cli("read", ["read", hit.sessionId, hit.entryId, "--order", "branch", "--before", "2", "--after", "2", "--json", "--all", "--no-sync"]);
			cli("trace", ["trace", hit.sessionId, hit.entryId, "--json", "--all", "--no-sync"]);
		}
		if (hit) {
			// As pi's bash tool calls it: the caller's own session and the invoking tool call (cutoff lookups).
			const own = readdirSync(sources).find((n) => n.includes(hit.sessionId))!;
			cli("search-caller", [
				"search",
				"ECONNREFUSED",
				"--json",
				"--all",
				"--current-session",
				hit.sessionId,
				"--current-file",
				join(sources, own),
				"--tool-call-id",
				"call_none",
				"--no-sync",
			]);
		}
		cli("status", ["status", "--json"]);
		beforeDelete = tokenIn();
		rmSync(planted);
		// And one session rewritten in place (a rebuild), in the same sync.
		const rewritten = join(sources, readdirSync(sources).sort()[0]!);
		writeFileSync(rewritten, `${readFileSync(rewritten, "utf8").split("\n").slice(0, 3).join("\n")}\n`);
		cli("reindex", ["index", "--sessions-dir", sources]);
		cli("search-deleted", ["search", TOKEN, "--all", "--json", "--no-sync"]);
	}, 120_000);

	test("the commands work on the stored-text schema", () => {
		for (const name of [
			"index",
			"search",
			"search-newest",
			"search-filters",
			"search-token",
			"search-filter-only",
			"search-derived",
			"sessions",
			"read",
			"trace",
			"status",
			"reindex",
		]) {
			expect({ name, exitCode: runs[name]?.exitCode, stderr: runs[name]?.stderr }).toEqual({ name, exitCode: 0, stderr: "" });
		}
		// The caller's own session is hidden, so this search may find nothing (exit 1), but not fail.
		expect([0, 1]).toContain(runs["search-caller"]!.exitCode);
		expect(runs["search-caller"]!.stderr).toBe("");
		expect(
			JSON.parse(runs["search-token"]!.stdout)
				.hits.map((h: { entryId: string }) => h.entryId)
				.sort(),
		).toEqual(["c0000001", "c0000002"]);
		// The schema really is the variant: no contentless_delete, recorded in meta.
		const statements = readFileSync(logs[0]!, "utf8");
		expect(statements).toContain("CREATE VIRTUAL TABLE fts USING fts5(");
		expect(statements).not.toContain("contentless_delete");
		const meta = statements
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l) as { sql: string; params: unknown[] })
			.find((r) => r.sql.includes("'fts_variant'"));
		expect(meta?.params).toEqual([JSON.stringify("stored")]);
	});

	test("a deleted session leaves nothing in index.db, -wal or -shm", () => {
		expect(beforeDelete.length).toBeGreaterThan(0); // the scan sees the token while it is indexed
		expect(runs["search-deleted"]!.exitCode).toBe(1);
		expect(tokenIn()).toEqual([]);
	});

	const python = oldSqlitePython();
	const skip = typeof python === "string" && process.env.CI !== "true";

	test.skipIf(skip)(
		"every statement runs on the system SQLite and returns the same rows",
		() => {
			if (typeof python === "string") throw new Error(python);
			const proc = Bun.spawnSync([python.python, REPLAY, join(layout.root, "replay.db"), ...logs], { stdout: "pipe", stderr: "pipe" });
			expect(proc.stderr.toString()).toBe("");
			const [head, ...results] = proc.stdout
				.toString()
				.trim()
				.split("\n")
				.map((l) => JSON.parse(l));
			expect(head.sqlite_version).toBe(python.version);
			const recorded = logs.flatMap((log) =>
				readFileSync(log, "utf8")
					.trim()
					.split("\n")
					.filter((l) => l !== "")
					.map((l) => JSON.parse(l) as { sql: string; rows: unknown[][] | null }),
			);
			expect(results).toHaveLength(recorded.length);
			const failures: string[] = [];
			const differences: string[] = [];
			const round = (rows: unknown[][]) => rows.map((r) => r.map((v) => (typeof v === "number" && !Number.isInteger(v) ? Number(v.toPrecision(9)) : v)));
			for (let i = 0; i < recorded.length; i++) {
				const { sql, rows } = recorded[i]!;
				const result = results[i]!;
				if (!result.ok) failures.push(`${result.error}: ${sql.trim().slice(0, 160)}`);
				// PRAGMA answers describe storage (pages, WAL frames), fts5_source_id() the build and
				// total_changes() the connection (the index version, gate/gate.ts): all differ by version or connection.
				else if (rows && !/^\s*PRAGMA|fts5_source_id|total_changes\(\)/i.test(sql) && JSON.stringify(round(rows)) !== JSON.stringify(round(result.rows))) {
					differences.push(`${sql.trim().slice(0, 160)}\n  bun ${JSON.stringify(rows).slice(0, 200)}\n  sys ${JSON.stringify(result.rows).slice(0, 200)}`);
				}
			}
			console.log(`replayed ${recorded.length} statements on SQLite ${python.version}`);
			expect(failures).toEqual([]);
			expect(differences).toEqual([]);
		},
		120_000,
	);

	test.skipIf(skip)("the default schema is refused by that SQLite (so the replay can fail)", () => {
		if (typeof python === "string") throw new Error(python);
		const script = "import sqlite3, sys\ntry:\n  sqlite3.connect(':memory:').executescript(sys.stdin.read())\nexcept Exception as e:\n  print(e)";
		const proc = Bun.spawnSync([python.python, "-c", script], { stdin: new TextEncoder().encode(SCHEMA_DDL), stdout: "pipe", stderr: "pipe" });
		expect(proc.stdout.toString()).toContain("contentless_delete");
	});

	test("a SQLite without FTS5 is a clear error at startup", () => {
		// The preload makes FTS5's probe function unknown, as on a SQLite built without FTS5.
		const run = cli("no-fts5", ["status"], { PI_EVENTS_FAKE_NO_FTS5: "1" });
		expect(run.exitCode).toBe(2);
		expect(run.stderr).toContain(`this SQLite (${MACOS_13_0}) has no FTS5`);
	});
});
