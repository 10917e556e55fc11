/**
 * A preload (`bun --preload`) for test/store/sqlite-compat.test.ts: records every SQL statement
 * the process runs through bun:sqlite, with its parameters and its rows, into
 * $PI_EVENTS_SQL_LOG (JSON lines, written at exit), so the test can replay them on another
 * SQLite. With $PI_EVENTS_FAKE_SQLITE_VERSION, `sqlite_version()` answers that version instead,
 * so pi-events picks its schema as it would on that SQLite (the macOS system library); with
 * $PI_EVENTS_FAKE_NO_FTS5=1, FTS5's probe function is unknown, as without FTS5.
 */
import { Database, type Statement } from "bun:sqlite";
import { writeFileSync } from "node:fs";

const logPath = process.env.PI_EVENTS_SQL_LOG;
const fakeVersion = process.env.PI_EVENTS_FAKE_SQLITE_VERSION;
const fakeNoFts5 = process.env.PI_EVENTS_FAKE_NO_FTS5 === "1";
const records: string[] = [];

type Encoded = null | number | string | { $blob: string } | { $bigint: string };

function encode(value: unknown): Encoded {
	if (value === null || value === undefined) return null;
	if (typeof value === "boolean") return value ? 1 : 0;
	if (typeof value === "bigint") return { $bigint: value.toString() };
	if (value instanceof Uint8Array) return { $blob: Buffer.from(value).toString("hex") };
	if (typeof value === "number" || typeof value === "string") return value;
	return String(value);
}

function paramsOf(args: unknown[]): Encoded[] | Record<string, Encoded> {
	if (args.length === 1 && Array.isArray(args[0])) return (args[0] as unknown[]).map(encode);
	const only = args[0];
	if (args.length === 1 && only !== null && typeof only === "object" && !(only instanceof Uint8Array)) {
		return Object.fromEntries(Object.entries(only as Record<string, unknown>).map(([k, v]) => [k.replace(/^[$:@]/, ""), encode(v)]));
	}
	return args.map(encode);
}

function record(sql: string, args: unknown[], rows: unknown[][] | null): void {
	records.push(JSON.stringify({ sql, params: paramsOf(args), rows: rows?.map((r) => r.map(encode)) ?? null }));
}

function rewrite(sql: string): string {
	let out = fakeVersion ? sql.replace(/sqlite_version\(\)/g, `'${fakeVersion}'`) : sql;
	if (fakeNoFts5) out = out.replace(/fts5_source_id\(\)/g, "no_fts5_in_this_sqlite()");
	return out;
}

function wrap(statement: Statement, sql: string): Statement {
	const st = statement as unknown as Record<string, (...args: unknown[]) => unknown>;
	const run = st.run!.bind(statement);
	const get = st.get!.bind(statement);
	const all = st.all!.bind(statement);
	const values = st.values!.bind(statement);
	st.run = (...args) => {
		const result = run(...args);
		record(sql, args, null);
		return result;
	};
	st.get = (...args) => {
		const row = get(...args) as Record<string, unknown> | null;
		record(sql, args, row ? [Object.values(row)] : []);
		return row;
	};
	st.all = (...args) => {
		const rows = all(...args) as Record<string, unknown>[];
		record(
			sql,
			args,
			rows.map((r) => Object.values(r)),
		);
		return rows;
	};
	st.values = (...args) => {
		const rows = values(...args) as unknown[][];
		record(sql, args, rows);
		return rows;
	};
	st.iterate = (...args) => {
		// Materialized here (tests only): rows recorded like all().
		const rows = all(...args) as Record<string, unknown>[];
		record(
			sql,
			args,
			rows.map((r) => Object.values(r)),
		);
		return rows[Symbol.iterator]();
	};
	return statement;
}

const proto = Database.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
const prepare = proto.prepare!;
const query = proto.query!;
const runSql = proto.run!;
const cache = new WeakMap<object, Map<string, Statement>>();
proto.prepare = function (this: Database, sql: unknown, ...rest: unknown[]) {
	return wrap(prepare.call(this, rewrite(String(sql)), ...rest) as Statement, rewrite(String(sql)));
};
proto.query = function (this: Database, sql: unknown) {
	// query() caches its statement: wrap once per database and text.
	let perDb = cache.get(this);
	if (!perDb) cache.set(this, (perDb = new Map()));
	const text = rewrite(String(sql));
	let st = perDb.get(text);
	if (!st) perDb.set(text, (st = wrap(query.call(this, text) as Statement, text)));
	return st;
};
proto.run = proto.exec = function (this: Database, sql: unknown, ...args: unknown[]) {
	const text = rewrite(String(sql));
	const result = runSql.call(this, text, ...args);
	record(text, args, null);
	return result;
};

if (logPath) process.on("exit", () => writeFileSync(logPath, records.length ? `${records.join("\n")}\n` : ""));
