#!/usr/bin/env bun
/**
 * The pi-events benchmark: one run, one table.
 *
 *   bun run bench [--size 200MB|1GB|5GB] [--corpus DIR] [--runs N] [--proc-runs N] [--cold-runs N] [--reference BIN] [--no-drop-caches] [--out FILE]
 *   bun run bench --compare 1GB,5GB      (the side-by-side table of saved runs, for docs/performance.md)
 *
 * Generates (or reuses) a seeded corpus with bench/corpus.ts, builds dist/pi-events, then measures
 * cold index, no-op sync and `index`, one-entry appends, process start, every search class
 * in-process (p50/p95/p99), in a fresh process (the first query of a process, and the first
 * after the OS page cache was dropped), as a whole process, and `rg -l -i -F` over the same
 * files, plus tools/call round trips through `serve --stdio`. Whole-process medians come from
 * hyperfine when it is installed. Corpora, indexes and results live in $PI_EVENTS_BENCH_DIR
 * (default bench/out/, gitignored): keep corpora outside the repo to reuse them across checkouts.
 */
import { appendFileSync, closeSync, existsSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { syncIndex } from "../src/sync/sync.ts";
import type { SearchFilters } from "../src/query/search/search.ts";
import { Gate } from "../src/gate/gate.ts";
import { search } from "../src/query/search/search.ts";
import { openIndex } from "../src/store/db.ts";
import { deletedTextPending } from "../src/store/status.ts";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
	const i = argv.indexOf(`--${name}`);
	return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const flag = (name: string) => argv.includes(`--${name}`);
const root = resolve(import.meta.dir, "..");
const dataDir = resolve(process.env.PI_EVENTS_BENCH_DIR ?? join(root, "bench", "out"));

/** One measured figure: `text` is what the table shows, `value` what comparisons use. */
interface Measure {
	id: string;
	label: string;
	value: number | null;
	text: string;
	target?: string;
}

interface ClassResult {
	name: string;
	query: string;
	hits: number;
	matches: string;
	p50: number;
	p95: number;
	p99: number;
	/** The slowest of the in-process runs (absent in runs saved before it was recorded). */
	max?: number;
	/** elapsedMs of the query in a fresh process (SQLite's cache empty, the OS cache warm), median. */
	fresh: number;
	/** elapsedMs of the first query after the OS page cache was dropped (null: not permitted). */
	cold: number | null;
	/** Whole `pi-events search` process, median. */
	proc: number;
	/**
	 * `pi-events --version` measured just before this class's whole processes, median: "process −
	 * start" subtracts it, so the machine's drift during a run does not bias the difference
	 * (absent in runs saved before it was measured per class: the run's start then).
	 */
	start?: number;
	/** `rg -l` over the files, median; NaN when nothing is comparable (a search by filters alone). */
	rg: number;
	/** Whole `pi-events search` process answered by `serve --socket`, median (absent in older runs). */
	served?: number;
	/** `pi-events --version` measured just before `served`, median. */
	servedStart?: number;
}

interface Results {
	size: string;
	machine: string;
	date: string;
	conditions: string;
	measures: Measure[];
	classes: ClassResult[];
}

const ms = (v: number | null) => (v === null || Number.isNaN(v) ? "–" : v < 10 ? v.toFixed(2) : v.toFixed(1));
const fmtInt = (n: number) => n.toLocaleString("en-US");
/** Classes without a ripgrep equivalent store NaN, which a saved run reads back as null. */
const hasRg = (c: { rg: number | null }) => typeof c.rg === "number" && !Number.isNaN(c.rg);

if (argv.includes("--compare")) {
	const sizes = opt("compare", "1GB,5GB").split(",");
	const runs = sizes.map((s) => JSON.parse(readFileSync(join(dataDir, `results-${s}.json`), "utf8")) as Results);
	console.log(compareTable(runs));
	process.exit(0);
}

const size = opt("size", "200MB");
const corpus = resolve(opt("corpus", join(dataDir, `corpus-${size}`)));
const runs = Number(opt("runs", "100"));
const procRuns = Number(opt("proc-runs", "11"));
const coldRuns = Math.max(1, Number(opt("cold-runs", "3")));
const work = join(dataDir, `work-${size}`);
const bin = join(root, "dist", "pi-events");
const hyperfine = Bun.which("hyperfine");
const gnuTime = existsSync("/usr/bin/time") ? "/usr/bin/time" : null;
const dropCaches = !flag("no-drop-caches") && canDropCaches();
/** Development only: keep the index of the previous run (no cold-index figures). */
const reuseIndex = flag("reuse-index");

interface Manifest {
	totalBytes: number;
	files: number;
	entries: number;
	largestSession: { path: string; bytes: number };
	smallSession: { path: string; bytes: number };
	planted: Record<string, number>;
	phrases: Record<string, number>;
	commonTerms: string[];
}

function sh(cmd: string[], opts: { env?: Record<string, string | undefined>; quiet?: boolean } = {}) {
	const p = Bun.spawnSync(cmd, { env: { ...process.env, ...opts.env }, stdout: "pipe", stderr: "pipe" });
	if (p.exitCode !== 0 && !opts.quiet) throw new Error(`${cmd.join(" ")} failed (${p.exitCode}): ${p.stderr.toString()}`);
	return p;
}

/** The q-quantile by nearest rank: of 100 runs, p99 is the 99th value, p50 the 50th (the maximum is reported on its own). */
function quantile(values: number[], q: number): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * Milliseconds of a fixed integer loop (best of five): this VM's speed drifts by up to 60% within
 * minutes (measured), so a run records it at its start and end beside the load average.
 */
function cpuReference(): number {
	let best = Number.POSITIVE_INFINITY;
	for (let round = 0; round < 5; round++) {
		const started = performance.now();
		let x = 0;
		for (let i = 0; i < 100_000_000; i++) x = (x + i * 7) | 0;
		// Reading x (never 0.5) keeps the loop from being optimised away.
		best = Math.min(best, performance.now() - started + (x === 0.5 ? 1 : 0));
	}
	return best;
}
const median = (values: number[]) => quantile(values, 0.5);

function canDropCaches(): boolean {
	try {
		writeFileSync("/proc/sys/vm/drop_caches", "1");
		return true;
	} catch {
		return false;
	}
}

/** Write dirty pages, then drop the page cache: the next read of any file comes from the disk. */
function dropPageCache(): void {
	sh(["sync"]);
	writeFileSync("/proc/sys/vm/drop_caches", "3");
}

const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * Median wall time (ms) of whole processes, each command run `n` times after one warm-up:
 * hyperfine without a shell when installed, else spawnSync timing (which adds the spawn cost).
 */
function wholeProcess(commands: string[][], n: number, env: Record<string, string>): number[] {
	if (hyperfine) {
		const dir = mkdtempSync(join(tmpdir(), "pi-events-bench-"));
		const out = join(dir, "hf.json");
		sh([hyperfine, "-N", "--warmup", "1", "--runs", String(n), "-i", "--export-json", out, ...commands.map((c) => c.map(shellQuote).join(" "))], {
			env,
		});
		const json = JSON.parse(readFileSync(out, "utf8")) as { results: { median: number }[] };
		rmSync(dir, { recursive: true, force: true });
		return json.results.map((r) => r.median * 1000);
	}
	return commands.map((cmd) => {
		sh(cmd, { env, quiet: true });
		const times: number[] = [];
		for (let i = 0; i < n; i++) {
			const t = performance.now();
			sh(cmd, { env, quiet: true });
			times.push(performance.now() - t);
		}
		return median(times);
	});
}

// 1. Corpus and binary.
mkdirSync(dataDir, { recursive: true });
if (!existsSync(join(corpus, "manifest.json"))) {
	console.error(`generating ${size} corpus in ${corpus} …`);
	sh([process.execPath, join(root, "bench", "corpus.ts"), "--out", corpus, "--size", size]);
}
const manifest = JSON.parse(readFileSync(join(corpus, "manifest.json"), "utf8")) as Manifest;
// The planted tokens, fewest occurrences first, and the two most common words: the queries of
// several sections below.
const planted = Object.entries(manifest.planted).sort((a, b) => a[1] - b[1]);
const rareTerm = planted[0]![0];
const [common1, common2] = [manifest.commonTerms[0] ?? "the", manifest.commonTerms[1] ?? "error"];
sh([process.execPath, join(root, "build.ts")]);
if (!reuseIndex) rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const sessionsDir = join(corpus, "sessions");
const indexPath = join(work, "index.db");
// Every command runs in its own process (PI_EVENTS_SERVER=off), except where a row says it went
// through the resident server (`servedEnv`, below).
const env = { HOME: join(work, "home"), PI_CODING_AGENT_DIR: join(work, "agent"), XDG_CACHE_HOME: join(work, "cache"), NO_COLOR: "1", PI_EVENTS_SERVER: "off" };
const benchStarted = performance.now();
const loadAtStart = loadavg()[0]!;
const cpuAtStart = cpuReference();

const measures: Measure[] = [];
const add = (m: Measure) => {
	measures.push(m);
	console.error(`${m.label}: ${m.text}`);
};

/** A cold index of the corpus by `binary` into `index` (a whole process): seconds, the report, peak RSS (KB) and CPU seconds. */
function coldIndex(binary: string, index: string) {
	const rssFile = join(work, "time.txt");
	const command = [binary, "index", "--json", "--index", index, "--sessions-dir", sessionsDir];
	const started = performance.now();
	const p = Bun.spawnSync(gnuTime ? [gnuTime, "-f", "%M %U %S", "-o", rssFile, ...command] : command, {
		env: { ...process.env, ...env },
		stdout: "pipe",
		stderr: "pipe",
	});
	const seconds = (performance.now() - started) / 1000;
	if (p.exitCode !== 0) throw new Error(`index failed: ${p.stderr.toString()}`);
	const report = JSON.parse(p.stdout.toString()) as { eventsAdded: number; bytesRead: number };
	const [rssKb, user, sys] = gnuTime ? readFileSync(rssFile, "utf8").trim().split(/\s+/).map(Number) : [(p.resourceUsage?.maxRSS ?? 0) / 1024, 0, 0];
	return { seconds, report, rssKb: rssKb!, cpu: gnuTime ? user! + sys! : null };
}

// 2. Cold index, as a whole process (peak RSS and CPU time from GNU time when installed), `--cold-runs`
// times (3 by default): this VM's speed drifts between phases, so one cold index can land anywhere
// in a wide range; the table gives the median run and the range. With `--reference <binary>`,
// that build indexes the same corpus after each of ours, alternating, so both see the same phases.
if (!reuseIndex) {
	const reference = opt("reference", "");
	const referenceIndex = join(work, "reference", "index.db");
	// The corpus read once first, so that every cold index reads its source from the OS page cache:
	// what is timed is the indexer, not this VM's disk (a first run after other work read the 1 GB
	// corpus from disk and took 57 s against 34–36 for the next two).
	sh(["sh", "-c", `find ${shellQuote(sessionsDir)} -type f -name '*.jsonl' -exec cat {} + > /dev/null`]);
	const ours: ReturnType<typeof coldIndex>[] = [];
	const theirs: ReturnType<typeof coldIndex>[] = [];
	for (let i = 0; i < coldRuns; i++) {
		for (const suffix of ["", "-wal", "-shm", "-unsynced"]) rmSync(`${indexPath}${suffix}`, { recursive: true, force: true });
		ours.push(coldIndex(bin, indexPath));
		console.error(`cold index ${i + 1}/${coldRuns}: ${ours.at(-1)!.seconds.toFixed(1)} s`);
		if (reference) {
			rmSync(join(work, "reference"), { recursive: true, force: true });
			theirs.push(coldIndex(reference, referenceIndex));
			console.error(`cold index ${i + 1}/${coldRuns} by the reference build: ${theirs.at(-1)!.seconds.toFixed(1)} s`);
		}
	}
	rmSync(join(work, "reference"), { recursive: true, force: true });
	const medianRun = (runs: ReturnType<typeof coldIndex>[]) => [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor((runs.length - 1) / 2)]!;
	const { seconds, report, cpu } = medianRun(ours);
	const rssKb = Math.max(...ours.map((r) => r.rssKb));
	const range = (runs: ReturnType<typeof coldIndex>[]) =>
		runs.length > 1
			? `; ${runs.length} runs ${Math.min(...runs.map((r) => r.seconds)).toFixed(1)}–${Math.max(...runs.map((r) => r.seconds)).toFixed(1)} s`
			: "";
	const dbBytes = statSync(indexPath).size + (existsSync(`${indexPath}-wal`) ? statSync(`${indexPath}-wal`).size : 0);
	const mbps = manifest.totalBytes / 1e6 / seconds;
	add({
		id: "corpus",
		label: "corpus",
		value: manifest.totalBytes,
		text: `${fmtInt(Math.round(manifest.totalBytes / 1e6))} MB, ${fmtInt(manifest.files)} sessions, ${fmtInt(manifest.entries)} entries`,
	});
	add({
		id: "cold-index",
		label: coldRuns > 1 ? `cold index (median of ${coldRuns})` : "cold index",
		value: mbps,
		text: `${seconds.toFixed(1)} s, **${mbps.toFixed(1)} MB/s**, ${fmtInt(Math.round(report.eventsAdded / seconds))} entries/s${cpu === null ? "" : ` (CPU ${(cpu / seconds).toFixed(2)} cores)`}${range(ours)}`,
		target: "≥ 35 MB/s",
	});
	add({ id: "cold-rss", label: "cold index peak RSS (highest run)", value: rssKb / 1024, text: `**${(rssKb / 1024).toFixed(0)} MB**`, target: "< 300 MB" });
	// The same corpus indexed by another build, in the same run: how this machine compares with the
	// one that build's figures were measured on (`--reference <binary>`).
	if (reference) {
		const version = sh([reference, "--version"]).stdout.toString().trim();
		const other = medianRun(theirs);
		const otherMbps = manifest.totalBytes / 1e6 / other.seconds;
		add({
			id: "cold-index-reference",
			label: `cold index by the reference build (${version})`,
			value: otherMbps,
			text: `${other.seconds.toFixed(1)} s, ${otherMbps.toFixed(1)} MB/s, peak RSS ${(Math.max(...theirs.map((r) => r.rssKb)) / 1024).toFixed(0)} MB${range(theirs)}: this build is ${(mbps / otherMbps).toFixed(2)}× its speed`,
		});
	}
	add({
		id: "index-size",
		label: "index size",
		value: dbBytes / manifest.totalBytes,
		text: `${fmtInt(Math.round(dbBytes / 1e6))} MB (**${((dbBytes / manifest.totalBytes) * 100).toFixed(0)}%** of source)`,
		target: "≤ 50%",
	});
}

// 2b. The cold-built index as a user without a resident server has it: FTS5's segments not merged
// yet (the later rows measure the merged index the bench's own syncs leave: section 4).
if (!reuseIndex) {
	const probe = openIndex(indexPath, { readonly: true });
	const segments = (probe.query("SELECT count(DISTINCT segid) AS n FROM fts_idx").get() as { n: number }).n;
	probe.close();
	const queries = [rareTerm, planted[3]![0], common1, `${common1} ${common2}`];
	const searchArgs = ["search", "--all", "--no-sync", "--json", "--index", indexPath, "--sessions-dir", sessionsDir];
	const [start, ...times] = wholeProcess([[bin, "--version"], ...queries.map((q) => [bin, ...searchArgs, q])], procRuns, env);
	add({
		id: "unmerged-search",
		label: `whole process on the cold-built index before any merge (${segments} FTS5 segments): rare / 1,000 matches / \`${common1}\` / \`${common1} ${common2}\`, over process start`,
		value: Math.max(...times.map((t) => t - start!)),
		text: `${times.map((t) => `+${ms(t - start!)}`).join(" / ")} ms (start ${ms(start!)} ms)`,
	});
}

const db = openIndex(indexPath);
const sourceDirs = [{ path: sessionsDir, origin: "flag" as const }];

// 3. No-op sync, in process and as `pi-events index`; process start.
{
	const times: number[] = [];
	for (let i = 0; i < 20; i++) {
		const t = performance.now();
		syncIndex(db, { sourceDirs });
		times.push(performance.now() - t);
	}
	add({ id: "noop-sync", label: "no-op sync (in-process, median)", value: median(times), text: `${ms(median(times))} ms` });
	const full: number[] = [];
	for (let i = 0; i < 5; i++) {
		const t = performance.now();
		syncIndex(db, { sourceDirs, check: { mode: "full" } });
		full.push(performance.now() - t);
	}
	add({
		id: "full-check",
		label: "full check: every session file stat'ed (`index --full`, in-process, median)",
		value: median(full),
		text: `${ms(median(full))} ms`,
	});
	const [start, noop] = wholeProcess(
		[
			[bin, "--version"],
			[bin, "index", "--index", indexPath, "--sessions-dir", sessionsDir],
		],
		procRuns,
		env,
	);
	add({ id: "start", label: "process start (`pi-events --version`, median)", value: start!, text: `**${ms(start!)} ms**` });
	add({ id: "noop-index", label: "no-op `pi-events index` (whole process, median)", value: noop!, text: `**${ms(noop!)} ms**`, target: "< 30 ms" });
}

// 3b. One session file deleted: the search that sees it answers at once; its text is merged out of
// the index files in the background (sync/scrub.ts). The file is put back and indexed again after.
{
	const files = sh(["sh", "-c", `find ${shellQuote(sessionsDir)} -type f -name '*.jsonl' | sort`])
		.stdout.toString()
		.trim()
		.split("\n");
	const victim = files[Math.floor(files.length / 2)]!;
	const aside = join(work, "deleted-session.jsonl");
	sh(["mv", victim, aside]);
	try {
		const started = performance.now();
		sh([bin, "search", "--all", "--json", "--index", indexPath, "--sessions-dir", sessionsDir, rareTerm], { env, quiet: true });
		const answered = performance.now() - started;
		while (deletedTextPending(db) && performance.now() - started < 600_000) Bun.sleepSync(20);
		const scrubbed = performance.now() - started;
		add({
			id: "deletion",
			label: "one session file deleted: the next search (whole process, its sync) / until its text is merged out of the index files (in the background)",
			value: answered,
			text: `${ms(answered)} ms / ${(scrubbed / 1000).toFixed(1)} s`,
		});
	} finally {
		sh(["mv", aside, victim]);
		syncIndex(db, { sourceDirs });
	}
}

// 4. One appended entry, to the largest session and to a ~50 KB one (the corpus is restored after).
//    "user": a user message. "toolResult": a tool call is appended and synced first (untimed), then
//    its result is appended and that sync timed: the path of a live session, where the writer asks
//    whether the call ran pi-events (schema 18's index).
function appendTimes(relPath: string, kind: "user" | "toolResult" = "user"): number[] {
	const path = join(corpus, relPath);
	const lines = readFileSync(path, "utf8").trimEnd().split("\n");
	const last = JSON.parse(lines[lines.length - 1]!) as { id: string };
	const original = statSync(path);
	const times: number[] = [];
	let parent = last.id;
	try {
		for (let i = 0; i < 7; i++) {
			const id = `b${i.toString(16).padStart(7, "0")}`;
			const at = Date.UTC(2026, 10, 30, 12, 0, i);
			const timestamp = new Date(at).toISOString();
			if (kind === "toolResult") {
				const callId = `call_bench_${i}`;
				const call = {
					type: "message",
					id: `c${id}`,
					parentId: parent,
					timestamp,
					message: {
						role: "assistant",
						content: [{ type: "toolCall", id: callId, name: "bash", arguments: { command: `ls zqappend${i}` } }],
						api: "anthropic-messages",
						provider: "anthropic",
						model: "claude-sonnet-4-5",
						usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
						stopReason: "toolUse",
						timestamp: at,
					},
				};
				appendFileSync(path, `${JSON.stringify(call)}\n`);
				syncIndex(db, { sourceDirs, check: { callerFile: path } });
				parent = call.id;
			}
			const entry =
				kind === "toolResult"
					? {
							type: "message",
							id,
							parentId: parent,
							timestamp,
							message: {
								role: "toolResult",
								toolCallId: `call_bench_${i}`,
								toolName: "bash",
								content: [{ type: "text", text: `zqappend${i}` }],
								isError: false,
								timestamp: at,
							},
						}
					: {
							type: "message",
							id,
							parentId: parent,
							timestamp,
							message: { role: "user", content: [{ type: "text", text: `benchmark append ${i} zqappend${i}` }], timestamp: at },
						};
			parent = id;
			appendFileSync(path, `${JSON.stringify(entry)}\n`);
			const t = performance.now();
			// The session being written is the caller's (or, after its first append, a recent one): checked every sync.
			const r = syncIndex(db, { sourceDirs, check: { callerFile: path } });
			times.push(performance.now() - t);
			if (r.sessions.appended !== 1) throw new Error(`expected one appended session, got ${JSON.stringify(r.sessions)}`);
		}
	} finally {
		// Restore the corpus byte for byte (truncate back), then let the index follow.
		const fd = openSync(path, "r+");
		ftruncateSync(fd, original.size);
		closeSync(fd);
		syncIndex(db, { sourceDirs });
	}
	return times.slice(1);
}
{
	const big = appendTimes(manifest.largestSession.path);
	const bigResult = appendTimes(manifest.largestSession.path, "toolResult");
	const small = appendTimes(manifest.smallSession.path);
	add({
		id: "append-big",
		label: "sync after appending 1 entry to the largest session (median)",
		value: median(big),
		text: `${ms(median(big))} ms (${(manifest.largestSession.bytes / 1e6).toFixed(0)} MB session)`,
	});
	add({
		id: "append-big-result",
		label: "sync after appending a tool result to the largest session, its call synced before (median)",
		value: median(bigResult),
		text: `${ms(median(bigResult))} ms`,
	});
	add({
		id: "append-small",
		label: "sync after appending 1 entry to a small session (median)",
		value: median(small),
		text: `${ms(median(small))} ms (${(manifest.smallSession.bytes / 1e3).toFixed(0)} KB session)`,
	});
}

// 5. Freshness inside one search process: `freshness.syncMs` without and with a sync.
interface CliAnswer {
	hits: unknown[];
	elapsedMs: number;
	freshness: { syncMs: number };
	coverage: { estimatedMatches: number; matchesExact: boolean };
}
/** `--all`, or the caller's root for a scoped class. */
const scopeArgs = (roots?: string[]) => (roots ? roots.flatMap((r) => ["--root", r]) : ["--all"]);
function cliSearch(args: string[], sync = false, roots?: string[]): CliAnswer {
	const p = sh([bin, "search", ...scopeArgs(roots), ...(sync ? [] : ["--no-sync"]), "--json", "--index", indexPath, "--sessions-dir", sessionsDir, ...args], {
		env,
		quiet: true,
	});
	return JSON.parse(p.stdout.toString()) as CliAnswer;
}
{
	const noSync: number[] = [];
	const withSync: number[] = [];
	for (let i = 0; i < procRuns; i++) {
		noSync.push(cliSearch([rareTerm]).freshness.syncMs);
		withSync.push(cliSearch([rareTerm], true).freshness.syncMs);
	}
	add({
		id: "fresh-nosync",
		label: "freshness check inside one search (`freshness.syncMs`, `--no-sync`, median)",
		value: median(noSync),
		text: `${ms(median(noSync))} ms`,
	});
	add({
		id: "fresh-sync",
		label: "freshness check with the sync a search runs (`freshness.syncMs`, median)",
		value: median(withSync),
		text: `${ms(median(withSync))} ms`,
	});
	const [rareWithSync] = wholeProcess([[bin, "search", "--all", "--json", "--index", indexPath, "--sessions-dir", sessionsDir, rareTerm]], procRuns, env);
	add({ id: "proc-sync", label: "whole `pi-events search` process with its sync (rare term, median)", value: rareWithSync!, text: `${ms(rareWithSync!)} ms` });

	// The first search of a work session: the last full check is older than 10 minutes (sync/check.ts).
	// A search then stats a larger slice of idle files; it never runs the full check.
	const staleSync: number[] = [];
	const staleWhole: number[] = [];
	const ageFullCheck = () => db.run("UPDATE meta SET value = ?1 WHERE key = 'last_full_check'", [JSON.stringify({ at: Date.now() - 60 * 60 * 1000 })]);
	for (let i = 0; i < procRuns; i++) {
		ageFullCheck();
		const t = performance.now();
		const answer = cliSearch([rareTerm], true);
		staleWhole.push(performance.now() - t);
		staleSync.push(answer.freshness.syncMs);
	}
	syncIndex(db, { sourceDirs, check: { mode: "full" } });
	add({
		id: "fresh-stale",
		label: "a search when the last full check is over 10 minutes old: its sync (`freshness.syncMs`) / whole process (spawn timing), medians",
		value: median(staleSync),
		text: `${ms(median(staleSync))} ms / ${ms(median(staleWhole))} ms`,
	});
}

// 6. Searches, class by class.
const plantedPhrase = Object.keys(manifest.phrases)[0] ?? "quantum marmalade pipeline";
const rarePhrase = rarePhraseOfCommonWords(manifest.commonTerms.length >= 3 ? manifest.commonTerms : ["the", "error", "function"]);
if (rarePhrase) console.error(`rare phrase of common words: "${rarePhrase.phrase}", ${fmtInt(rarePhrase.matches)} fragments`);
// One workspace of a typical size (the median of the corpus's working directories by sessions), and
// one without sessions (a new project): a filter-only search there reads only that scope's sessions.
const workspaces = db.query("SELECT cwd_real AS cwd, count(*) AS n FROM sessions WHERE cwd_real IS NOT NULL GROUP BY cwd_real ORDER BY n, cwd_real").all() as {
	cwd: string;
	n: number;
}[];
const workspace = workspaces[Math.floor(workspaces.length / 2)] ?? { cwd: "/", n: 0 };
const emptyWorkspace = join(tmpdir(), "pi-events-bench-new-project");
mkdirSync(emptyWorkspace, { recursive: true });
console.error(`one workspace: ${workspace.cwd} (${fmtInt(workspace.n)} sessions with that cwd)`);
const classes: {
	name: string;
	query: string;
	/** The caller's roots (`--root`); absent: unscoped (`--all`). */
	roots?: string[];
	/** What ripgrep looks for; null: nothing comparable (a search by filters alone). */
	rg: string | null;
	filters?: SearchFilters;
	sort?: "newest" | "oldest";
	groupBy?: "session";
	cli?: string[];
}[] = [
	{ name: "rare", query: rareTerm, rg: rareTerm },
	{ name: "medium", query: planted[2]![0], rg: planted[2]![0] },
	{ name: "1,000 matches", query: planted[3]![0], rg: planted[3]![0] },
	{ name: "10,000 matches", query: planted[4]![0], rg: planted[4]![0] },
	{ name: `very common word (\`${common1}\`)`, query: common1, rg: common1 },
	{ name: `two very common words (\`${common1} ${common2}\`)`, query: `${common1} ${common2}`, rg: common1 },
	{ name: `phrase of common words (\`"${common1} ${common2}"\`)`, query: `"${common1} ${common2}"`, rg: `${common1} ${common2}` },
	{ name: `planted phrase (\`"${plantedPhrase}"\`)`, query: `"${plantedPhrase}"`, rg: plantedPhrase },
	// Issue 34's answers stage at its busiest: many matched turns, each with its answer, follow-up turns and later reports looked up.
	{ name: "a report in plain words (`deploy broken after release`)", query: "deploy broken after release", rg: "deploy" },
	...(rarePhrase === null
		? []
		: [
				{
					name: 'rare phrase of common words (the common words in their rarest order, e.g. `"function error the"`)',
					query: `"${rarePhrase.phrase}"`,
					rg: rarePhrase.phrase,
				},
			]),
	{
		name: "filtered (1,000 matches, `--kind`, `--since`)",
		query: planted[3]![0],
		rg: planted[3]![0],
		filters: { kinds: ["tool.result", "user.text"], sinceMs: Date.UTC(2026, 0, 1) },
		cli: ["--kind", "tool.result,user.text", "--since", "2026-01-01"],
	},
	{
		name: "10,000 matches, newest first, one per session",
		query: planted[4]![0],
		rg: planted[4]![0],
		sort: "newest",
		groupBy: "session",
		cli: ["--sort", "newest", "--group", "session"],
	},
	{ name: "filter-only (no query, `--error`)", query: "", rg: null, filters: { isError: true }, cli: ["--error"] },
	{
		name: "filter-only, selective (no query, `--branch alternate --kind bash.command`)",
		query: "",
		rg: null,
		filters: { branchStates: ["alternate"], kinds: ["bash.command"] },
		cli: ["--branch", "alternate", "--kind", "bash.command"],
	},
	{
		name: "filter-only, selective, in one workspace (`--root`, a median workspace)",
		query: "",
		rg: null,
		roots: [workspace.cwd],
		filters: { branchStates: ["alternate"], kinds: ["bash.command"] },
		cli: ["--branch", "alternate", "--kind", "bash.command"],
	},
	{
		name: "filter-only in a workspace without sessions (`--root`, `--error`)",
		query: "",
		rg: null,
		roots: [emptyWorkspace],
		filters: { isError: true },
		cli: ["--error"],
	},
];

/**
 * The phrase of the corpus's common words (each in a large share of the fragments) that the fewest
 * fragments hold (about 1,500 at 1 GB): finding them means walking every fragment holding all the
 * words to check their positions, unless that is bounded. Found here by exact, unbounded counts.
 */
function rarePhraseOfCommonWords(words: string[]): { phrase: string; matches: number } | null {
	const [a, b, c] = words as [string, string, string];
	const candidates = [`${c} ${b} ${a}`, `${b} ${a} ${c}`, `${c} ${a} ${b}`, `${a} ${c} ${b}`, `${b} ${c} ${a}`, `${a} ${b} ${c}`];
	let rarest: { phrase: string; matches: number } | null = null;
	for (const phrase of candidates) {
		const matches = (db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH ?").get(`"${phrase}"`) as { n: number }).n;
		if (matches >= 1 && (rarest === null || matches < rarest.matches)) rarest = { phrase, matches };
	}
	return rarest;
}
// The resident server for the command line: each class is also measured through it.
const servedEnv: Record<string, string> = { ...env, PI_EVENTS_SERVER: "" };
const cliServer = Bun.spawn([bin, "serve", "--socket", "--index", indexPath, "--sessions-dir", sessionsDir], {
	env: { ...process.env, ...servedEnv },
	stdout: "ignore",
	stderr: "pipe",
});
{
	// Listening once it says it is ready (a stale socket file may be there before).
	const reader = cliServer.stderr.getReader();
	let said = "";
	while (!said.includes("ready")) {
		const { value, done } = await reader.read();
		if (done) throw new Error(`serve --socket did not start: ${said}`);
		said += new TextDecoder().decode(value);
	}
	reader.releaseLock();
}
// A server that has answered a few commands: one pass over the classes first (its code is compiled
// as it runs, and the first commands of a new server are slower).
for (const q of classes) {
	sh([bin, "search", ...scopeArgs(q.roots), "--no-sync", "--json", "--index", indexPath, "--sessions-dir", sessionsDir, ...(q.cli ?? []), q.query], {
		env: servedEnv,
		quiet: true,
	});
}
const classResults: ClassResult[] = [];
for (const q of classes) {
	const cliArgs = [...(q.cli ?? []), q.query];
	const scope = { roots: q.roots ?? null, current: null };
	let cold: number | null = null;
	if (dropCaches) {
		dropPageCache();
		cold = cliSearch(cliArgs, false, q.roots).elapsedMs;
	}
	const fresh: number[] = [];
	let answer: CliAnswer | null = null;
	for (let i = 0; i < 5; i++) {
		answer = cliSearch(cliArgs, false, q.roots);
		fresh.push(answer.elapsedMs);
	}
	const inproc: number[] = [];
	let hits = 0;
	for (let i = 0; i < runs; i++) {
		const t = performance.now();
		hits = search(new Gate(db, scope), { query: q.query, filters: q.filters ?? {}, limit: 10, sort: q.sort, groupBy: q.groupBy }).hits.length;
		inproc.push(performance.now() - t);
	}
	const [start, proc, rg = Number.NaN] = wholeProcess(
		[
			[bin, "--version"],
			// With the session directory, as a user's search runs: the freshness check compares it.
			[bin, "search", ...scopeArgs(q.roots), "--no-sync", "--json", "--index", indexPath, "--sessions-dir", sessionsDir, ...cliArgs],
			...(q.rg === null ? [] : [["rg", "--fixed-strings", "--ignore-case", "--files-with-matches", q.rg, sessionsDir]]),
		],
		procRuns,
		env,
	);
	const [servedStart, served] = wholeProcess(
		[
			[bin, "--version"],
			[bin, "search", ...scopeArgs(q.roots), "--no-sync", "--json", "--index", indexPath, "--sessions-dir", sessionsDir, ...cliArgs],
		],
		procRuns,
		servedEnv,
	);
	const c = answer!.coverage;
	const result: ClassResult = {
		name: q.name,
		query: q.query,
		hits,
		matches: c.matchesExact ? fmtInt(c.estimatedMatches) : `> ${fmtInt(c.estimatedMatches - 1)}`,
		p50: quantile(inproc, 0.5),
		p95: quantile(inproc, 0.95),
		p99: quantile(inproc, 0.99),
		max: Math.max(...inproc),
		fresh: median(fresh),
		cold,
		proc: proc!,
		start: start!,
		rg,
		served: served!,
		servedStart: servedStart!,
	};
	classResults.push(result);
	console.error(
		`search ${q.name}: p50 ${ms(result.p50)} p99 ${ms(result.p99)} fresh ${ms(result.fresh)}${cold === null ? "" : ` cold ${ms(cold)}`} ms, process ${ms(result.proc)} ms, served ${ms(result.served!)} ms, rg ${ms(result.rg)} ms`,
	);
}
cliServer.kill("SIGTERM");
await cliServer.exited;
// A real session id, for the read paths below (out of scope for a caller rooted elsewhere).
const someSessionId = (db.query("SELECT session_id FROM sessions ORDER BY session_key LIMIT 1").get() as { session_id: string }).session_id;
db.close();

/** A `serve --stdio` process for the caller root `root`, and a reader of its output lines. */
function startServer(root: string) {
	const proc = Bun.spawn([bin, "serve", "--stdio", "--index", indexPath, "--sessions-dir", sessionsDir, "--root", root], {
		env: { ...process.env, ...env },
		stdin: "pipe",
		stdout: "pipe",
		stderr: "ignore",
	});
	const reader = proc.stdout.getReader();
	let buffered = "";
	const next = async (): Promise<string> => {
		for (;;) {
			const nl = buffered.indexOf("\n");
			if (nl >= 0) {
				const line = buffered.slice(0, nl);
				buffered = buffered.slice(nl + 1);
				return line;
			}
			const { value, done } = await reader.read();
			if (done) throw new Error("server closed");
			buffered += new TextDecoder().decode(value);
		}
	};
	return { proc, next };
}

// 7. tools/call round trips through serve --stdio.
async function toolsCall(): Promise<number[]> {
	const { proc, next } = startServer("/");
	const send = (msg: unknown) => {
		proc.stdin.write(`${JSON.stringify(msg)}\n`);
		proc.stdin.flush();
	};
	send({
		jsonrpc: "2.0",
		id: 0,
		method: "initialize",
		params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "0" } },
	});
	await next();
	const times: number[] = [];
	for (let i = 1; i <= 200; i++) {
		const t = performance.now();
		send({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "event_search", arguments: { query: planted[2]![0] } } });
		await next();
		times.push(performance.now() - t);
	}
	proc.stdin.end();
	await proc.exited;
	return times.slice(10);
}
{
	const rt = await toolsCall();
	add({
		id: "tools-call",
		label: "`tools/call` round trip through `serve --stdio` (event_search, median / p95)",
		value: median(rt),
		text: `${ms(median(rt))} ms / ${ms(quantile(rt, 0.95))} ms`,
	});
}

// 7b. event_read of a session outside the caller's scope vs a session id that does not exist:
// both must do the same work (issue 15). Interleaved, side by side in one server.
async function readPaths(calls: number): Promise<{ outOfScope: number[]; missing: number[] }> {
	const elsewhere = mkdtempSync(join(tmpdir(), "pi-events-bench-root-"));
	const { proc, next } = startServer(elsewhere);
	let id = 0;
	const call = async (sessionId: string): Promise<number> => {
		const t = performance.now();
		proc.stdin.write(
			`${JSON.stringify({ jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name: "event_read", arguments: { sessionId, entryId: "e1" } } })}\n`,
		);
		proc.stdin.flush();
		await next();
		return performance.now() - t;
	};
	proc.stdin.write(
		`${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "0" } } })}\n`,
	);
	proc.stdin.flush();
	await next();
	const missingId = "00000000-0000-4000-8000-00000000dead";
	const outOfScope: number[] = [];
	const missing: number[] = [];
	for (let i = 0; i < calls + 100; i++) {
		const first = i % 2 === 0;
		const a = await call(first ? someSessionId : missingId);
		const b = await call(first ? missingId : someSessionId);
		if (i < 100) continue; // warm-up
		(first ? outOfScope : missing).push(a);
		(first ? missing : outOfScope).push(b);
	}
	proc.stdin.end();
	await proc.exited;
	rmSync(elsewhere, { recursive: true, force: true });
	return { outOfScope, missing };
}
{
	const { outOfScope, missing } = await readPaths(2000);
	const us = (xs: number[]) => `${Math.round(median(xs) * 1000)} µs`;
	add({
		id: "read-paths",
		label: "`event_read` round trip: a session outside the scope vs a missing one (medians, 2,000 each, interleaved)",
		value: median(outOfScope) - median(missing),
		text: `${us(outOfScope)} vs ${us(missing)}`,
		target: "the same work",
	});
}

// 8. The table.
const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, bun ${Bun.version}`;
const minutes = (performance.now() - benchStarted) / 60_000;
const results: Results = {
	size,
	machine,
	date: new Date().toISOString(),
	conditions: `load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end; CPU reference loop ${cpuAtStart.toFixed(0)} ms at the start, ${cpuReference().toFixed(0)} ms at the end; ${minutes.toFixed(1)} min; whole processes: ${hyperfine ? "hyperfine -N" : "spawnSync"}, ${procRuns} runs; in-process: ${runs} runs; page cache ${dropCaches ? "dropped before each class's first query" : "not dropped (no permission or --no-drop-caches)"}`,
	measures,
	classes: classResults,
};
const table = singleTable(results);
const out = opt("out", join(dataDir, `results-${size}.md`));
writeFileSync(out, `${table}\n`);
writeFileSync(join(dataDir, `results-${size}.json`), `${JSON.stringify(results, null, 2)}\n`);
console.log(table);

/** The start a class's whole processes are compared with: its own, else (older runs) the run's. */
function classStart(c: ClassResult, runStart: number): number {
	return c.start ?? runStart;
}

function classHeader(): string[] {
	return [
		"| search class | matches | hits | in-process p50 | p95 | p99 | max | first query of a new process | first after dropping the page cache | whole process (`--all` or the class's `--root`; `--no-sync --json --sessions-dir`) | process − start | `rg -l -i -F` | rg ÷ pi-events | whole process through `serve --socket` | process − start | rg ÷ pi-events |",
		"|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
	];
}

function singleTable(r: Results): string {
	const start = r.measures.find((m) => m.id === "start")?.value ?? 0;
	return [
		`### ${r.size} corpus (${r.machine})`,
		"",
		r.conditions,
		"",
		"| measure | result | target |",
		"|---|---|---|",
		...r.measures.map((m) => `| ${m.label} | ${m.text} | ${m.target ?? ""} |`),
		"",
		...classHeader(),
		...r.classes.map(
			(c) =>
				`| ${c.name} | ${c.matches} | ${c.hits} | ${ms(c.p50)} ms | ${ms(c.p95)} | ${ms(c.p99)} | ${c.max === undefined ? "–" : ms(c.max)} | ${ms(c.fresh)} ms | ${c.cold === null ? "–" : `${ms(c.cold)} ms`} | ${ms(c.proc)} ms | +${ms(c.proc - classStart(c, start))} | ${hasRg(c) ? `${ms(c.rg)} ms` : "–"} | ${hasRg(c) ? `${(c.rg / c.proc).toFixed(1)}×` : "–"} | ${servedCells(c)} |`,
		),
	].join("\n");
}

function servedCells(c: ClassResult): string {
	if (c.served === undefined) return "– | – | –";
	return `${ms(c.served)} ms | +${ms(c.served - (c.servedStart ?? 0))} | ${hasRg(c) ? `${(c.rg / c.served).toFixed(1)}×` : "–"}`;
}

/** One table, one column per corpus size: how each figure grows with history. */
function compareTable(all: Results[]): string {
	const head = `| measure | ${all.map((r) => r.size).join(" | ")} | target |`;
	const rule = `|---|${all.map(() => "---|").join("")}---|`;
	const ids = [...new Set(all.flatMap((r) => r.measures.map((m) => m.id)))];
	const rows = ids.map((id) => {
		const ms0 = all.map((r) => r.measures.find((m) => m.id === id));
		const first = ms0.find(Boolean)!;
		return `| ${first.label} | ${ms0.map((m) => m?.text ?? "–").join(" | ")} | ${first.target ?? ""} |`;
	});
	const names = [...new Set(all.flatMap((r) => r.classes.map((c) => c.name)))];
	const cell = (f: (c: ClassResult, r: Results) => string) => (name: string) =>
		all.map((r) => {
			const c = r.classes.find((x) => x.name === name);
			return c ? f(c, r) : "–";
		});
	const startOf = (r: Results) => r.measures.find((m) => m.id === "start")?.value ?? 0;
	const classRows = names.flatMap((name) => [
		`| **${name}**: matches | ${cell((c) => c.matches)(name).join(" | ")} | |`,
		`| in-process p50 / p99 (max) | ${cell((c) => `${ms(c.p50)} / ${ms(c.p99)} ms${c.max === undefined ? "" : ` (${ms(c.max)})`}`)(name).join(" | ")} | p99 < 50 ms |`,
		`| first query of a new process / after dropping the page cache | ${cell((c) => `${ms(c.fresh)} / ${c.cold === null ? "–" : ms(c.cold)} ms`)(name).join(" | ")} | |`,
		`| whole process (process − start) / \`rg -l\` | ${cell((c, r) => `**${ms(c.proc)}** (+${ms(c.proc - classStart(c, startOf(r)))})${hasRg(c) ? ` / ${ms(c.rg)} ms = **${(c.rg / c.proc).toFixed(1)}×**` : ""}`)(name).join(" | ")} | ≤ start + 10 ms, ≥ 10× |`,
		`| whole process through \`serve --socket\` (process − start) / \`rg -l\` | ${cell((c) => (c.served === undefined ? "–" : `**${ms(c.served)}** (+${ms(c.served - (c.servedStart ?? 0))})${hasRg(c) ? ` = **${(c.rg / c.served).toFixed(1)}×**` : ""}`))(name).join(" | ")} | ≤ start + 10 ms, ≥ 10× |`,
	]);
	return [
		head,
		rule,
		...rows,
		...classRows,
		"",
		...all.map((r) => `${r.size}: ${r.machine}, ${r.date.slice(0, 16).replace("T", " ")} UTC; ${r.conditions}`),
	].join("\n");
}
