/**
 * The binary starts with the JIT held back (src/jit.ts, build.ts); a sync that reads enough new
 * bytes restores the normal policy for its thread, and a small one (a search's freshness sync
 * after an append) leaves it. Bun.unsafe.setJITPolicy is watched, not replaced.
 */
import { afterAll, afterEach, expect, spyOn, test } from "bun:test";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { JIT_WORTH_BYTES } from "../../src/jit.ts";
import type { SourceDir } from "../../src/source/discover.ts";
import { openIndex } from "../../src/store/db.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { oneMessageSession, userEntry, writeSession } from "../query/helpers.ts";

afterAll(cleanupTempDirs);
const watched = spyOn(Bun.unsafe, "setJITPolicy");
afterEach(() => watched.mockClear());

const sid = (n: number) => `0000eeee-0000-4000-8000-${String(n).padStart(12, "0")}`;

test("a sync of few bytes stays in the interpreter; one of many new bytes compiles, an append counts its growth", () => {
	const sessions = join(makeTempDir("pi-events-jit-"), "sessions", "--work-app--");
	const sources: SourceDir[] = [{ path: join(sessions, ".."), origin: "flag" }];
	const db = openIndex(":memory:");
	const small = writeSession(sessions, oneMessageSession(sid(1), "/work/app", "a short note about the deploy"));
	syncIndex(db, { sourceDirs: sources, pipeline: "never" });
	expect(watched).not.toHaveBeenCalled();

	// A new file larger than the threshold.
	writeSession(sessions, oneMessageSession(sid(2), "/work/app", "many words ".repeat(Math.ceil(JIT_WORTH_BYTES / 11) + 100)));
	syncIndex(db, { sourceDirs: sources, pipeline: "never" });
	expect(watched).toHaveBeenCalledTimes(1);
	expect(watched).toHaveBeenCalledWith(1);
	watched.mockClear();

	// An append below the threshold to the large file: its growth, not its size, decides.
	appendFileSync(
		join(sessions, `${sid(2)}.jsonl`),
		`${JSON.stringify(userEntry("u-more", `u-${sid(2).slice(0, 6)}`, "2026-10-01T10:00:09.000Z", "one more line"))}\n`,
	);
	const report = syncIndex(db, { sourceDirs: sources, pipeline: "never" });
	expect(report.sessions.appended).toBe(1);
	expect(watched).not.toHaveBeenCalled();

	// An append above it compiles.
	appendFileSync(small, `${JSON.stringify(userEntry("u-long", `u-${sid(1).slice(0, 6)}`, "2026-10-01T10:00:09.000Z", "x ".repeat(JIT_WORTH_BYTES)))}\n`);
	syncIndex(db, { sourceDirs: sources, pipeline: "never" });
	expect(watched).toHaveBeenCalledWith(1);
	db.close();
});
