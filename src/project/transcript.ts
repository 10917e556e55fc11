/**
 * Pure transcript lines of a turn (project/turn.ts gives its entries): user and assistant texts
 * whole, each tool call as one line (tool, a short form of its arguments, the result's id and
 * whether it failed: calls and results are paired by toolCallId), each bash run as one line, and
 * summaries, session names and extension messages as text lines. Tool output is never copied in:
 * a line names the result's id, which an exact read returns. Control entries (model and thinking
 * changes, labels, extension state) make no line; their ids are listed apart.
 */

/** What a line needs of an entry: a projected event (project/projector.ts) fits. */
export interface TranscriptEntry {
	entryId: string;
	eventType: string;
	role: string | null;
	toolName: string | null;
	toolCallId: string | null;
	isError: boolean | null;
	exitCode: number | null;
	customType: string | null;
	/** The entry's fragments; a tool result needs none (its output is not shown). */
	fragments: readonly { fragmentId: string; kind: string; text: string; callId?: string | null }[];
}

/** A text shown whole (user, assistant, summary, session name, extension message). */
export interface TextLine {
	kind: "user" | "assistant" | "summary" | "name" | "custom";
	entryId: string;
	fragmentId: string;
	text: string;
}

/** One tool call and its result. */
export interface ToolLine {
	kind: "tool";
	/** The assistant entry that made the call. */
	entryId: string;
	callId: string | null;
	tool: string;
	/** A short form of the arguments: the telling ones (at most KEY_ARGS_CHARS characters), then the rest (ARGS_CHARS), `…` where cut. */
	args: string;
	/** The result's entry id; null when the turn holds no result for this call. */
	resultId: string | null;
	/** Whether the result was an error (null: no result, or pi did not say). */
	isError: boolean | null;
}

/** A tool result whose call is not in this turn. */
export interface ResultLine {
	kind: "result";
	entryId: string;
	callId: string | null;
	tool: string | null;
	isError: boolean | null;
}

/** A shell command the user ran (`!cmd`, a bashExecution message). */
export interface BashLine {
	kind: "bash";
	entryId: string;
	command: string;
	exitCode: number | null;
	isError: boolean | null;
}

export type TranscriptLine = TextLine | ToolLine | ResultLine | BashLine;

export interface Transcript {
	lines: TranscriptLine[];
	/** Entries that make no line: model and thinking-level changes, labels, extension state, empty messages. */
	control: { entryId: string; eventType: string }[];
}

/**
 * Characters of a call's telling arguments (below) shown on its line: enough for a whole shell
 * command as people write them, the path of a read or an edit, a grep's pattern and path.
 */
export const KEY_ARGS_CHARS = 500;
/** Characters of its other arguments (an edit's texts, a write's content, options), after the telling ones. */
export const ARGS_CHARS = 160;

/** Arguments that say what a call did: shown first, and at more length than the rest. */
const KEY_ARGS = ["command", "pattern", "path", "file_path", "filePath", "glob", "query", "url", "description"];

/** `key: ` at the start of a rendered argument line (nested keys joined with dots). */
const ARG_KEY = /^([\w$.-]+): /;

const TEXT_KINDS: Record<string, TextLine["kind"]> = {
	"user.text": "user",
	"assistant.text": "assistant",
	"summary.compaction": "summary",
	"summary.branch": "summary",
	"session.name": "name",
	"custom.message": "custom",
};

/** The transcript of a turn's entries (given in tree order). */
export function transcriptLines(entries: readonly TranscriptEntry[]): Transcript {
	const results = new Map<string, TranscriptEntry>();
	for (const e of entries) if (e.role === "toolResult" && e.toolCallId) results.set(e.toolCallId, e);
	const paired = new Set<string>();
	const lines: TranscriptLine[] = [];
	const control: Transcript["control"] = [];
	for (const e of entries) {
		const before = lines.length;
		if (e.role === "toolResult") {
			// Shown on its call's line; a result without a call in this turn gets a line of its own, after the calls.
			continue;
		}
		if (e.role === "bashExecution") {
			const command = e.fragments.find((f) => f.kind === "bash.command")?.text ?? "";
			lines.push({ kind: "bash", entryId: e.entryId, command: oneLine(command, KEY_ARGS_CHARS), exitCode: e.exitCode, isError: e.isError });
			continue;
		}
		for (const f of e.fragments) {
			const kind = TEXT_KINDS[f.kind];
			if (kind) lines.push({ kind, entryId: e.entryId, fragmentId: f.fragmentId, text: f.text });
			else if (f.kind === "tool.call") {
				const result = f.callId ? results.get(f.callId) : undefined;
				if (result && f.callId) paired.add(f.callId);
				const [tool = "", ...args] = f.text.split("\n");
				lines.push({
					kind: "tool",
					entryId: e.entryId,
					callId: f.callId ?? null,
					tool,
					args: shortArgs(args),
					resultId: result?.entryId ?? null,
					isError: result ? result.isError : null,
				});
			}
		}
		if (lines.length === before) control.push({ entryId: e.entryId, eventType: e.eventType });
	}
	for (const e of entries) {
		if (e.role !== "toolResult" || (e.toolCallId && paired.has(e.toolCallId))) continue;
		lines.splice(insertAt(lines, entries, e), 0, { kind: "result", entryId: e.entryId, callId: e.toolCallId, tool: e.toolName, isError: e.isError });
	}
	return { lines, control };
}

/** Where an unpaired result goes: after the lines of the entries before it in the turn. */
function insertAt(lines: readonly TranscriptLine[], entries: readonly TranscriptEntry[], result: TranscriptEntry): number {
	const position = new Map(entries.map((e, i) => [e.entryId, i]));
	const at = position.get(result.entryId) ?? entries.length;
	const index = lines.findIndex((l) => (position.get(l.entryId) ?? 0) > at);
	return index < 0 ? lines.length : index;
}

/**
 * The arguments of a tool call (its `key: value` lines as the projector renders them) in short:
 * the telling keys first (cut to KEY_ARGS_CHARS characters together: what was run, on what), then
 * the others (cut to ARGS_CHARS), each value on one line, separated by `; `.
 */
export function shortArgs(argLines: readonly string[]): string {
	// A value may span lines: a line that does not start with `key: ` continues the argument before it.
	const args: { key: string; text: string }[] = [];
	for (const line of argLines) {
		const key = ARG_KEY.exec(line)?.[1];
		if (key !== undefined || args.length === 0) args.push({ key: key ?? "", text: line });
		else args[args.length - 1]!.text += `\n${line}`;
	}
	const rank = (key: string) => {
		const i = KEY_ARGS.indexOf(key);
		return i < 0 ? KEY_ARGS.length : i;
	};
	const ordered = args.map((a, i) => ({ ...a, i })).sort((a, b) => rank(a.key) - rank(b.key) || a.i - b.i);
	const joined = (list: typeof ordered) => list.map((a) => a.text.replace(/\s+/g, " ").trim()).join("; ");
	const telling = oneLine(joined(ordered.filter((a) => rank(a.key) < KEY_ARGS.length)), KEY_ARGS_CHARS);
	const others = oneLine(joined(ordered.filter((a) => rank(a.key) === KEY_ARGS.length)), ARGS_CHARS);
	return telling && others ? `${telling}; ${others}` : telling || others;
}

/** Whitespace collapsed, cut to `max` characters (ending in … when cut). */
function oneLine(text: string, max: number): string {
	const flat = text.replace(/\s+/g, " ").trim();
	return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
