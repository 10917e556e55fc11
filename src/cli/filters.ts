/** The search filter flags (citty definitions, from query/filter-table.ts) and their values off the command line; validation is query/filters.ts. */
import type { ArgDef } from "citty";
import { FILTER_ROWS, type FilterValues } from "../query/filter-table.ts";
import { collectRepeated } from "./shared.ts";

export const filterArgs: Record<string, ArgDef> = Object.fromEntries(
	FILTER_ROWS.map((r) => [
		r.flag,
		r.form === "boolean"
			? { type: "boolean", description: r.help }
			: { type: "string", description: r.help, ...(r.valueHint ? { valueHint: r.valueHint } : {}) },
	]),
);

/** Each filter's value as its flag gives it: one value, a comma-separated list, every use of a repeated flag, or a boolean only when written. */
export function filterValues(args: Record<string, unknown>, rawArgs: readonly string[]): FilterValues {
	const values: FilterValues = {};
	for (const r of FILTER_ROWS) {
		const raw = args[r.flag];
		if (r.form === "list") values[r.input] = list(raw as string | undefined);
		else if (r.form === "repeated") values[r.input] = collectRepeated(rawArgs as string[], r.flag);
		else if (r.form === "boolean") values[r.input] = rawArgs.some((a) => a === `--${r.flag}` || a === `--no-${r.flag}`) ? (raw as boolean) : undefined;
		else values[r.input] = raw as string | undefined;
	}
	return values;
}

export function list(value: string | undefined): string[] | undefined {
	if (value === undefined) return undefined;
	const items = value
		.split(",")
		.map((s) => s.trim())
		.filter(Boolean);
	return items.length > 0 ? items : undefined;
}
