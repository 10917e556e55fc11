/** `pi-events search QUERY...`: ranked event hits with snippets, scoped to the caller's workspace. */
import { defineCommand } from "./argv.ts";
import { PiEventsError } from "../errors.ts";
import type { Freshness } from "../sync/freshness.ts";
import { DEFAULT_LIMIT, MAX_LIMIT, type NamedSearchResult, SORT_ORDERS, type SortOrder, search } from "../query/search/search.ts";
import { Gate } from "../gate/gate.ts";
import { cliSearchText } from "../present/search-text.ts";
import { resolveRoot } from "../config.ts";
import { callerArgs } from "./caller.ts";
import { toSearchFilters } from "../query/filters.ts";
import { filterArgs, filterValues } from "./filters.ts";
import { commonArgs } from "./shared.ts";
import { onFreshIndex, type QueryStart, startQuery } from "./prologue.ts";
import { toJson } from "../present/json.ts";
import { terminalSafe } from "../present/terminal.ts";
import { isTerminal, writeErr, writeOut } from "./out.ts";

const args = {
	query: { type: "positional", description: 'Terms and "quoted phrases" (all must match); may be empty when a filter narrows the search', required: false },
	...commonArgs,
	...callerArgs,
	...filterArgs,
	limit: { type: "string", description: `Maximum hits (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})`, valueHint: "n" },
	sort: { type: "string", description: "Hit order: relevance (default), newest or oldest", valueHint: "relevance|newest|oldest" },
	group: { type: "string", description: "session: one hit per session (its best event, with how many others matched)", valueHint: "session" },
	paths: { type: "boolean", description: "Show each hit's session file and line in text output (JSON always has sessionFile)" },
	sync: { type: "boolean", description: "Sync the index before searching (--no-sync to skip)", default: true },
	"include-derived": { type: "boolean", description: "Also search pi-events' own echoes (its tool calls and results, `pi-events` shell runs)" },
	exact: { type: "boolean", description: "Match words only as typed: no other word forms (crash does not find crashed)" },
} as const;

export const searchCommand = defineCommand({
	meta: { name: "search", description: "Search events in pi session history" },
	args,
	run({ args: a, rawArgs }) {
		const query = (a._ as string[]).join(" ");
		const limit = a.limit === undefined ? DEFAULT_LIMIT : Number(a.limit);
		const sort = a.sort ?? "relevance";
		const start = startQuery(args, a, rawArgs, () => {
			if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
				throw new PiEventsError("E_USAGE", `--limit must be an integer from 1 to ${MAX_LIMIT}`);
			}
			if (!(SORT_ORDERS as readonly string[]).includes(sort))
				throw new PiEventsError("E_USAGE", `--sort must be one of ${SORT_ORDERS.join(", ")}, got ${JSON.stringify(sort)}`);
			if (a.group !== undefined && a.group !== "session") throw new PiEventsError("E_USAGE", `--group must be session, got ${JSON.stringify(a.group)}`);
		});
		const { settings, cwd, scope } = start;
		const now = Date.now();
		// Relative --file paths resolve against the authorization root (with --all: the one it would be).
		const root = scope.roots?.[0] ?? resolveRoot(cwd, a.root ?? settings.configRoot);
		const filters = toSearchFilters(filterValues(a, rawArgs), cwd, now, root);
		const request = {
			query,
			filters,
			limit,
			includeDerived: a["include-derived"] === true,
			exact: a.exact === true,
			sort: sort as SortOrder,
			groupBy: a.group === "session" ? ("session" as const) : undefined,
		};
		return onFreshIndex(start, a.sync !== false, (db, freshness) => printHits(a, start, query, search(new Gate(db, scope), request), freshness));
	},
});

/** The hits on stdout (JSON or text), what may hide some and the freshness on stderr; the exit code. */
function printHits(
	a: { json?: boolean; paths?: boolean; exact?: boolean },
	start: QueryStart,
	query: string,
	result: NamedSearchResult,
	freshness: Freshness,
): number {
	if (a.json) {
		const out = { hits: result.hits, freshness, coverage: result.coverage, scope: result.scope, elapsedMs: Math.round(result.elapsedMs * 100) / 100 };
		writeOut(`${toJson(out, 2)}\n`);
		// Problems that may hide results are diagnostics: stderr too, not only inside the JSON.
		for (const p of freshness.problems) writeErr(`pi-events: ${terminalSafe(p)}\n`);
	} else {
		const color = isTerminal(1) && !start.env.NO_COLOR;
		const text = cliSearchText(result, freshness, { query, color, paths: a.paths === true, exact: a.exact === true });
		writeOut(text.out);
		writeErr(text.err);
	}
	return result.hits.length > 0 ? 0 : 1;
}
