/**
 * Pure projection of one pi session entry into an event and its searchable fragments, following
 * the semantic-kind table of core-concepts.md. The only module that knows pi message shapes.
 * Thinking, images, signatures, usage and attachment bodies are never copied into the result.
 */
import type { EntryContext, EventMeta, EventRecord, FileEvidence, FragmentRecord, SemanticKind } from "../model.ts";
import type { FullTextColumns } from "./fulltext.ts";
import { isPiEventsTool, isShellTool, runsPiEvents } from "./echoes.ts";
import { boundText, normalizeWhitespace, renderToolCall } from "./text.ts";

/** A projected fragment plus the text given to the full-text index. */
interface ProjectedFragment extends FragmentRecord {
	indexText: string;
	/** An echo of pi-events itself (echoes.ts): excluded from search by default. */
	derived: boolean;
	/** The other full-text columns, when computed before the write (a cold index: sync/prepare.ts). */
	columns?: FullTextColumns;
	/** A tool.call fragment's toolCallId (pairs the call with its result: project/transcript.ts). */
	callId?: string;
}

export interface ProjectedEvent extends EventRecord {
	fragments: ProjectedFragment[];
	/**
	 * Tool-call ids of this entry's calls that run pi-events. Their results are derived too; a
	 * result of a shell tool cannot tell by itself, so the writer looks its call up by id.
	 */
	derivedCallIds: string[];
}

type Obj = Record<string, unknown>;

const READ_TOOLS = new Set(["read", "view", "cat"]);
const CHANGE_TOOLS = new Set(["edit", "write", "multiedit", "multi_edit", "apply_patch", "notebook_edit"]);

/** One projection in progress: the event being built and whether fragments keep their whole text. */
interface Projection {
	event: ProjectedEvent;
	fullText: boolean;
}

/** Derived id for entries of legacy v1 files, which carry none. Deterministic in append position. */
function v1EntryId(seq: number): string {
	return `v1-${seq}`;
}

/**
 * Project one entry. `fullText`: keep each fragment's whole text (exact reads); otherwise long
 * texts are bounded to head + omission marker + tail, as indexed.
 */
export function projectEntry(entry: Obj, ctx: EntryContext, options: { fullText?: boolean } = {}): ProjectedEvent {
	const legacy = ctx.version < 2 || typeof entry.id !== "string" || entry.id === "";
	const entryId = legacy ? v1EntryId(ctx.seq) : (entry.id as string);
	const parentId = legacy ? ctx.previousEntryId : str(entry.parentId);
	const eventType = typeof entry.type === "string" ? entry.type : "unknown";
	const event: ProjectedEvent = {
		entryId,
		idDerived: legacy,
		parentId,
		seq: ctx.seq,
		eventType,
		role: null,
		toolName: null,
		toolCallId: null,
		customType: null,
		timestampMs: parseTime(entry.timestamp),
		isError: null,
		exitCode: null,
		targetId: null,
		callIds: [],
		locator: ctx.locator,
		files: [],
		meta: {},
		fragments: [],
		derivedCallIds: [],
	};
	projectByType({ event, fullText: options.fullText === true }, entry);
	if (event.meta.omitted?.length === 0) delete event.meta.omitted;
	return event;
}

/** What each entry type contributes: fragments, pointers and metadata. */
function projectByType(p: Projection, entry: Obj): void {
	const event = p.event;
	switch (event.eventType) {
		case "message":
			projectMessage(p, isObj(entry.message) ? entry.message : {});
			break;
		case "compaction": {
			addFragment(p, "summary.compaction", 0, str(entry.summary));
			const kept = entry.firstKeptEntryId;
			if (typeof kept === "string") event.targetId = kept;
			else if (typeof entry.firstKeptEntryIndex === "number" && entry.firstKeptEntryIndex >= 1) {
				// v1: an index into the whole parsed file, header = 0.
				event.targetId = v1EntryId(entry.firstKeptEntryIndex - 1);
			}
			event.meta.firstKeptEntryId = event.targetId;
			if (typeof entry.tokensBefore === "number") event.meta.tokensBefore = entry.tokensBefore;
			addDetailFiles(event, entry.details);
			break;
		}
		case "branch_summary":
			addFragment(p, "summary.branch", 0, str(entry.summary));
			if (!str(entry.summary)) event.meta.emptySummary = true;
			event.targetId = str(entry.fromId);
			if (event.targetId) event.meta.fromId = event.targetId;
			addDetailFiles(event, entry.details);
			break;
		case "custom_message":
			event.customType = str(entry.customType);
			projectContent(p, "custom.message", entry.content);
			if (typeof entry.display === "boolean") event.meta.display = entry.display;
			break;
		case "session_info": {
			const name = typeof entry.name === "string" ? normalizeWhitespace(entry.name) : "";
			event.meta.name = name;
			addFragment(p, "session.name", 0, name);
			break;
		}
		case "title_change": {
			// oh-my-pi's session title, the counterpart of session_info.
			const title = typeof entry.title === "string" ? normalizeWhitespace(entry.title) : "";
			event.meta.name = title;
			addFragment(p, "session.name", 0, title);
			break;
		}
		case "label":
			event.targetId = str(entry.targetId);
			event.meta.label = typeof entry.label === "string" ? entry.label : null;
			break;
		case "context_edit":
			event.targetId = str(entry.targetId);
			if (entry.replacement === null) event.meta.removesTarget = true;
			break;
		case "model_change":
			event.meta.provider = str(entry.provider) ?? undefined;
			event.meta.model = str(entry.modelId) ?? str(entry.model) ?? undefined;
			break;
		case "thinking_level_change":
			event.meta.thinkingLevel = str(entry.thinkingLevel);
			break;
		case "custom":
			// Extension state is never searchable: its strings are not model-visible text.
			event.customType = str(entry.customType);
			break;
		case "usage":
			event.meta.provider = str(entry.provider) ?? undefined;
			event.meta.model = str(entry.model) ?? undefined;
			break;
		default:
			break;
	}
}

function projectMessage(p: Projection, message: Obj): void {
	const event = p.event;
	const role = str(message.role);
	event.role = role;
	if (event.timestampMs === null) event.timestampMs = parseTime(message.timestamp);
	switch (role) {
		case "user":
			projectContent(p, "user.text", message.content);
			if (Array.isArray(message.attachments) && message.attachments.length > 0) omit(event, "attachments");
			break;
		case "assistant":
			projectAssistant(p, message);
			break;
		case "toolResult":
			event.toolName = str(message.toolName);
			event.toolCallId = str(message.toolCallId);
			event.isError = typeof message.isError === "boolean" ? message.isError : null;
			projectContent(p, "tool.result", message.content);
			if (isPiEventsTool(event.toolName)) markDerived(event.fragments);
			break;
		case "bashExecution":
			addFragment(p, "bash.command", 0, str(message.command));
			addFragment(p, "bash.output", 0, str(message.output));
			if (runsPiEvents(str(message.command))) markDerived(event.fragments);
			event.exitCode = typeof message.exitCode === "number" ? message.exitCode : null;
			if (typeof message.cancelled === "boolean") event.meta.cancelled = message.cancelled;
			if (typeof message.truncated === "boolean") event.meta.truncated = message.truncated;
			if (typeof message.excludeFromContext === "boolean") event.meta.excludeFromContext = message.excludeFromContext;
			event.isError = event.exitCode !== null ? event.exitCode !== 0 : message.cancelled === true ? true : null;
			break;
		case "custom":
		case "hookMessage":
			event.customType = str(message.customType);
			projectContent(p, "custom.message", message.content);
			if (typeof message.display === "boolean") event.meta.display = message.display;
			break;
		case "system":
			// The system prompt is harness text, not history: typed, not searchable.
			omit(event, "system prompt");
			break;
		default:
			break;
	}
}

function projectAssistant(p: Projection, message: Obj): void {
	const event = p.event;
	event.meta.provider = str(message.provider) ?? undefined;
	event.meta.model = str(message.responseModel) ?? str(message.model) ?? undefined;
	const stopReason = str(message.stopReason);
	if (stopReason) event.meta.stopReason = stopReason;
	event.isError = stopReason === "error" || stopReason === "aborted" ? true : stopReason ? false : null;
	const content = Array.isArray(message.content) ? message.content : [];
	content.forEach((block, index) => {
		if (!isObj(block)) return;
		switch (block.type) {
			case "text":
				addFragment(p, "assistant.text", index, str(block.text));
				break;
			case "thinking":
			case "redactedThinking":
				omit(event, "thinking");
				break;
			case "toolCall": {
				const name = str(block.name) ?? "";
				const callId = str(block.id);
				if (callId) event.callIds.push(callId);
				if (event.toolName === null && name) event.toolName = name;
				const before = event.fragments.length;
				addFragment(p, "tool.call", index, renderToolCall(name, block.arguments));
				if (callId && event.fragments.length > before) event.fragments[before]!.callId = callId;
				if (isPiEventsTool(name) || (isShellTool(name) && isObj(block.arguments) && runsPiEvents(str(block.arguments.command)))) {
					markDerived(event.fragments.slice(before));
					if (callId) event.derivedCallIds.push(callId);
				}
				addCallFiles(event, name, block.arguments);
				break;
			}
			case "image":
				omit(event, "image");
				break;
			default:
				break;
		}
	});
	if (typeof message.errorMessage === "string" && message.errorMessage) {
		event.meta.errorMessage = message.errorMessage.slice(0, 500);
		addFragment(p, "assistant.text", "error", message.errorMessage);
	}
}

function projectContent(p: Projection, kind: SemanticKind, content: unknown): void {
	const event = p.event;
	if (typeof content === "string") {
		addFragment(p, kind, 0, content);
		return;
	}
	if (!Array.isArray(content)) return;
	content.forEach((block, index) => {
		if (!isObj(block)) return;
		if (block.type === "text") addFragment(p, kind, index, str(block.text));
		else if (block.type === "image") omit(event, "image");
	});
}

function addFragment(p: Projection, kind: SemanticKind, index: number | string, text: string | null): void {
	if (!text || text.trim() === "") return;
	const event = p.event;
	const bounded = p.fullText ? { text, fullLength: text.length, bounded: false, indexText: text } : boundText(text);
	event.fragments.push({
		fragmentId: `${kind}#${index}`,
		kind,
		text: bounded.text,
		fullLength: bounded.fullLength,
		bounded: bounded.bounded,
		indexText: bounded.indexText,
		derived: false,
	});
}

function markDerived(fragments: ProjectedFragment[]): void {
	for (const f of fragments) f.derived = true;
}

function addCallFiles(event: ProjectedEvent, tool: string, args: unknown): void {
	if (!isObj(args)) return;
	const lower = tool.toLowerCase();
	const op = READ_TOOLS.has(lower) ? "read" : CHANGE_TOOLS.has(lower) ? "changed" : null;
	if (!op) return;
	const path = str(args.path) ?? str(args.file_path) ?? str(args.filePath);
	if (path) pushFile(event.files, { path, op });
}

function addDetailFiles(event: ProjectedEvent, details: unknown): void {
	if (!isObj(details)) return;
	for (const [key, op] of [
		["readFiles", "read"],
		["modifiedFiles", "changed"],
	] as const) {
		const list = details[key];
		if (!Array.isArray(list)) continue;
		for (const path of list) if (typeof path === "string" && path) pushFile(event.files, { path, op });
	}
}

function pushFile(files: FileEvidence[], file: FileEvidence): void {
	if (!files.some((f) => f.path === file.path && f.op === file.op)) files.push(file);
}

function omit(event: ProjectedEvent, what: string): void {
	const meta: EventMeta = event.meta;
	meta.omitted ??= [];
	if (!meta.omitted.includes(what)) meta.omitted.push(what);
}

function isObj(value: unknown): value is Obj {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | null {
	return typeof value === "string" ? value : null;
}

/** ISO string or epoch milliseconds → epoch ms; anything else → null. */
export function parseTime(value: unknown): number | null {
	const ms = typeof value === "number" ? value : typeof value === "string" ? Date.parse(value) : Number.NaN;
	// Outside ±8.64e15 ms a JavaScript Date is invalid: such a timestamp is no time at all.
	return Number.isFinite(ms) && Math.abs(ms) <= MAX_TIME_MS ? ms : null;
}

const MAX_TIME_MS = 8.64e15;

/** ISO form of an epoch-ms time, or null. */
export function isoTime(ms: number | null): string | null {
	return ms === null || !Number.isFinite(ms) || Math.abs(ms) > MAX_TIME_MS ? null : new Date(ms).toISOString();
}
