/**
 * The writer-free half of indexing a new session file: read, parse, project, and compute the
 * full-text columns. A cold index runs it in a worker (pipeline.ts) while the main thread writes;
 * the file is handed over in chunks (one read chunk's events each), so a large session never sits
 * whole in memory, and as plain data (it crosses threads by structured clone).
 */
import type { Diagnostic } from "../model.ts";
import { fullTextColumns } from "../project/fulltext.ts";
import type { EventClassification } from "./classify.ts";
import { type ProjectedEvent, projectEntry } from "../project/projector.ts";
import { WordForms } from "../project/stem.ts";
import { type DurableRead, fingerprintPrefix, readDurableLines } from "../source/read.ts";
import { initialParserState, type ParserState, parseLines } from "../source/session-parser.ts";
import { classifyEvents } from "./classify.ts";

/** One part of a prepared file: events in file order, then one end, or a failure. */
export type PreparedPart =
	/**
	 * `state`: the parser state after these events (the session row is written from its header).
	 * `states`: when these are all the file's events, their tree states (classifyEvents).
	 */
	| { path: string; kind: "events"; bytes: number; events: ProjectedEvent[]; state: ParserState; states?: EventClassification[] }
	| {
			path: string;
			kind: "end";
			bytes: 0;
			state: ParserState;
			read: DurableRead;
			fingerprint: { head: string; tail: string };
			/** The first 1,000 diagnostics, and how many there were. */
			diagnostics: Diagnostic[];
			diagnosticCount: number;
	  }
	/** The file could not be prepared: the writer indexes it the ordinary way, which reports why. */
	| { path: string; kind: "failed"; bytes: 0 };

type EventsPart = Extract<PreparedPart, { kind: "events" }>;

const MAX_KEPT_DIAGNOSTICS = 1000;

/**
 * At most about this many bytes of source go out in one message. A part crosses threads by
 * structured clone, whose buffer for a whole 4 MB chunk's events was fresh memory each time, and
 * so was the writer's copy of it (300 MB of event-like parts between two threads: 80,000–89,000
 * page faults and 2.1–2.2 s as 4 MB parts, 25,000–27,000 and 1.2 s as 512 KB ones). A 1 GB cold
 * index, 2 interleaved pairs: 45.4/36.3 → 38.7/33.6 s, 673/631K → 543/531K page faults. (Before
 * schema 18 it was slower: a tool result whose call came in an earlier message walked the
 * session's events to ask whether the call ran pi-events.)
 */
const MESSAGE_BYTES = 512 * 1024;

/**
 * An events part as parts of about `maxBytes` of source each, in order: their events, their tree
 * states (when the part has them) and their bytes, which add up to the part's.
 */
export function splitEventsPart(part: EventsPart, maxBytes = MESSAGE_BYTES): EventsPart[] {
	if (part.bytes <= maxBytes || part.events.length <= 1) return [part];
	const out: EventsPart[] = [];
	let from = 0;
	let bytes = 0;
	let sentBytes = 0;
	for (let i = 0; i < part.events.length; i++) {
		bytes += part.events[i]!.locator.length;
		const last = i === part.events.length - 1;
		if (bytes >= maxBytes || last) {
			// The last piece also carries the bytes no event's line counts (blank and unparsable lines).
			const pieceBytes = last ? part.bytes - sentBytes : bytes;
			const piece: EventsPart = { path: part.path, kind: "events", bytes: pieceBytes, events: part.events.slice(from, i + 1), state: part.state };
			if (part.states) piece.states = part.states.slice(from, i + 1);
			out.push(piece);
			sentBytes += pieceBytes;
			from = i + 1;
			bytes = 0;
		}
	}
	return out;
}

export function prepareFile(path: string, send: (part: PreparedPart) => void, wordForms: WordForms = new WordForms()): void {
	const state = initialParserState();
	const ids = new Set<string>();
	const diagnostics: Diagnostic[] = [];
	let diagnosticCount = 0;
	let read: DurableRead;
	// Each part is held back until the next one (or the end), so a file read in one chunk, most of
	// them, goes out with its tree states and the writer needs no UPDATE per event.
	const held: { part: EventsPart | null; sentBefore: boolean } = { part: null, sentBefore: false };
	try {
		read = readDurableLines(path, 0, 1, (lines) => {
			const out = parseLines(state, lines, { file: path, idExists: (id) => ids.has(id), project: projectEntry });
			diagnosticCount += out.diagnostics.length;
			for (const d of out.diagnostics) if (diagnostics.length < MAX_KEPT_DIAGNOSTICS) diagnostics.push(d);
			for (const e of out.events) {
				ids.add(e.entryId);
				for (const f of e.fragments) {
					f.columns = fullTextColumns(wordForms, e, f);
					// The writer stores the indexed text only. Sent along, the display text was a second copy of
					// most fragments crossing threads (peak RSS at 1 GB, side by side: about 50 MB less without).
					f.text = "";
				}
			}
			let bytes = 0;
			for (const l of lines) bytes += l.length;
			if (out.events.length === 0) return;
			if (held.part) {
				for (const piece of splitEventsPart(held.part)) send(piece);
				held.sentBefore = true;
			}
			held.part = { path, kind: "events", bytes, events: out.events, state: { ...state } };
		});
	} catch {
		send({ path, kind: "failed", bytes: 0 });
		return;
	}
	if (held.part) {
		if (!held.sentBefore) held.part.states = classifyEvents(held.part.events);
		for (const piece of splitEventsPart(held.part)) send(piece);
	}
	send({ path, kind: "end", bytes: 0, state, read, fingerprint: fingerprintPrefix(path, read.end), diagnostics, diagnosticCount });
}
