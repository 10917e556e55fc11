/**
 * Shared setup for the tree and read/trace tests: a temp copy of the pi fixtures in pi's
 * session-dir layout, with the fork children's `parentSession` rewritten to the copied parent's
 * real path (or left dangling on request), indexed with the real indexer.
 */
import type { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Scope } from "../../src/auth/scope.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { Gate } from "../../src/gate/gate.ts";
import type { SourceDir } from "../../src/source/discover.ts";
import { openIndex } from "../../src/store/db.ts";
import { copyIntoSessions, encodeCwd, makeTempDir, type ManifestEntry, PI_FIXTURES, piManifest } from "../helpers/temp.ts";

export const UNSCOPED: Scope = { roots: null, current: null };

export interface Fixture extends ManifestEntry {
	/** The copy's absolute path. */
	path: string;
}

export interface Setup {
	dir: string;
	sessions: string;
	sources: SourceDir[];
	db: Database;
	fixtures: Map<string, Fixture>;
	fx(name: string): Fixture;
	access(scope?: Scope): Gate;
	sync(): ReturnType<typeof syncIndex>;
}

/** Rewrite line 1 (the header) of a session file. */
export function rewriteHeader(path: string, edit: (header: Record<string, unknown>) => void): void {
	const text = readFileSync(path, "utf8");
	const nl = text.indexOf("\n");
	const header = JSON.parse(text.slice(0, nl)) as Record<string, unknown>;
	edit(header);
	writeFileSync(path, `${JSON.stringify(header)}${text.slice(nl)}`);
}

/**
 * Copy every pi fixture (or only `names`) into `<tmp>/sessions/<encoded cwd>/`, point fork
 * children at their copied parents (except those in `dangling`, which point at a path in the temp
 * dir that does not exist), and index them.
 */
export function setupFixtures(opts: { names?: string[]; dangling?: string[]; dbPath?: string } = {}): Setup {
	const dir = makeTempDir("pi-events-rt-");
	const sessions = join(dir, "sessions");
	mkdirSync(sessions, { recursive: true });
	const manifest = piManifest().filter((e) => !opts.names || opts.names.includes(e.name));
	const fixtures = new Map<string, Fixture>();
	const byFile = new Map<string, string>();
	for (const e of manifest) {
		const path = copyIntoSessions(sessions, join(PI_FIXTURES, e.file), { cwd: e.cwd });
		fixtures.set(e.name, { ...e, path });
		byFile.set(e.file, path);
	}
	for (const f of fixtures.values()) {
		const parentFile = f.notes.parentFile as string | undefined;
		if (!parentFile) continue;
		const dangling = opts.dangling?.includes(f.name) || !byFile.has(parentFile);
		const target = dangling ? join(dir, "moved-away", encodeCwd(f.cwd), parentFile) : byFile.get(parentFile)!;
		rewriteHeader(f.path, (h) => {
			h.parentSession = target;
		});
	}
	const sources: SourceDir[] = [{ path: sessions, origin: "flag" }];
	const db = openIndex(opts.dbPath ?? join(dir, "index.db"));
	const sync = () => syncIndex(db, { sourceDirs: sources });
	const report = sync();
	if (report.problems.length) throw new Error(`sync problems: ${report.problems.join("; ")}`);
	return {
		dir,
		sessions,
		sources,
		db,
		fixtures,
		fx(name) {
			const f = fixtures.get(name);
			if (!f) throw new Error(`fixture ${name} not set up`);
			return f;
		},
		access: (scope = UNSCOPED) => new Gate(db, scope),
		sync,
	};
}

/** `{ entryId: "branchState/selectionState" }` for one indexed session file. */
export function indexedStates(db: Database, filePath: string): Map<string, { branch: string; selection: string; seq: number }> {
	const rows = db
		.query(
			`SELECT e.entry_id, e.branch_state, e.selection_state, e.seq FROM events e JOIN sessions s ON s.session_key = e.session_key
			 JOIN files f ON f.file_key = s.file_key WHERE f.path = ?1 ORDER BY e.seq`,
		)
		.all(filePath) as { entry_id: string; branch_state: string; selection_state: string; seq: number }[];
	return new Map(rows.map((r) => [r.entry_id, { branch: r.branch_state, selection: r.selection_state, seq: r.seq }]));
}

export interface SourceLine {
	/** 1-based physical line. */
	line: number;
	byteOffset: number;
	/** Bytes without the LF. */
	byteLength: number;
	json: Record<string, any>;
}

/** Every line of a session file with its byte locator and parsed JSON (header included). */
export function sourceLines(path: string): SourceLine[] {
	const buf = readFileSync(path);
	const out: SourceLine[] = [];
	let start = 0;
	let line = 1;
	while (start < buf.length) {
		let nl = buf.indexOf(0x0a, start);
		if (nl < 0) nl = buf.length;
		const bytes = buf.subarray(start, nl);
		let json: Record<string, any> = {};
		try {
			json = JSON.parse(bytes.toString("utf8"));
		} catch {
			// torn or malformed line: left empty
		}
		out.push({ line, byteOffset: start, byteLength: bytes.length, json });
		start = nl + 1;
		line++;
	}
	return out;
}

/** The source line of one entry id. */
export function sourceOf(path: string, entryId: string): SourceLine {
	const found = sourceLines(path).find((l) => l.json.id === entryId && l.json.type !== "session");
	if (!found) throw new Error(`no entry ${entryId} in ${path}`);
	return found;
}
