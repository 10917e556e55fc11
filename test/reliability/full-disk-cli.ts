#!/usr/bin/env bun
/**
 * `pi-events` with a full disk for the index, simulated without mounting anything: every index
 * connection gets `PRAGMA max_page_count = $PI_EVENTS_TEST_MAX_PAGES` right after src/store/db.ts
 * sets its busy timeout, so SQLite answers SQLITE_FULL ("database or disk is full") once the
 * database would grow past that many pages. Then the real entry point runs with the given argv:
 *
 *   PI_EVENTS_TEST_MAX_PAGES=64 bun test/reliability/full-disk-cli.ts index --index ... --sessions-dir ...
 *
 * With PI_EVENTS_TEST_DIRECT=1 it instead opens the index via src/store/db.ts and runs syncIndex
 * itself (argv: INDEX SOURCE_DIR...), printing its debug lines (`debug: ...`), then the report as
 * JSON or `error: <name>: <message>`.
 */
import { Database } from "bun:sqlite";

const pages = Number(process.env.PI_EVENTS_TEST_MAX_PAGES ?? "0");
if (!(pages > 0)) throw new Error("set PI_EVENTS_TEST_MAX_PAGES");

const originalRun = Database.prototype.run;
Database.prototype.run = function (this: Database, sql: string, ...rest: unknown[]) {
	const out = (originalRun as (...a: unknown[]) => unknown).call(this, sql, ...rest);
	if (typeof sql === "string" && /^PRAGMA busy_timeout/i.test(sql)) {
		(originalRun as (...a: unknown[]) => unknown).call(this, `PRAGMA max_page_count = ${pages}`);
	}
	return out;
} as typeof Database.prototype.run;

if (process.env.PI_EVENTS_TEST_DIRECT === "1") {
	const [indexPath, ...dirs] = process.argv.slice(2);
	const { openIndex } = await import("../../src/store/db.ts");
	const { syncIndex } = await import("../../src/sync/sync.ts");
	const db = openIndex(indexPath!);
	try {
		const debug = (line: string) => process.stdout.write(`debug: ${line.split("\n")[0]}\n`);
		const report = syncIndex(db, { sourceDirs: dirs.map((path) => ({ path, origin: "flag" as const })), debug });
		process.stdout.write(`${JSON.stringify({ sessions: report.sessions, problems: report.problems })}\n`);
	} catch (err) {
		process.stdout.write(`error: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}\n`);
	} finally {
		db.close();
	}
} else {
	await import("../../src/main.ts");
}
