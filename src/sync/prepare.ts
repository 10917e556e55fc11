/**
 * The writer-free half of indexing a new session file: read, parse, project, and compute the
 * full-text columns. A cold index runs it in a worker (pipeline.ts) while the main thread writes;
 * the file is handed over in chunks (one read chunk's events each), so a large session never sits
 * whole in memory, and as plain data (it crosses threads by structured clone).
 */
import type { Diagnostic } from "../model.ts";
import { fullTextColumns } from "../project/fulltext.ts";
import type { Classification } from "../project/tree.ts";
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
	| { path: string; kind: "events"; bytes: number; events: ProjectedEvent[]; state: ParserState; states?: Classification[] }
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
				send(held.part);
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
		send(held.part);
	}
	send({ path, kind: "end", bytes: 0, state, read, fingerprint: fingerprintPrefix(path, read.end), diagnostics, diagnosticCount });
}
