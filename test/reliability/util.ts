/**
 * Shared machinery of the reliability suites: an isolated pi layout (temp HOME, agent dir, XDG
 * dirs: never the real ~/.pi), a generated bench corpus, the `pi-events` command line (the source
 * through bun, or $PI_EVENTS_BIN), a seeded PRNG, realistic pi 1.x entry lines, index checks
 * (SQLite and FTS5 integrity, equality with a clean rebuild, locators that point at complete
 * lines) and a small raw JSON-RPC client for `serve --stdio`.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveSettings } from "../../src/config.ts";
import { syncIndex, type SyncReport } from "../../src/sync/sync.ts";
import type { SourceDir } from "../../src/source/discover.ts";
import { hashBytes } from "../../src/source/hash.ts";
import { openIndex } from "../../src/store/db.ts";
import { type AgentLayout, dumpIndex, type IndexDump, isolatedEnv, MAIN, makeAgentLayout, ROOT } from "../helpers/temp.ts";
import { type Frame, RawServer } from "../server/harness.ts";

/** PI_EVENTS_RELIABILITY_LONG=1 runs the longer versions of every suite. */
export const LONG = process.env.PI_EVENTS_RELIABILITY_LONG === "1";

// ---------------------------------------------------------------------------------------------
// PRNG (mulberry32): every random choice of a suite comes from its seed
// ---------------------------------------------------------------------------------------------

export class Rng {
	private s: number;
	constructor(seed: number) {
		this.s = seed >>> 0;
	}
	next(): number {
		let t = (this.s = (this.s + 0x6d2b79f5) | 0);
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	}
	int(n: number): number {
		return Math.floor(this.next() * n);
	}
	range(a: number, b: number): number {
		return a + this.int(b - a + 1);
	}
	chance(p: number): boolean {
		return this.next() < p;
	}
	pick<T>(items: readonly T[]): T {
		if (items.length === 0) throw new Error("pick from an empty list");
		return items[this.int(items.length)] as T;
	}
	hex(n: number): string {
		let out = "";
		for (let i = 0; i < n; i++) out += "0123456789abcdef"[this.int(16)];
		return out;
	}
}

export function seedFromEnv(fallback: number): number {
	const given = process.env.PI_EVENTS_RELIABILITY_SEED;
	return given && /^\d+$/.test(given) ? Number(given) : fallback;
}

// ---------------------------------------------------------------------------------------------
// Layout, corpus, command line
// ---------------------------------------------------------------------------------------------

export interface World {
	layout: AgentLayout;
	/** The generated (or hand-written) sessions, passed with --sessions-dir. */
	sessions: string;
	indexPath: string;
	env: Record<string, string>;
	/** Exactly the source directories the CLI resolves for `--sessions-dir sessions`. */
	sourceDirs: SourceDir[];
	/** Extra `--sessions-dir` values (besides `sessions`). */
	extraDirs: string[];
}

/** A temp layout with an (empty) pi agent dir and a sessions dir given with --sessions-dir. */
export function makeWorld(opts: { sessions?: string; extraDirs?: string[]; indexPath?: string } = {}): World {
	const layout = makeAgentLayout();
	const sessions = opts.sessions ?? join(layout.root, "corpus", "sessions");
	mkdirSync(sessions, { recursive: true });
	const indexPath = opts.indexPath ?? join(layout.root, "index", "index.db");
	const env = isolatedEnv(layout);
	const extraDirs = opts.extraDirs ?? [];
	const settings = resolveSettings({ sessionDirs: [sessions, ...extraDirs], cwd: layout.root, env, indexPath });
	return { layout, sessions, indexPath, env, sourceDirs: settings.sourceDirs, extraDirs };
}

/** Generate a bench corpus (deterministic for a seed) into `<world.sessions>/..`. */
export function generateCorpus(world: World, size: string, seed: number): void {
	const out = join(world.sessions, "..");
	const proc = Bun.spawnSync([process.execPath, join(ROOT, "bench", "corpus.ts"), "--out", out, "--size", size, "--seed", String(seed), "--force"], {
		cwd: ROOT,
		env: world.env,
		stdout: "pipe",
		stderr: "pipe",
	});
	if (proc.exitCode !== 0) throw new Error(`corpus generation failed: ${proc.stderr.toString()}`);
}

/** The pi-events command: $PI_EVENTS_BIN (a compiled binary) or `bun src/main.ts`. */
export function cliCommand(): string[] {
	const bin = process.env.PI_EVENTS_BIN;
	if (bin && existsSync(bin)) return [bin];
	return [process.execPath, MAIN];
}

export function indexArgs(world: World, extra: string[] = []): string[] {
	const args = ["index", "--index", world.indexPath, "--sessions-dir", world.sessions];
	for (const d of world.extraDirs) args.push("--sessions-dir", d);
	return [...args, ...extra];
}

/** Spawn `pi-events ...args` in the world's isolated environment. */
export function spawnCli(world: World, args: string[], opts: { env?: Record<string, string> } = {}) {
	return Bun.spawn([...cliCommand(), ...args], {
		cwd: world.layout.root,
		env: { ...world.env, ...opts.env },
		stdin: "ignore",
		stdout: "pipe",
		stderr: "pipe",
	});
}

export interface Finished {
	exitCode: number | null;
	signal: string | null;
	stdout: string;
	stderr: string;
	ms: number;
}

/** Run `pi-events ...args` to completion. */
export async function runCliAsync(world: World, args: string[], opts: { env?: Record<string, string> } = {}): Promise<Finished> {
	const started = performance.now();
	const proc = spawnCli(world, args, opts);
	const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
	await proc.exited;
	return { exitCode: proc.exitCode, signal: proc.signalCode === null ? null : String(proc.signalCode), stdout, stderr, ms: performance.now() - started };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

// ---------------------------------------------------------------------------------------------
// Index checks
// ---------------------------------------------------------------------------------------------

/** The dump of a fresh in-memory index built from the files as they are now. */
export function cleanDump(sourceDirs: readonly SourceDir[]): IndexDump {
	const fresh = openIndex(":memory:");
	try {
		const report = syncIndex(fresh, { sourceDirs });
		if (!report.complete) throw new Error("clean rebuild incomplete");
		return dumpIndex(fresh);
	} finally {
		fresh.close();
	}
}

/** PRAGMA integrity_check and FTS5's integrity-check on an open index; throws on any problem. */
export function checkIntegrity(db: Database, label: string): void {
	const rows = db.query("PRAGMA integrity_check").all() as { integrity_check: string }[];
	const verdict = rows.map((r) => r.integrity_check).join("; ");
	if (verdict !== "ok") throw new Error(`${label}: PRAGMA integrity_check: ${verdict}`);
	try {
		db.run("INSERT INTO fts(fts) VALUES('integrity-check')");
	} catch (err) {
		throw new Error(`${label}: FTS5 integrity-check failed: ${err instanceof Error ? err.message : err}`);
	}
	const fk = db.query("PRAGMA foreign_key_check").all();
	if (fk.length > 0) throw new Error(`${label}: foreign_key_check: ${JSON.stringify(fk)}`);
}

/** Open (the way pi-events does), check integrity, close. */
export function checkIndexFile(path: string, label: string): void {
	const db = openIndex(path);
	try {
		checkIntegrity(db, label);
	} finally {
		db.close();
	}
}

/** meta keys that are maintenance bookkeeping (a compaction deferred while another process read), not index content. */
const MAINTENANCE_META = /^scrub_/;

function withoutMaintenance(d: IndexDump): IndexDump {
	if (!d.meta) return d;
	return { ...d, meta: d.meta.filter((m) => !MAINTENANCE_META.test(String((m as { key?: unknown }).key))) };
}

/** A readable first difference between two dumps (toEqual on huge dumps is slow and unreadable). */
export function dumpDiff(gotDump: IndexDump, wantDump: IndexDump): string | null {
	const got = withoutMaintenance(gotDump);
	const want = withoutMaintenance(wantDump);
	if (Bun.deepEquals(got, want)) return null;
	const tables = [...new Set([...Object.keys(got), ...Object.keys(want)])].sort();
	for (const t of tables) {
		const a = got[t] ?? [];
		const b = want[t] ?? [];
		if (Bun.deepEquals(a, b)) continue;
		const as = new Set(a.map((r) => JSON.stringify(r)));
		const bs = new Set(b.map((r) => JSON.stringify(r)));
		const extra = [...as].filter((r) => !bs.has(r)).slice(0, 3);
		const missing = [...bs].filter((r) => !as.has(r)).slice(0, 3);
		const cut = (s: string) => (s.length > 600 ? `${s.slice(0, 600)}…` : s);
		return `table ${t}: ${a.length} rows vs ${b.length} in a clean rebuild\n  only in the index:   ${extra.map(cut).join("\n                       ")}\n  only in the rebuild: ${missing.map(cut).join("\n                       ")}`;
	}
	return "dumps differ";
}

export function expectSameAsRebuild(db: Database, sourceDirs: readonly SourceDir[], label: string, want?: IndexDump): void {
	const diff = dumpDiff(dumpIndex(db), want ?? cleanDump(sourceDirs));
	if (diff) throw new Error(`${label}: the index differs from a clean rebuild of the same files\n${diff}`);
}

/** In-process sync (what `pi-events index` runs). */
export function syncPath(path: string, sourceDirs: readonly SourceDir[]): SyncReport {
	const db = openIndex(path);
	try {
		return syncIndex(db, { sourceDirs });
	} finally {
		db.close();
	}
}

export interface LocatorRow {
	path: string;
	session_id: string;
	entry_id: string;
	line: number;
	byte_offset: number;
	byte_length: number;
	content_hash: string;
}

export function locators(db: Database): LocatorRow[] {
	return db
		.query(
			`SELECT f.path, s.session_id, e.entry_id, e.line, e.byte_offset, e.byte_length, e.content_hash
			 FROM events e JOIN sessions s ON s.session_key = e.session_key JOIN files f ON f.file_key = s.file_key`,
		)
		.all() as LocatorRow[];
}

/**
 * Every indexed event must point at one complete line of its file: it starts the file or follows
 * an LF, an LF ends it, and its bytes hash to the stored content hash. `files` maps a path to its
 * bytes as read after the index was read (the suites only ever append, so a line complete then is
 * complete now; a torn line indexed early would end before its LF). Returns the problems found.
 */
export function badLocators(rows: LocatorRow[], files: Map<string, Uint8Array>): string[] {
	const bad: string[] = [];
	for (const r of rows) {
		const buf = files.get(r.path);
		if (!buf) continue;
		const end = r.byte_offset + r.byte_length;
		const where = `${r.path}:${r.line} (entry ${r.entry_id}, bytes ${r.byte_offset}+${r.byte_length})`;
		if (r.byte_offset > 0 && buf[r.byte_offset - 1] !== 0x0a) bad.push(`${where}: does not start a line`);
		else if (end >= buf.length || buf[end] !== 0x0a) bad.push(`${where}: not followed by LF (a partial line was indexed)`);
		else if (hashBytes(buf.subarray(r.byte_offset, end)) !== r.content_hash) bad.push(`${where}: content hash differs from the line's bytes`);
	}
	return bad;
}

// ---------------------------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------------------------

/** Every *.jsonl below `dir` (one level of subdirectories, like discovery), sorted. */
export function sessionFiles(dir: string): string[] {
	const out: string[] = [];
	if (!existsSync(dir)) return out;
	for (const e of readdirSync(dir, { withFileTypes: true })) {
		const full = join(dir, e.name);
		if (e.isFile() && e.name.endsWith(".jsonl")) out.push(full);
		else if (e.isDirectory()) {
			for (const f of readdirSync(full, { withFileTypes: true })) if (f.isFile() && f.name.endsWith(".jsonl")) out.push(join(full, f.name));
		}
	}
	return out.sort();
}

/** The complete lines of a file (bytes up to the last LF), decoded. */
export function completeLines(path: string): string[] {
	const text = readFileSync(path, "utf8");
	const end = text.lastIndexOf("\n");
	return end < 0 ? [] : text.slice(0, end).split("\n");
}

/** Complete lines that are pi entries (JSON objects after the header): what becomes events. */
export function entryLines(path: string): Record<string, any>[] {
	const out: Record<string, any>[] = [];
	let header = false;
	for (const line of completeLines(path)) {
		if (line.trim() === "") continue;
		let v: unknown;
		try {
			v = JSON.parse(line);
		} catch {
			continue;
		}
		if (typeof v !== "object" || v === null || Array.isArray(v)) continue;
		if (!header) {
			if ((v as { type?: unknown }).type === "session") header = true;
			continue;
		}
		out.push(v as Record<string, any>);
	}
	return out;
}

/** The id of the last complete entry line (the parent of the next append). */
export function lastEntryId(path: string): string | null {
	const lines = completeLines(path);
	for (let i = lines.length - 1; i >= 0; i--) {
		try {
			const v = JSON.parse(lines[i]!) as { type?: string; id?: unknown };
			if (v.type !== "session" && typeof v.id === "string") return v.id;
		} catch {
			// torn or malformed: look further up
		}
	}
	return null;
}

// ---------------------------------------------------------------------------------------------
// pi 1.x entries
// ---------------------------------------------------------------------------------------------

const WORDS =
	"the build failed because of error in parser session index token module import export config cache queue retry timeout worker lockfile migration schema branch commit merge deploy container socket thread".split(
		" ",
	);

export function words(rng: Rng, n: number): string {
	const out: string[] = [];
	for (let i = 0; i < n; i++) out.push(rng.pick(WORDS));
	return out.join(" ");
}

const usage = { input: 120, output: 40, cacheRead: 0, cacheWrite: 0, totalTokens: 160, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/**
 * One realistic pi 1.x entry (user, assistant with a tool call, tool result, `!` bash, session
 * name, compaction, label), as pi's SessionManager would append it. `tag` is planted in its text.
 */
export function piEntry(
	rng: Rng,
	id: string,
	parentId: string | null,
	ms: number,
	tag: string,
	opts: { bigText?: number; kind?: string } = {},
): Record<string, unknown> {
	const timestamp = new Date(ms).toISOString();
	const kind = opts.kind ?? rng.pick(["user", "assistant", "assistant", "toolResult", "toolResult", "bash", "name", "compaction", "label"]);
	const text = (n: number) => `${words(rng, n)} ${tag} ${words(rng, 3)}`;
	const big = opts.bigText ? ` ${"lorem ipsum dolor sit amet ".repeat(Math.ceil(opts.bigText / 27)).slice(0, opts.bigText)}` : "";
	switch (kind) {
		case "user":
			return { type: "message", id, parentId, timestamp, message: { role: "user", content: [{ type: "text", text: text(12) + big }], timestamp: ms } };
		case "assistant":
			return {
				type: "message",
				id,
				parentId,
				timestamp,
				message: {
					role: "assistant",
					content: [
						{ type: "thinking", thinking: words(rng, 20), thinkingSignature: rng.hex(64) },
						{ type: "text", text: text(30) + big },
						{ type: "toolCall", id: `toolu_${rng.hex(12)}`, name: "bash", arguments: { command: `grep -rn ${tag} src/` } },
					],
					api: "anthropic-messages",
					provider: "anthropic",
					model: "claude-sonnet-4-5",
					usage,
					stopReason: "toolUse",
					timestamp: ms - 900,
				},
			};
		case "toolResult":
			return {
				type: "message",
				id,
				parentId,
				timestamp,
				message: {
					role: "toolResult",
					toolCallId: `toolu_${rng.hex(12)}`,
					toolName: "bash",
					content: [{ type: "text", text: text(40) + big }],
					isError: rng.chance(0.2),
					timestamp: ms,
				},
			};
		case "bash":
			return {
				type: "message",
				id,
				parentId,
				timestamp,
				message: {
					role: "bashExecution",
					command: `bun test ${tag}`,
					output: text(25) + big,
					exitCode: rng.pick([0, 1, 137]),
					cancelled: false,
					truncated: false,
					timestamp: ms,
				},
			};
		case "name":
			return { type: "session_info", id, parentId, timestamp, name: `Session ${tag} ${words(rng, 2)}` };
		case "compaction":
			return { type: "compaction", id, parentId, timestamp, summary: `## Goal\n${text(30)}${big}`, firstKeptEntryId: parentId ?? id, tokensBefore: 12000 };
		default:
			return { type: "label", id, parentId, timestamp, targetId: parentId ?? id, label: `mark-${tag}` };
	}
}

// ---------------------------------------------------------------------------------------------
// Raw JSON-RPC client for `pi-events serve --stdio`
// ---------------------------------------------------------------------------------------------

export type { Frame };

/** `pi-events serve --stdio` on a test world, through the shared raw-frame client. */
export class Serve extends RawServer {
	constructor(world: World, args: string[]) {
		super("", world.env, [], {
			command: [...cliCommand(), "serve", "--stdio", "--index", world.indexPath, "--sessions-dir", world.sessions, ...args],
			cwd: world.layout.root,
		});
	}

	/** Frames on stdout that were not JSON (must stay empty: stdout carries protocol frames only). */
	get nonJson(): string[] {
		return this.stdoutNonJson;
	}

	/** tools/call; returns the frame (callers check error / result.isError). */
	call(name: string, args: Record<string, unknown>, timeoutMs = 20_000): Promise<Frame> {
		return this.request("tools/call", { name, arguments: args }, undefined, timeoutMs);
	}

	/** Close stdin and wait for the exit code. */
	async close(): Promise<number | null> {
		try {
			this.closeStdin();
		} catch {
			// already closed
		}
		const timer = setTimeout(() => this.proc.kill("SIGKILL"), 10_000);
		await this.proc.exited;
		clearTimeout(timer);
		return this.proc.exitCode;
	}
}

/** A readable summary of a tool-call frame that failed. */
export function frameProblem(f: Frame): string | null {
	if (f.error) return `JSON-RPC error ${f.error.code}: ${f.error.message}`;
	if (!f.result) return "no result";
	if (f.result.isError) return `tool error: ${JSON.stringify(f.result.content).slice(0, 400)}`;
	return null;
}

export { Database };
