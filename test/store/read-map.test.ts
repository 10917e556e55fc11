/**
 * No connection maps the index (store/db.ts says why: as whole processes, and after the page
 * cache is dropped, reads measured faster than a map), neither a writing one nor one that has
 * synced and answers queries, nor a read-only one.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Database } from "bun:sqlite";
import { openIndex } from "../../src/store/db.ts";
import { refresh } from "../../src/sync/freshness.ts";

const dir = mkdtempSync(join(tmpdir(), "pi-events-map-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const mapped = (db: Database) => (db.query("PRAGMA mmap_size").get() as { mmap_size: number }).mmap_size;

test("a connection maps nothing: opened, after its freshness check, and read-only", () => {
	const db = openIndex(join(dir, "index.db"));
	expect(mapped(db)).toBe(0);
	refresh(db, { sourceDirs: [{ path: join(dir, "sessions"), origin: "flag" }] }, { sync: true, scope: null });
	expect(mapped(db)).toBe(0);
	expect(db.query("SELECT count(*) AS n FROM meta").get()).toEqual({ n: expect.any(Number) });
	db.close();
	const readOnly = openIndex(join(dir, "index.db"), { readonly: true });
	expect(mapped(readOnly)).toBe(0);
	readOnly.close();
});
