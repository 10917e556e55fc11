/**
 * A backlog is indexed between calls (server/stdio.ts, planBackfill): when the sync before a call
 * leaves session files pending (its budget ran out: a first start over a long history), the
 * server indexes the rest in slices of its own, with no further call or turn, and stops when the
 * backlog is gone or the server is closed. The server runs in this process over real session files
 * and a real index, with budgets small enough that one sync cannot take the whole backlog.
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { resolveSettings } from "../../src/config.ts";
import { StdioServer } from "../../src/server/stdio.ts";
import { openIndex } from "../../src/store/db.ts";
import { cleanupTempDirs, encodeCwd, isolatedEnv, makeAgentLayout } from "../helpers/temp.ts";
import { userEntry, writeSession } from "../query/helpers.ts";

afterAll(cleanupTempDirs);

const CWD = "/work/backfill/app";
const FILES = 300;

/** A layout holding FILES one-message sessions (`quokka` in each, `backfill<i>` in the i-th), not indexed. */
function backlog() {
	const layout = makeAgentLayout();
	const dir = join(layout.sessionsDir, encodeCwd(CWD));
	mkdirSync(dir, { recursive: true });
	for (let i = 0; i < FILES; i++) {
		const id = `bf-${String(i).padStart(4, "0")}`;
		const entry = userEntry(`${id}-1`, null, "2026-10-01T10:00:05.000Z", `a quokka and backfill${i}`);
		writeSession(dir, { id, cwd: CWD, entries: [entry] }, `2026-10-01T10-00-00-000Z_${id}`);
	}
	const indexPath = join(layout.root, "idx", "index.db");
	const settings = resolveSettings({ sessionDirs: [layout.sessionsDir], cwd: layout.root, env: isolatedEnv(layout), indexPath });
	const db = openIndex(indexPath);
	const frames: { id?: unknown; result?: { structuredContent?: { freshness: { pendingFiles: number; synced: boolean }; hits: unknown[] } } }[] = [];
	const server = new StdioServer({
		db,
		settings,
		version: "test",
		launch: { root: null, cwd: layout.root, sessionId: null, sessionFile: null },
		write: (frame) => frames.push(JSON.parse(frame)),
		log: () => {},
		// Enough for a few of the small files per sync, never for all of them.
		syncBudgets: { callMs: 15, backfillMs: 15 },
	});
	server.handleFrame(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {} } }));
	let nextId = 1;
	const search = (query: string) => {
		const id = nextId++;
		server.handleFrame(
			JSON.stringify({
				jsonrpc: "2.0",
				id,
				method: "tools/call",
				params: { name: "event_search", arguments: { query }, _meta: { "pi-events/caller": { cwd: CWD } } },
			}),
		);
		const answer = frames.find((f) => f.id === id)?.result?.structuredContent;
		if (!answer) throw new Error(`no answer to call ${id}: ${JSON.stringify(frames.at(-1))}`);
		return answer;
	};
	const reader = new Database(indexPath, { readonly: true });
	const indexed = () => (reader.query("SELECT count(*) AS n FROM sessions").get() as { n: number }).n;
	return {
		server,
		search,
		indexed,
		close() {
			server.close();
			reader.close();
			db.close();
		},
	};
}

describe("a backlog is indexed between calls", () => {
	test("one call leaves files pending; with no other call, the server indexes the rest, then answers complete", async () => {
		const world = backlog();
		try {
			const first = world.search("quokka");
			expect(first.freshness.synced).toBe(true);
			expect(first.freshness.pendingFiles).toBeGreaterThan(0);
			const afterFirst = world.indexed();
			expect(afterFirst).toBeLessThan(FILES);
			// No call, no sync notification: only the server's own slices can index the rest.
			const deadline = performance.now() + 60_000;
			while (world.indexed() < FILES && performance.now() < deadline) await Bun.sleep(20);
			expect(world.indexed()).toBe(FILES);
			// The next call (past the interval between call syncs) finds nothing pending and every session.
			await Bun.sleep(1600);
			const later = world.search(`backfill${FILES - 1}`);
			expect(later.freshness.pendingFiles).toBe(0);
			expect(later.hits.length).toBe(1);
		} finally {
			world.close();
		}
	});

	test("a closed server plans no more slices", async () => {
		const world = backlog();
		try {
			expect(world.search("quokka").freshness.pendingFiles).toBeGreaterThan(0);
			world.server.close();
			const atClose = world.indexed();
			await Bun.sleep(500);
			expect(world.indexed()).toBe(atClose);
		} finally {
			world.close();
		}
	});
});
