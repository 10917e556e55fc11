/**
 * Capped token counts are kept per index while it is unchanged (gate/gate.ts): a sync through the
 * same connection or through another one must empty them, and a scoped count is never answered
 * from an unscoped one. Real session files, indexed.
 */
import type { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { Gate } from "../../src/gate/gate.ts";
import { openIndex } from "../../src/store/db.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { buildIndex, oneMessageSession, UNSCOPED, writeSession } from "./helpers.ts";

const A = "/work/count-cache/a";
const B = "/work/count-cache/b";
const sid = (n: number) => `0000cccc-0000-4000-8000-${String(n).padStart(12, "0")}`;

afterAll(() => cleanupTempDirs());

const countOf = (db: Database, token: string, roots: string[] | null = null) =>
	new Gate(db, roots === null ? UNSCOPED : { roots, current: null }).search(`"${token}"`, {})!.tokenCount(token, 100);

test("counts follow every change to the index, through this connection or another; scopes never share them", () => {
	const dir = join(makeTempDir("pi-events-count-cache-"), "sessions");
	for (let n = 1; n <= 3; n++) writeSession(dir, oneMessageSession(sid(n), A, `zebraword number ${n}`));
	const idx = buildIndex([dir]);
	const other = openIndex(join(idx.dir, "index.db"));
	try {
		expect(countOf(idx.db, "zebraword")).toBe(3);
		expect(countOf(other, "zebraword")).toBe(3);

		// Synced through the same connection: its own changes.
		for (let n = 4; n <= 5; n++) writeSession(dir, oneMessageSession(sid(n), B, `zebraword number ${n}`));
		idx.sync();
		expect(countOf(idx.db, "zebraword")).toBe(5);
		// Another connection sees the commit (its data version moved).
		expect(countOf(other, "zebraword")).toBe(5);

		// A scoped count is its own expression: not the unscoped count just cached.
		expect(countOf(idx.db, "zebraword", [A])).toBe(3);
		expect(countOf(idx.db, "zebraword", [B])).toBe(2);

		writeSession(dir, oneMessageSession(sid(6), A, "zebraword number 6"));
		idx.sync();
		expect(countOf(other, "zebraword", [A])).toBe(4);
		expect(countOf(idx.db, "zebraword")).toBe(6);
	} finally {
		other.close();
		idx.close();
	}
});
