/**
 * One changed session file, inside its own write transaction: unchanged (another writer got
 * there first), append (only the new durable suffix), rebuild (everything, atomically), or keep
 * the last known-good index of a changed file that cannot be parsed.
 */
import type { Database } from "bun:sqlite";
import { isAbsolute, resolve } from "node:path";
import type { Diagnostic } from "../model.ts";
import { type ProjectedEvent, projectEntry } from "../project/projector.ts";
import { type DiscoveredFile, errno } from "../source/discover.ts";
import { canonicalPath } from "../source/paths.ts";
import { type DurableRead, fingerprintPrefix, readDurableLines } from "../source/read.ts";
import { initialParserState, type ParserState, parseLines } from "../source/session-parser.ts";
import { isDatabaseError } from "../store/db.ts";
import { type FileRow, type IndexWriter, type SessionScope, SessionTally } from "../store/write.ts";
import { classifyAfterAppend, classifyFull } from "./classify.ts";
import { unchangedSince } from "./observations.ts";
import type { PreparedPart } from "./prepare.ts";
import { addProblem, type SyncReport } from "./report.ts";

export type Outcome = "new" | "appended" | "rebuilt" | "unchanged" | "keptLastGood" | "rejected";

/** Everything one sync shares with the per-file work (no module state: each sync passes its own). */
export interface SyncContext {
	db: Database;
	writer: IndexWriter;
	report: SyncReport;
	addDiagnostics: (list: Diagnostic[], count?: number) => void;
	/** Where unexpected errors are described in full. */
	debug?: (line: string) => void;
}

/** Parts of new files read, parsed and projected ahead of the write (pipeline.ts). */
export interface PreparedSource {
	next(path: string): PreparedPart | null;
	skip(path: string): void;
}

/**
 * `prepared`: the file's parts are coming from the worker; used only when the file is still new
 * inside the write transaction, anything else is decided as usual.
 *
 * Inside a batch (sync.ts), a file the index has never seen is written without a savepoint of its
 * own: opening one makes FTS5 write out its pending postings as a segment, so a cold index made
 * one tiny segment per file and spent its time merging them. If such a file fails part way, the
 * rows it wrote are deleted instead (it had none before), which leaves what a rollback would.
 */
export function syncFile(ctx: SyncContext, file: DiscoveredFile, prepared?: PreparedSource): Outcome {
	const { db, writer, report } = ctx;
	try {
		// Decide inside the write transaction: another writer may have handled this file meanwhile.
		if (db.inTransaction) {
			const row = writer.loadFile(file.path);
			if (row === null) return writeUnseen(ctx, file, prepared);
		}
		return db.transaction((): Outcome => decide(ctx, file, writer.loadFile(file.path), prepared)).immediate();
	} catch (err) {
		// The worker stopped in the middle of the file: its rows were rolled back or deleted, index it here.
		if (err instanceof PreparedLost) return syncFile(ctx, file);
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
		if (code === "EUNKNOWN") ctx.debug?.(`indexing ${file.path}: ${err instanceof Error ? err.stack : String(err)}`);
		addProblem(
			report,
			file.path,
			`cannot index ${file.path}: ${code !== "EUNKNOWN" ? code : "unexpected error (PI_EVENTS_DEBUG=1 for details)"} (its last known-good index is kept)`,
		);
		return "keptLastGood";
	}
}

function decide(ctx: SyncContext, file: DiscoveredFile, row: FileRow | null, prepared?: PreparedSource): Outcome {
	if (row === null && prepared) {
		const outcome = writePrepared(ctx, file, prepared);
		if (outcome) return outcome;
	}
	prepared?.skip(file.path);
	if (unchangedSince(row, file)) return "unchanged";
	if (row && row.status === "indexed" && canAppend(row, file)) return appendFile(ctx, file, row);
	return rebuildFile(ctx, file, row);
}

/** A file with no row yet, in the caller's transaction; on failure its partial rows are deleted. */
function writeUnseen(ctx: SyncContext, file: DiscoveredFile, prepared?: PreparedSource): Outcome {
	try {
		return decide(ctx, file, null, prepared);
	} catch (err) {
		// A database failure aborts the whole batch (sync.ts rolls it back): nothing to delete here.
		if (!isDatabaseError(err)) {
			const written = ctx.writer.loadFile(file.path);
			if (written) ctx.writer.deleteFile(written.file_key);
		}
		throw err;
	}
}

/** Growth with an unchanged indexed prefix can be appended; anything else is rebuilt. */
function canAppend(row: FileRow, file: DiscoveredFile): boolean {
	if (row.dev !== file.dev || row.ino !== file.ino) return false; // replaced
	if (file.size < row.durable_end) return false; // truncated
	const now = fingerprintPrefix(file.path, row.durable_end);
	return now.head === row.head_hash && now.tail === row.tail_hash;
}

function appendFile(ctx: SyncContext, file: DiscoveredFile, row: FileRow): Outcome {
	const { writer, report } = ctx;
	const state = JSON.parse(row.parser_state) as ParserState;
	const sessionKey = writer.sessionKeyOf(row.file_key);
	if (sessionKey === null || !state.header) return rebuildFile(ctx, file, row);
	const oldLeaf = writer.leafRow(sessionKey);
	// The header is known: resolve the session's canonical cwd once, not per chunk.
	const scope = sessionScope(state);
	const added: ProjectedEvent[] = [];
	let diagnostics = 0;
	const read = readDurableLines(file.path, row.durable_end, row.next_line, (lines) => {
		const out = parseLines(state, lines, { file: file.path, idExists: (id) => writer.entryExists(sessionKey, id), project: projectEntry });
		writer.insertEvents(sessionKey, out.events, scope);
		for (const e of out.events) {
			added.push(e);
			report.fragmentsAdded += e.fragments.length;
		}
		diagnostics += out.diagnostics.length;
		ctx.addDiagnostics(out.diagnostics);
	});
	report.bytesRead += read.end - row.durable_end;
	report.eventsAdded += added.length;
	if (added.length > 0) classifyAfterAppend(writer, sessionKey, oldLeaf, added);
	writer.upsertFile(fileFacts(file, read, state, "indexed", null, row.diagnostics + diagnostics));
	if (added.length > 0) writer.summarizeAppend(sessionKey, added);
	return "appended";
}

function rebuildFile(ctx: SyncContext, file: DiscoveredFile, row: FileRow | null): Outcome {
	const { writer, report } = ctx;
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
	const tally = new SessionTally();
	const read = readDurableLines(file.path, 0, 1, (lines) => {
		const out = parseLines(state, lines, { file: file.path, idExists: (id) => ids.has(id), project: projectEntry });
		diagnosticCount += out.diagnostics.length;
		for (const d of out.diagnostics) if (diagnostics.length < 1000) diagnostics.push(d);
		if (out.events.length === 0) return;
		if (sessionKey === null && state.header) {
			// The file row must exist before its session row: insert a provisional one, finished below.
			provisionalFileKey ??= writer.upsertFile(provisionalFacts(file));
			sessionKey = writer.upsertSession(provisionalFileKey, sessionFacts(state));
		}
		if (sessionKey === null) return;
		for (const e of out.events) ids.add(e.entryId);
		scope ??= sessionScope(state);
		const { fragments } = writer.insertEvents(sessionKey, out.events, scope);
		tally.add(out.events);
		events += out.events.length;
		report.fragmentsAdded += fragments;
	});
	report.bytesRead += read.end;

	if (!state.header) {
		if (hadIndex) {
			// A changed file that cannot be parsed safely keeps its last known-good index.
			throw new KeepLastGood(state.rejected ?? "no complete session header");
		}
		ctx.addDiagnostics(diagnostics, diagnosticCount);
		const problem = state.rejected ?? (read.end === 0 ? "no complete line yet" : "no session header");
		writer.upsertFile(fileFacts(file, read, state, "rejected", problem, diagnosticCount));
		return "rejected";
	}
	ctx.addDiagnostics(diagnostics, diagnosticCount);
	report.eventsAdded += events;
	const finalFileKey = writer.upsertFile(fileFacts(file, read, state, "indexed", null, diagnosticCount));
	sessionKey = writer.upsertSession(finalFileKey, sessionFacts(state));
	classifyFull(writer, sessionKey);
	writer.writeSessionSummary(sessionKey, tally);
	// A file first seen without a complete header enters the index as new, not rebuilt.
	return hadIndex ? "rebuilt" : "new";
}

/**
 * A new file from its prepared parts: the writes rebuildFile makes. Null when nothing was written
 * and the file is better indexed the ordinary way (no session header, the worker failed on it).
 */
function writePrepared(ctx: SyncContext, file: DiscoveredFile, source: PreparedSource): Outcome | null {
	const { writer, report } = ctx;
	let sessionKey: number | null = null;
	let scope: SessionScope | undefined;
	// The header, and so the session's facts, are known from the first part on: each path is made
	// canonical once (a realpath each; five per file cost a 1 GB cold index's writer 0.4 s).
	let facts: ReturnType<typeof sessionFacts> | null = null;
	let realPath: string | null = null;
	let events = 0;
	let classified = false;
	const tally = new SessionTally();
	for (;;) {
		const part = source.next(file.path);
		if (part === null || part.kind === "failed") {
			if (sessionKey === null) return null;
			throw new PreparedLost();
		}
		if (part.kind === "events") {
			if (sessionKey === null) {
				// Events come only after a complete header (the file row must exist before its session row).
				realPath = canonicalPath(file.path);
				const fileKey = writer.upsertFile(provisionalFacts(file, realPath));
				facts = sessionFacts(part.state);
				sessionKey = writer.upsertSession(fileKey, facts);
				scope = { sessionId: facts.sessionId, cwd: facts.cwd, cwdReal: facts.cwdReal };
			}
			const { fragments } = writer.insertEvents(sessionKey, part.events, scope!, part.states);
			tally.add(part.events);
			classified = part.states !== undefined;
			events += part.events.length;
			report.fragmentsAdded += fragments;
			continue;
		}
		if (!part.state.header) {
			if (sessionKey === null) return null;
			throw new PreparedLost();
		}
		report.bytesRead += part.read.end;
		ctx.addDiagnostics(part.diagnostics, part.diagnosticCount);
		report.eventsAdded += events;
		const finalFileKey = writer.upsertFile(fileFacts(file, part.read, part.state, "indexed", null, part.diagnosticCount, part.fingerprint, realPath));
		sessionKey = writer.upsertSession(finalFileKey, facts ?? sessionFacts(part.state));
		if (!classified) classifyFull(writer, sessionKey);
		writer.writeSessionSummary(sessionKey, tally);
		return "new";
	}
}

/** The worker stopped before the end of a file whose rows were already written. */
class PreparedLost extends Error {}

/** Thrown inside the transaction to roll back a rebuild and keep the previous rows. */
class KeepLastGood extends Error {
	constructor(readonly reason: string) {
		super(reason);
	}
}

/** A file row that exists only until the rebuild finishes (the session row needs its key). */
function provisionalFacts(file: DiscoveredFile, realPath = canonicalPath(file.path)): Omit<FileRow, "file_key"> {
	return {
		path: file.path,
		real_path: realPath,
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
	};
}

function fileFacts(
	file: DiscoveredFile,
	read: DurableRead,
	state: ParserState,
	status: FileRow["status"],
	problem: string | null,
	diagnostics: number,
	fp = fingerprintPrefix(file.path, read.end),
	realPath: string | null = null,
): Omit<FileRow, "file_key"> {
	return {
		path: file.path,
		real_path: realPath ?? canonicalPath(file.path),
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
