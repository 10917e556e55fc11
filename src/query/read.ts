/**
 * Exact reads (`pi-events read`, `event_read`): identity and metadata from the index, content
 * re-read from the source file at the stored locator and checked against its hash (a changed
 * source is an error that asks for a re-index, never stale text served as exact), a bounded
 * character window inside one fragment, and neighbours in append or branch order.
 */
import { PiEventsError } from "../errors.ts";
import { projectEntry } from "../project/projector.ts";
import { hashBytes } from "../source/hash.ts";
import { decodeLine } from "../source/jsonl.ts";
import { readLineAt, type SourceFiles } from "../source/read.ts";
import type { EventRow, Gate, SessionRow, VisibleSession } from "../gate/gate.ts";
import { type EventView, eventView } from "./views.ts";

/** Characters of each content part shown by a read without a fragment window. */
export const PART_CHARS = 2000;
export const DEFAULT_WINDOW = 4000;
export const MAX_WINDOW = 20_000;
export const MAX_NEIGHBOURS = 20;
/** Most entries a branch-order walk steps through (skipping non-conversation events with `only`). */
const MAX_WALK = 2000;
/** Most fork candidates or alternatives listed by a branch-order read (the total is always given). */
const MAX_ALTERNATIVES = 50;

export interface ReadRequest {
	sessionId: string;
	entryId: string;
	fragmentId?: string;
	offset?: number;
	length?: number;
	order?: "append" | "branch";
	before?: number;
	after?: number;
	/** "conversation": count neighbours among user and assistant text, session names and summaries only. */
	only?: "conversation";
}

interface ContentPart {
	fragmentId: string;
	kind: string;
	/** Total characters of this part in the source. */
	chars: number;
	text: string;
	truncated: boolean;
}

export interface ReadResult {
	event: EventView & {
		locator: { file: string; line: number; byteOffset: number; byteLength: number };
		meta: Record<string, unknown>;
		files: { path: string; op: string; absolutePath?: string }[];
	};
	session: { sessionId: string; cwd: string | null; name: string | null; file: string };
	content: ContentPart[];
	window: { fragmentId: string; offset: number; length: number; totalChars: number; text: string; hasMore: boolean } | null;
	/** Fields that exist in the source but are never returned (thinking, images, signatures...). */
	omitted: string[];
	neighbours: {
		order: "append" | "branch";
		/** "conversation": only user/assistant text, session names and summaries were counted and listed. */
		only: "conversation" | null;
		before: EventView[];
		after: EventView[];
		/** Branch order: other children passed on the way (alternatives), or the candidates where an unresolved fork stopped the walk. */
		alternatives: EventView[];
		/** How many alternatives there are (at most MAX_ALTERNATIVES are listed). */
		alternativesTotal: number;
		stoppedAt: "end" | "fork" | null;
	};
}

export function readEvent(gate: Gate, req: ReadRequest): ReadResult {
	const { session: visible, event } = gate.event(gate.resolveSessionId(req.sessionId), req.entryId);
	const session = visible.row;
	const entry = readSource(session, event);
	const projected = projectEntry(
		entry,
		{
			seq: event.seq,
			version: session.version,
			previousEntryId: event.parent_id,
			locator: { file: session.path, offset: event.byte_offset, length: event.byte_length, line: event.line, hash: event.content_hash },
		},
		{ fullText: true },
	);

	let window: ReadResult["window"] = null;
	if (req.fragmentId !== undefined) {
		const fragment = projected.fragments.find((f) => f.fragmentId === req.fragmentId);
		if (!fragment) {
			const ids = projected.fragments.map((f) => f.fragmentId);
			throw new PiEventsError(
				"E_USAGE",
				`event ${event.entry_id} has no fragment ${JSON.stringify(req.fragmentId)}${ids.length ? ` (it has: ${ids.join(", ")})` : " (it has no text fragments)"}`,
			);
		}
		const offset = req.offset ?? 0;
		const length = req.length ?? DEFAULT_WINDOW;
		if (!Number.isInteger(offset) || offset < 0) throw new PiEventsError("E_USAGE", "offset must be a non-negative integer");
		if (!Number.isInteger(length) || length < 1 || length > MAX_WINDOW) throw new PiEventsError("E_USAGE", `length must be an integer from 1 to ${MAX_WINDOW}`);
		const text = fragment.text.slice(offset, offset + length);
		window = {
			fragmentId: fragment.fragmentId,
			offset,
			length: text.length,
			totalChars: fragment.text.length,
			text,
			hasMore: offset + length < fragment.text.length,
		};
	}
	const content: ContentPart[] = projected.fragments.map((f) => ({
		fragmentId: f.fragmentId,
		kind: f.kind,
		chars: f.text.length,
		text: window ? "" : f.text.slice(0, PART_CHARS),
		truncated: window ? true : f.text.length > PART_CHARS,
	}));

	const before = clampCount(req.before, "before");
	const after = clampCount(req.after, "after");
	const order = req.order ?? "append";
	const only = req.only === "conversation";
	const neighbours = order === "branch" ? branchNeighbours(visible, event, before, after, only) : appendNeighbours(visible, event, before, after, only);

	const meta = event.meta ? (JSON.parse(event.meta) as Record<string, unknown>) : {};
	const omitted = Array.isArray(meta.omitted) ? (meta.omitted as string[]) : [];
	delete meta.omitted;
	return {
		event: {
			...eventView(event, visible),
			locator: { file: session.path, line: event.line, byteOffset: event.byte_offset, byteLength: event.byte_length },
			meta,
			files: visible.files(event),
		},
		session: { sessionId: session.session_id, cwd: session.cwd, name: session.name || null, file: session.path },
		content,
		window,
		omitted: [...omitted, ...signaturesIn(entry)],
		neighbours: { order, only: req.only ?? null, ...neighbours },
	};
}

function clampCount(value: number | undefined, name: string): number {
	const n = value ?? 0;
	if (!Number.isInteger(n) || n < 0 || n > MAX_NEIGHBOURS) throw new PiEventsError("E_USAGE", `${name} must be an integer from 0 to ${MAX_NEIGHBOURS}`);
	return n;
}

/**
 * Re-read and verify the source line; a mismatch means the file changed since indexing. `files`:
 * the files already open for this answer.
 */
export function readSource(session: SessionRow, event: EventRow, files?: SourceFiles): Record<string, unknown> {
	let bytes: Uint8Array;
	try {
		bytes = files ? files.readLineAt(session.path, event.byte_offset, event.byte_length) : readLineAt(session.path, event.byte_offset, event.byte_length);
	} catch {
		throw new PiEventsError("E_STALE", `the source of this event (${session.path}) cannot be read any more; run \`pi-events index\` to refresh the index`);
	}
	if (bytes.length !== event.byte_length || hashBytes(bytes) !== event.content_hash) {
		throw new PiEventsError("E_STALE", `the source file ${session.path} changed since it was indexed; run \`pi-events index\` and search again`);
	}
	return JSON.parse(decodeLine(bytes)) as Record<string, unknown>;
}

function signaturesIn(entry: Record<string, unknown>): string[] {
	const message = entry.message as { content?: unknown } | undefined;
	const content = Array.isArray(message?.content) ? (message.content as Record<string, unknown>[]) : [];
	return content.some((b) => b && (typeof b.thinkingSignature === "string" || typeof b.textSignature === "string" || typeof b.thoughtSignature === "string"))
		? ["signatures"]
		: [];
}

function appendNeighbours(session: VisibleSession, event: EventRow, before: number, after: number, only: boolean) {
	const views = (rows: EventRow[]) => rows.map((r) => eventView(r, session));
	if (only) {
		return {
			before: before > 0 ? views(session.conversationBySeq(event, "before", before).reverse()) : [],
			after: after > 0 ? views(session.conversationBySeq(event, "after", after)) : [],
			alternatives: [],
			alternativesTotal: 0,
			stoppedAt: null,
		};
	}
	return {
		before: before > 0 ? views(session.eventsBySeq(event.seq - before, event.seq - 1)) : [],
		after: after > 0 ? views(session.eventsBySeq(event.seq + 1, event.seq + after)) : [],
		alternatives: [],
		alternativesTotal: 0,
		stoppedAt: null,
	};
}

/**
 * Branch order: predecessors follow parentId; successors follow the selected child on the
 * root-to-leaf path, else the only child, and stop at an unresolved fork listing every candidate.
 */
function branchNeighbours(session: VisibleSession, event: EventRow, before: number, after: number, only: boolean) {
	const view = (r: EventRow) => eventView(r, session);
	// With `only`, steps over other events are not counted, but the walk is bounded all the same.
	const counts = (e: EventRow) => !only || session.isConversation(e);
	let steps = 0;
	const predecessors: EventRow[] = [];
	const seen = new Set<string>([event.entry_id]);
	let cursor: EventRow | null = event;
	while (predecessors.length < before && cursor?.parent_id && steps++ < MAX_WALK) {
		const parent = session.event(cursor.parent_id);
		if (!parent || seen.has(parent.entry_id)) break;
		seen.add(parent.entry_id);
		if (counts(parent)) predecessors.unshift(parent);
		cursor = parent;
	}
	const successors: EventRow[] = [];
	const alternatives: EventRow[] = [];
	let stoppedAt: "end" | "fork" | null = null;
	cursor = event;
	steps = 0;
	while (successors.length < after && steps++ < MAX_WALK) {
		const children: EventRow[] = session.children(cursor.entry_id).filter((c) => !seen.has(c.entry_id));
		let next: EventRow | undefined;
		if (cursor.branch_state === "selected") {
			next = children.find((c) => c.branch_state === "selected");
			alternatives.push(...children.filter((c) => c !== next));
		} else if (children.length === 1) {
			next = children[0];
		} else if (children.length > 1) {
			alternatives.push(...children);
			stoppedAt = "fork";
			break;
		}
		if (!next) {
			stoppedAt = "end";
			break;
		}
		seen.add(next.entry_id);
		if (counts(next)) successors.push(next);
		cursor = next;
	}
	return {
		before: predecessors.map(view),
		after: successors.map(view),
		alternatives: alternatives.slice(0, MAX_ALTERNATIVES).map(view),
		alternativesTotal: alternatives.length,
		stoppedAt,
	};
}
