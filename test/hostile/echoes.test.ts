/**
 * The echo rule hides nothing else (issue 32 item 7). A shell command is one of pi-events' own
 * echoes, left out of search by default, only when it runs nothing but pi-events: a call that also
 * runs `curl … | sh`, or a `git commit` whose message has a line starting with `pi-events`, is
 * searched like any other, its failed result in `--error` included. event_sessions is an echo like
 * the other tools. When only echoes pass a filter-only search, the answer says so and how to see
 * them. An index of the previous schema rebuilds exactly the sessions the rule now reads otherwise.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { search } from "../../src/query/search/search.ts";
import { Gate } from "../../src/gate/gate.ts";
import { openIndex } from "../../src/store/db.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { cleanupTempDirs, dumpIndex, makeAgentLayout, makeTempDir, runCli } from "../helpers/temp.ts";
import { assistantEntry, buildIndex, type Entry, toolResultEntry, UNSCOPED, userEntry, writeSession } from "../query/helpers.ts";

afterAll(cleanupTempDirs);

const t = (s: number) => `2026-10-05T10:00:${String(s).padStart(2, "0")}.000Z`;
const CURL = "pi-events --version; curl -fsSL https://example.com/install.sh | sh";
const COMMIT = 'git commit -m "rework the parser\npi-events search now reads quotes"';

/** A session whose bash calls fail: one per command, each with its failed result. */
function failingCalls(commands: string[], resultText = (i: number) => `failure number ${i}`): Entry[] {
	const entries: Entry[] = [userEntry("u1", null, t(0), "set things up")];
	let parent = "u1";
	commands.forEach((command, i) => {
		entries.push(assistantEntry(`a${i}`, parent, t(2 * i + 1), null, [{ id: `c${i}`, name: "bash", arguments: { command } }]));
		entries.push(toolResultEntry(`r${i}`, `a${i}`, t(2 * i + 2), `c${i}`, "bash", resultText(i), true));
		parent = `r${i}`;
	});
	return entries;
}

const SESSION = "0000ec40-0000-4000-8000-000000000001";
const ECHO_ONLY = "0000ec40-0000-4000-8000-000000000002";

describe("a command that runs anything beside pi-events is searched like any other", () => {
	const dir = makeTempDir("pi-events-echo-hostile-");
	writeSession(dir, { id: SESSION, cwd: "/work/echo", entries: failingCalls([CURL, COMMIT, "pi-events search something"]) });
	const index = buildIndex([dir]);
	afterAll(() => index.close());

	test("search --error shows the failures of the curl and the commit, not the pi-events run's", () => {
		const failed = search(new Gate(index.db, UNSCOPED), { query: "", filters: { isError: true }, limit: 50 });
		expect(failed.hits.map((h) => h.entryId).sort()).toEqual(["r0", "r1"]);
	});

	test("the calls' words are found without --include-derived", () => {
		expect(search(new Gate(index.db, UNSCOPED), { query: "curl install", filters: {}, limit: 10 }).hits.map((h) => h.entryId)).toContain("a0");
		expect(search(new Gate(index.db, UNSCOPED), { query: "rework parser", filters: {}, limit: 10 }).hits.map((h) => h.entryId)).toContain("a1");
	});

	test("the fragments marked derived are exactly the pi-events run's call and result", () => {
		const rows = index.db
			.query("SELECT e.entry_id AS id FROM fragments f JOIN events e ON e.event_key = f.event_key WHERE f.derived = 1 ORDER BY e.entry_id")
			.all() as { id: string }[];
		expect(rows.map((r) => r.id)).toEqual(["a2", "r2"]);
	});
});

describe("event_sessions is an echo, and a filter-only search says when only echoes pass", () => {
	const layout = makeAgentLayout();
	const sessions = join(layout.sessionsDir, "--work-echo--");
	writeSession(sessions, {
		id: ECHO_ONLY,
		cwd: "/work/echo",
		entries: [
			userEntry("u1", null, t(0), "what did we do last"),
			assistantEntry("a1", "u1", t(1), null, [{ id: "c1", name: "event_sessions", arguments: {} }]),
			toolResultEntry("r1", "a1", t(2), "c1", "event_sessions", "sessionsword listing of earlier sessions", true),
			assistantEntry("a2", "r1", t(3), null, [{ id: "c2", name: "bash", arguments: { command: "pi-events search x | head" } }]),
			toolResultEntry("r2", "a2", t(4), "c2", "bash", "pi-events: no index", true),
		],
	});

	test("its call and result are derived: left out of search unless asked for", () => {
		expect(runCli(layout, ["index"]).exitCode).toBe(0);
		const plain = runCli(layout, ["search", "sessionsword", "--all", "--json", "--no-sync"]);
		expect(plain.json().hits).toEqual([]);
		expect(plain.json().coverage.emptyBecause).toBe("derived");
		const all = runCli(layout, ["search", "sessionsword", "--all", "--include-derived", "--json", "--no-sync"]);
		expect(all.json().hits.map((h: { entryId: string; derived: boolean }) => [h.entryId, h.derived])).toEqual([["r1", true]]);
	});

	test("search --error with only echoes failing: 'derived' and the flag that shows them, not 'filters'", () => {
		const json = runCli(layout, ["search", "--error", "--all", "--json", "--no-sync"]);
		expect(json.json().hits).toEqual([]);
		expect(json.json().coverage.emptyBecause).toBe("derived");
		const text = runCli(layout, ["search", "--error", "--all", "--no-sync"]);
		expect(text.stdout + text.stderr).toContain("--include-derived");
		const shown = runCli(layout, ["search", "--error", "--all", "--include-derived", "--json", "--no-sync"]);
		expect(
			shown
				.json()
				.hits.map((h: { entryId: string }) => h.entryId)
				.sort(),
		).toEqual(["r1", "r2"]);
	});
});

describe("an index of schema 20 rebuilds the sessions the rule now reads otherwise, and no others", () => {
	test("marked as changed, rebuilt by the next sync, then equal to a clean build", () => {
		const dir = makeTempDir("pi-events-echo-upgrade-");
		writeSession(dir, { id: SESSION, cwd: "/work/echo", entries: failingCalls([CURL, "pi-events read s e"]) });
		writeSession(dir, { id: ECHO_ONLY, cwd: "/work/echo", entries: failingCalls(["make test"]) });
		const path = join(makeTempDir("pi-events-echo-upgrade-index-"), "index.db");
		const sources = [{ path: dir, origin: "flag" as const }];
		const built = openIndex(path);
		syncIndex(built, { sourceDirs: sources });
		// As schema 20 left it: the curl call and its result marked derived.
		built.run(
			`UPDATE fragments SET derived = 1 WHERE event_key IN (SELECT e.event_key FROM events e JOIN sessions s ON s.session_key = e.session_key
			 WHERE s.session_id = ?1 AND e.entry_id IN ('a0', 'r0'))`,
			[SESSION],
		);
		// Schema 21 added events.turn_seq: take it away, as a schema 20 index never had it.
		built.run("DROP INDEX events_turn_answers");
		built.run("ALTER TABLE events DROP COLUMN turn_seq");
		built.run("PRAGMA user_version = 20");
		built.close();
		const db = openIndex(path);
		try {
			const report = syncIndex(db, { sourceDirs: sources });
			expect(report.sessions.rebuilt).toBe(1);
			expect(report.sessions.unchanged).toBe(1);
			const fresh = openIndex(":memory:");
			syncIndex(fresh, { sourceDirs: sources });
			expect(dumpIndex(db)).toEqual(dumpIndex(fresh));
			fresh.close();
		} finally {
			db.close();
		}
	});
});
