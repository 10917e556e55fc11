/**
 * Incremental sync of pi session files into the read model: discover → read → project → write →
 * classify. Per file it chooses unchanged, append (only the new durable suffix), rebuild (one
 * transaction), keep-last-good (a changed file that cannot be parsed) or remove (only when the
 * file is confirmed gone from a directory that read fine). Never writes to session files.
 */
import type { Database } from "bun:sqlite";
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { canonicalPath } from "./source/paths.ts";
import type { Diagnostic } from "./model.ts";
import type { ProjectedEvent } from "./project/projector.ts";
import { classifySession, producesMessages, type TreeNode } from "./project/tree.ts";
import { type DiscoveredFile, type Discovery, discover, errno, presence, type SourceDir } from "./source/discover.ts";
import { fingerprintPrefix, readDurableLines } from "./source/read.ts";
import { initialParserState, type ParserState, parseLines } from "./source/session-parser.ts";
import { PiEventsError } from "./errors.ts";
import { describeDbError, isDatabaseError } from "./store/db.ts";
import { type FileObservation, type FileRow, IndexWriter, type SessionScope, type TreeRow } from "./store/write.ts";

export interface SyncOptions {
	sourceDirs: readonly SourceDir[];
	/** Stop starting new files after this many ms (files left are reported as pending). */
	budgetMs?: number;
	onProgress?: (progress: { done: number; total: number; bytes: number }) => void;
	/** Keep at most this many diagnostics in the report (all are counted). */
	maxDiagnostics?: number;
	/** Where unexpected errors are described in full (the report itself stays free of internals). */
	debug?: (line: string) => void;
}

export interface SyncCounts {
	new: number;
	appended: number;
	rebuilt: number;
	removed: number;
	unchanged: number;
	/** Changed files that could not be parsed or read: their last known-good index is kept. */
	keptLastGood: number;
	/** Files that are not pi sessions (no header). */
	rejected: number;
	/** Changed files not looked at because the time budget ran out. */
	pending: number;
}

export interface SyncReport {
	sessions: SyncCounts;
	eventsAdded: number;
	fragmentsAdded: number;
	bytesRead: number;
	diagnosticCount: number;
	diagnostics: Diagnostic[];
	/** File- and directory-level problems (unreadable dirs, files kept, I/O errors). */
	problems: string[];
	/** For each problem, the file or directory it concerns ("" for none): lets a scoped answer hide other workspaces. */
	problemPaths: string[];
	durationMs: number;
	complete: boolean;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Commit a batch of changed files after this many bytes read or this long (other writers wait at most that). */
const BATCH_BYTES = 32 * 1024 * 1024;
const BATCH_MS = 500;

type Outcome = "new" | "appended" | "rebuilt" | "unchanged" | "keptLastGood" | "rejected";

/**
 * The file observations of the last sync on this connection, reused while no other connection
 * has committed (PRAGMA data_version) and this one changed nothing: a no-op sync then costs the
 * directory listing and one stat per file, not a reload of every file row.
 */
const knownCache = new WeakMap<Database, { dataVersion: number; files: Map<string, FileObservation> }>();

function knownFiles(db: Database, writer: IndexWriter): Map<string, FileObservation> {
	const dataVersion = writer.dataVersion();
	const cached = knownCache.get(db);
	if (cached && cached.dataVersion === dataVersion) return cached.files;
	const files = writer.loadFiles();
	knownCache.set(db, { dataVersion, files });
	return files;
}

/** A database failure as the one error type, with a message a person can act on. */
function asIndexError(err: unknown): unknown {
	if (!isDatabaseError(err)) return err;
	return new PiEventsError("E_INDEX", `cannot update the index: ${describeDbError(err)}; it keeps its last consistent state`, { cause: err });
}

function addProblem(report: SyncReport, path: string, message: string): void {
	report.problems.push(message);
	report.problemPaths.push(path);
}

/** Set for the duration of a syncIndex call (synchronous), read by syncFile. */
let debugLog: ((line: string) => void) | undefined;

/**
 * Keep the cached observations equal to the files table after this connection's own writes
 * (which do not move data_version): re-read the few changed rows, or drop the cache after a
 * large sync.
 */
function refreshKnown(db: Database, writer: IndexWriter, changed: DiscoveredFile[], report: SyncReport): void {
	const cached = knownCache.get(db);
	if (!cached) return;
	if (changed.length > 100 || report.sessions.removed > 0) {
		knownCache.delete(db);
		return;
	}
	for (const file of changed) {
		const row = writer.loadObservation(file.path);
		if (row) cached.files.set(file.path, row);
		else cached.files.delete(file.path);
	}
}

/** Run one sync over the configured source directories. */
export function syncIndex(db: Database, options: SyncOptions): SyncReport {
	debugLog = options.debug;
	const started = performance.now();
	const writer = new IndexWriter(db);
	const report: SyncReport = {
		sessions: { new: 0, appended: 0, rebuilt: 0, removed: 0, unchanged: 0, keptLastGood: 0, rejected: 0, pending: 0 },
		eventsAdded: 0,
		fragmentsAdded: 0,
		bytesRead: 0,
		diagnosticCount: 0,
		diagnostics: [],
		problems: [],
		problemPaths: [],
		durationMs: 0,
		complete: true,
	};
	const maxDiagnostics = options.maxDiagnostics ?? 200;
	const addDiagnostics = (list: Diagnostic[], count = list.length) => {
		report.diagnosticCount += count;
		for (const d of list) if (report.diagnostics.length < maxDiagnostics) report.diagnostics.push(d);
	};

	const found = discover(options.sourceDirs);
	for (const dir of found.dirs.values()) {
		if (!dir.ok && dir.error !== "ENOENT") addProblem(report, dir.path, `cannot read directory ${dir.path}: ${dir.error}`);
	}
	for (const u of found.unreadable) addProblem(report, u.path, `cannot stat ${u.path}: ${u.error} (its index is kept)`);

	const known = knownFiles(db, writer);
	const changed = found.files.filter((f) => {
		const row = known.get(f.path);
		return !row || row.dev !== f.dev || row.ino !== f.ino || row.size !== f.size || row.mtime_ms !== f.mtimeMs;
	});
	report.sessions.unchanged = found.files.length - changed.length;
	// pi names files <ISO timestamp>_<id>.jsonl: indexing in name order gives new sessions keys
	// (and fragment rowids) in creation order, which the common-term path reads newest first.
	changed.sort((a, b) => cmp(basename(a.path), basename(b.path)) || cmp(a.path, b.path));
	const total = changed.length;
	let done = 0;
	// Small sessions are committed in batches (each file still in its own savepoint): one commit
	// per file would flush FTS5's pending postings into many tiny segments and slow a cold index.
	let batchStarted = 0;
	let batchBytes = 0;
	try {
		for (const file of changed) {
			if (options.budgetMs !== undefined && performance.now() - started > options.budgetMs) {
				report.sessions.pending = total - done;
				report.complete = false;
				break;
			}
			if (!db.inTransaction) {
				db.run("BEGIN IMMEDIATE");
				batchStarted = performance.now();
				batchBytes = 0;
			}
			const before = report.bytesRead;
			const outcome = syncFile(db, writer, file, report, addDiagnostics);
			report.sessions[outcome]++;
			done++;
			batchBytes += report.bytesRead - before;
			if (batchBytes >= BATCH_BYTES || performance.now() - batchStarted >= BATCH_MS) db.run("COMMIT");
			options.onProgress?.({ done, total, bytes: report.bytesRead });
		}
		if (db.inTransaction) db.run("COMMIT");
	} catch (err) {
		if (db.inTransaction) db.run("ROLLBACK");
		knownCache.delete(db);
		throw asIndexError(err);
	}

	try {
		removeVanished(db, writer, found, known, options.sourceDirs, report);
		refreshKnown(db, writer, changed, report);
		scrub(writer, report, options.budgetMs === undefined);
		report.durationMs = performance.now() - started;
		writer.setMeta("last_sync", { at: Date.now(), durationMs: Math.round(report.durationMs), complete: report.complete });
	} catch (err) {
		knownCache.delete(db);
		throw asIndexError(err);
	}
	return report;
}

function syncFile(
	db: Database,
	writer: IndexWriter,
	file: DiscoveredFile,
	report: SyncReport,
	addDiagnostics: (d: Diagnostic[], count?: number) => void,
): Outcome {
	try {
		return db
			.transaction((): Outcome => {
				// Decide inside the write transaction: another writer may have handled this file meanwhile.
				const row = writer.loadFile(file.path);
				if (row && row.dev === file.dev && row.ino === file.ino && row.size === file.size && row.mtime_ms === file.mtimeMs) {
					return "unchanged";
				}
				if (row && row.status === "indexed" && canAppend(row, file)) {
					return appendFile(writer, file, row, report, addDiagnostics);
				}
				return rebuildFile(writer, file, row, report, addDiagnostics);
			})
			.immediate();
	} catch (err) {
		// The database itself failing (disk full, I/O) aborts the whole sync: SQLite may have rolled
		// back the batch, so no per-file outcome could be reported honestly.
		if (isDatabaseError(err)) throw err;
		if (err instanceof KeepLastGood) {
			addProblem(report, file.path, `kept the last known-good index of ${file.path}: it changed and ${err.reason}`);
			const row = writer.loadFile(file.path);
			if (row) db.transaction(() => writer.setFileProblem(row.file_key, "failed", err.reason)).immediate();
			return "keptLastGood";
		}
		const code = errno(err);
		if (code === "EUNKNOWN") debugLog?.(`indexing ${file.path}: ${err instanceof Error ? err.stack : String(err)}`);
		addProblem(report, file.path, `cannot index ${file.path}: ${code !== "EUNKNOWN" ? code : "unexpected error (PI_EVENTS_DEBUG=1 for details)"} (its last known-good index is kept)`);
		return "keptLastGood";
	}
}

/** Growth with an unchanged indexed prefix can be appended; anything else is rebuilt. */
function canAppend(row: FileRow, file: DiscoveredFile): boolean {
	if (row.dev !== file.dev || row.ino !== file.ino) return false; // replaced
	if (file.size < row.durable_end) return false; // truncated
	const now = fingerprintPrefix(file.path, row.durable_end);
	return now.head === row.head_hash && now.tail === row.tail_hash;
}

function appendFile(writer: IndexWriter, file: DiscoveredFile, row: FileRow, report: SyncReport, addDiagnostics: (d: Diagnostic[], count?: number) => void): Outcome {
	const state = JSON.parse(row.parser_state) as ParserState;
	const sessionKey = writer.sessionKeyOf(row.file_key);
	if (sessionKey === null || !state.header) return rebuildFile(writer, file, row, report, addDiagnostics);
	const oldLeaf = writer.leafRow(sessionKey);
	// The header is known: resolve the session's canonical cwd once, not per chunk.
	const scope = sessionScope(state);
	const added: ProjectedEvent[] = [];
	let diagnostics = 0;
	const read = readDurableLines(file.path, row.durable_end, row.next_line, (lines) => {
		const out = parseLines(state, lines, file.path, (id) => writer.entryExists(sessionKey, id));
		writer.insertEvents(sessionKey, out.events, scope);
		for (const e of out.events) {
			added.push(e);
			report.fragmentsAdded += e.fragments.length;
		}
		diagnostics += out.diagnostics.length;
		addDiagnostics(out.diagnostics);
	});
	report.bytesRead += read.end - row.durable_end;
	report.eventsAdded += added.length;
	if (added.length > 0) classifyAfterAppend(writer, sessionKey, oldLeaf, added);
	writer.upsertFile(fileFacts(file, read, state, "indexed", null, row.diagnostics + diagnostics));
	if (added.length > 0) writer.summarizeAppend(sessionKey, added);
	return "appended";
}

function rebuildFile(
	writer: IndexWriter,
	file: DiscoveredFile,
	row: FileRow | null,
	report: SyncReport,
	addDiagnostics: (d: Diagnostic[], count?: number) => void,
): Outcome {
	const state = initialParserState();
	const hadIndex = row !== null && row.status !== "rejected" && writer.sessionKeyOf(row.file_key) !== null;
	const fileKey = row?.file_key;
	let sessionKey: number | null = fileKey !== undefined ? writer.sessionKeyOf(fileKey) : null;
	if (sessionKey !== null) writer.deleteSessionRows(sessionKey);
	const ids = new Set<string>();
	const diagnostics: Diagnostic[] = [];
	let diagnosticCount = 0;
	let events = 0;
	let provisionalFileKey = fileKey;
	let scope: SessionScope | undefined;
	const read = readDurableLines(file.path, 0, 1, (lines) => {
		const out = parseLines(state, lines, file.path, (id) => ids.has(id));
		diagnosticCount += out.diagnostics.length;
		for (const d of out.diagnostics) if (diagnostics.length < 1000) diagnostics.push(d);
		if (out.events.length === 0) return;
		if (sessionKey === null && state.header) {
			// The file row must exist before its session row: insert a provisional one, finished below.
			provisionalFileKey ??= writer.upsertFile({
				path: file.path,
				real_path: canonicalPath(file.path),
				source_dir: file.sourceDir,
				dev: file.dev,
				ino: file.ino,
				size: -1,
				mtime_ms: -1,
				durable_end: 0,
				next_line: 1,
				head_hash: "",
				tail_hash: "",
				parser_state: "{}",
				status: "indexed",
				problem: null,
				diagnostics: 0,
				indexed_at: Date.now(),
			});
			sessionKey = writer.upsertSession(provisionalFileKey, sessionFacts(state));
		}
		if (sessionKey === null) return;
		for (const e of out.events) ids.add(e.entryId);
		scope ??= sessionScope(state);
		const { fragments } = writer.insertEvents(sessionKey, out.events, scope);
		events += out.events.length;
		report.fragmentsAdded += fragments;
	});
	report.bytesRead += read.end;

	if (!state.header) {
		if (hadIndex) {
			// A changed file that cannot be parsed safely keeps its last known-good index.
			throw new KeepLastGood(state.rejected ?? "no complete session header");
		}
		addDiagnostics(diagnostics, diagnosticCount);
		const problem = state.rejected ?? (read.end === 0 ? "no complete line yet" : "no session header");
		writer.upsertFile(fileFacts(file, read, state, "rejected", problem, diagnosticCount));
		return "rejected";
	}
	addDiagnostics(diagnostics, diagnosticCount);
	report.eventsAdded += events;
	const finalFileKey = writer.upsertFile(fileFacts(file, read, state, "indexed", null, diagnosticCount));
	sessionKey = writer.upsertSession(finalFileKey, sessionFacts(state));
	classifyFull(writer, sessionKey);
	writer.refreshSessionSummary(sessionKey);
	// A file first seen without a complete header enters the index as new, not rebuilt.
	return hadIndex ? "rebuilt" : "new";
}

/** Thrown inside the transaction to roll back a rebuild and keep the previous rows. */
class KeepLastGood extends Error {
	constructor(readonly reason: string) {
		super(reason);
	}
}

function fileFacts(
	file: DiscoveredFile,
	read: ReturnType<typeof readDurableLines>,
	state: ParserState,
	status: FileRow["status"],
	problem: string | null,
	diagnostics: number,
): Omit<FileRow, "file_key"> {
	const fp = fingerprintPrefix(file.path, read.end);
	return {
		path: file.path,
		real_path: canonicalPath(file.path),
		source_dir: file.sourceDir,
		dev: read.stat.dev,
		ino: read.stat.ino,
		size: read.stat.size,
		mtime_ms: read.stat.mtimeMs,
		durable_end: read.end,
		next_line: read.nextLine,
		head_hash: fp.head,
		tail_hash: fp.tail,
		parser_state: JSON.stringify(state),
		status,
		problem,
		diagnostics,
		indexed_at: Date.now(),
	};
}

function sessionScope(state: ParserState): SessionScope {
	const facts = sessionFacts(state);
	return { sessionId: facts.sessionId, cwd: facts.cwd, cwdReal: facts.cwdReal };
}

function sessionFacts(state: ParserState) {
	const h = state.header!;
	return {
		sessionId: h.sessionId,
		version: h.version,
		cwd: h.cwd,
		// Only an absolute recorded cwd can be placed under an authorization root.
		cwdReal: h.cwd && isAbsolute(h.cwd) ? canonicalPath(h.cwd) : null,
		created: h.timestamp,
		parentSession: h.parentSession,
		parentReal: resolveParent(h.parentSession, h.cwd),
	};
}

/** pi stores parentSession as a path, relative in old versions (to the cwd it was typed in). */
function resolveParent(parent: string | null, cwd: string | null): string | null {
	if (!parent) return null;
	if (isAbsolute(parent)) return canonicalPath(parent);
	return cwd && isAbsolute(cwd) ? canonicalPath(resolve(cwd, parent)) : null;
}

function toNode(row: TreeRow): TreeNode {
	const meta = row.meta ? (JSON.parse(row.meta) as { emptySummary?: boolean; removesTarget?: boolean }) : {};
	return {
		entryId: row.entry_id,
		parentId: row.parent_id,
		eventType: row.event_type,
		role: row.role,
		targetId: row.target_id,
		hasSummary: !meta.emptySummary,
		removesTarget: meta.removesTarget === true,
		ambiguousId: /~dup\d+$/.test(row.entry_id),
	};
}

function classifyFull(writer: IndexWriter, sessionKey: number): void {
	const rows = writer.loadTreeRows(sessionKey);
	const states = classifySession(rows.map(toNode));
	rows.forEach((row, i) => {
		const s = states[i]!;
		if (s.branchState !== row.branch_state || s.selectionState !== row.selection_state) {
			writer.updateTreeState(row.event_key, s.branchState, s.selectionState);
		}
	});
}

/**
 * The common append extends the selected path from the old leaf with plain entries: old states
 * stay right and the new entries are selected. Anything else (a new branch, a compaction, a
 * context edit, a duplicate id) reclassifies the whole session.
 */
function classifyAfterAppend(writer: IndexWriter, sessionKey: number, oldLeaf: { entry_id: string; branch_state: string } | null, added: ProjectedEvent[]): void {
	let previous = oldLeaf?.entry_id ?? null;
	let linear = oldLeaf !== null && oldLeaf.branch_state === "selected";
	for (const e of added) {
		if (!linear) break;
		const special = e.eventType === "compaction" || e.eventType === "context_edit" || (e.idDerived && /~dup\d+$/.test(e.entryId));
		// An earlier entry naming this id as its parent (a forward reference) can close a cycle.
		if (e.parentId !== previous || special || writer.hasEarlierChildNamed(sessionKey, e.entryId, e.seq)) linear = false;
		previous = e.entryId;
	}
	if (!linear) {
		classifyFull(writer, sessionKey);
		return;
	}
	const rows = writer.loadTreeRowsTail(sessionKey, added[0]!.seq);
	for (const row of rows) {
		const node = toNode(row);
		writer.updateTreeState(row.event_key, "selected", producesMessages(node) ? "direct" : "not-applicable");
	}
}

function removeVanished(
	db: Database,
	writer: IndexWriter,
	found: Discovery,
	known: Map<string, FileObservation>,
	sourceDirs: readonly SourceDir[],
	report: SyncReport,
): void {
	const roots = new Set(sourceDirs.map((d) => d.path));
	const present = new Set(found.files.map((f) => f.path));
	const unreadable = new Set(found.unreadable.map((u) => u.path));
	for (const row of known.values()) {
		if (!roots.has(row.source_dir) || present.has(row.path) || unreadable.has(row.path)) continue;
		const verdict = confirmedGone(row.path, row.dev, row.source_dir, found);
		if (verdict !== true) {
			addProblem(report, row.path, `kept ${row.path}: ${verdict}`);
			continue;
		}
		const hadSession = writer.sessionKeyOf(row.file_key) !== null;
		db.transaction(() => writer.deleteFile(row.file_key)).immediate();
		if (hadSession) report.sessions.removed++;
	}
}

export { KeepLastGood };

/**
 * A file is gone only when the nearest directory above it that still exists was read fine this
 * sync and everything between is absent (ENOENT). An unreadable or missing source root (an
 * unmounted disk) never counts as confirmation. Returns true, or why the file is kept.
 */
function confirmedGone(path: string, fileDev: number, sourceDir: string, found: Discovery): true | string {
	const file = presence(path);
	if (file === "present") return "it still exists but was not listed";
	if (file !== "ENOENT") return `it cannot be checked (${file})`;
	let dir = dirname(path);
	for (;;) {
		const seen = found.dirs.get(dir);
		if (seen?.ok) {
			// Another filesystem where the file's was (a source directory unmounted, an empty mount point left): keep.
			if (seen.dev !== undefined && seen.dev !== fileDev) return `${dir} is on another device than when the file was indexed (unmounted?)`;
			return true;
		}
		if (seen && seen.error !== "ENOENT") return `its directory ${dir} could not be read (${seen.error})`;
		if (dir === sourceDir || dir === dirname(dir)) return `its source directory ${sourceDir} is missing (unmounted?)`;
		const here = presence(dir);
		if (here === "present") return `its directory ${dir} exists but was not read`;
		if (here !== "ENOENT") return `its directory ${dir} cannot be checked (${here})`;
		dir = dirname(dir);
	}
}

/**
 * Deleted text must not stay recoverable from the index files. FTS5 only tombstones deleted rows
 * of a contentless table (their tokens stay in old segments until merged), so after a deletion
 * the full-text index is merged ('optimize', about 2 s on a 1 GB corpus), then the WAL is folded
 * into the database (whose freed pages secure_delete zeroes) and truncated. Previous versions of
 * rebuilt sessions are scrubbed by the next full `pi-events index` run. If a reader keeps the WAL
 * from being truncated, the scrub stays pending and the next sync retries it, without waiting.
 */
function scrub(writer: IndexWriter, report: SyncReport, fullRun: boolean): void {
	if (report.sessions.removed > 0 || report.sessions.rebuilt > 0) writer.setMeta("scrub_pending", true);
	if (writer.getMeta("scrub_pending") !== true) return;
	if (report.sessions.removed === 0 && !fullRun && writer.getMeta("scrub_reason_removed") !== true) return;
	if (report.sessions.removed > 0) writer.setMeta("scrub_reason_removed", true);
	writer.optimizeFullText();
	if (writer.checkpoint()) {
		writer.deleteMeta("scrub_pending");
		writer.deleteMeta("scrub_reason_removed");
	} else {
		addProblem(report, "", "the index could not be compacted while another process reads it; the next sync retries");
	}
}

export interface SourceFreshness {
	dir: string;
	origin: SourceDir["origin"];
	readable: boolean;
	error?: string;
	files: number;
	/** Files new or changed since they were last indexed. */
	changed: number;
	/** Indexed files that are no longer listed. */
	missing: number;
}

/** Compare the sources with the index without writing anything. */
export function checkFreshness(db: Database, sourceDirs: readonly SourceDir[]): SourceFreshness[] {
	const writer = new IndexWriter(db);
	const found = discover(sourceDirs);
	const known = knownFiles(db, writer);
	const present = new Set(found.files.map((f) => f.path));
	return sourceDirs.map((dir) => {
		const obs = found.dirs.get(dir.path);
		const files = found.files.filter((f) => f.sourceDir === dir.path);
		const changed = files.filter((f) => {
			const row = known.get(f.path);
			return !row || row.dev !== f.dev || row.ino !== f.ino || row.size !== f.size || row.mtime_ms !== f.mtimeMs;
		}).length;
		let missing = 0;
		for (const row of known.values()) if (row.source_dir === dir.path && !present.has(row.path)) missing++;
		return {
			dir: dir.path,
			origin: dir.origin,
			readable: obs?.ok ?? false,
			...(obs?.error ? { error: obs.error } : {}),
			files: files.length,
			changed,
			missing,
		};
	});
}
