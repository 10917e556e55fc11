/**
 * Live writers: while separate writer processes append pi entries to several sessions (some lines
 * in pieces cut at arbitrary bytes, with pauses between), and one writer dies leaving a torn tail
 * that pi 1.x later repairs with a lone "\n" before appending again, `pi-events index` runs again
 * and again and a `serve --stdio` answers event_search (and event_read of what it finds) through
 * raw JSON-RPC frames. Asserted throughout: no event ever points at bytes that are not one
 * complete line, searches and reads never error. Once the writers stop: one more sync equals a
 * clean rebuild, and every session has exactly as many events as it has complete entry lines,
 * with each written entry id exactly once (nothing lost, nothing duplicated).
 *
 * PI_EVENTS_RELIABILITY_LONG=1: writers run for two minutes instead of a few seconds.
 */
import { afterAll, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hashBytes } from "../../src/source/hash.ts";
import { openIndex } from "../../src/store/db.ts";
import { cleanupTempDirs, dumpIndex } from "../helpers/temp.ts";
import {
	badLocators,
	checkIntegrity,
	cleanDump,
	dumpDiff,
	entryLines,
	frameProblem,
	generateCorpus,
	indexArgs,
	LONG,
	lastEntryId,
	locators,
	makeWorld,
	piEntry,
	Rng,
	runCliAsync,
	Serve,
	seedFromEnv,
	sessionFiles,
	sleep,
} from "./util.ts";

afterAll(cleanupTempDirs);

const SEED = seedFromEnv(424242);
const WRITE_MS = LONG ? 120_000 : 9_000;
const WRITER = join(import.meta.dir, "writer.ts");

function header(id: string, cwd: string): string {
	return `${JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-11-25T08:00:00.000Z", cwd })}\n`;
}

test(
	"appends racing with index and serve: never a partial line indexed, never a failed search, nothing lost or duplicated",
	async () => {
		const started = performance.now();
		const rng = new Rng(SEED);
		const world = makeWorld();
		generateCorpus(world, "2MB", SEED);

		// Live sessions in pi's own session dir (found without any flag), as pi lays them out.
		const live: string[] = [];
		for (let i = 0; i < 6; i++) {
			const cwd = `/work/live/app${i % 3}`;
			const dir = join(world.layout.sessionsDir, `--work-live-app${i % 3}--`);
			mkdirSync(dir, { recursive: true });
			const id = `01b00000-0000-7000-8000-00000000000${i}`;
			const path = join(dir, `2026-11-25T08-00-0${i}-000Z_${id}.jsonl`);
			writeFileSync(path, header(id, cwd));
			live.push(path);
		}
		const dyingId = "01b00000-0000-7000-8000-0000000000d1";
		const dying = join(world.layout.sessionsDir, "--work-live-app0--", `2026-11-25T08-00-09-000Z_${dyingId}.jsonl`);
		writeFileSync(dying, header(dyingId, "/work/live/app0"));

		let serve = new Serve(world, ["--root", "/work"]);
		await serve.initialize();
		let serveStarts = 1;

		// Three writers, two files each, plus one that dies mid-line.
		const writers = [0, 1, 2].map((w) =>
			Bun.spawn([process.execPath, WRITER, JSON.stringify({ files: live.slice(2 * w, 2 * w + 2), seed: SEED + w, durationMs: WRITE_MS, tag: `zqw${w}n` })], {
				env: world.env,
				stdout: "pipe",
				stderr: "pipe",
			}),
		);
		const dier = Bun.spawn([process.execPath, WRITER, JSON.stringify({ files: [dying], seed: SEED + 9, die: 5, tag: "zqdie" })], {
			env: world.env,
			stdout: "pipe",
			stderr: "pipe",
		});
		const dierOut = (async () => {
			for await (const chunk of dier.stdout as ReadableStream<Uint8Array>) if (new TextDecoder().decode(chunk).includes("torn")) return;
		})();
		const writing = Promise.all(
			writers.map(async (p) => ({ code: await p.exited, out: await new Response(p.stdout).text(), err: await new Response(p.stderr).text() })),
		);
		let writersDone = false;
		void writing.then(() => {
			writersDone = true;
		});

		const failures: string[] = [];
		let searches = 0;
		let reads = 0;
		let hitsSeen = 0;

		// serve: event_search again and again (and event_read of a hit), while everything runs.
		let serving = true;
		const searchLoop = (async () => {
			const queries = ["error", "build failed", "zqw0n", "café", "数据库", "lockfile migration", "zqdie", "timeout worker"];
			while (serving) {
				if (searches > 0 && searches % 50 === 0) {
					// A new serve process now and then: it opens the index while index runs write to it.
					const old = serve;
					const code = await old.close();
					if (code !== 0) failures.push(`serve exited ${code}: ${old.stderr}`);
					if (old.nonJson.length > 0) failures.push(`serve wrote non-JSON to stdout: ${old.nonJson.slice(0, 3).join(" | ")}`);
					serve = new Serve(world, ["--root", "/work"]);
					await serve.initialize();
					serveStarts++;
				}
				const q = rng.chance(0.5) ? `zqw${rng.int(3)}n${rng.range(1, 40)}x` : rng.pick(queries);
				const frame = await serve.call("event_search", { query: q, limit: 20 });
				searches++;
				const problem = frameProblem(frame);
				if (problem) failures.push(`search ${JSON.stringify(q)}: ${problem}`);
				const hits = (frame.result?.structuredContent?.hits ?? []) as { sessionId: string; entryId: string; stale: boolean }[];
				hitsSeen += hits.length;
				for (const h of hits) if (h.stale) failures.push(`search ${JSON.stringify(q)}: a stale hit ${h.sessionId}/${h.entryId} (files are only appended)`);
				if (hits.length > 0 && rng.chance(0.4)) {
					const h = rng.pick(hits);
					const read = await serve.call("event_read", { sessionId: h.sessionId, entryId: h.entryId });
					reads++;
					const readProblem = frameProblem(read);
					if (readProblem) failures.push(`read ${h.sessionId}/${h.entryId}: ${readProblem}`);
				}
				await sleep(rng.range(5, 60));
			}
		})();

		// The dying writer: killed once its torn half-line is on disk.
		await dierOut;
		dier.kill("SIGKILL");
		await dier.exited;
		let repaired = false;
		let resumedLines = 0;
		/** The second piece of the last resumed line (written while the next index round runs). */
		let pendingRest: Promise<void> = Promise.resolve();

		// index, again and again, checking every locator against the bytes on disk.
		let rounds = 0;
		const checkRound = (label: string) => {
			const db = openIndex(world.indexPath);
			try {
				const rows = locators(db);
				const files = new Map<string, Uint8Array>();
				for (const p of new Set(rows.map((r) => r.path))) files.set(p, readFileSync(p));
				for (const b of badLocators(rows, files)) failures.push(`${label}: ${b}`);
				// Never more events than complete entry lines.
				const counts = db.query("SELECT f.path, s.entry_count AS n FROM sessions s JOIN files f ON f.file_key = s.file_key").all() as {
					path: string;
					n: number;
				}[];
				for (const c of counts) {
					if (!c.path.startsWith(world.layout.sessionsDir)) continue;
					const complete = entryLines(c.path).length;
					if (c.n > complete) failures.push(`${label}: ${c.path} has ${c.n} events but only ${complete} complete entry lines`);
				}
			} finally {
				db.close();
			}
		};
		let tornRounds = 0;
		const endsTorn = (path: string) => {
			const buf = readFileSync(path);
			return buf.length > 0 && buf[buf.length - 1] !== 0x0a;
		};
		while (!writersDone || !repaired) {
			rounds++;
			if (live.some(endsTorn)) tornRounds++;
			const run = await runCliAsync(world, indexArgs(world, ["--json"]));
			if (run.exitCode !== 0) failures.push(`index round ${rounds}: exit ${run.exitCode}: ${run.stderr}`);
			checkRound(`index round ${rounds}`);
			// pi 1.x resumes the dead session: a lone "\n" ends the torn line, then appends go on,
			// some of them in two pieces.
			if (rounds === 5) {
				appendFileSync(dying, "\n");
			}
			if (rounds > 5 && !repaired) {
				await pendingRest;
				const line = `${JSON.stringify(piEntry(rng, rng.hex(8), lastEntryId(dying), Date.parse("2026-11-25T09:00:00Z") + rounds * 1000, `zqresumed${rounds}x`, { kind: rng.pick(["user", "assistant", "toolResult", "bash"]) }))}\n`;
				const cut = rng.range(1, line.length - 1);
				appendFileSync(dying, line.slice(0, cut));
				const rest = line.slice(cut);
				pendingRest = sleep(rng.range(5, 80)).then(() => appendFileSync(dying, rest));
				resumedLines++;
				if (resumedLines >= 10) repaired = true;
			}
			if (failures.length > 20) break;
		}
		const results = await writing;
		for (const r of results) if (r.code !== 0) failures.push(`writer exited ${r.code}: ${r.err}`);
		await pendingRest;

		// Quiet now: one more sync equals a clean rebuild; counts and ids match the files exactly.
		const final = await runCliAsync(world, indexArgs(world, ["--json"]));
		expect(final.exitCode).toBe(0);
		checkRound("final");
		const db = openIndex(world.indexPath);
		try {
			checkIntegrity(db, "final");
			const diff = dumpDiff(dumpIndex(db), cleanDump(world.sourceDirs));
			if (diff) failures.push(`final sync: ${diff}`);
			for (const path of [...live, dying, ...sessionFiles(world.sessions)]) {
				const want = entryLines(path)
					.map((e) => e.id as string)
					.sort();
				const got = (
					db
						.query("SELECT e.entry_id FROM events e JOIN sessions s ON s.session_key = e.session_key JOIN files f ON f.file_key = s.file_key WHERE f.path = ?1")
						.all(path) as { entry_id: string }[]
				)
					.map((r) => r.entry_id)
					.sort();
				if (!Bun.deepEquals(got, want)) failures.push(`${path}: ${got.length} events indexed, ${want.length} complete entry lines (ids differ)`);
			}
			// The torn line became one malformed line (a diagnostic), not an event.
			const diag = db.query("SELECT diagnostics FROM files WHERE path = ?1").get(dying) as { diagnostics: number };
			expect(diag.diagnostics).toBe(1);
			expect(entryLines(dying).length).toBe(5 + resumedLines);
		} finally {
			db.close();
		}

		// The search loop stops first: every 50 searches it closes the serve process and starts
		// another, which would close the one the calls below are waiting on.
		serving = false;
		await searchLoop;
		// serve sees the final state: each planted tag of the resumed session is found exactly once.
		await sleep(1600);
		for (let r = 6; r < 6 + resumedLines; r++) {
			const frame = await serve.call("event_search", { query: `zqresumed${r}x` });
			expect(frameProblem(frame)).toBeNull();
			// Exactly one event holds the tag. When a later resumed line answered it in the same turn,
			// that answer joins as a turn match (match: "turn", issue 34), which is not a copy.
			const hits = frame.result.structuredContent.hits as { entryId: string; match: "event" | "turn" }[];
			expect(hits.filter((h) => h.match === "event").length).toBe(1);
			expect(hits.filter((h) => h.match === "turn").length).toBeLessThanOrEqual(1);
		}
		expect(await serve.close()).toBe(0);
		if (serve.nonJson.length > 0) failures.push(`serve wrote non-JSON to stdout: ${serve.nonJson.slice(0, 3).join(" | ")}`);

		const total = Object.values(results.map((r) => (JSON.parse(r.out) as { lines: Record<string, number> }).lines)).reduce(
			(n, l) => n + Object.values(l).reduce((a, b) => a + b, 0),
			0,
		);
		console.log(
			`live-writers: ${rounds} index rounds (${tornRounds} started while a writer was mid-line) and ${searches} searches (${reads} reads, ${hitsSeen} hits, ${serveStarts} serve processes) during ${(WRITE_MS / 1000).toFixed(0)} s of writing ` +
				`(${total} lines by 3 writers, 1 torn tail repaired, ${resumedLines} resumed lines); ${((performance.now() - started) / 1000).toFixed(1)} s in all`,
		);
		expect(failures).toEqual([]);
		expect(rounds).toBeGreaterThan(10);
		expect(tornRounds).toBeGreaterThan(3);
		expect(searches).toBeGreaterThan(20);
	},
	LONG ? 10 * 60_000 : 58_000,
);

test("the locator check flags an event indexed from a partial line", () => {
	const line = Buffer.from('{"type":"message","id":"a"}\n{"type":"message","id":"b"}\n');
	const row = { path: "f", session_id: "s", entry_id: "a", line: 2, byte_offset: 0, byte_length: 27, content_hash: "" };
	const good = { ...row, content_hash: hashBytes(line.subarray(0, 27)) };
	expect(badLocators([good], new Map([["f", line]]))).toEqual([]);
	const partial = { ...row, byte_length: 20, content_hash: hashBytes(line.subarray(0, 20)) };
	expect(badLocators([partial], new Map([["f", line]]))[0]).toContain("partial line");
	const torn = Buffer.from('{"type":"message","id":"a"}\n{"type":"mess');
	const second = { ...row, byte_offset: 28, byte_length: 13, content_hash: hashBytes(torn.subarray(28)) };
	expect(badLocators([second], new Map([["f", torn]]))[0]).toContain("partial line");
});
