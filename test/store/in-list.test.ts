import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { inList } from "../../src/store/in-list.ts";

test("IN lists come in powers of two, padded with the last value: the same rows, a few statements", () => {
	const db = new Database(":memory:");
	db.run("CREATE TABLE t (k INTEGER PRIMARY KEY)");
	for (let k = 1; k <= 40; k++) db.run("INSERT INTO t VALUES (?)", [k]);
	const texts = new Set<string>();
	for (let n = 1; n <= 33; n++) {
		const wanted = Array.from({ length: n }, (_, i) => 40 - i);
		const list = inList(wanted);
		texts.add(list.sql);
		const size = list.params.length;
		expect(size >= n && size < 2 * n && (size & (size - 1)) === 0).toBe(true);
		const rows = db.query(`SELECT k FROM t WHERE k IN ${list.sql} ORDER BY k DESC`).all(...list.params) as { k: number }[];
		expect(rows.map((r) => r.k)).toEqual(wanted);
	}
	// 1, 2, 4, 8, 16, 32, 64 placeholders: seven statements for 33 lengths.
	expect(texts.size).toBe(7);
	expect(db.query(`SELECT count(*) AS n FROM t WHERE k IN ${inList([]).sql}`).get()).toEqual({ n: 0 });
});

test("a long IN list is left as it is: padding would bring it nearer SQLite's limit on parameters", () => {
	const db = new Database(":memory:");
	const values = Array.from({ length: 20_000 }, (_, i) => i);
	const list = inList(values);
	expect(list.params).toHaveLength(20_000);
	expect(db.query(`SELECT count(*) AS n FROM (SELECT 1 AS k) WHERE k IN ${list.sql}`).get(...list.params)).toEqual({ n: 1 });
});
