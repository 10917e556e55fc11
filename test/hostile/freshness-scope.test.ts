/**
 * Hostile input: freshness counts as a side channel (issue 15 item 7). A search scoped to one
 * workspace must not learn from `freshness` that sessions of another workspace changed, appeared,
 * vanished or hold malformed lines: `pendingFiles`, `missingFiles` and `newDiagnostics` count only
 * session files whose session lies in the caller's scope (indexed files by their indexed cwd, new
 * files by their header), through the CLI (`--no-sync` and syncing) and `serve --stdio`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentLayout, cleanupTempDirs, encodeCwd, isolatedEnv, makeAgentLayout } from "../helpers/temp.ts";
import { compiledBinary, RawServer } from "../server/harness.ts";
import { header, jsonl, runChild, user } from "./helpers.ts";

let layout: AgentLayout;
let A: string; // the caller's workspace
let B: string; // someone else's
const files: Record<string, string> = {};

function write(cwd: string, id: string, text: string, dirCwd = cwd): string {
	const dir = join(layout.sessionsDir, encodeCwd(dirCwd));
	mkdirSync(dir, { recursive: true });
	const path = join(dir, `2026-10-01T10-00-00-000Z_${id}.jsonl`);
	writeFileSync(path, jsonl([header(id, cwd), user(`${id}-u1`, null, text)]));
	files[id] = path;
	return path;
}

const freshnessOf = async (root: string, sync: boolean) => {
	const run = await runChild(layout, ["search", "--json", "--root", root, ...(sync ? [] : ["--no-sync"]), "scopeword"], { timeoutMs: 60_000 });
	return run.json().freshness as { pendingFiles: number; missingFiles: number; newDiagnostics: number; problems: string[] };
};

beforeAll(async () => {
	layout = makeAgentLayout();
	const base = realpathSync(layout.root);
	A = join(base, "home", "me", "a");
	B = join(base, "home", "me", "b");
	mkdirSync(A, { recursive: true });
	mkdirSync(B, { recursive: true });
	write(A, "a-one", "scopeword in a");
	write(B, "b-one", "scopeword in b");
	write(B, "b-two", "scopeword in b again");
	const index = await runChild(layout, ["index", "--json"], { timeoutMs: 60_000 });
	expect(index.exitCode).toBe(0);
});

afterAll(cleanupTempDirs);

describe("freshness counts stay inside the caller's scope", () => {
	test("changes in /b sessions (append, malformed line, new file, deletion) are not counted for a search scoped to /a", async () => {
		appendFileSync(files["b-one"]!, "{this is not json\n");
		appendFileSync(files["b-one"]!, `${JSON.stringify(user("b-one-u2", "b-one-u1", "scopeword appended in b"))}\n`);
		write(B, "b-three", "scopeword new in b");
		// A new file of /b placed in /a's directory: its header, not its directory, says whose it is.
		write(B, "b-in-a-dir", "scopeword b session in a's directory", A);
		rmSync(files["b-two"]!);

		const forA = await freshnessOf(A, false);
		const forB = await freshnessOf(B, false);
		expect({ pending: forA.pendingFiles, missing: forA.missingFiles }).toEqual({ pending: 0, missing: 0 });
		// The same changes, seen from /b: they are real, and /b is told about them.
		expect({ pending: forB.pendingFiles, missing: forB.missingFiles }).toEqual({ pending: 3, missing: 1 });
	});

	test("a new file of /a is counted for /a, and only it", async () => {
		write(A, "a-two", "scopeword new in a");
		expect((await freshnessOf(A, false)).pendingFiles).toBe(1);
	});

	test("diagnostics found by a sync run on behalf of /a are not counted for /a when they are /b's", async () => {
		const synced = await freshnessOf(A, true);
		expect({ diagnostics: synced.newDiagnostics, pending: synced.pendingFiles, problems: synced.problems }).toEqual({
			diagnostics: 0,
			pending: 0,
			problems: [],
		});
		// Another malformed line in /b, synced on behalf of /b: /b is told.
		appendFileSync(files["b-one"]!, "{still not json\n");
		expect((await freshnessOf(B, true)).newDiagnostics).toBe(1);
	});

	test("serve --stdio: a call from /a after /b changed counts nothing of /b", async () => {
		const srv = new RawServer(compiledBinary(), isolatedEnv(layout, { NO_COLOR: "1" }));
		const call = (cwd: string) =>
			srv.request("tools/call", { name: "event_search", arguments: { query: "scopeword" }, _meta: { "pi-events/caller": { cwd } } }, undefined, 30_000);
		try {
			await srv.initialize();
			await call(A);
			appendFileSync(files["b-one"]!, "{malformed again\n");
			write(B, "b-four", "scopeword newest in b");
			// The server syncs before a call at most every 1.5 s: wait for the next one.
			await Bun.sleep(1700);
			const f = (await call(A)).result.structuredContent.freshness;
			expect({ synced: f.synced, pending: f.pendingFiles, missing: f.missingFiles, diagnostics: f.newDiagnostics }).toEqual({
				synced: true,
				pending: 0,
				missing: 0,
				diagnostics: 0,
			});
			await Bun.sleep(1700);
			appendFileSync(files["b-one"]!, "{and again\n");
			await Bun.sleep(1700);
			expect((await call(B)).result.structuredContent.freshness.newDiagnostics).toBe(1);
		} finally {
			srv.closeStdin();
			await srv.proc.exited;
		}
	}, 120_000);
});
