/**
 * Pure, resumable interpretation of framed lines as one pi session: the optional oh-my-pi title
 * slot, the header, then entries handed to a projector (project/projector.ts in practice; the
 * caller passes it, so source/ does not depend on project/). Bad lines become diagnostics; the
 * rest of the file is still read. The state can be saved and resumed to index only an appended suffix.
 */
import * as v from "valibot";
import type { Diagnostic, EntryContext, SessionHeaderInfo } from "../model.ts";
import { hashBytes } from "./hash.ts";
import { decodeLine, type FramedLine, isBlankLine } from "./jsonl.ts";

/** Lines longer than this are reported and skipped rather than parsed (bounded memory and time). */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

const HeaderSchema = v.looseObject({
	type: v.literal("session"),
	id: v.pipe(v.string(), v.minLength(1)),
	version: v.optional(v.number()),
	timestamp: v.optional(v.string()),
	cwd: v.optional(v.string()),
	parentSession: v.optional(v.string()),
	branchedFrom: v.optional(v.string()),
	title: v.optional(v.string()),
});

export interface ParserState {
	header: SessionHeaderInfo | null;
	/** oh-my-pi title from a title slot line before the header. */
	slotTitle: string | null;
	/** Whether any record has been parsed (the first must be a title slot or the header). */
	started: boolean;
	/** Set when the file cannot be a pi session (its first record is not a header). */
	rejected: string | null;
	nextSeq: number;
	lastEntryId: string | null;
	/** Number of entries whose ids were derived because they duplicated an earlier id. */
	duplicateCount: number;
}

export function initialParserState(): ParserState {
	return {
		header: null,
		slotTitle: null,
		started: false,
		rejected: null,
		nextSeq: 0,
		lastEntryId: null,
		duplicateCount: 0,
	};
}

/** What the parser needs of a projected entry: its id, which it may rename when duplicated. */
interface ParsedEntry {
	entryId: string;
	idDerived: boolean;
}

/** Turns one entry record into an event (project/projector.ts `projectEntry`). */
type EntryProjector<E extends ParsedEntry> = (record: Record<string, unknown>, ctx: EntryContext) => E;

interface ParseOutput<E extends ParsedEntry> {
	events: E[];
	diagnostics: Diagnostic[];
}

/** Where the lines come from and how entries become events. */
interface ParseContext<E extends ParsedEntry> {
	/** The session file (for locators and diagnostics). */
	file: string;
	/** Whether an entry id is already taken in this session (earlier in this batch or already indexed). */
	idExists: (entryId: string) => boolean;
	project: EntryProjector<E>;
}

/** Interpret complete lines in order. Duplicated entry ids get derived ids (`id~dupN`). */
export function parseLines<E extends ParsedEntry>(state: ParserState, lines: Iterable<FramedLine>, ctx: ParseContext<E>): ParseOutput<E> {
	const { file, project } = ctx;
	const out: ParseOutput<E> = { events: [], diagnostics: [] };
	const batchIds = new Set<string>();
	const taken = (id: string) => batchIds.has(id) || ctx.idExists(id);
	const diag = (line: FramedLine, kind: Diagnostic["kind"], detail: string) =>
		out.diagnostics.push({ file, offset: line.offset, line: line.line, kind, detail });

	for (const line of lines) {
		if (state.rejected) break;
		const record = recordOf(line, diag);
		if (record === null) continue;
		if (!state.header) {
			if (readHeaderSlot(state, record, line)) continue;
			const rejected = readHeader(state, record);
			if (rejected) {
				diag(line, "missing-header", rejected);
				break;
			}
			continue;
		}
		const event = project(record, {
			seq: state.nextSeq,
			version: state.header.version,
			previousEntryId: state.lastEntryId,
			locator: { file, offset: line.offset, length: line.length, line: line.line, hash: hashBytes(line.bytes) },
		});
		if (taken(event.entryId)) {
			const original = event.entryId;
			// The derived id must itself be free (a file may already hold an id like "a~dup1").
			let derived: string;
			do derived = `${original}~dup${++state.duplicateCount}`;
			while (taken(derived));
			diag(line, "duplicate-id", `entry id ${JSON.stringify(original)} appears again; indexed as ${JSON.stringify(derived)}`);
			event.entryId = derived;
			event.idDerived = true;
		}
		batchIds.add(event.entryId);
		state.nextSeq++;
		state.lastEntryId = event.entryId;
		out.events.push(event);
	}
	return out;
}

/** One line as a JSON object, or null (blank lines silently; anything else with a diagnostic). */
function recordOf(line: FramedLine, diag: (line: FramedLine, kind: Diagnostic["kind"], detail: string) => void): Record<string, unknown> | null {
	if (line.length > MAX_LINE_BYTES) {
		diag(line, "oversized-line", `line of ${line.length} bytes exceeds ${MAX_LINE_BYTES} and was skipped`);
		return null;
	}
	if (isBlankLine(line.bytes)) return null;
	let value: unknown;
	try {
		value = JSON.parse(decodeLine(line.bytes));
	} catch {
		// Never the parser's message: it quotes the text ("Unexpected identifier "root""), and a
		// diagnostic must not print the content of a file that may not be a session at all.
		diag(line, "malformed-json", `not valid JSON (a line of ${line.length} bytes)`);
		return null;
	}
	if (typeof value !== "object" || value === null || Array.isArray(value)) {
		diag(line, "not-an-object", "a JSON value that is not an object");
		return null;
	}
	return value as Record<string, unknown>;
}

/** oh-my-pi's title slot: a first line before the header. True when this record was it. */
function readHeaderSlot(state: ParserState, record: Record<string, unknown>, line: FramedLine): boolean {
	const slot = !state.started && record.type === "title" && line.line === 1;
	state.started = true;
	if (slot) state.slotTitle = typeof record.title === "string" ? record.title : null;
	return slot;
}

/** Read the session header into the state; returns why the file is rejected, or null. */
function readHeader(state: ParserState, record: Record<string, unknown>): string | null {
	const parsed = v.safeParse(HeaderSchema, record);
	if (!parsed.success) {
		// Which header fields are wrong, never their values (the file may not be a session).
		const fields = [...new Set(parsed.issues.map((i) => v.getDotPath(i) ?? "record"))].join(", ");
		state.rejected = `first record is not a pi session header (invalid or missing: ${fields})`;
		return state.rejected;
	}
	const h = parsed.output;
	state.header = {
		sessionId: h.id,
		// A non-finite version (1e400) would not survive the saved parser state: treat it as current.
		version: typeof h.version !== "number" || Number.isNaN(h.version) ? 1 : Number.isFinite(h.version) ? h.version : h.version > 0 ? 3 : 1,
		cwd: h.cwd ?? null,
		timestamp: h.timestamp ?? null,
		parentSession: h.parentSession ?? h.branchedFrom ?? null,
		title: state.slotTitle ?? h.title ?? null,
	};
	return null;
}
