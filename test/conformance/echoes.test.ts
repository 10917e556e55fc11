/**
 * Echoes (pi-events' own tool calls, results and shell runs) are derived events: the result of a
 * bash call running pi-events is derived even when the call and the result reach the index in
 * different syncs, and the index grown line by line equals a clean rebuild at every step.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { syncIndex } from "../../src/sync/sync.ts";
import { search } from "../../src/query/search/search.ts";
import { Gate } from "../../src/gate/gate.ts";
import { openIndex } from "../../src/store/db.ts";
import { cleanupTempDirs, dumpIndex, makeTempDir, ROOT } from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

const SESSIONS = join(ROOT, "fixtures", "eval", "relevance", "sessions");
/** The later sessions of the echo scenarios: event_search/event_read tools, `pi-events` through bash, a user `!pi-events`. */
const echoFiles = readdirSync(SESSIONS)
	.filter((n) => n.endsWith(".jsonl"))
	.filter((n) => /"(event_search|event_read)"|pi-events (search|read)/.test(readFileSync(join(SESSIONS, n), "utf8")));

describe("echoes are derived events", () => {
	test("the evaluation holds echo sessions of every shape", () => {
		const all = echoFiles.map((n) => readFileSync(join(SESSIONS, n), "utf8")).join("\n");
		expect(all).toContain('"name":"event_search"');
		expect(all).toContain('"name":"event_read"');
		expect(all).toContain('"command":"pi-events search');
		expect(all).toContain('"role":"bashExecution","command":"pi-events search');
	});

	test.each(echoFiles.slice(0, 4))("%s: grown line by line == clean rebuild; the derived fragments are exactly the echoes", (name) => {
		const dir = makeTempDir("pi-events-echo-");
		const sessions = join(dir, "sessions", "--work--");
		mkdirSync(sessions, { recursive: true });
		const path = join(sessions, name);
		const sources = [{ path: join(dir, "sessions"), origin: "flag" as const }];
		const db = openIndex(join(dir, "index.db"));
		try {
			writeFileSync(path, "");
			for (const line of readFileSync(join(SESSIONS, name), "utf8").split(/(?<=\n)/)) {
				appendFileSync(path, line);
				syncIndex(db, { sourceDirs: sources });
				const fresh = openIndex(":memory:");
				syncIndex(fresh, { sourceDirs: sources });
				expect(dumpIndex(db)).toEqual(dumpIndex(fresh));
				fresh.close();
			}
			const rows = db
				.query(`SELECT f.fragment_id, f.derived, e.role, e.tool_name FROM fragments f JOIN events e ON e.event_key = f.event_key ORDER BY f.frag_key`)
				.all() as { fragment_id: string; derived: number; role: string; tool_name: string | null }[];
			const derived = rows.filter((r) => r.derived === 1);
			expect(derived.length).toBeGreaterThanOrEqual(2);
			// Every tool result is derived exactly when its call is; user and assistant text never are.
			for (const r of rows) {
				if (r.role === "user" || r.fragment_id.startsWith("assistant.text")) expect(r.derived).toBe(0);
			}
			const results = rows.filter((r) => r.role === "toolResult");
			expect(results.length).toBeGreaterThan(0);
			for (const r of results) expect({ r, derived: r.derived }).toEqual({ r, derived: 1 });
		} finally {
			db.close();
		}
	});

	test("search leaves echoes out unless includeDerived; then they come back, marked", () => {
		const dir = makeTempDir("pi-events-echo-search-");
		const db = openIndex(join(dir, "index.db"));
		try {
			syncIndex(db, { sourceDirs: [{ path: SESSIONS, origin: "flag" }] });
			const scope = { roots: null, current: null };
			const query = "redis sentinel failover";
			const plain = search(new Gate(db, scope), { query, filters: {}, limit: 50 }).hits;
			expect(plain.length).toBeGreaterThan(0);
			expect(plain.some((h) => h.derived)).toBe(false);
			const all = search(new Gate(db, scope), { query, filters: {}, limit: 50, includeDerived: true }).hits;
			const echoes = all.filter((h) => h.derived);
			expect(echoes.length).toBeGreaterThanOrEqual(3);
			expect(new Set(echoes.map((h) => h.toolName ?? h.semanticKind))).toEqual(new Set(["event_search", "event_read", "bash", "bash.command"]));
			expect(all.filter((h) => !h.derived).map((h) => h.entryId)).toEqual(plain.map((h) => h.entryId));
		} finally {
			db.close();
		}
	});
});
