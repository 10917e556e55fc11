/**
 * pi itself as the oracle for the tree facts the indexer derives: for every fixture pi can read,
 * the indexed session's materialized leaf is pi's leaf, `branch_state = selected` holds exactly
 * for the entries on pi's current branch, and `selection_state = direct` holds exactly for the
 * entries pi's buildSessionProjection turns into model-visible messages.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { syncIndex } from "../../src/sync/sync.ts";
import { openIndex } from "../../src/store/db.ts";
import { cleanupTempDirs, LEGACY_FIXTURES, makeTempDir, PI_FIXTURES, piManifest } from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

// pi must never see the real ~/.pi: isolate it before it is imported.
const piHome = makeTempDir("pi-events-oracle-");
process.env.PI_CODING_AGENT_DIR = join(piHome, "agent");
process.env.PI_OFFLINE = "1";
process.env.PI_TELEMETRY = "0";
const pi = await import("@earendil-works/pi-coding-agent");

const files = [
	...piManifest().map((e) => join(PI_FIXTURES, e.file)),
	// Legacy shapes whose ids pi keeps (v1 ids are generated randomly by pi's migration; pi
	// refuses oh-my-pi's title slot; cycles and duplicate ids have no pi answer to compare with).
	...["v2", "bash-exitcodes", "crlf-u2028", "orphans", "torn-tail", "malformed-middle"].map((n) => join(LEGACY_FIXTURES, `${n}.jsonl`)),
];

describe("tree facts agree with pi", () => {
	test.each(files.map((f) => [basename(f), f] as const))("%s", (_name, fixture) => {
		const dir = makeTempDir("pi-events-oracle-");
		const sessions = join(dir, "sessions");
		require("node:fs").mkdirSync(sessions);
		const path = join(sessions, basename(fixture));
		copyFileSync(fixture, path);
		const db = openIndex(":memory:");
		try {
			syncIndex(db, { sourceDirs: [{ path: sessions, origin: "flag" }] });
			const rows = db.query("SELECT entry_id, branch_state, selection_state FROM events ORDER BY seq").all() as {
				entry_id: string;
				branch_state: string;
				selection_state: string;
			}[];
			const session = db.query("SELECT leaf_entry, entry_count FROM sessions").get() as { leaf_entry: string; entry_count: number };

			// pi's view, on a copy (pi may migrate a file in place).
			const piCopy = join(dir, "pi-copy.jsonl");
			copyFileSync(fixture, piCopy);
			const sm = pi.SessionManager.open(piCopy, join(dir, "pi-session-dir"));
			const entries = sm.getEntries();
			const branch = new Set(sm.getBranch().map((e: { id: string }) => e.id));
			const projection = sm.buildSessionProjection();
			const direct = new Set(projection.entries.filter((p: any) => p.messages.length > 0).map((p: any) => p.sourceEntry.id));

			expect(rows.map((r) => r.entry_id)).toEqual(entries.map((e: { id: string }) => e.id));
			expect(session.leaf_entry).toBe(sm.getLeafId() as string);
			expect(session.entry_count).toBe(entries.length);
			expect(rows.filter((r) => r.branch_state === "selected").map((r) => r.entry_id)).toEqual(
				rows.filter((r) => branch.has(r.entry_id)).map((r) => r.entry_id),
			);
			expect(rows.filter((r) => r.branch_state === "alternate").map((r) => r.entry_id)).toEqual(
				rows.filter((r) => !branch.has(r.entry_id)).map((r) => r.entry_id),
			);
			expect(rows.filter((r) => r.selection_state === "direct").map((r) => r.entry_id)).toEqual(
				rows.filter((r) => direct.has(r.entry_id)).map((r) => r.entry_id),
			);
			// Every message-producing entry off the branch is not-selected, never direct or summarized.
			for (const r of rows) if (r.branch_state === "alternate") expect(["not-selected", "not-applicable"]).toContain(r.selection_state);
			expect(readFileSync(path).equals(readFileSync(fixture))).toBe(true);
		} finally {
			db.close();
		}
	});
});
