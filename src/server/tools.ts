/**
 * The tool table: names, descriptions for a model deciding when to search its history, valibot
 * input and output schemas (the JSON Schemas are generated from these), and handlers. The only
 * home of tool names. Every handler gets the caller's scope from the trusted side (request
 * `_meta` or launch options), never from tool arguments.
 */
import type { Database } from "bun:sqlite";
import * as v from "valibot";
import type { Scope } from "../auth/scope.ts";
import { parseTimeArg, toSearchFilters } from "../query/filters.ts";
import { FILTER_INPUTS, FILTER_ROWS } from "../query/filter-table.ts";
import { PiEventsError } from "../errors.ts";
import type { Freshness } from "../sync/freshness.ts";
import type { ToolName } from "../model.ts";
import { renderRead } from "../present/render-read.ts";
import { freshnessLine, PICK_ROOT, renderSessions, sessionsHead } from "../present/render.ts";
import { toolSearchText } from "../present/search-text.ts";
import { DEFAULT_SESSIONS, listSessions } from "../query/sessions.ts";
import { renderTrace } from "../present/render-trace.ts";
import { Gate } from "../gate/gate.ts";
import { MAX_NEIGHBOURS, MAX_WINDOW, readEvent } from "../query/read.ts";
import { renderTurn } from "../present/render-turn.ts";
import { DEFAULT_TURN_BYTES, MAX_NEXT_TURNS, MAX_TURN_BYTES, MIN_TURN_BYTES, readTurn } from "../query/turn-read.ts";
import { SORT_ORDERS, search } from "../query/search/search.ts";
import { HIT_ANSWER_FIELDS } from "./hit-schema.ts";
import { traceEvent } from "../query/trace.ts";

/** pi's own limit for tool output. */
const TEXT_MAX_BYTES = 50 * 1024;
const TEXT_MAX_LINES = 2000;
export const TOOL_MAX_LIMIT = 50;

const id = (what: string) => v.pipe(v.string(), v.minLength(1), v.maxLength(200), v.description(what));
const sessionIdInput = (what: string) => id(`${what} A unique prefix of at least 8 characters also works.`);

const SearchInput = v.strictObject({
	query: v.optional(
		v.pipe(
			v.string(),
			v.maxLength(2000),
			v.description(
				'Words and "quoted phrases" that must all appear. Code-shaped text works as typed: file paths, error codes, identifiers, commands with flags. No operators: AND/OR/NOT/*/: are plain text. May be empty (or left out) when a filter narrows the search (kinds, roles, tools, isError, branchStates, selectionStates, files, sessionId, since, until, eventTypes): then the newest matching events come first.',
			),
		),
	),
	limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(TOOL_MAX_LIMIT), v.description("Maximum hits (default 10)"))),
	...FILTER_INPUTS,
	sort: v.optional(v.pipe(v.picklist(SORT_ORDERS), v.description("Hit order: relevance (default), newest or oldest first"))),
	groupBy: v.optional(v.pipe(v.picklist(["session"]), v.description("session: one hit per session (its best event; otherMatchingEvents counts the rest)"))),
	exact: v.optional(v.pipe(v.boolean(), v.description("Match words only as typed: no other word forms (crash does not find crashed); off by default"))),
	includeDerived: v.optional(
		v.pipe(
			v.boolean(),
			v.description(
				"Also search pi-events' own echoes (earlier event_search/event_read/event_trace calls and results, `pi-events` shell runs); off by default",
			),
		),
	),
});

const ReadInput = v.strictObject({
	sessionId: sessionIdInput("Session id from a search hit."),
	entryId: id("Entry id from a search hit"),
	fragmentId: v.optional(id("Fragment to read a window of, e.g. the hit's fragmentId (tool.result#0)")),
	offset: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.description("Window start in characters (default 0)"))),
	length: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_WINDOW), v.description("Window length in characters (default 4000)"))),
	order: v.optional(
		v.pipe(
			v.picklist(["append", "branch"]),
			v.description("Neighbour order: append = file order; branch = the conversation path (parents before, selected children after)"),
		),
	),
	before: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_NEIGHBOURS), v.description("Neighbours before (default 0)"))),
	after: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(MAX_NEIGHBOURS), v.description("Neighbours after (default 0)"))),
	only: v.optional(
		v.pipe(
			v.picklist(["conversation"]),
			v.description("conversation: count neighbours among user and assistant text, session names and summaries only (skip tool calls, results, model changes)"),
		),
	),
	view: v.optional(
		v.pipe(
			v.picklist(["event", "turn"]),
			v.description(
				"turn: the whole turn holding the entry (its prompt to the next prompt, on its branch) as one transcript: texts in full, one line per tool call; event (default): this event only",
			),
		),
	),
	maxBytes: v.optional(
		v.pipe(
			v.number(),
			v.integer(),
			v.minValue(MIN_TURN_BYTES),
			v.maxValue(MAX_TURN_BYTES),
			v.description(`view turn: the transcript's budget in bytes (default ${DEFAULT_TURN_BYTES})`),
		),
	),
	turns: v.optional(
		v.pipe(
			v.number(),
			v.integer(),
			v.minValue(0),
			v.maxValue(MAX_NEXT_TURNS),
			v.description("view turn: also the next N turns of the same branch (default 0)"),
		),
	),
});

/** event_read arguments that read one event: not with view "turn". */
const EVENT_ONLY_ARGS = ["fragmentId", "offset", "length", "order", "before", "after", "only"] as const;

const SessionsInput = v.strictObject({
	since: v.optional(v.pipe(v.string(), v.maxLength(40), v.description("Sessions active at or after: ISO date/time, or relative like 30m, 12h, 7d, 2w"))),
	until: v.optional(v.pipe(v.string(), v.maxLength(40), v.description("Sessions begun before: same forms as since"))),
	limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(TOOL_MAX_LIMIT), v.description("Maximum sessions (default 20)"))),
});

const TraceInput = v.strictObject({
	sessionId: sessionIdInput("Session id from a search hit."),
	entryId: id("Entry id from a search hit"),
});

const nullableString = v.nullable(v.string());
const EventViewSchema = v.looseObject({
	sessionId: v.string(),
	entryId: v.string(),
	parentId: nullableString,
	eventType: v.string(),
	role: nullableString,
	toolName: nullableString,
	timestamp: nullableString,
	branchState: v.string(),
	contextRole: v.string(),
	selectionState: v.string(),
	preview: nullableString,
});
const ScopeSchema = v.looseObject({
	roots: v.pipe(v.nullable(v.array(v.string())), v.description("The authorization root; null: every workspace")),
	rootSource: v.pipe(nullableString, v.description("How the root was chosen: flag (--root), config, git (the Git worktree root), cwd")),
});
const FreshnessSchema = v.looseObject({ synced: v.boolean(), pendingFiles: v.number(), problems: v.array(v.string()) });

const SearchOutput = v.looseObject({
	hits: v.array(
		v.looseObject({
			sessionId: v.string(),
			entryId: v.string(),
			fragmentId: v.string(),
			eventType: v.string(),
			semanticKind: v.string(),
			role: nullableString,
			toolName: nullableString,
			timestamp: nullableString,
			cwd: nullableString,
			sessionFile: v.string(),
			snippet: v.string(),
			highlights: v.array(v.array(v.number())),
			rank: v.pipe(v.number(), v.description("Position in this answer, from 1")),
			score: v.pipe(v.number(), v.description("Relevance as a share of the best match in this answer (0 to 1), from in-scope matches only")),
			isError: v.nullable(v.boolean()),
			branchState: v.string(),
			contextRole: v.string(),
			selectionState: v.string(),
			derived: v.boolean(),
			...HIT_ANSWER_FIELDS,
		}),
	),
	freshness: FreshnessSchema,
	coverage: v.looseObject({
		mode: v.string(),
		estimatedMatches: v.number(),
		matchesExact: v.boolean(),
		truncated: v.boolean(),
		emptyBecause: v.nullable(v.string()),
		unmatchedTerms: v.array(v.string()),
	}),
	elapsedMs: v.pipe(v.number(), v.description("Milliseconds the search took, after the sync (freshness.syncMs)")),
	scope: ScopeSchema,
});

/**
 * event_read's result: one event (view "event": event, content, window, omitted, neighbours) or a
 * turn transcript (view "turn": target, cutoff, maxBytes, bytes, turns, turnsLeftOut). One object
 * schema for both: MCP wants an output schema of type object.
 */
const ReadOutput = v.looseObject({
	view: v.optional(v.pipe(v.literal("turn"), v.description('"turn" for a turn transcript; absent for one event'))),
	session: v.looseObject({ sessionId: v.string(), cwd: nullableString, file: v.string() }),
	event: v.optional(EventViewSchema),
	content: v.optional(v.array(v.looseObject({ fragmentId: v.string(), kind: v.string(), chars: v.number(), text: v.string(), truncated: v.boolean() }))),
	window: v.optional(
		v.nullable(
			v.looseObject({ fragmentId: v.string(), offset: v.number(), length: v.number(), totalChars: v.number(), text: v.string(), hasMore: v.boolean() }),
		),
	),
	omitted: v.optional(v.array(v.string())),
	neighbours: v.optional(
		v.looseObject({ order: v.string(), before: v.array(EventViewSchema), after: v.array(EventViewSchema), alternatives: v.array(EventViewSchema) }),
	),
	target: v.optional(v.string()),
	cutoff: v.optional(v.boolean()),
	maxBytes: v.optional(v.number()),
	bytes: v.optional(v.number()),
	turns: v.optional(
		v.array(
			v.looseObject({
				prompt: nullableString,
				entryCount: v.number(),
				lines: v.array(v.looseObject({ kind: v.string(), entryId: v.string() })),
				end: v.string(),
				next: nullableString,
			}),
		),
	),
	turnsLeftOut: v.optional(v.array(v.string())),
});

const SessionsOutput = v.looseObject({
	sessions: v.array(
		v.looseObject({
			sessionId: v.string(),
			name: nullableString,
			cwd: nullableString,
			sessionFile: v.string(),
			firstTimestamp: nullableString,
			lastTimestamp: nullableString,
			entryCount: v.number(),
			firstUserMessage: nullableString,
			abandonedBranches: v.boolean(),
			forked: v.boolean(),
			parentSessionId: nullableString,
		}),
	),
	total: v.number(),
	truncated: v.boolean(),
	scope: ScopeSchema,
	emptyBecause: v.nullable(v.picklist(["no-sessions", "time-range"])),
	freshness: FreshnessSchema,
});

const TraceOutput = v.looseObject({
	target: EventViewSchema,
	parent: v.nullable(EventViewSchema),
	children: v.array(EventViewSchema),
	siblings: v.array(EventViewSchema),
	towardLeaf: v.nullable(EventViewSchema),
	relations: v.array(v.looseObject({ relation: v.string(), direction: v.string(), label: v.string(), node: v.nullable(EventViewSchema) })),
});

export interface ToolContext {
	db: Database;
	scope: Scope;
	/** The caller's cwd, for a relative cwd filter (relative files resolve against the scope's root). */
	cwd: string;
	/** Sync (bounded) and report freshness. */
	refresh: () => Freshness;
	now: number;
}

export interface ToolResult {
	structured: Record<string, unknown>;
	text: string;
}

interface ToolDef {
	name: ToolName;
	title: string;
	/** What the tool is for, in a few words after its name: the server's instructions list every tool this way. */
	use: string;
	description: string;
	input: v.GenericSchema;
	output: v.GenericSchema;
	run: (args: never, ctx: ToolContext) => ToolResult;
}

export const TOOLS: ToolDef[] = [
	{
		name: "event_search",
		title: "Search pi session history",
		use: "to find earlier requests, answers, tool calls, command output and errors",
		description:
			'Search what happened in earlier pi sessions of this workspace: past requests, answers, tool calls and their output, shell commands, errors, compaction and branch summaries. Use it before redoing work or when the user refers to something done before ("the migration we wrote last week", "that ECONNREFUSED error"). Returns ranked event hits with a short snippet and ids; follow up with event_read for the exact content or event_trace for the conversation around it. The current session is excluded unless you pass its sessionId (then only events before this call).',
		input: SearchInput,
		output: SearchOutput,
		run: (args: v.InferOutput<typeof SearchInput>, ctx) => {
			const filters = toSearchFilters(Object.fromEntries(FILTER_ROWS.map((r) => [r.input, args[r.input]])), ctx.cwd, ctx.now, ctx.scope.roots?.[0] ?? ctx.cwd);
			const freshness = ctx.refresh();
			const result = search(new Gate(ctx.db, ctx.scope), {
				query: args.query ?? "",
				filters,
				limit: args.limit ?? 10,
				includeDerived: args.includeDerived,
				exact: args.exact,
				sort: args.sort,
				groupBy: args.groupBy,
			});
			return {
				// elapsedMs as in the CLI's --json: the search itself, after the sync (freshness.syncMs).
				structured: { hits: result.hits, freshness, coverage: result.coverage, scope: result.scope, elapsedMs: Math.round(result.elapsedMs * 100) / 100 },
				text: toolSearchText(result, freshness, { query: args.query ?? "", exact: args.exact === true, root: ctx.scope.roots?.[0] ?? null }),
			};
		},
	},
	{
		name: "event_read",
		title: "Read one event exactly",
		use: "for the exact content of a hit, or the whole turn around it",
		description:
			'Read one event from pi session history exactly as recorded, re-read from its session file: metadata, text of each part (first 2,000 characters; pass fragmentId with offset/length for a window into long output), what was omitted (thinking, images), and optionally neighbours in append order (file order) or branch order (the conversation path). With view "turn": the whole turn holding the event (the user\'s prompt, every assistant text in full, one line per tool call with its result id and whether it failed), bounded by maxBytes, saying what it left out. Use the ids from an event_search hit.',
		input: ReadInput,
		output: ReadOutput,
		run: (args: v.InferOutput<typeof ReadInput>, ctx) => {
			if (args.view === "turn") {
				const clash = EVENT_ONLY_ARGS.find((name) => args[name] !== undefined);
				if (clash) throw new PiEventsError("E_USAGE", `${clash} reads one event; it does not go with view "turn"`);
			} else if (args.maxBytes !== undefined || args.turns !== undefined) {
				throw new PiEventsError("E_USAGE", `${args.maxBytes !== undefined ? "maxBytes" : "turns"} goes with view "turn"`);
			}
			ctx.refresh();
			if (args.view === "turn") {
				const turn = readTurn(new Gate(ctx.db, ctx.scope), args);
				return { structured: turn as unknown as Record<string, unknown>, text: renderTurn(turn, toolHow(turn.session.sessionId)) };
			}
			const result = readEvent(new Gate(ctx.db, ctx.scope), args);
			return { structured: result as unknown as Record<string, unknown>, text: renderRead(result) };
		},
	},
	{
		name: "event_trace",
		title: "Trace an event's place in its session",
		use: "for its place in the conversation tree",
		description:
			"Show where an event sits in its session tree: parent, children, siblings (other branches from the same point), the next node toward the latest entry, and typed relationships (tool call ↔ result, compaction boundary, branch summary source, labels, files read or changed, fork copies in related sessions), each labelled recorded or derived. Nodes carry short previews only; use event_read on an id to see content.",
		input: TraceInput,
		output: TraceOutput,
		run: (args: v.InferOutput<typeof TraceInput>, ctx) => {
			ctx.refresh();
			const result = traceEvent(new Gate(ctx.db, ctx.scope), args.sessionId, args.entryId);
			return { structured: result as unknown as Record<string, unknown>, text: renderTrace(result, { color: false }) };
		},
	},
	{
		name: "event_sessions",
		title: "List pi sessions of this workspace",
		use: "for the sessions of this workspace, most recently active first",
		description:
			'List the earlier pi sessions of this workspace, most recently active first: id, name, cwd, first and last time, number of entries, and the first thing the user asked. Use it to answer "what did we do last?" or to pick a session to search (event_search with sessionId) or read. The current session is not listed.',
		input: SessionsInput,
		output: SessionsOutput,
		run: (args: v.InferOutput<typeof SessionsInput>, ctx) => {
			const sinceMs = args.since === undefined ? undefined : parseTimeArg("since", args.since, ctx.now);
			const untilMs = args.until === undefined ? undefined : parseTimeArg("until", args.until, ctx.now);
			const freshness = ctx.refresh();
			const result = listSessions(new Gate(ctx.db, ctx.scope), { sinceMs, untilMs, limit: args.limit ?? DEFAULT_SESSIONS });
			const said = sessionsHead(result, PICK_ROOT.tool);
			const head = result.sessions.length === 0 ? `${said[0]!.toUpperCase()}${said.slice(1)}.` : `${said} (session id on the last line of each):`;
			return {
				structured: { ...result, freshness },
				text: `${head}\n${renderSessions(result.sessions, { color: false, root: ctx.scope.roots?.[0] ?? null })}${freshnessLine(freshness)}`,
			};
		},
	},
];

/** The tool names as a list in prose ("a, b, c and d"), for usage texts: never written out by hand. */
export function toolNamesInProse(): string {
	const names = TOOLS.map((tool) => tool.name);
	return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** The MCP server's instructions: one clause per tool of the table. */
export function serverInstructions(): string {
	return `pi-events searches this workspace's pi session history (read-only). Use ${TOOLS.map((tool) => `${tool.name} ${tool.use}`).join("; ")}.`;
}

/** The tools' ways to read more, named in a transcript's omissions. */
function toolHow(sessionId: string) {
	const call = (args: Record<string, unknown>) => `event_read ${JSON.stringify({ sessionId, ...args })}`;
	return {
		read: (entryId: string) => call({ entryId }),
		turn: (entryId: string) => call({ entryId, view: "turn" }),
		after: (entryId: string) => call({ entryId, order: "branch", after: MAX_NEIGHBOURS, only: "conversation" }),
		moreTurns: "add turns: 1",
	};
}

export function findTool(name: string): ToolDef | undefined {
	return TOOLS.find((t) => t.name === name);
}

/** Validate arguments; a failure is a message the model can act on. */
export function parseArgs(tool: ToolDef, args: unknown): unknown {
	const parsed = v.safeParse(tool.input, args ?? {});
	if (parsed.success) return parsed.output;
	const issues = parsed.issues.slice(0, 5).map((issue) => {
		const path = issue.path?.map((p) => String(p.key)).join(".") || "arguments";
		return `${path}: ${issue.message}`;
	});
	throw new PiEventsError("E_USAGE", `invalid arguments for ${tool.name}: ${issues.join("; ")}`);
}

/** Keep text within pi's tool-output limits (50 KB, 2,000 lines), saying what was cut. */
export function fitToolOutput(text: string): string {
	const lines = text.split("\n");
	let out = lines.length > TEXT_MAX_LINES ? lines.slice(0, TEXT_MAX_LINES).join("\n") : text;
	let cut = lines.length > TEXT_MAX_LINES;
	const encoder = new TextEncoder();
	if (encoder.encode(out).length > TEXT_MAX_BYTES) {
		let lo = 0;
		let hi = out.length;
		while (lo < hi) {
			const mid = Math.ceil((lo + hi) / 2);
			if (encoder.encode(out.slice(0, mid)).length <= TEXT_MAX_BYTES - 200) lo = mid;
			else hi = mid - 1;
		}
		out = out.slice(0, lo);
		cut = true;
	}
	return cut ? `${out}\n[output truncated to pi's limit of 50 KB / 2,000 lines; narrow the request]` : out;
}
