/**
 * Test helpers: isolated temp dirs, a fake pi agent dir populated with fixture files, a CLI
 * runner with a fully isolated environment (never the real ~/.pi), a canonical dump of an index
 * for equality checks, and a byte-level snapshot of a directory tree.
 */
import type { Database } from "bun:sqlite";
import { copyFileSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "..", "..");
export const MAIN = join(ROOT, "src", "main.ts");
export const PI_FIXTURES = join(ROOT, "fixtures", "sessions", "pi");
export const LEGACY_FIXTURES = join(ROOT, "fixtures", "sessions", "legacy");

// ---------------------------------------------------------------------------------------------
// Temp dirs
// ---------------------------------------------------------------------------------------------

const created: string[] = [];

/** A fresh directory under the OS temp dir, removed by cleanupTempDirs(). */
export function makeTempDir(prefix = "pi-events-test-"): string {
	const dir = mkdtempSync(join(tmpdir(), prefix));
	created.push(dir);
	return dir;
}

/** Remove every temp dir made so far (call from afterAll). */
export function cleanupTempDirs(): void {
	for (const dir of created.splice(0)) {
		try {
			rmSync(dir, { recursive: true, force: true });
		} catch {
			// A test may have left a directory unreadable; best effort.
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

export interface ManifestEntry {
	name: string;
	file: string;
	sessionId: string;
	cwd: string;
	description: string;
	notes: Record<string, any>;
}

export function piManifest(): ManifestEntry[] {
	return JSON.parse(readFileSync(join(PI_FIXTURES, "manifest.json"), "utf8")) as ManifestEntry[];
}

/** Manifest entry by fixture name ("basic", "branched", ...). */
export function piFixture(name: string): ManifestEntry & { path: string } {
	const entry = piManifest().find((e) => e.name === name);
	if (!entry) throw new Error(`no pi fixture named ${name}`);
	return { ...entry, path: join(PI_FIXTURES, entry.file) };
}

export function legacyFixture(name: string): string {
	return join(LEGACY_FIXTURES, name.endsWith(".jsonl") ? name : `${name}.jsonl`);
}

/** Every fixture session file: pi-generated and legacy, as absolute paths. */
export function allFixtureFiles(): { group: "pi" | "legacy"; name: string; path: string }[] {
	const list = (dir: string, group: "pi" | "legacy") =>
		readdirSync(dir)
			.filter((n) => n.endsWith(".jsonl"))
			.sort()
			.map((n) => ({ group, name: n, path: join(dir, n) }));
	return [...list(PI_FIXTURES, "pi"), ...list(LEGACY_FIXTURES, "legacy")];
}

/** pi's directory name for a cwd (`/work/demo/app` → `--work-demo-app--`). */
export function encodeCwd(cwd: string): string {
	return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

export interface AgentLayout {
	/** The temp dir holding everything below. */
	root: string;
	home: string;
	/** PI_CODING_AGENT_DIR. */
	agentDir: string;
	/** `<agentDir>/sessions`, pi's default session dir. */
	sessionsDir: string;
	cacheHome: string;
	configHome: string;
	/** Default index location for this layout (XDG_CACHE_HOME/pi-events/index.db). */
	defaultIndex: string;
}

/** A fake HOME + pi agent dir layout inside a new temp dir (nothing copied yet). */
export function makeAgentLayout(): AgentLayout {
	const root = makeTempDir();
	const home = join(root, "home");
	const agentDir = join(root, "agent");
	const sessionsDir = join(agentDir, "sessions");
	const cacheHome = join(root, "cache");
	const configHome = join(root, "config");
	for (const d of [home, sessionsDir, cacheHome, configHome]) mkdirSync(d, { recursive: true });
	return { root, home, agentDir, sessionsDir, cacheHome, configHome, defaultIndex: join(cacheHome, "pi-events", "index.db") };
}

/**
 * Copy a fixture file into `<sessionsDir>/<encoded cwd>/` (pi's layout), keeping its name unless
 * `name` is given. Returns the destination path.
 */
export function copyIntoSessions(sessionsDir: string, src: string, opts: { cwd?: string; name?: string; flat?: boolean } = {}): string {
	const dir = opts.flat ? sessionsDir : join(sessionsDir, encodeCwd(opts.cwd ?? "/work/demo/app"));
	mkdirSync(dir, { recursive: true });
	const dest = join(dir, opts.name ?? basename(src));
	copyFileSync(src, dest);
	return dest;
}

/** Copy every pi fixture (by manifest cwd) into a sessions dir; returns destination paths. */
export function copyAllPiFixtures(sessionsDir: string): string[] {
	return piManifest().map((e) => copyIntoSessions(sessionsDir, join(PI_FIXTURES, e.file), { cwd: e.cwd }));
}

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

export interface CliResult {
	exitCode: number;
	stdout: string;
	stderr: string;
	json<T = any>(): T;
}

/** The isolated environment of a layout: HOME, pi's agent dir and XDG dirs inside the temp dir. */
export function isolatedEnv(layout: AgentLayout, extra: Record<string, string> = {}): Record<string, string> {
	return {
		HOME: layout.home,
		PI_CODING_AGENT_DIR: layout.agentDir,
		XDG_CACHE_HOME: layout.cacheHome,
		XDG_CONFIG_HOME: layout.configHome,
		PATH: process.env.PATH ?? "/usr/bin:/bin",
		// The run's own temp dir (test/preload.ts), so what a child leaves there fails the run too.
		TMPDIR: tmpdir(),
		...extra,
	};
}

/** Run `bun src/main.ts ...args` with the layout's isolated environment. */
export function runCli(layout: AgentLayout, args: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): CliResult {
	const env = isolatedEnv(layout, opts.env);
	if (!env.HOME?.startsWith(tmpdir()) || !env.PI_CODING_AGENT_DIR?.startsWith(tmpdir())) {
		throw new Error("refusing to run the CLI outside a temp HOME / agent dir");
	}
	const proc = Bun.spawnSync([process.execPath, MAIN, ...args], {
		cwd: opts.cwd ?? layout.root,
		env,
		stdout: "pipe",
		stderr: "pipe",
	});
	const stdout = proc.stdout.toString();
	const stderr = proc.stderr.toString();
	return {
		exitCode: proc.exitCode ?? -1,
		stdout,
		stderr,
		json<T>() {
			try {
				return JSON.parse(stdout) as T;
			} catch {
				throw new Error(`stdout is not JSON (exit ${proc.exitCode}):\n${stdout}\nstderr:\n${stderr}`);
			}
		},
	};
}

// ---------------------------------------------------------------------------------------------
// Canonical index dump
// ---------------------------------------------------------------------------------------------

export interface DumpOptions {
	/** Path prefixes replaced by placeholders so indexes of files at different places compare. */
	replacePaths?: Record<string, string>;
}

type Row = Record<string, unknown>;

/** Columns that record when or on which inode something was observed, not what was indexed. */
export const VOLATILE_COLUMNS = new Set(["indexed_at", "synced_at", "updated_at", "mtime_ms", "mtime", "dev", "ino"]);
/**
 * meta keys that record when a sync ran or how far the freshness check got (sync/check.ts), or
 * whether the full-text index's segments are still to be merged (sync/merge.ts): how, not what.
 */
export const VOLATILE_META_KEYS = new Set(["last_sync", "last_full_check", "idle_cursor", "merge_pending"]);
/** Tables of observations (which directories listed at which mtime), not of indexed content. */
export const VOLATILE_TABLES = new Set(["dirs"]);

/** Row-id keys and the natural identity that replaces them. */
const KEY_COLUMNS = ["file_key", "session_key", "event_key", "frag_key"] as const;
type KeyColumn = (typeof KEY_COLUMNS)[number];
const OWNER: Record<KeyColumn, string> = { file_key: "files", session_key: "sessions", event_key: "events", frag_key: "fragments" };
const IDENTITY_NAME: Record<KeyColumn, string> = { file_key: "file", session_key: "session", event_key: "event", frag_key: "fragment" };

/**
 * Every table of the index in a canonical order, schema-generically: volatile columns removed
 * (rowid keys, indexed_at, sync timestamps, mtime, dev/ino) and every rowid key replaced by the
 * natural identity it stands for (file path, session_id, entry_id, fragment_id), so two indexes
 * built differently compare with toEqual. FTS5 tables are represented by the identities of the
 * rows they hold (unmapped rowids show up as "orphan"); fts5vocab tables by their full rows;
 * FTS shadow tables (segment layout, which depends on insertion history) are left out.
 */
export function dumpIndex(db: Database, opts: DumpOptions = {}): Record<string, unknown[]> {
	const replacements = Object.entries(opts.replacePaths ?? {}).sort((a, b) => b[0].length - a[0].length);
	const p = (value: unknown): unknown => {
		if (typeof value !== "string" || replacements.length === 0) return value;
		let out = value;
		for (const [from, to] of replacements) out = out.split(from).join(to);
		return out;
	};
	const tables = db.query("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as {
		name: string;
		sql: string | null;
	}[];
	const names = new Set(tables.map((t) => t.name));
	const columnsOf = (table: string) => (db.query(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((c) => c.name);
	const fts5 = tables.filter((t) => /USING\s+fts5\s*\(/i.test(t.sql ?? "")).map((t) => t.name);
	const vocab = tables.filter((t) => /USING\s+fts5vocab\s*\(/i.test(t.sql ?? "")).map((t) => t.name);
	const shadow = new Set(fts5.flatMap((t) => ["data", "idx", "docsize", "config", "content"].map((s) => `${t}_${s}`)));

	// Natural identities of every rowid key.
	const identity: Record<KeyColumn, Map<number, unknown>> = { file_key: new Map(), session_key: new Map(), event_key: new Map(), frag_key: new Map() };
	if (names.has("files")) for (const r of db.query("SELECT file_key, path FROM files").all() as Row[]) identity.file_key.set(r.file_key as number, p(r.path));
	if (names.has("sessions")) {
		for (const r of db.query("SELECT session_key, file_key, session_id FROM sessions").all() as Row[]) {
			identity.session_key.set(r.session_key as number, { file: identity.file_key.get(r.file_key as number) ?? "orphan", session_id: r.session_id });
		}
	}
	if (names.has("events")) {
		for (const r of db.query("SELECT event_key, session_key, entry_id FROM events").all() as Row[]) {
			identity.event_key.set(r.event_key as number, { session: identity.session_key.get(r.session_key as number) ?? "orphan", entry_id: r.entry_id });
		}
	}
	if (names.has("fragments")) {
		for (const r of db.query("SELECT frag_key, event_key, fragment_id FROM fragments").all() as Row[]) {
			identity.frag_key.set(r.frag_key as number, { event: identity.event_key.get(r.event_key as number) ?? "orphan", fragment_id: r.fragment_id });
		}
	}

	const sortRows = (rows: unknown[]) =>
		rows
			.map((r) => [JSON.stringify(r), r] as const)
			.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
			.map(([, r]) => r);

	const out: Record<string, unknown[]> = {};
	for (const { name } of tables) {
		if (shadow.has(name) || VOLATILE_TABLES.has(name)) continue;
		if (fts5.includes(name)) {
			const rowids = (db.query(`SELECT rowid FROM "${name}"`).all() as { rowid: number }[]).map((r) => r.rowid);
			out[name] = sortRows(rowids.map((id) => identity.frag_key.get(id) ?? "orphan"));
			continue;
		}
		if (vocab.includes(name)) {
			out[name] = sortRows(db.query(`SELECT * FROM "${name}"`).all() as Row[]);
			continue;
		}
		const cols = columnsOf(name);
		const rows = (db.query(`SELECT * FROM "${name}"`).all() as Row[])
			.filter((r) => !(name === "meta" && VOLATILE_META_KEYS.has(r.key as string)))
			.map((r) => {
				const ids: Row = {};
				const rest: Row = {};
				for (const c of cols) {
					if (VOLATILE_COLUMNS.has(c)) continue;
					const key = KEY_COLUMNS.find((k) => k === c);
					if (key) {
						if (OWNER[key] === name) continue; // the table's own rowid
						ids[IDENTITY_NAME[key]] = r[c] === null ? null : (identity[key].get(r[c] as number) ?? "orphan");
						continue;
					}
					rest[c] = p(r[c]);
				}
				return { ...ids, ...rest };
			});
		out[name] = sortRows(rows);
	}
	return out;
}

export type IndexDump = ReturnType<typeof dumpIndex>;

// ---------------------------------------------------------------------------------------------
// Directory snapshots (read-only proof)
// ---------------------------------------------------------------------------------------------

export interface TreeSnapshot {
	[relativePath: string]: {
		type: string;
		size: number;
		mode: number;
		ino: number;
		mtimeNs: string;
		ctimeNs: string;
		sha?: string;
		link?: string;
		entries?: string[];
	};
}

/** Hash every file and record every directory listing under `dir` (with mtimes, ctimes, inodes). */
export function snapshotTree(dir: string): TreeSnapshot {
	const out: TreeSnapshot = {};
	const walk = (abs: string, rel: string) => {
		const st = lstatSync(abs, { bigint: true });
		const base = { size: Number(st.size), mode: Number(st.mode), ino: Number(st.ino), mtimeNs: st.mtimeNs.toString(), ctimeNs: st.ctimeNs.toString() };
		if (st.isSymbolicLink()) {
			out[rel] = { type: "symlink", ...base, link: readlinkSync(abs) };
		} else if (st.isDirectory()) {
			const entries = readdirSync(abs).sort();
			out[rel] = { type: "dir", ...base, entries };
			for (const name of entries) walk(join(abs, name), rel === "." ? name : `${rel}/${name}`);
		} else {
			const hasher = new Bun.CryptoHasher("sha256");
			hasher.update(readFileSync(abs));
			out[rel] = { type: "file", ...base, sha: hasher.digest("hex") };
		}
	};
	walk(dir, ".");
	return out;
}

/** True when this process can read a directory chmod'ed to 000 (root, CAP_DAC_OVERRIDE). */
export function permissionsAreIgnored(): boolean {
	return typeof process.getuid === "function" && process.getuid() === 0;
}
