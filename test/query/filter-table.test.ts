/**
 * Each filter is declared once (src/query/filter-table.ts), and everything else follows from the
 * table or is checked against it here: the CLI flags, the tool input schema, the extension's
 * TypeBox mirror, the store's SQL, and the planner (a filter-only search by every filter that
 * narrows runs; by one that does not, it says the query is empty). A row added to the table and not
 * handled somewhere fails one of these.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SearchParams } from "../../extension/pi-events.ts";
import { filterArgs, filterValues } from "../../src/cli/filters.ts";
import { PiEventsError } from "../../src/errors.ts";
import { Gate } from "../../src/gate/gate.ts";
import { FILTER_ROWS, type FilterRow, FILTERS, type FilterValues } from "../../src/query/filter-table.ts";
import { toSearchFilters } from "../../src/query/filters.ts";
import { search } from "../../src/query/search/search.ts";
import { toJsonSchema } from "../../src/server/json-schema.ts";
import { TOOLS } from "../../src/server/tools.ts";
import { filterSql, type SqlFilters } from "../../src/store/search.ts";
import { cleanupTempDirs, PI_FIXTURES } from "../helpers/temp.ts";
import { buildIndex, type TestIndex, UNSCOPED } from "./helpers.ts";

/** A value each filter accepts, written as its flag takes it. */
function sample(row: FilterRow): string | boolean {
	if (row.form === "boolean") return true;
	if (row.cost === "time") return row.flag === "until" ? "2100-01-01" : "2000-01-01";
	return row.allowed?.[0] ?? "x";
}

/** The command line of one filter flag, as citty hands it to a command, and its raw arguments. */
function flagged(row: FilterRow): { args: Record<string, unknown>; rawArgs: string[] } {
	const value = sample(row);
	return typeof value === "boolean"
		? { args: { [row.flag]: value }, rawArgs: [`--${row.flag}`] }
		: { args: { [row.flag]: value }, rawArgs: [`--${row.flag}`, value] };
}

const searchTool = TOOLS.find((t) => t.name === "event_search")!;
const now = Date.UTC(2026, 11, 1);

describe("every filter, from its one row", () => {
	test("the table: unique flags, inputs and keys; every row classified", () => {
		for (const field of ["flag", "input", "key"] as const) expect(new Set(FILTER_ROWS.map((r) => r[field])).size).toBe(FILTER_ROWS.length);
		for (const row of FILTER_ROWS) {
			expect(["categorical", "time", "place"]).toContain(row.cost);
			expect(typeof row.narrowsAlone).toBe("boolean");
		}
	});

	test("the CLI has each filter's flag with the row's help", () => {
		for (const row of FILTER_ROWS) expect(filterArgs[row.flag]).toMatchObject({ type: row.form === "boolean" ? "boolean" : "string", description: row.help });
	});

	test("the tool input schema has each filter's input as the row validates it", () => {
		const schema = toJsonSchema(searchTool.input) as { properties: Record<string, unknown> };
		for (const row of FILTER_ROWS) {
			const { $schema: _, ...own } = toJsonSchema(row.schema);
			expect({ input: row.input, schema: schema.properties[row.input] }).toEqual({ input: row.input, schema: own });
		}
	});

	test("the extension's TypeBox mirror has each filter's input, the same JSON Schema as the row's", () => {
		const mirror = JSON.parse(JSON.stringify(SearchParams)) as { properties: Record<string, unknown> };
		for (const row of FILTER_ROWS) {
			const { $schema: _, ...own } = toJsonSchema(row.schema);
			expect({ input: row.input, schema: mirror.properties[row.input] }).toEqual({ input: row.input, schema: own });
		}
	});

	test("the tool's query description names every filter that narrows a search without words", () => {
		const query = (toJsonSchema(searchTool.input) as { properties: { query: { description: string } } }).properties.query.description;
		for (const row of FILTER_ROWS.filter((r) => r.narrowsAlone)) expect(query).toContain(row.input);
	});

	test("the CLI's value and the tool's value of each filter make the same SearchFilters, holding the row's key", () => {
		for (const row of FILTER_ROWS) {
			const { args, rawArgs } = flagged(row);
			const viaCli = toSearchFilters(filterValues(args, rawArgs), "/", now);
			const toolValue = typeof sample(row) === "boolean" || row.form === "one" || row.input === "sessionId" ? sample(row) : [sample(row)];
			const viaTool = toSearchFilters({ [row.input]: toolValue } as FilterValues, "/", now);
			expect({ flag: row.flag, filters: viaCli }).toEqual({ flag: row.flag, filters: viaTool });
			expect(Object.keys(viaCli)).toEqual([row.key]);
		}
	});

	test("the store's SQL applies each filter (its clause changes the statement)", () => {
		const base: SqlFilters = { roots: null, excludeSessionIds: [], cutoff: null };
		for (const row of FILTER_ROWS) {
			const { args, rawArgs } = flagged(row);
			const filters = { ...base, ...toSearchFilters(filterValues(args, rawArgs), "/", now) };
			// Session and cwd are the session rule's: in SQL when the MATCH carries no scope (sessionLevel).
			expect({ flag: row.flag, where: filterSql(filters, true).where }).not.toEqual({ flag: row.flag, where: filterSql(base, true).where });
		}
	});
});

describe("the planner handles every filter", () => {
	let index: TestIndex;
	beforeAll(() => {
		index = buildIndex([PI_FIXTURES]);
	});
	afterAll(() => {
		index.close();
		cleanupTempDirs();
	});

	test("a search by any one filter that narrows runs without words; cwd alone says the query is empty", () => {
		for (const row of FILTER_ROWS) {
			const { args, rawArgs } = flagged(row);
			const filters = toSearchFilters(filterValues(args, rawArgs), "/", now);
			const run = () => search(new Gate(index.db, UNSCOPED), { query: "", filters, limit: 5 });
			if (row.narrowsAlone) expect({ flag: row.flag, filterOnly: run().coverage.filterOnly }).toEqual({ flag: row.flag, filterOnly: true });
			else expect(run).toThrow(PiEventsError);
		}
		expect(FILTERS.cwd.narrowsAlone).toBe(false);
	});

	test("a filter-only search by each filter finds what a search of a word and the filter finds (the same events pass)", () => {
		for (const row of FILTER_ROWS.filter((r) => r.narrowsAlone)) {
			const { args, rawArgs } = flagged(row);
			const filters = toSearchFilters(filterValues(args, rawArgs), "/", now);
			const byFilter = search(new Gate(index.db, UNSCOPED), { query: "", filters, limit: 100 }).hits.map((h) => `${h.sessionId}/${h.entryId}`);
			const withWord = search(new Gate(index.db, UNSCOPED), { query: "the", filters, limit: 100 }).hits.map((h) => `${h.sessionId}/${h.entryId}`);
			for (const hit of withWord)
				expect({ flag: row.flag, hit, found: byFilter.length === 100 || byFilter.includes(hit) }).toEqual({ flag: row.flag, hit, found: true });
		}
	});
});
