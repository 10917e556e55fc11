/**
 * The layering rule, enforced: a pure core (framing, parsing, projection, tree, text, query
 * language, authorization, snippets, renderers) that touches no filesystem, database or process;
 * SQLite opened only in store/; the process (argv, env, stdout) only in the shells; the folders
 * depend on each other one way only (no cycles, and none of the forbidden directions below), and
 * the use cases in query/ reach the index only through the gate (gate/gate.ts).
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";

const SRC = join(import.meta.dir, "..", "src");
const files = [...new Bun.Glob("**/*.ts").scanSync(SRC)].map((f) => join(SRC, f));
const rel = (f: string) => relative(SRC, f);
const source = (f: string) => readFileSync(f, "utf8");
/** Value imports only: `import type` is erased and carries no dependency at run time. */
const valueImports = (text: string) => [...text.matchAll(/^import\s+(?!type\s)[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]!);

const PURE = [
	"model.ts",
	"errors.ts",
	"source/jsonl.ts",
	"source/hash.ts",
	"source/session-parser.ts",
	"project/text.ts",
	"project/projector.ts",
	"project/tree.ts",
	"project/turn.ts",
	"project/transcript.ts",
	"project/weights.ts",
	"auth/scope.ts",
	"auth/scope-tokens.ts",
	"auth/scope-sql.ts",
	"query/fts.ts",
	"query/snippet.ts",
	"query/ascii-words.ts",
	"present/render.ts",
	"present/render-read.ts",
	"present/render-trace.ts",
];
const SHELLS = /^(cli\/|server\/|main\.ts$)/;

test("the pure core imports no filesystem, database or process, and no shell", () => {
	const violations: string[] = [];
	for (const name of PURE) {
		const text = source(join(SRC, name));
		for (const spec of valueImports(text)) {
			if (/^(node:fs|node:child_process|bun:sqlite)/.test(spec)) violations.push(`${name} imports ${spec}`);
			if (/\/(cli|server|store)\//.test(spec) || /\/sync\//.test(spec) || spec.endsWith("/config.ts")) violations.push(`${name} imports ${spec}`);
		}
		if (/\bprocess\.(env|argv|stdout|stderr|exit|cwd)/.test(text)) violations.push(`${name} uses process`);
	}
	expect(violations).toEqual([]);
});

test("SQLite is opened only in store/", () => {
	const outside = files.filter((f) => !rel(f).startsWith("store/") && valueImports(source(f)).includes("bun:sqlite"));
	expect(outside.map(rel)).toEqual([]);
});

test("the process (argv, env, stdout, exit) is touched only by the shells and config", () => {
	const outside = files.filter(
		(f) => !SHELLS.test(rel(f)) && rel(f) !== "config.ts" && /\bprocess\.(env|argv|stdout|stderr|exit|exitCode|cwd)\b/.test(source(f)),
	);
	expect(outside.map(rel)).toEqual([]);
});

test("imports point one way: nothing below the shells imports a shell", () => {
	const violations: string[] = [];
	for (const f of files) {
		if (SHELLS.test(rel(f))) continue;
		for (const spec of valueImports(source(f))) if (/(^|\/)(cli|server)\//.test(spec) || spec.endsWith("main.ts")) violations.push(`${rel(f)} imports ${spec}`);
	}
	expect(violations).toEqual([]);
});

/**
 * Every module another module depends on, at run time or for types: `import … from`, `import
 * type … from`, `export … from`, side-effect `import "…"` and dynamic `import("…")`. Relative
 * specifiers only, resolved to a path under src/.
 */
function dependencies(file: string, text = source(file)): string[] {
	const specs = [
		...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s*"([^"]+)"/gms),
		...text.matchAll(/^\s*import\s*"([^"]+)"/gm),
		...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
	].map((m) => m[1]!);
	return specs.filter((s) => s.startsWith(".")).map((s) => rel(join(file, "..", s)));
}

/** The layer of a module: its folder under src/, or the file name for top-level modules. */
const layer = (path: string) => (path.includes("/") ? path.split("/")[0]! : path.replace(/\.ts$/, ""));
const SHELL_LAYERS = ["cli", "server", "main"];

/** [from, to, why]: directions no import may take. */
const FORBIDDEN: [string, string, string][] = [
	["project", "store", "the projection is pure"],
	["project", "source", "the projection knows pi's entries, not files"],
	["source", "project", "the parser takes its projector as a parameter"],
	["source", "store", "reading files knows nothing of the index"],
	["store", "query", "the store is below the use cases"],
	["present", "store", "renderers get results, never rows"],
	["auth", "store", "the scope rule is pure"],
	["query", "store", "use cases read the index only through the gate"],
	["query", "sync", "use cases do not index"],
	["gate", "query", "the gate is below the use cases"],
	["gate", "sync", "the gate reads; it does not index"],
	["store", "gate", "the store is below the gate"],
	["auth", "gate", "the scope rule is below the gate"],
	["present", "gate", "renderers get results, never a way to read"],
	...SHELL_LAYERS.flatMap((shell): [string, string, string][] => [
		["query", shell, "use cases are below the shells"],
		["store", shell, "the store is below the shells"],
		["gate", shell, "the gate is below the shells"],
		["auth", shell, "the scope rule is below the shells"],
	]),
];

test("no import takes a forbidden direction (value, type-only and re-exports alike)", () => {
	const violations: string[] = [];
	for (const f of files) {
		for (const dep of dependencies(f)) {
			for (const [from, to, why] of FORBIDDEN) {
				if (layer(rel(f)) === from && layer(dep) === to) violations.push(`${rel(f)} → ${dep} (${from} → ${to}: ${why})`);
			}
		}
	}
	expect(violations).toEqual([]);
});

test("the folders form no import cycle", () => {
	const edges = new Map<string, Set<string>>();
	for (const f of files) {
		for (const dep of dependencies(f)) {
			const [a, b] = [layer(rel(f)), layer(dep)];
			if (a !== b) edges.set(a, (edges.get(a) ?? new Set()).add(b));
		}
	}
	const cycles: string[] = [];
	const visit = (node: string, path: string[]) => {
		for (const next of edges.get(node) ?? []) {
			if (next === path[0]) cycles.push([...path, next].join(" → "));
			else if (!path.includes(next) && next > path[0]!) visit(next, [...path, next]);
		}
	};
	for (const start of edges.keys()) visit(start, [start]);
	expect(cycles).toEqual([]);
});

test("the files form no import cycle either (a dynamic import counts): each module can be read before the ones that use it", () => {
	const edges = new Map(files.map((f) => [rel(f), new Set(dependencies(f))]));
	const cycles: string[] = [];
	const visit = (node: string, path: string[]) => {
		for (const next of edges.get(node) ?? []) {
			if (next === path[0]) cycles.push([...path, next].join(" → "));
			else if (!path.includes(next) && next > path[0]!) visit(next, [...path, next]);
		}
	};
	for (const start of edges.keys()) visit(start, [start]);
	expect(cycles).toEqual([]);
});

test("the resident server's socket side (server/) knows no command: it imports nothing from cli/, which gives it its runner", () => {
	const violations = files
		.filter((f) => rel(f).startsWith("server/"))
		.flatMap((f) =>
			dependencies(f)
				.filter((d) => d.startsWith("cli/") || d === "main.ts")
				.map((d) => `${rel(f)} → ${d}`),
		);
	expect(violations).toEqual([]);
});

test("the dependency scanner sees every import form", () => {
	const probe = join(SRC, "query", "probe.ts");
	const text = [
		'import { a } from "../store/a.ts";',
		'import type { B } from "../store/b.ts";',
		'export { c } from "../store/c.ts";',
		'export type { D } from "../store/d.ts";',
		'export * from "../store/e.ts";',
		'import "../store/f.ts";',
		'const g = await import("../store/g.ts");',
		'import {\n\ttype H,\n\ti,\n} from "../store/h.ts";',
	].join("\n");
	expect(dependencies(probe, text).sort()).toEqual(["a", "b", "c", "d", "e", "f", "g", "h"].map((x) => `store/${x}.ts`));
});

test("authorization is enforced in one place: only the gate reads the store for query/, sync/freshness and the shells' reads", () => {
	// The raw read-side store modules are imported by the gate (gate.ts, and its turn reads in
	// turns.ts, which apply the same rule and cutoff) and the indexer only.
	const raw = ["store/events.ts", "store/search.ts", "store/caller.ts", "store/listing.ts", "store/turns.ts"];
	const readers = files
		.filter((f) => dependencies(f).some((d) => raw.includes(d)))
		.map(rel)
		.filter((r) => !r.startsWith("store/"))
		.sort();
	expect(readers).toEqual(["gate/gate.ts", "gate/turns.ts"]);
});

/** Every module `file` runs with: its value imports, theirs, and so on (type-only imports carry no code). */
function reachable(file: string): Set<string> {
	const seen = new Set<string>();
	const visit = (f: string) => {
		const deps = valueImports(source(join(SRC, f)))
			.filter((s) => s.startsWith("."))
			.map((s) => rel(join(SRC, f, "..", s)));
		for (const dep of deps) {
			if (seen.has(dep)) continue;
			seen.add(dep);
			visit(dep);
		}
	};
	visit(file);
	return seen;
}

/** Candidate retrieval (which fragments a search reads) and scoring (how relevant they are), in query/search/. */
const RETRIEVAL = /^query\/search\/candidates[^/]*\.ts$/;
const SCORING = ["query/search/score.ts", "query/search/rerank.ts", "query/answer-score.ts", "query/relevance.ts"];

test("candidate retrieval never computes relevance: no retrieval file imports a scoring file, nor runs one through others", () => {
	const retrieval = files.map(rel).filter((f) => RETRIEVAL.test(f));
	expect(retrieval.length).toBeGreaterThanOrEqual(3);
	for (const scoring of SCORING) expect(files.map(rel)).toContain(scoring);
	const imported = (f: string) => new Set([...dependencies(join(SRC, f)), ...reachable(f)]);
	const violations = retrieval.flatMap((f) => [...imported(f)].filter((d) => SCORING.includes(d)).map((d) => `${f} → ${d}`));
	expect(violations).toEqual([]);
});

test("query/ never holds a database: no file there imports bun:sqlite or names Database, not even as a type", () => {
	const holders = files.map(rel).filter((f) => f.startsWith("query/") && /\bbun:sqlite\b|\bDatabase\b/.test(source(join(SRC, f))));
	expect(holders).toEqual([]);
});

/** Most lines of a file in src/ (as `wc -l` counts them). */
const MAX_FILE_LINES = 300;
/**
 * Files over MAX_FILE_LINES when the rule came (issue 31), at their line counts then: exceptions
 * that may only shrink. A listed file that grows fails; one that shrank must have its number
 * lowered (or, at MAX_FILE_LINES or under, leave the list). src/query/ has none. The other size
 * rule, no function over 60 lines, is Biome's (biome.jsonc, `bun run lint`).
 */
const FILE_SIZE_EXCEPTIONS: Record<string, number> = {
	"config.ts": 398,
	"gate/gate.ts": 691,
	"project/projector.ts": 330,
	"project/stem.ts": 304,
	"server/stdio.ts": 383,
	"server/tools.ts": 420,
	"store/db.ts": 660,
	"store/search.ts": 560,
	"store/write.ts": 513,
	"sync/check.ts": 324,
	"sync/sync-file.ts": 333,
};

const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

test(`no file in src/ over ${MAX_FILE_LINES} lines, except listed ones that only shrink; none in src/query/`, () => {
	const problems: string[] = [];
	for (const f of files) {
		const name = rel(f);
		const lines = lineCount(source(f));
		const recorded = FILE_SIZE_EXCEPTIONS[name];
		if (recorded === undefined) {
			if (lines > MAX_FILE_LINES) problems.push(`${name}: ${lines} lines (at most ${MAX_FILE_LINES}): split it`);
		} else if (lines > recorded) problems.push(`${name}: ${lines} lines, grew past its recorded ${recorded}: split it`);
		else if (lines <= MAX_FILE_LINES) problems.push(`${name}: ${lines} lines: take it off FILE_SIZE_EXCEPTIONS`);
		else if (lines < recorded) problems.push(`${name}: shrank to ${lines} lines: lower its FILE_SIZE_EXCEPTIONS number from ${recorded}`);
	}
	for (const name of Object.keys(FILE_SIZE_EXCEPTIONS)) if (!files.map(rel).includes(name)) problems.push(`${name}: listed, but gone`);
	expect(Object.keys(FILE_SIZE_EXCEPTIONS).filter((name) => name.startsWith("query/"))).toEqual([]);
	expect(problems).toEqual([]);
});

test("no function over 60 lines in src/ (Biome), and Biome lists no exception in src/query/", () => {
	const config = readFileSync(join(SRC, "..", "biome.jsonc"), "utf8");
	expect(config).toContain('"includes": ["src/**"]');
	expect(config).toMatch(/"noExcessiveLinesPerFunction": \{ "level": "error", "options": \{ "maxLines": 60 \} \}/);
	expect(config).not.toMatch(/"includes": \[[^\]]*"src\/query/);
});
