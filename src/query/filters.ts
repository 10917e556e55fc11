/**
 * Structured filter values (from CLI flags or tool arguments) → SearchFilters, with clear errors
 * for bad values. Shared by both shells. Relative times (`7d`, `12h`, `30m`, `2w`) are measured
 * back from `now`; relative paths are resolved against the caller's cwd.
 */
import { isAbsolute, resolve } from "node:path";
import { PiEventsError } from "../errors.ts";
import { BRANCH_STATES, SELECTION_STATES, SEMANTIC_KINDS } from "../model.ts";
import { canonicalPath } from "../source/paths.ts";
import type { SearchFilters } from "./search/search.ts";

interface FilterValues {
	sessionIds?: string[];
	cwd?: string;
	eventTypes?: string[];
	kinds?: string[];
	roles?: string[];
	tools?: string[];
	since?: string;
	until?: string;
	isError?: boolean;
	branchStates?: string[];
	selectionStates?: string[];
	files?: string[];
}

function checkAllowed(name: string, values: string[] | undefined, allowed: readonly string[]): void {
	for (const v of values ?? []) {
		if (!allowed.includes(v)) throw new PiEventsError("E_USAGE", `${name}: unknown value ${JSON.stringify(v)} (one of: ${allowed.join(", ")})`);
	}
}

/**
 * Validate structured filter values (shared by the CLI and the tool server) into SearchFilters.
 * A relative `cwd` is relative to the caller's cwd; relative `files` to the authorization root
 * (recorded file paths are relative to the session's cwd, usually the project root).
 */
export function toSearchFilters(v: FilterValues, cwd: string, now: number, root: string = cwd): SearchFilters {
	checkAllowed("kind", v.kinds, SEMANTIC_KINDS);
	checkAllowed("branch", v.branchStates, BRANCH_STATES);
	checkAllowed("selection", v.selectionStates, SELECTION_STATES);
	const sinceMs = v.since !== undefined ? parseTimeArg("since", v.since, now) : undefined;
	const untilMs = v.until !== undefined ? parseTimeArg("until", v.until, now) : undefined;
	if (sinceMs !== undefined && untilMs !== undefined && sinceMs >= untilMs) {
		throw new PiEventsError("E_USAGE", "since must be earlier than until");
	}
	const filters: SearchFilters = {};
	if (v.sessionIds?.length) filters.sessionIds = v.sessionIds;
	if (v.cwd) filters.cwdPrefix = canonicalPath(isAbsolute(v.cwd) ? v.cwd : resolve(cwd, v.cwd));
	if (v.eventTypes?.length) filters.eventTypes = v.eventTypes;
	if (v.kinds?.length) filters.kinds = v.kinds as SearchFilters["kinds"];
	if (v.roles?.length) filters.roles = v.roles;
	if (v.tools?.length) filters.tools = v.tools;
	if (sinceMs !== undefined) filters.sinceMs = sinceMs;
	if (untilMs !== undefined) filters.untilMs = untilMs;
	if (v.isError !== undefined) filters.isError = v.isError;
	if (v.branchStates?.length) filters.branchStates = v.branchStates as SearchFilters["branchStates"];
	if (v.selectionStates?.length) filters.selectionStates = v.selectionStates as SearchFilters["selectionStates"];
	if (v.files?.length) filters.files = v.files.map((f) => (isAbsolute(f) ? resolve(f) : resolve(root, f)));
	return filters;
}

const RELATIVE = /^(\d+(?:\.\d+)?)\s*(m|min|h|d|w)$/i;
const UNIT_MS: Record<string, number> = { m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseTimeArg(name: string, value: string, now: number): number {
	const rel = RELATIVE.exec(value.trim());
	if (rel) return now - Number(rel[1]) * UNIT_MS[rel[2]!.toLowerCase()]!;
	if (/^\d{4}-\d{2}-\d{2}/.test(value.trim())) {
		const ms = Date.parse(value.trim());
		if (!Number.isNaN(ms)) return ms;
	}
	throw new PiEventsError("E_USAGE", `${name}: cannot read ${JSON.stringify(value)} as a time (use an ISO date like 2026-11-30, or 30m, 12h, 7d, 2w)`);
}
