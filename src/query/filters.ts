/**
 * Filter values (from CLI flags or tool arguments, named by the tool inputs of
 * query/filter-table.ts) → SearchFilters, with clear errors for bad values. Shared by both shells.
 * Relative times (`7d`, `12h`, `30m`, `2w`) are measured back from `now`; a relative `cwd` is
 * relative to the caller's cwd, relative `files` to the authorization root (recorded file paths are
 * relative to the session's cwd, usually the project root).
 */
import { isAbsolute, resolve } from "node:path";
import { PiEventsError } from "../errors.ts";
import { canonicalPath } from "../source/paths.ts";
import { FILTER_ROWS, type FilterValues } from "./filter-table.ts";
import type { SearchFilters } from "./search/search.ts";

export type { FilterValues };

type Value = FilterValues[keyof FilterValues];

interface Context {
	cwd: string;
	root: string;
	sinceMs: number | undefined;
	untilMs: number | undefined;
}

/** Filters whose value is not kept as given: made a list, resolved or parsed. */
const CONVERT: Partial<Record<keyof SearchFilters, (value: Value, ctx: Context) => unknown>> = {
	sessionIds: (id) => (typeof id === "string" ? [id] : id),
	cwdPrefix: (dir, ctx) => (typeof dir === "string" && dir !== "" ? canonicalPath(isAbsolute(dir) ? dir : resolve(ctx.cwd, dir)) : undefined),
	sinceMs: (_, ctx) => ctx.sinceMs,
	untilMs: (_, ctx) => ctx.untilMs,
	files: (files, ctx) => (Array.isArray(files) ? files.map((f: string) => (isAbsolute(f) ? resolve(f) : resolve(ctx.root, f))) : files),
};

function checkAllowed(name: string, values: Value, allowed: readonly string[]): void {
	for (const v of Array.isArray(values) ? values : []) {
		if (!allowed.includes(v)) throw new PiEventsError("E_USAGE", `${name}: unknown value ${JSON.stringify(v)} (one of: ${allowed.join(", ")})`);
	}
}

/** A value that says something: a non-empty list, a non-empty string, a boolean, a number. */
const given = (value: unknown) => (Array.isArray(value) ? value.length > 0 : value !== undefined && value !== "");

/** Validate filter values (shared by the CLI and the tool server) into SearchFilters. */
export function toSearchFilters(values: FilterValues, cwd: string, now: number, root: string = cwd): SearchFilters {
	for (const row of FILTER_ROWS) if (row.allowed) checkAllowed(row.flag, values[row.input], row.allowed);
	const sinceMs = values.since !== undefined ? parseTimeArg("since", String(values.since), now) : undefined;
	const untilMs = values.until !== undefined ? parseTimeArg("until", String(values.until), now) : undefined;
	if (sinceMs !== undefined && untilMs !== undefined && sinceMs >= untilMs) {
		throw new PiEventsError("E_USAGE", "since must be earlier than until");
	}
	const ctx: Context = { cwd, root, sinceMs, untilMs };
	const filters: Record<string, unknown> = {};
	for (const row of FILTER_ROWS) {
		const value = values[row.input];
		if (!given(value)) continue;
		const converted = CONVERT[row.key]?.(value, ctx) ?? value;
		if (given(converted)) filters[row.key] = converted;
	}
	return filters as SearchFilters;
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
