import { expect, test } from "bun:test";
import { openIndex } from "../../src/store/db.ts";

test("a connection keeps its prepared statements past bun:sqlite's own few, and finalizes them on close", () => {
	const db = openIndex(":memory:");
	const sql = (i: number) => `SELECT ${i} AS n FROM meta LIMIT 1`;
	const first = db.query(sql(0));
	// bun:sqlite alone prepares again once about 20 other statements were used since.
	for (let i = 1; i <= 100; i++) db.query(sql(i)).all();
	expect(db.query(sql(0))).toBe(first);
	expect(db.query("SELECT 7 AS n").get()).toEqual({ n: 7 });
	db.close();
	expect(() => first.all()).toThrow();
});
