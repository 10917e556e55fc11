/**
 * The plan of one search, a value: the request checked (limit, empty query), session id prefixes
 * resolved, the query parsed, the cost bounds settled, and how the filters narrow it. Every later
 * stage reads the plan, never the request.
 */
import type { Gate } from "../../gate/gate.ts";
import { PiEventsError } from "../../errors.ts";
import { FILTER_ROWS, holds, NARROWING_FLAGS } from "../filter-table.ts";
import { type ParsedQuery, parseQuery } from "../fts.ts";
import { type SearchBounds, searchBounds } from "./bounds.ts";
import { DEFAULT_LIMIT, MAX_LIMIT, type SearchFilters, type SearchRequest, type SortOrder } from "./types.ts";

export interface SearchPlan {
	/** The parsed query; null for a search by filters alone (no terms). */
	query: ParsedQuery | null;
	filters: SearchFilters;
	limit: number;
	sort: SortOrder;
	/** One hit per session. */
	grouped: boolean;
	includeDerived: boolean | undefined;
	bounds: Required<SearchBounds>;
}

/** The plan of a request; E_USAGE for a bad limit, E_BAD_QUERY for an empty query that no filter narrows. */
export function planSearch(gate: Gate, request: SearchRequest): SearchPlan {
	const limit = request.limit ?? DEFAULT_LIMIT;
	if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
		throw new PiEventsError("E_USAGE", `limit must be an integer from 1 to ${MAX_LIMIT}`);
	}
	let filters = request.filters;
	// A unique prefix of a visible session id stands for the id.
	if (filters.sessionIds?.length) filters = { ...filters, sessionIds: filters.sessionIds.map((id) => gate.resolveSessionId(id)) };
	const filterOnly = request.query.trim() === "";
	if (filterOnly && !narrows(filters)) {
		throw new PiEventsError("E_BAD_QUERY", `the query is empty: give words to search for, or at least one filter (${NARROWING_FLAGS})`);
	}
	return {
		query: filterOnly ? null : parseQuery(request.query, { exact: request.exact }),
		filters,
		limit,
		sort: request.sort ?? "relevance",
		grouped: request.groupBy === "session",
		includeDerived: request.includeDerived,
		bounds: searchBounds(request.bounds),
	};
}

/** Whether the filters narrow a search enough to run without terms (a cwd alone does not). */
function narrows(f: SearchFilters): boolean {
	return FILTER_ROWS.some((r) => r.narrowsAlone && holds(f, r.key));
}

/**
 * Whether the request's filters are all of the kind checked on each matching fragment whatever
 * its place in the history (cost class "categorical": kind, role, tool, event type, error, branch,
 * selection), with at least one: a common word so filtered is searched in a window of the newest
 * sessions, as a phrase of common words is (at 5 GB, `error --kind bash.command` walked all of the
 * word's matches: 330 ms). Not with a time, session, cwd or file filter: those ask for a part of the
 * history that the newest sessions may not hold, so those requests keep every match.
 */
export function categoricalOnly(f: SearchFilters): boolean {
	return hasCategoricalFilter(f) && !FILTER_ROWS.some((r) => r.cost !== "categorical" && holds(f, r.key));
}

/** A filter checked on each matching fragment, whatever its place in the history. */
export function hasCategoricalFilter(f: SearchFilters): boolean {
	return FILTER_ROWS.some((r) => r.cost === "categorical" && holds(f, r.key));
}
