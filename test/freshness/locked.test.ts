/**
 * A query while another process writes the index (a cold `pi-events index`, a large backlog, a
 * second pi's server): the query's sync waits for the write lock only briefly
 * (QUERY_LOCK_WAIT_MS), then answers from what the index holds and says so: not synced, another
 * process is updating it, and how many session files are not in the answer yet. Before, it waited
 * on SQLite's 10 s per attempt and then reported nothing pending. Shown with a real lock held by
 * another process, through the command line and through `serve --stdio`; once the lock is gone,
 * the next query syncs as usual.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUSY_PROBLEM } from "../../src/model.ts";
import { type AgentLayout, cleanupTempDirs, encodeCwd, isolatedEnv, MAIN, makeAgentLayout, runCli } from "../helpers/temp.ts";
import { userEntry, writeSession } from "../query/helpers.ts";
import { RawServer } from "../server/harness.ts";

afterAll(cleanupTempDirs);

const CWD = "/work/locked/app";
let layout: AgentLayout;
let dir: string;

function sessionFile(id: string, word: string): string {
	const entry = userEntry(`${id}-1`, null, "2026-10-01T10:00:05.000Z", `the ${word} happened`);
	return writeSession(dir, { id, cwd: CWD, entries: [entry] }, `2026-10-01T10-00-00-000Z_${id}`);
}

/**
 * Another process holding the index's write lock (BEGIN IMMEDIATE) until released or 60 s pass;
 * resolves once it holds it.
 */
async function holdWriteLock(): Promise<{ release: () => Promise<void> }> {
	const ready = join(layout.root, `held-${Date.now()}`);
	const release = `${ready}.release`;
	const script = `
		const { Database } = require("bun:sqlite");
		const { existsSync, writeFileSync } = require("node:fs");
		const db = new Database(${JSON.stringify(layout.defaultIndex)});
		db.run("BEGIN IMMEDIATE");
		writeFileSync(${JSON.stringify(ready)}, "");
		const until = Date.now() + 60000;
		while (!existsSync(${JSON.stringify(release)}) && Date.now() < until) Bun.sleepSync(20);
		db.run("ROLLBACK");
		db.close();
	`;
	const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "ignore", stderr: "pipe" });
	for (let i = 0; i < 500 && !existsSync(ready); i++) await Bun.sleep(20);
	if (!existsSync(ready)) throw new Error(`the lock holder did not start: ${await new Response(proc.stderr as ReadableStream).text()}`);
	holders.push(proc);
	return {
		release: async () => {
			writeFileSync(release, "");
			await proc.exited;
		},
	};
}
const holders: ReturnType<typeof Bun.spawn>[] = [];

afterEach(async () => {
	for (const h of holders.splice(0)) {
		h.kill();
		await h.exited;
	}
});

/** Each test its own layout: an index holding one session ("oldquokka"). */
beforeEach(() => {
	layout = makeAgentLayout();
	dir = join(layout.sessionsDir, encodeCwd(CWD));
	mkdirSync(dir, { recursive: true });
	sessionFile("lock-old", "oldquokka");
	const built = runCli(layout, ["index"], { env: { PI_EVENTS_SERVER: "off" } });
	if (built.exitCode !== 0) throw new Error(built.stderr);
});

const search = (word: string) => runCli(layout, ["search", "--all", "--json", word], { env: { PI_EVENTS_SERVER: "off" } });

describe("a query while another process holds the write lock", () => {
	test("the command line answers from the index, not synced, naming the other writer and what is pending; then syncs once it is free", async () => {
		sessionFile("lock-new-cli", "newquokka");
		const lock = await holdWriteLock();
		const during = search("oldquokka");
		expect(during.exitCode).toBe(0);
		const answer = during.json();
		expect(answer.hits.map((h: { entryId: string }) => h.entryId)).toEqual(["lock-old-1"]);
		expect(answer.freshness).toMatchObject({ synced: false, pendingFiles: 1 });
		expect(answer.freshness.problems).toEqual([BUSY_PROBLEM]);
		// The text output says it on stderr, beside the hits.
		const text = runCli(layout, ["search", "--all", "oldquokka"], { env: { PI_EVENTS_SERVER: "off" } });
		expect(text.exitCode).toBe(0);
		// Said first on its line; which history was searched comes last.
		expect(text.stderr).toContain(`pi-events: ${BUSY_PROBLEM}; 1 changed session file not indexed yet; searched sessions of every workspace (--all)\n`);
		await lock.release();
		// Free again: the next query syncs and finds the new session.
		const after = search("newquokka").json();
		expect(after.freshness).toMatchObject({ synced: true, pendingFiles: 0, problems: [] });
		expect(after.hits.map((h: { entryId: string }) => h.entryId)).toEqual(["lock-new-cli-1"]);
	});

	test("event_search through serve --stdio says the same, and the server goes on answering", async () => {
		sessionFile("lock-new-mcp", "mcpquokka");
		const server = new RawServer("", isolatedEnv(layout, { NO_COLOR: "1", PI_EVENTS_SERVER: "off" }), [], {
			command: [process.execPath, MAIN, "serve", "--stdio"],
			cwd: layout.root,
		});
		try {
			await server.initialize();
			const call = async (query: string) =>
				(await server.request("tools/call", { name: "event_search", arguments: { query }, _meta: { "pi-events/caller": { cwd: CWD } } }, undefined, 30_000))
					.result.structuredContent;
			const lock = await holdWriteLock();
			const during = await call("oldquokka");
			expect(during.hits.map((h: { entryId: string }) => h.entryId)).toEqual(["lock-old-1"]);
			expect(during.freshness).toMatchObject({ synced: false, pendingFiles: 1, problems: [BUSY_PROBLEM] });
			await lock.release();
			// The server syncs before a call at most every 1.5 s: wait that out, then the new session is there.
			await Bun.sleep(1600);
			const after = await call("mcpquokka");
			expect(after.freshness).toMatchObject({ synced: true, pendingFiles: 0 });
			expect(after.hits.map((h: { entryId: string }) => h.entryId)).toEqual(["lock-new-mcp-1"]);
		} finally {
			server.kill();
		}
	});
});
