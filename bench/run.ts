#!/usr/bin/env bun
/**
 * The pi-events benchmark: one run, one table.
 *
 *   bun run bench [--size 200MB|1GB] [--corpus DIR] [--runs N] [--out FILE]
 *
 * Generates (or reuses) a seeded corpus with bench/corpus.ts, builds dist/pi-events, then measures
 * cold index, no-op sync, one-entry appends, search latency in-process and as whole processes,
 * the same searches with ripgrep over the raw files, and tools/call round trips through
 * `serve --stdio`. Everything lives under bench/out/ (gitignored) or the given corpus dir.
 */
import { appendFileSync, closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { syncIndex } from "../src/sync/sync.ts";
import { search } from "../src/query/search.ts";
import type { SearchFilters } from "../src/query/search.ts";
import { openIndex } from "../src/store/db.ts";

const argv = process.argv.slice(2);
const opt = (name: string, fallback: string) => {
	const i = argv.indexOf(`--${name}`);
	return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const size = opt("size", "200MB");
const root = resolve(import.meta.dir, "..");
const corpus = resolve(opt("corpus", join(root, "bench", "out", `corpus-${size}`)));
const runs = Number(opt("runs", "50"));
const work = join(root, "bench", "out", `work-${size}`);
const bin = join(root, "dist", "pi-events");

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

function quantile(values: number[], q: number): number {
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
const ms = (v: number) => (v < 10 ? v.toFixed(2) : v.toFixed(1));

// 1. Corpus and binary.
if (!existsSync(join(corpus, "manifest.json"))) {
	console.error(`generating ${size} corpus in ${corpus} …`);
	sh([process.execPath, join(root, "bench", "corpus.ts"), "--out", corpus, "--size", size]);
}
const manifest = JSON.parse(readFileSync(join(corpus, "manifest.json"), "utf8")) as Manifest;
sh([process.execPath, join(root, "build.ts")]);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const sessionsDir = join(corpus, "sessions");
const indexPath = join(work, "index.db");
const env = { HOME: join(work, "home"), PI_CODING_AGENT_DIR: join(work, "agent"), XDG_CACHE_HOME: join(work, "cache"), NO_COLOR: "1" };

// The append tests change two sessions: work on copies so the corpus stays pristine for rg and reruns.
const rows: [string, string][] = [];
const add = (what: string, value: string) => {
	rows.push([what, value]);
	console.error(`${what}: ${value}`);
};

// 2. Cold index, as a whole process (peak RSS from the kernel).
{
	const started = performance.now();
	const p = Bun.spawnSync([bin, "index", "--json", "--index", indexPath, "--sessions-dir", sessionsDir], { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
	const seconds = (performance.now() - started) / 1000;
	if (p.exitCode !== 0) throw new Error(`index failed: ${p.stderr.toString()}`);
	const report = JSON.parse(p.stdout.toString()) as { eventsAdded: number; bytesRead: number };
	// resourceUsage().maxRSS is in bytes.
	const rssMb = (p.resourceUsage?.maxRSS ?? 0) / 1024 / 1024;
	const dbBytes = statSync(indexPath).size + (existsSync(`${indexPath}-wal`) ? statSync(`${indexPath}-wal`).size : 0);
	add("corpus", `${(manifest.totalBytes / 1e6).toFixed(0)} MB, ${manifest.files} sessions, ${manifest.entries.toLocaleString("en-US")} entries`);
	add("cold index", `${seconds.toFixed(1)} s, ${(manifest.totalBytes / 1e6 / seconds).toFixed(1)} MB/s, ${Math.round(report.eventsAdded / seconds).toLocaleString("en-US")} entries/s`);
	add("cold index peak RSS", `${rssMb.toFixed(0)} MB`);
	add("index size", `${(dbBytes / 1e6).toFixed(0)} MB (${((dbBytes / manifest.totalBytes) * 100).toFixed(0)}% of source)`);
}

const db = openIndex(indexPath);
const sourceDirs = [{ path: sessionsDir, origin: "flag" as const }];

// 3. No-op sync, in process.
{
	const times: number[] = [];
	for (let i = 0; i < 20; i++) {
		const t = performance.now();
		syncIndex(db, { sourceDirs });
		times.push(performance.now() - t);
	}
	add("no-op sync (in-process, median)", `${ms(quantile(times, 0.5))} ms`);
}

// 4. One appended entry, to the largest session and to a ~50 KB one.
function appendTimes(relPath: string): number[] {
	const path = join(corpus, relPath);
	const lines = readFileSync(path, "utf8").trimEnd().split("\n");
	const last = JSON.parse(lines[lines.length - 1]!) as { id: string };
	const original = statSync(path).size;
	const times: number[] = [];
	let parent = last.id;
	try {
		for (let i = 0; i < 7; i++) {
			const id = `b${i.toString(16).padStart(7, "0")}`;
			const entry = {
				type: "message",
				id,
				parentId: parent,
				timestamp: new Date(Date.UTC(2026, 10, 30, 12, 0, i)).toISOString(),
				message: { role: "user", content: [{ type: "text", text: `benchmark append ${i} zqappend${i}` }], timestamp: Date.UTC(2026, 10, 30, 12, 0, i) },
			};
			parent = id;
			appendFileSync(path, `${JSON.stringify(entry)}\n`);
			const t = performance.now();
			const r = syncIndex(db, { sourceDirs });
			times.push(performance.now() - t);
			if (r.sessions.appended !== 1) throw new Error(`expected one appended session, got ${JSON.stringify(r.sessions)}`);
		}
	} finally {
		// Restore the corpus byte for byte (truncate back), then let the index follow.
		const fd = openSync(path, "r+");
		ftruncateSync(fd, original);
		closeSync(fd);
		syncIndex(db, { sourceDirs });
	}
	return times.slice(1);
}
{
	const big = appendTimes(manifest.largestSession.path);
	const small = appendTimes(manifest.smallSession.path);
	add(`append 1 entry, ${(manifest.largestSession.bytes / 1e6).toFixed(0)} MB session (median)`, `${ms(quantile(big, 0.5))} ms`);
	add(`append 1 entry, ${(manifest.smallSession.bytes / 1e3).toFixed(0)} KB session (median)`, `${ms(quantile(small, 0.5))} ms`);
}

// 5. Searches.
const planted = Object.entries(manifest.planted).sort((a, b) => a[1] - b[1]);
const common = manifest.commonTerms[0] ?? "the";
const phrase = Object.keys(manifest.phrases)[0] ?? "quantum marmalade pipeline";
const queries: { name: string; query: string; rg: string; filters?: SearchFilters; cli?: string[] }[] = [
	{ name: `rare (${planted[0]![1]} match)`, query: planted[0]![0], rg: planted[0]![0] },
	{ name: `medium (${planted[2]![1]} matches)`, query: planted[2]![0], rg: planted[2]![0] },
	{ name: `common (${planted[4]![1]} matches)`, query: planted[4]![0], rg: planted[4]![0] },
	{ name: `very common ("${common}")`, query: common, rg: common },
	{ name: "phrase", query: `"${phrase}"`, rg: phrase },
	{ name: "filtered (common + kind + since)", query: planted[3]![0], rg: planted[3]![0], filters: { kinds: ["tool.result", "user.text"], sinceMs: Date.UTC(2026, 0, 1) }, cli: ["--kind", "tool.result,user.text", "--since", "2026-01-01"] },
];
const scope = { roots: null, current: null };
const table: string[][] = [];
for (const q of queries) {
	const inproc: number[] = [];
	let hits = 0;
	for (let i = 0; i < runs; i++) {
		const t = performance.now();
		hits = search(db, { query: q.query, filters: q.filters ?? {}, limit: 10, scope }).hits.length;
		inproc.push(performance.now() - t);
	}
	const proc: number[] = [];
	for (let i = 0; i < 11; i++) {
		const t = performance.now();
		sh([bin, "search", "--all", "--no-sync", "--json", "--index", indexPath, ...(q.cli ?? []), q.query], { env, quiet: true });
		proc.push(performance.now() - t);
	}
	const rgTimes: number[] = [];
	for (let i = 0; i < 5; i++) {
		const t = performance.now();
		sh(["rg", "--fixed-strings", "--ignore-case", "--files-with-matches", q.rg, sessionsDir], { quiet: true });
		rgTimes.push(performance.now() - t);
	}
	const p50 = quantile(proc, 0.5);
	const rg50 = quantile(rgTimes, 0.5);
	table.push([
		q.name,
		String(hits),
		ms(quantile(inproc, 0.5)),
		ms(quantile(inproc, 0.95)),
		ms(quantile(inproc, 0.99)),
		ms(p50),
		ms(rg50),
		`${(rg50 / p50).toFixed(1)}×`,
	]);
	console.error(`search ${q.name}: p50 ${ms(quantile(inproc, 0.5))} ms, process ${ms(p50)} ms, rg ${ms(rg50)} ms`);
}
db.close();

// 6. tools/call round trips through serve --stdio.
async function toolsCall(): Promise<number[]> {
	const proc = Bun.spawn([bin, "serve", "--stdio", "--index", indexPath, "--sessions-dir", sessionsDir, "--root", "/"], {
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
	const send = (msg: unknown) => {
		proc.stdin.write(`${JSON.stringify(msg)}\n`);
		proc.stdin.flush();
	};
	send({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "0" } } });
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
const rt = await toolsCall();

// 7. The table.
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, bun ${Bun.version}`;
// One table: every measure is a row; search rows fill the latency columns.
const lines = [
	`### ${size} corpus (${machine})`,
	"",
	"| measure | result | p95 | p99 | `pi-events search` process, p50 | `rg` over the files, p50 | rg ÷ pi-events |",
	"|---|---|---|---|---|---|---|",
	...rows.map(([a, b]) => `| ${a} | ${b} | | | | | |`),
	`| tools/call round trip (event_search) | ${ms(quantile(rt, 0.5))} ms | ${ms(quantile(rt, 0.95))} ms | | | | |`,
	...table.map(([name, hits, p50, p95, p99, proc, rg, ratio]) => `| search ${name}, ${hits} hits, in-process | ${p50} ms | ${p95} ms | ${p99} ms | ${proc} ms | ${rg} ms | ${ratio} |`),
];
const out = opt("out", join(root, "bench", "out", `results-${size}.md`));
mkdirSync(join(root, "bench", "out"), { recursive: true });
writeFileSync(out, `${lines.join("\n")}\n`);
console.log(lines.join("\n"));
