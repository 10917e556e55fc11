/**
 * The project vocabulary as types (see shared/spec/core-concepts.md).
 * Pure: imports nothing. Every other module speaks in these terms.
 */

/** Searchable semantic parts of an event (the semantic-kind table). */
export const SEMANTIC_KINDS = [
	"user.text",
	"assistant.text",
	"tool.call",
	"tool.result",
	"bash.command",
	"bash.output",
	"summary.compaction",
	"summary.branch",
	"custom.message",
	"session.name",
] as const;
export type SemanticKind = (typeof SEMANTIC_KINDS)[number];

/**
 * The tools pi-events offers a model (the pi extension and the MCP server), in the order the tool
 * table (server/tools.ts TOOLS) lists them. One list: the table is typed by it, and the echo rule
 * (project/echoes.ts) treats a call of any of them as pi-events' own.
 */
export const TOOL_NAMES = ["event_search", "event_read", "event_trace", "event_sessions"] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

export const BRANCH_STATES = ["selected", "alternate", "unknown"] as const;
export type BranchState = (typeof BRANCH_STATES)[number];

const CONTEXT_ROLES = ["conversation", "summary", "control", "metadata"] as const;
export type ContextRole = (typeof CONTEXT_ROLES)[number];

export const SELECTION_STATES = ["direct", "summarized", "not-selected", "not-applicable", "unknown"] as const;
export type SelectionState = (typeof SELECTION_STATES)[number];

/** Where an entry was observed: an observation, never its public identity. */
export interface Locator {
	/** Absolute path of the session file. */
	file: string;
	/** Byte offset of the first byte of the line. */
	offset: number;
	/** Byte length of the line without its LF (a trailing CR is included). */
	length: number;
	/** 1-based physical line number. */
	line: number;
	/** Hex content hash of the line bytes (see source/jsonl.ts hashBytes). */
	hash: string;
}

/** Where an entry sits in its file, as the parser hands it to the projector. */
export interface EntryContext {
	/** 0-based append position of this entry among the session's entries. */
	seq: number;
	/** Header version (1 = legacy linear file without ids). */
	version: number;
	/** Id of the previous entry in append order (v1 files chain linearly). */
	previousEntryId: string | null;
	locator: Locator;
}

export interface SessionHeaderInfo {
	sessionId: string;
	/** Header `version`; 1 when missing. */
	version: number;
	/** Recorded working directory, verbatim (may be relative or missing in hostile files). */
	cwd: string | null;
	/** Header ISO timestamp. */
	timestamp: string | null;
	/** `parentSession` (v2+) or `branchedFrom` (v1): a path, possibly relative. */
	parentSession: string | null;
	/** oh-my-pi title (title slot line or header `title`). */
	title: string | null;
}

type FileOp = "read" | "changed";

export interface FileEvidence {
	path: string;
	op: FileOp;
}

/** One searchable part of an event as stored in the index. */
export interface FragmentRecord {
	/** Deterministic for unchanged content: `<kind>#<block index>`. */
	fragmentId: string;
	kind: SemanticKind;
	/** Bounded text: the whole text, or head + omission marker + tail. */
	text: string;
	/** Length in characters of the full source text before bounding. */
	fullLength: number;
	/** True when `text` is a head/tail excerpt with an omission marker. */
	bounded: boolean;
}

/** Small, filterable facts about an entry that are neither identity nor text. */
export interface EventMeta {
	model?: string;
	provider?: string;
	stopReason?: string;
	errorMessage?: string;
	label?: string | null;
	thinkingLevel?: string | null;
	name?: string;
	fromId?: string;
	firstKeptEntryId?: string | null;
	tokensBefore?: number;
	cancelled?: boolean;
	truncated?: boolean;
	excludeFromContext?: boolean;
	display?: boolean;
	/** branch_summary with an empty summary: pi turns it into no message. */
	emptySummary?: boolean;
	/** context_edit with `replacement: null`: the target leaves the model context. */
	removesTarget?: boolean;
	/** Fields the projector dropped on purpose (thinking, images, signatures...). */
	omitted?: string[];
}

/** The normalized interpretation of one entry, as projected (before tree classification). */
export interface EventRecord {
	entryId: string;
	/** True when the id was derived by pi-events (v1 files, duplicate ids), not recorded by pi. */
	idDerived: boolean;
	parentId: string | null;
	/** Append order within the session file, 0-based over entries (header excluded). */
	seq: number;
	/** Raw entry `type` (message, compaction, label, ...). */
	eventType: string;
	/** Message role for `message` entries (user, assistant, toolResult, bashExecution, custom, system...). */
	role: string | null;
	toolName: string | null;
	toolCallId: string | null;
	customType: string | null;
	/** Entry timestamp in epoch ms (entry ISO timestamp, else message timestamp). */
	timestampMs: number | null;
	isError: boolean | null;
	exitCode: number | null;
	/** The entry this one points at: label/context_edit targetId, branch_summary fromId, compaction firstKeptEntryId. */
	targetId: string | null;
	/** Tool-call ids made by an assistant message (for tool-result-for relations). */
	callIds: string[];
	locator: Locator;
	files: FileEvidence[];
	meta: EventMeta;
	fragments: FragmentRecord[];
}

/** Tree classification of one event (project/tree.ts). */
export interface TreeState {
	branchState: BranchState;
	contextRole: ContextRole;
	selectionState: SelectionState;
}

type DiagnosticKind =
	| "malformed-json"
	| "not-an-object"
	| "missing-header"
	| "invalid-entry"
	| "duplicate-id"
	| "cycle"
	| "unreadable"
	| "changed-unparseable"
	| "oversized-line";

/** A per-line (or per-file) problem in a source file: counted and reported, never silently skipped. */
export interface Diagnostic {
	file: string;
	/** Byte offset of the line, or -1 for file-level problems. */
	offset: number;
	line: number;
	kind: DiagnosticKind;
	detail: string;
}

/**
 * The freshness problem of an answer whose sync found another process writing the index (a long
 * sync holds its lock for seconds): sync/freshness.ts says it, present/render.ts words the line by it.
 */
export const BUSY_PROBLEM = "not synced: another process is updating the index; this answer is from what it holds so far";
