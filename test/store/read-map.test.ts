/**
 * How much of the index a connection maps: none while it may write a cold index, 256 MiB once it
 * answers queries (a resident server), and as much as SQLite allows for a one-shot command.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mapForReading, mapWholeIndex, openIndex } from "../../src/store/db.ts";

const dir = mkdtempSync(join(tmpdir(), "pi-events-map-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a writing connection maps nothing, a reading one 256 MiB, a one-shot command all SQLite allows", () => {
	const db = openIndex(join(dir, "index.db"));
	const mapped = () => (db.query("PRAGMA mmap_size").get() as { mmap_size: number }).mmap_size;
	expect(mapped()).toBe(0);
	mapForReading(db);
	expect(mapped()).toBe(256 * 1024 * 1024);
	mapWholeIndex(db);
	// SQLite caps the request at its compile-time maximum (2 GB by default): more than the bounded map.
	expect(mapped()).toBeGreaterThanOrEqual(2 ** 31 - 2 ** 16);
	expect(db.query("SELECT count(*) AS n FROM meta").get()).toEqual({ n: expect.any(Number) });
	db.close();
});
