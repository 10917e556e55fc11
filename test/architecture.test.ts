/**
 * The layering rule, enforced: a pure core (framing, parsing, projection, tree, text, query
 * language, authorization, snippets, renderers) that touches no filesystem, database or process;
 * SQLite opened only in store/; the process (argv, env, stdout) only in the shells.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";

const SRC = join(import.meta.dir, "..", "src");
const files = [...new Bun.Glob("**/*.ts").scanSync(SRC)].map((f) => join(SRC, f));
const rel = (f: string) => relative(SRC, f);
const source = (f: string) => readFileSync(f, "utf8");
/** Value imports only: `import type` is erased and carries no dependency at run time. */
const valueImports = (text: string) =>
	[...text.matchAll(/^import\s+(?!type\s)[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]!);

const PURE = [
	"model.ts",
	"errors.ts",
	"source/jsonl.ts",
	"source/hash.ts",
	"source/session-parser.ts",
	"project/text.ts",
	"project/projector.ts",
	"project/tree.ts",
	"project/weights.ts",
	"auth/scope.ts",
	"auth/scope-tokens.ts",
	"query/fts.ts",
	"query/snippet.ts",
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
	const outside = files.filter((f) => !SHELLS.test(rel(f)) && rel(f) !== "config.ts" && /\bprocess\.(env|argv|stdout|stderr|exit|exitCode|cwd)\b/.test(source(f)));
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
