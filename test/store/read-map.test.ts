/**
 * How much of the index a connection maps: none while it may write a cold index, 256 MiB once it
 * answers queries (a resident server, and a one-shot command: mapping all of it was slower as a
 * whole process, store/db.ts mapForReading).
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openIndex } from "../../src/store/db.ts";
import { refresh } from "../../src/sync/freshness.ts";

const dir = mkdtempSync(join(tmpdir(), "pi-events-map-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a writing connection maps nothing; once its freshness check has run, 256 MiB", () => {
	const db = openIndex(join(dir, "index.db"));
	const mapped = () => (db.query("PRAGMA mmap_size").get() as { mmap_size: number }).mmap_size;
	expect(mapped()).toBe(0);
	refresh(db, [{ path: join(dir, "sessions"), origin: "flag" }], { sync: true, scope: null });
	expect(mapped()).toBe(256 * 1024 * 1024);
	expect(db.query("SELECT count(*) AS n FROM meta").get()).toEqual({ n: expect.any(Number) });
	db.close();
});
