/**
 * A tool call that comes within 1.5 s of the server's last sync answers from that sync instead of
 * syncing again. Its answer must say so, not repeat that sync's time as its own (a 3.5 ms call
 * said "synced in 100.3 ms"), and event_search answers carry elapsedMs, as the CLI's --json does.
 */
import { afterAll, expect, test } from "bun:test";
import { cleanupTempDirs, copyAllPiFixtures, isolatedEnv, MAIN, makeAgentLayout } from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

interface SearchAnswer {
	id: number;
	result: {
		content: { text: string }[];
		structuredContent: { freshness: { synced: boolean; syncMs: number; syncAgeMs?: number; newDiagnostics: number }; elapsedMs: number };
	};
}

test("a call answered from the last sync reports no sync time of its own and how old that sync is; elapsedMs on every search", () => {
	const layout = makeAgentLayout();
	copyAllPiFixtures(layout.sessionsDir);
	const search = (id: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "event_search", arguments: { query: "ECONNREFUSED" } } });
	const frames = [
		{ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "0" } } },
		{ jsonrpc: "2.0", method: "notifications/initialized" },
		search(2),
		search(3),
	];
	const proc = Bun.spawnSync([process.execPath, MAIN, "serve", "--stdio", "--root", "/work/demo/app"], {
		env: isolatedEnv(layout),
		cwd: layout.root,
		stdin: new TextEncoder().encode(frames.map((frame) => `${JSON.stringify(frame)}\n`).join("")),
		stdout: "pipe",
		stderr: "pipe",
	});
	const answers = proc.stdout
		.toString()
		.trim()
		.split("\n")
		.map((line) => JSON.parse(line) as SearchAnswer);
	const [first, second] = [2, 3].map((id) => answers.find((answer) => answer.id === id)!.result);

	// The first call synced (a cold index of the fixtures): its own time.
	expect(first!.structuredContent.freshness.synced).toBe(true);
	expect(first!.structuredContent.freshness.syncMs).toBeGreaterThan(0);
	expect(first!.structuredContent.freshness.syncAgeMs).toBeUndefined();
	expect(first!.content[0]!.text).toContain(`synced in ${first!.structuredContent.freshness.syncMs} ms`);

	// The second reused it: no sync time of its own, the age of the sync it answers from.
	const reused = second!.structuredContent.freshness;
	expect(reused.synced).toBe(true);
	expect(reused.syncMs).toBe(0);
	expect(reused.syncAgeMs).toBeGreaterThanOrEqual(0);
	expect(reused.syncAgeMs).toBeLessThan(1500);
	expect(reused.newDiagnostics).toBe(0);
	expect(second!.content[0]!.text).toMatch(/synced \d+ ms before this call/);
	expect(second!.content[0]!.text).not.toContain("synced in");

	for (const answer of [first!, second!]) {
		expect(typeof answer.structuredContent.elapsedMs).toBe("number");
		expect(answer.structuredContent.elapsedMs).toBeGreaterThan(0);
	}
});
