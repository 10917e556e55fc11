/**
 * A turn as one bounded transcript (`pi-events read SESSION ENTRY --turn`, `event_read` with
 * `view: "turn"`): the turn that holds an entry (project/turn.ts), and with `turns` the next turns
 * of the same branch, as transcript lines (project/transcript.ts) re-read from the source file and
 * checked against its hash, within a byte budget that says what it cut and left out
 * (turn-budget.ts). Everything is read through the gate: a session outside the scope fails like a
 * missing one, and in the calling session the walk sees only entries before the invocation cutoff.
 */
import { PiEventsError } from "../errors.ts";
import type { EventRow, Gate, VisibleSession } from "../gate/gate.ts";
import { projectEntry } from "../project/projector.ts";
import { type TranscriptEntry, transcriptLines } from "../project/transcript.ts";
import { type TurnEnd, type TurnNode, type TurnSpan, type TurnTree, treeOf, turnAt, turnFrom } from "../project/turn.ts";
import { SourceFiles } from "../source/read.ts";
import { readSource } from "./read.ts";
import { type FittedTurn, fitTurns, type ShownLine } from "./turn-budget.ts";
import { eventView } from "./views.ts";

export const DEFAULT_TURN_BYTES = 8192;
export const MIN_TURN_BYTES = 2048;
export const MAX_TURN_BYTES = 100_000;
/** Most further turns (`turns`) one read adds. */
export const MAX_NEXT_TURNS = 10;
/** Most entries one turn walk steps through (the turn says "limit" beyond). */
const MAX_TURN_ENTRIES = 1000;
/** Lookups a turn walk makes entry by entry before it reads the session whole (when it may). */
const LOOKUPS_BEFORE_WHOLE = 100;
/** Sessions up to this many entries may be read whole for a turn walk (one statement). */
const WHOLE_SESSION_ROWS = 20_000;
/** Most other branches or fork candidates listed per turn (the total is always given). */
const MAX_LISTED_BRANCHES = 10;

/** Entry types that carry text (a transcript re-reads only these, and never tool output). */
const TEXT_TYPES = new Set(["message", "compaction", "branch_summary", "custom_message", "session_info", "title_change"]);

export interface TurnReadRequest {
	sessionId: string;
	entryId: string;
	/** The transcript's budget in bytes (default DEFAULT_TURN_BYTES). */
	maxBytes?: number;
	/** How many further turns of the same branch to add (default 0). */
	turns?: number;
	/** How many bytes longer than usual each command the rendered notes name is (the CLI's `--root DIR`): kept within the budget too. */
	commandBytes?: number;
}

/** Another branch leaving a turn, or a candidate of the fork it stopped at. */
export interface BranchView {
	/** The turn's entry it leaves from. */
	from: string;
	entryId: string;
	eventType: string;
	role: string | null;
	preview: string | null;
}

export interface TurnView {
	/** The prompt's entry id; null for the entries before a session's first prompt. */
	prompt: string | null;
	/** Entries in this turn (lines, control entries and tool results together). */
	entryCount: number;
	/** The turn's last entry walked (where a turn with end "limit" goes on). */
	last: string;
	lines: ShownLine[];
	/** Why the turn ends here (project/turn.ts TurnEnd). */
	end: TurnEnd;
	/** With end "next-prompt": the prompt of the next turn on this branch. */
	next: string | null;
	/** With end "fork": the children the walk did not choose between. */
	candidates: BranchView[];
	candidatesTotal: number;
	/** Other branches leaving this turn (abandoned or alternative). */
	alternatives: BranchView[];
	alternativesTotal: number;
	/** Entries that make no line: model and thinking changes, labels, extension state. */
	control: { entryId: string; eventType: string }[];
	/** Lines left out for the budget: how many, and the entries they belong to. */
	leftOut: FittedTurn["leftOut"];
}

export interface TurnReadResult {
	view: "turn";
	session: { sessionId: string; cwd: string | null; name: string | null; file: string };
	/** The entry asked for. */
	target: string;
	/** The calling session: only entries before this invocation are read. */
	cutoff: boolean;
	maxBytes: number;
	/** What the shown lines cost in the budget (text bytes plus LINE_OVERHEAD each). */
	bytes: number;
	turns: TurnView[];
	/** Prompts of the further turns left out whole for the budget. */
	turnsLeftOut: string[];
}

type Node = TurnNode & { row: EventRow };

export function readTurn(gate: Gate, req: TurnReadRequest): TurnReadResult {
	const maxBytes = req.maxBytes ?? DEFAULT_TURN_BYTES;
	if (!Number.isInteger(maxBytes) || maxBytes < MIN_TURN_BYTES || maxBytes > MAX_TURN_BYTES) {
		throw new PiEventsError("E_USAGE", `max bytes must be an integer from ${MIN_TURN_BYTES} to ${MAX_TURN_BYTES}`);
	}
	const more = req.turns ?? 0;
	if (!Number.isInteger(more) || more < 0 || more > MAX_NEXT_TURNS) throw new PiEventsError("E_USAGE", `turns must be an integer from 0 to ${MAX_NEXT_TURNS}`);
	const { session, event } = gate.event(gate.resolveSessionId(req.sessionId), req.entryId);
	const tree = visibleTree(session);
	const spans: TurnSpan<Node>[] = [turnAt(tree, event.entry_id, MAX_TURN_ENTRIES)!];
	while (spans.length <= more && spans[spans.length - 1]!.next) spans.push(turnFrom(tree, spans[spans.length - 1]!.next!, MAX_TURN_ENTRIES));
	const files = new SourceFiles();
	try {
		const transcripts = spans.map((span) => transcriptLines(span.entries.map((n) => transcriptEntry(session, n.row, files))));
		const row = session.row;
		const extra = req.commandBytes ?? 0;
		// Each turn's end names a command, and the closing notes two.
		const fitted = fitTurns(
			transcripts.map((t, i) => ({ lines: t.lines, overhead: turnOverhead(spans[i]!, t.control.length) + extra })),
			maxBytes - headerBytes(row.session_id, row.name, row.cwd) - 2 * extra,
			extra,
		);
		return {
			view: "turn",
			session: { sessionId: row.session_id, cwd: row.cwd, name: row.name || null, file: row.path },
			target: event.entry_id,
			cutoff: session.cutoffApplies,
			maxBytes,
			bytes: fitted.bytes,
			turns: fitted.turns.map((f, i) => turnView(session, spans[i]!, transcripts[i]!.control, f)),
			turnsLeftOut: spans.slice(fitted.turns.length).map((s) => s.prompt?.row.entry_id ?? s.entries[0]!.row.entry_id),
		};
	} finally {
		files.close();
	}
}

/**
 * What a rendered transcript spends beside its lines: the session line, the cutoff note and the
 * closing notes (which name the session id), so that the text output stays within the budget.
 */
function headerBytes(sessionId: string, name: string | null, cwd: string | null): number {
	return 240 + 2 * sessionId.length + utf8(name ?? "") + utf8(cwd ?? "");
}

/** A turn's header and end lines, its listed branches (previews of at most 72 characters) and control entries. */
function turnOverhead(span: TurnSpan<Node>, control: number): number {
	const listed = Math.min(span.alternatives.length, MAX_LISTED_BRANCHES) + Math.min(span.candidates.length, MAX_LISTED_BRANCHES);
	return 260 + listed * 130 + Math.min(control, 6) * 30;
}

const encoder = new TextEncoder();
const utf8 = (text: string) => encoder.encode(text).length;

/**
 * The session's tree as the gate shows it (children before the cutoff only). Entry by entry at
 * first, each lookup made once; a walk past LOOKUPS_BEFORE_WHOLE lookups reads a session of at most
 * WHOLE_SESSION_ROWS entries in one statement instead (a 1,000-entry turn: 292 → 41 ms; a short
 * turn in a 5,000-entry session stays at 13 ms, where reading it whole took 24).
 */
function visibleTree(session: VisibleSession): TurnTree<Node> {
	const node = (row: EventRow): Node => ({
		entryId: row.entry_id,
		parentId: row.parent_id,
		eventType: row.event_type,
		role: row.role,
		selected: row.branch_state === "selected",
		row,
	});
	const nodes = new Map<string, Node | null>();
	const children = new Map<string, Node[]>();
	let whole: TurnTree<Node> | null = null;
	let lookups = 0;
	const wholeTree = () => {
		if (whole === null && ++lookups > LOOKUPS_BEFORE_WHOLE && session.row.entry_count <= WHOLE_SESSION_ROWS) {
			whole = treeOf(session.eventsBySeq(0, session.row.entry_count).map(node));
		}
		return whole;
	};
	return {
		node(entryId) {
			if (!nodes.has(entryId)) {
				const tree = wholeTree();
				if (tree) return tree.node(entryId);
				const row = session.event(entryId);
				nodes.set(entryId, row ? node(row) : null);
			}
			return nodes.get(entryId)!;
		},
		children(entryId) {
			let list = children.get(entryId);
			if (!list) {
				const tree = wholeTree();
				if (tree) return tree.children(entryId);
				children.set(entryId, (list = session.children(entryId).map(node)));
			}
			return list;
		},
	};
}

/** One entry as the transcript needs it: identity and facts from the index, texts from the source. */
function transcriptEntry(session: VisibleSession, row: EventRow, files: SourceFiles): TranscriptEntry {
	const entry: TranscriptEntry = {
		entryId: row.entry_id,
		eventType: row.event_type,
		role: row.role,
		toolName: row.tool_name,
		toolCallId: row.tool_call_id,
		isError: row.is_error === null ? null : row.is_error === 1,
		exitCode: row.exit_code,
		customType: row.custom_type,
		fragments: [],
	};
	if (!TEXT_TYPES.has(row.event_type) || row.role === "toolResult") return entry;
	const source = readSource(session.row, row, files);
	const projected = projectEntry(
		source,
		{
			seq: row.seq,
			version: session.row.version,
			previousEntryId: row.parent_id,
			locator: { file: session.row.path, offset: row.byte_offset, length: row.byte_length, line: row.line, hash: row.content_hash },
		},
		{ fullText: true },
	);
	return { ...entry, fragments: projected.fragments };
}

function turnView(session: VisibleSession, span: TurnSpan<Node>, control: TurnView["control"], fitted: FittedTurn): TurnView {
	const last = span.entries[span.entries.length - 1]!.entryId;
	const branch = (from: string, n: Node): BranchView => {
		const v = eventView(n.row, session);
		return { from, entryId: v.entryId, eventType: v.eventType, role: v.role, preview: v.preview };
	};
	return {
		prompt: span.prompt?.entryId ?? null,
		entryCount: span.entries.length,
		last,
		lines: fitted.lines,
		end: span.end,
		next: span.next?.entryId ?? null,
		candidates: span.candidates.slice(0, MAX_LISTED_BRANCHES).map((n) => branch(last, n)),
		candidatesTotal: span.candidates.length,
		alternatives: span.alternatives.slice(0, MAX_LISTED_BRANCHES).map((a) => branch(a.from, a.node)),
		alternativesTotal: span.alternatives.length,
		control,
		leftOut: fitted.leftOut,
	};
}
