/**
 * Every search filter, declared once: one row per filter gives its command-line flag (name, help,
 * how its value is written), its tool input (name and valibot validation), the SearchFilters key it
 * becomes (the store's SQL clause for that key is filterSql in store/search.ts), and how the query
 * planner treats it. The CLI flags (cli/filters.ts), the tool's input schema (server/tools.ts), the
 * validation of values (query/filters.ts) and the planner (query/search/plan.ts) come from it; the
 * extension's TypeBox mirror and the docs are checked against it (test/query/filter-table.test.ts,
 * test/docs.test.ts). Adding a filter: a row here, and its clause in store/search.ts.
 */
import * as v from "valibot";
import type { SearchFilters } from "../gate/gate.ts";
import { BRANCH_STATES, SELECTION_STATES, SEMANTIC_KINDS } from "../model.ts";

/**
 * What a filter costs a search of very common words, which decides how the planner bounds it:
 * - "categorical": checked on each matching fragment, wherever it is in the history (kind, role,
 *   tool, type, error, branch, selection): alone with common words, searched in a window of the
 *   newest sessions;
 * - "time": a part of the history by time (since, until): the sessions active then are read;
 * - "place": a part of the history by where (session, cwd, file): the search keeps every match
 *   there (file: the sessions that touched the path are read).
 */
export type CostClass = "categorical" | "time" | "place";

/** How a flag's value is written: one value, a comma-separated list, a repeatable flag, or a boolean with its --no- form. */
export type FlagForm = "one" | "list" | "repeated" | "boolean";

interface FilterRowOf<S extends v.GenericSchema> {
	/** The SearchFilters key the filter becomes (the same key of the store's SqlFilters, whose clause is filterSql). */
	key: keyof SearchFilters;
	/** The command-line flag, without `--`. */
	flag: string;
	form: FlagForm;
	help: string;
	valueHint?: string;
	/** Allowed values of each item (checked on the CLI's values as the tool input's picklist checks them). */
	allowed?: readonly string[];
	/** The tool input's validation (`v.optional(…)`), named by the row's key in FILTERS. */
	schema: S;
	cost: CostClass;
	/** Enough on its own for a search without words (a cwd alone is not: it is the workspace). */
	narrowsAlone: boolean;
}

export type FilterRow = FilterRowOf<v.GenericSchema>;

const row = <S extends v.GenericSchema>(r: FilterRowOf<S>) => r;
const stringList = (what: string) => v.optional(v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(500))), v.maxLength(20), v.description(what)));
const sessionIdInput = (what: string) =>
	v.pipe(v.string(), v.minLength(1), v.maxLength(200), v.description(`${what} A unique prefix of at least 8 characters also works.`));

/** A tree-state filter: a comma-separated list of one state vocabulary's values. */
const stateListRow = <T extends string>(key: keyof SearchFilters, flag: string, what: string, states: readonly [T, ...T[]], description: string) =>
	row({
		key,
		flag,
		form: "list",
		help: `${what}, comma-separated (${states.join(", ")})`,
		valueHint: "states",
		allowed: states,
		schema: v.optional(v.pipe(v.array(v.picklist(states)), v.description(description))),
		cost: "categorical",
		narrowsAlone: true,
	});

/** The filters, by tool input name, in the order the CLI's help and the tool's schema list them. */
export const FILTERS = {
	sessionId: row({
		key: "sessionIds",
		flag: "session",
		// Comma-separated ids are several sessions (undocumented; the tool takes one).
		form: "list",
		help: "Only this session id (may target the current session, up to the invocation cutoff)",
		valueHint: "id",
		schema: v.optional(sessionIdInput("Only this session. May be the current session: then only events before this tool call.")),
		cost: "place",
		narrowsAlone: true,
	}),
	cwd: row({
		key: "cwdPrefix",
		flag: "cwd",
		form: "one",
		help: "Only sessions whose cwd is this directory or below it",
		valueHint: "dir",
		schema: v.optional(
			v.pipe(v.string(), v.minLength(1), v.maxLength(4096), v.description("Only sessions started in this directory or below (within your workspace)")),
		),
		cost: "place",
		narrowsAlone: false,
	}),
	eventTypes: row({
		key: "eventTypes",
		flag: "type",
		form: "list",
		help: "Event types, comma-separated (message, compaction, branch_summary, custom_message, session_info, ...)",
		valueHint: "types",
		schema: stringList("Entry types: message, compaction, branch_summary, custom_message, session_info, label, model_change, ..."),
		cost: "categorical",
		narrowsAlone: true,
	}),
	kinds: row({
		key: "kinds",
		flag: "kind",
		form: "list",
		help: `Semantic kinds, comma-separated (${SEMANTIC_KINDS.join(", ")})`,
		valueHint: "kinds",
		allowed: SEMANTIC_KINDS,
		schema: v.optional(v.pipe(v.array(v.picklist(SEMANTIC_KINDS)), v.description("Semantic kinds of the matching text"))),
		cost: "categorical",
		narrowsAlone: true,
	}),
	roles: row({
		key: "roles",
		flag: "role",
		form: "list",
		help: "Message roles, comma-separated (user, assistant, toolResult, bashExecution, custom)",
		valueHint: "roles",
		schema: stringList("Message roles: user, assistant, toolResult, bashExecution, custom"),
		cost: "categorical",
		narrowsAlone: true,
	}),
	tools: row({
		key: "tools",
		flag: "tool",
		form: "list",
		help: "Tool names, comma-separated (bash, read, edit, ...)",
		valueHint: "names",
		schema: stringList("Tool names: bash, read, edit, write, grep, ..."),
		cost: "categorical",
		narrowsAlone: true,
	}),
	since: row({
		key: "sinceMs",
		flag: "since",
		form: "one",
		help: "Only events at or after this time (ISO date/time, or 30m, 12h, 7d, 2w ago)",
		valueHint: "time",
		schema: v.optional(v.pipe(v.string(), v.maxLength(40), v.description("Events at or after: ISO date/time, or relative like 30m, 12h, 7d, 2w"))),
		cost: "time",
		narrowsAlone: true,
	}),
	until: row({
		key: "untilMs",
		flag: "until",
		form: "one",
		help: "Only events before this time (same forms as --since)",
		valueHint: "time",
		schema: v.optional(v.pipe(v.string(), v.maxLength(40), v.description("Events before: same forms as since"))),
		cost: "time",
		narrowsAlone: true,
	}),
	isError: row({
		key: "isError",
		flag: "error",
		form: "boolean",
		help: "Only failed events (tool errors, non-zero exits, errored replies); --no-error for the rest",
		schema: v.optional(v.pipe(v.boolean(), v.description("true: only failures (tool errors, non-zero exits, errored replies); false: only the rest"))),
		cost: "categorical",
		narrowsAlone: true,
	}),
	branchStates: stateListRow(
		"branchStates",
		"branch",
		"Branch states",
		BRANCH_STATES,
		"selected: on the conversation path that led to the latest entry; alternate: abandoned branches",
	),
	selectionStates: stateListRow(
		"selectionStates",
		"selection",
		"Selection states",
		SELECTION_STATES,
		"direct: in the model context; summarized: replaced by a compaction summary; not-selected: off-path or removed",
	),
	files: row({
		key: "files",
		flag: "file",
		form: "repeated",
		help: "Only events that touched this path or a path under it (repeatable)",
		valueHint: "path",
		schema: stringList(
			"Only events that touched one of these paths or a path under them (read/edit/write calls, summary details); relative paths are relative to your workspace root",
		),
		cost: "place",
		narrowsAlone: true,
	}),
};

export type FilterInput = keyof typeof FILTERS;
export const FILTER_ROWS: readonly (FilterRow & { input: FilterInput })[] = (Object.keys(FILTERS) as FilterInput[]).map((input) => ({
	...FILTERS[input],
	input,
}));

/** The tool inputs of the filters, for the search tool's valibot object. */
export const FILTER_INPUTS = Object.fromEntries(FILTER_ROWS.map((r) => [r.input, r.schema])) as { [K in FilterInput]: (typeof FILTERS)[K]["schema"] };

/** The filter values as given (CLI flags or tool arguments), by input name, before validation (query/filters.ts). */
export type FilterValues = Partial<Record<FilterInput, string | readonly string[] | boolean>>;

/** Whether a search's filters hold this filter. */
export function holds(filters: SearchFilters, key: keyof SearchFilters): boolean {
	const value = filters[key];
	return Array.isArray(value) ? value.length > 0 : value !== undefined;
}

/** The flags of the filters that narrow a search enough to run without words, for the message saying so. */
export const NARROWING_FLAGS = FILTER_ROWS.filter((r) => r.narrowsAlone)
	.map((r) => r.flag)
	.join(", ");
