/**
 * Hostile input, part 1: a seeded fuzzer over the real fixture files. Every case is a fixture
 * (pi-generated or legacy) damaged by one to four mutations: byte flips, truncations, duplicated,
 * removed and swapped lines, NUL bytes, invalid UTF-8, CR/LF changes, raw U+2028/U+2029, huge
 * number literals, wrong JSON types for the fields the projector reads, missing fields, id and
 * parentId collisions. Cases are written in batches (one sync per round), and a set of
 * "evolving" files is mutated in place between rounds so the append, rebuild, keep-last-good and
 * remove paths run on damaged input too.
 *
 * What must hold:
 *  - syncIndex never throws, and never swallows an unexpected exception as a "cannot index" problem;
 *  - every diagnostic names the file, a 1-based line and the byte offset of that line; for every
 *    new file the malformed-json / not-an-object / missing-header / duplicate-id diagnostics are
 *    exactly those an independent line-by-line reading of the bytes predicts;
 *  - search, read and trace (and their renderers) over whatever was indexed throw nothing but
 *    PiEventsError;
 *  - at the end, SQLite's and FTS5's integrity checks pass, the tables are consistent, and the
 *    incrementally maintained index equals a fresh index of the same files.
 *
 * Seed: PI_EVENTS_FUZZ_SEED (default 20261130). PI_EVENTS_HOSTILE_LONG=1 runs ten times as many rounds.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Scope } from "../../src/auth/scope.ts";
import { isPiEventsError } from "../../src/errors.ts";
import { syncIndex, type SyncReport } from "../../src/sync/sync.ts";
import { renderRead } from "../../src/present/render-read.ts";
import { renderTrace } from "../../src/present/render-trace.ts";
import { renderHits } from "../../src/present/render.ts";
import { Gate } from "../../src/gate/gate.ts";
import { readEvent } from "../../src/query/read.ts";
import { search } from "../../src/query/search/search.ts";
import { traceEvent } from "../../src/query/trace.ts";
import type { SourceDir } from "../../src/source/discover.ts";
import { openIndex } from "../../src/store/db.ts";
import { allFixtureFiles, cleanupTempDirs, dumpIndex, makeTempDir } from "../helpers/temp.ts";

const LONG = process.env.PI_EVENTS_HOSTILE_LONG === "1";
const SEED = Number(process.env.PI_EVENTS_FUZZ_SEED ?? 20261130) >>> 0;
const ROUNDS = LONG ? 500 : 50;
const NEW_PER_ROUND = 200;
const EVOLVING = 20;
/** Queries (search + read + trace) per round. */
const PROBES_PER_ROUND = LONG ? 60 : 25;

afterAll(() => cleanupTempDirs());

// ---------------------------------------------------------------------------------------------
// Seeded randomness
// ---------------------------------------------------------------------------------------------

class Rng {
	private s: number;
	constructor(seed: number) {
		this.s = seed >>> 0 || 1;
	}
	/** mulberry32 */
	next(): number {
		this.s = (this.s + 0x6d2b79f5) >>> 0;
		let t = this.s;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	}
	int(n: number): number {
		return Math.floor(this.next() * n);
	}
	pick<T>(list: readonly T[]): T {
		return list[this.int(list.length)]!;
	}
	chance(p: number): boolean {
		return this.next() < p;
	}
}

// ---------------------------------------------------------------------------------------------
// Mutations
// ---------------------------------------------------------------------------------------------

const enc = new TextEncoder();
const LF = 0x0a;

function concat(...parts: Uint8Array[]): Uint8Array {
	const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
	let at = 0;
	for (const p of parts) {
		out.set(p, at);
		at += p.length;
	}
	return out;
}

function insertAt(buf: Uint8Array, at: number, bytes: Uint8Array): Uint8Array {
	return concat(buf.subarray(0, at), bytes, buf.subarray(at));
}

/** Lines split on LF; the last element is the (possibly empty) tail after the last LF. */
function splitLines(buf: Uint8Array): Uint8Array[] {
	const out: Uint8Array[] = [];
	let start = 0;
	for (;;) {
		const nl = buf.indexOf(LF, start);
		if (nl < 0) break;
		out.push(buf.subarray(start, nl));
		start = nl + 1;
	}
	out.push(buf.subarray(start));
	return out;
}

function joinLines(lines: Uint8Array[]): Uint8Array {
	const parts: Uint8Array[] = [];
	lines.forEach((l, i) => {
		parts.push(l);
		if (i < lines.length - 1) parts.push(Uint8Array.of(LF));
	});
	return concat(...parts);
}

const INVALID_UTF8: Uint8Array[] = [
	[0xff],
	[0xfe, 0xfe],
	[0xc0, 0xaf],
	[0xc1, 0xbf],
	[0xe0, 0x80, 0xaf],
	[0xed, 0xa0, 0x80],
	[0xed, 0xbf, 0xbf],
	[0xf4, 0x90, 0x80, 0x80],
	[0xf8, 0x88, 0x80, 0x80, 0x80],
	[0x80],
	[0xbf, 0x80],
	[0xe2, 0x82],
	[0xf0, 0x9f, 0x98],
].map((b) => Uint8Array.from(b));

const HUGE_NUMBERS = [
	"1e400",
	"-1e400",
	"1e-400",
	"9007199254740993",
	"123456789012345678901234567890123456789012345678901234567890",
	"-0",
	"0.1e99999",
	"1.7976931348623157e308",
	"1e20",
	"-9223372036854775809",
	"18446744073709551616",
];

/** Values of the wrong type (raw JSON text, so huge literals survive). */
const WRONG_VALUES = [
	"0",
	"-1",
	"1.5",
	"1e308",
	"1e400",
	"-1e400",
	"9007199254740993",
	"true",
	"false",
	"null",
	"{}",
	'{"a":{"b":{"c":[1,2,{"d":null}]}}}',
	"[]",
	'[1,"x",null,{},[]]',
	'""',
	'" "',
	'"\\u0000"',
	'"a\\u0000b"',
	'"\\ud800"',
	'"\\udfff\\ud800"',
	'"\u2028\u2029"',
	'"../../../../etc/passwd"',
	'"/"',
	'"~dup1"',
	`"${"x".repeat(30_000)}"`,
	'"2026-13-45T99:99:99Z"',
	'"+275760-09-13T00:00:00.001Z"',
	'"-271821-04-20T00:00:00.000Z"',
	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	'{"type":"text","text":{"type":"text"}}',
	'[{"type":"text","text":7},{"type":"toolCall","name":{},"arguments":"x","id":[]},{"type":"image"},{"type":"thinking","thinking":1},null,"s",5]',
];

/** Field paths the projector, parser and tree classification read (per entry shape). */
const FIELD_PATHS: string[][] = [
	["type"],
	["id"],
	["parentId"],
	["timestamp"],
	["version"],
	["cwd"],
	["parentSession"],
	["branchedFrom"],
	["title"],
	["message"],
	["message", "role"],
	["message", "content"],
	["message", "content", "0"],
	["message", "content", "0", "type"],
	["message", "content", "0", "text"],
	["message", "content", "1"],
	["message", "content", "1", "name"],
	["message", "content", "1", "arguments"],
	["message", "content", "1", "arguments", "path"],
	["message", "content", "1", "id"],
	["message", "timestamp"],
	["message", "toolCallId"],
	["message", "toolName"],
	["message", "isError"],
	["message", "errorMessage"],
	["message", "stopReason"],
	["message", "exitCode"],
	["message", "command"],
	["message", "output"],
	["message", "cancelled"],
	["message", "customType"],
	["message", "display"],
	["message", "attachments"],
	["message", "provider"],
	["message", "model"],
	["customType"],
	["content"],
	["display"],
	["summary"],
	["firstKeptEntryId"],
	["firstKeptEntryIndex"],
	["tokensBefore"],
	["fromId"],
	["details"],
	["details", "readFiles"],
	["details", "modifiedFiles"],
	["name"],
	["targetId"],
	["label"],
	["replacement"],
	["provider"],
	["modelId"],
	["model"],
	["thinkingLevel"],
];

const ENTRY_TYPES = [
	"session",
	"message",
	"compaction",
	"branch_summary",
	"custom_message",
	"custom",
	"session_info",
	"title_change",
	"title",
	"label",
	"context_edit",
	"model_change",
	"thinking_level_change",
	"usage",
	"no_such_type",
];

const PLACEHOLDER = "\u0001RAW\u0001";

/** Set `path` in `obj` to a placeholder (creating intermediate objects); returns false if impossible. */
function setPath(obj: Record<string, unknown>, path: string[]): boolean {
	let cursor: unknown = obj;
	for (let i = 0; i < path.length - 1; i++) {
		if (typeof cursor !== "object" || cursor === null) return false;
		const c = cursor as Record<string, unknown>;
		if (typeof c[path[i]!] !== "object" || c[path[i]!] === null) c[path[i]!] = {};
		cursor = c[path[i]!];
	}
	if (typeof cursor !== "object" || cursor === null) return false;
	(cursor as Record<string, unknown>)[path[path.length - 1]!] = PLACEHOLDER;
	return true;
}

function deletePath(obj: Record<string, unknown>, path: string[]): void {
	let cursor: unknown = obj;
	for (let i = 0; i < path.length - 1; i++) {
		if (typeof cursor !== "object" || cursor === null) return;
		cursor = (cursor as Record<string, unknown>)[path[i]!];
	}
	if (typeof cursor === "object" && cursor !== null) delete (cursor as Record<string, unknown>)[path[path.length - 1]!];
}

/** Apply `edit` to the JSON object on a random line (if it parses as one). */
function editJsonLine(rng: Rng, buf: Uint8Array, edit: (obj: Record<string, unknown>, all: Record<string, unknown>[]) => string | null): Uint8Array {
	const lines = splitLines(buf);
	const objects: { i: number; obj: Record<string, unknown> }[] = [];
	lines.forEach((l, i) => {
		try {
			const v = JSON.parse(new TextDecoder().decode(l));
			if (v && typeof v === "object" && !Array.isArray(v)) objects.push({ i, obj: v });
		} catch {
			// not JSON: not a candidate
		}
	});
	if (objects.length === 0) return buf;
	const target = rng.pick(objects);
	const text = edit(
		target.obj,
		objects.map((o) => o.obj),
	);
	if (text === null) return buf;
	lines[target.i] = enc.encode(text);
	return joinLines(lines);
}

function idsOf(all: Record<string, unknown>[]): string[] {
	return all.map((o) => o.id).filter((id): id is string => typeof id === "string");
}

type Mutation = { name: string; apply: (rng: Rng, buf: Uint8Array) => Uint8Array };

const MUTATIONS: Mutation[] = [
	{
		name: "flip-bytes",
		apply(rng, buf) {
			if (buf.length === 0) return buf;
			const out = buf.slice();
			for (let n = 1 + rng.int(5); n > 0; n--) out[rng.int(out.length)]! ^= 1 + rng.int(255);
			return out;
		},
	},
	{ name: "truncate", apply: (rng, buf) => buf.subarray(0, rng.int(buf.length + 1)) },
	{
		name: "truncate-at-line",
		apply(rng, buf) {
			const lines = splitLines(buf);
			const keep = rng.int(lines.length);
			return joinLines([...lines.slice(0, keep), new Uint8Array(0)]);
		},
	},
	{
		name: "duplicate-line",
		apply(rng, buf) {
			const lines = splitLines(buf);
			const i = rng.int(Math.max(1, lines.length - 1));
			lines.splice(rng.int(lines.length), 0, lines[i]!);
			return joinLines(lines);
		},
	},
	{
		name: "remove-line",
		apply(rng, buf) {
			const lines = splitLines(buf);
			if (lines.length > 1) lines.splice(rng.int(lines.length - 1), 1);
			return joinLines(lines);
		},
	},
	{
		name: "swap-lines",
		apply(rng, buf) {
			const lines = splitLines(buf);
			const n = lines.length - 1;
			if (n < 2) return buf;
			const a = rng.int(n);
			const b = rng.int(n);
			[lines[a], lines[b]] = [lines[b]!, lines[a]!];
			return joinLines(lines);
		},
	},
	{
		name: "shuffle-lines",
		apply(rng, buf) {
			const lines = splitLines(buf);
			const tail = lines.pop()!;
			for (let i = lines.length - 1; i > 0; i--) {
				const j = rng.int(i + 1);
				[lines[i], lines[j]] = [lines[j]!, lines[i]!];
			}
			return joinLines([...lines, tail]);
		},
	},
	{
		name: "nul-bytes",
		apply(rng, buf) {
			let out = buf;
			for (let n = 1 + rng.int(4); n > 0; n--) out = insertAt(out, rng.int(out.length + 1), new Uint8Array(1 + rng.int(3)));
			return out;
		},
	},
	{
		name: "invalid-utf8",
		apply(rng, buf) {
			let out = buf;
			for (let n = 1 + rng.int(4); n > 0; n--) out = insertAt(out, rng.int(out.length + 1), rng.pick(INVALID_UTF8));
			return out;
		},
	},
	{
		name: "invalid-utf8-in-string",
		apply(rng, buf) {
			// Right after an opening quote: the line stays JSON, the text holds U+FFFD.
			const quotes: number[] = [];
			for (let i = 0; i < buf.length; i++) if (buf[i] === 0x22 && buf[i + 1] !== 0x3a && buf[i - 1] === 0x3a) quotes.push(i + 1);
			if (quotes.length === 0) return buf;
			return insertAt(buf, rng.pick(quotes), rng.pick(INVALID_UTF8));
		},
	},
	{
		name: "lf-to-crlf",
		apply(rng, buf) {
			const lines = splitLines(buf);
			const all = rng.chance(0.3);
			return joinLines(lines.map((l, i) => (i < lines.length - 1 && (all || rng.chance(0.3)) ? concat(l, Uint8Array.of(0x0d)) : l)));
		},
	},
	{
		name: "lf-to-cr",
		apply(rng, buf) {
			const out = buf.slice();
			const lfs: number[] = [];
			out.forEach((b, i) => {
				if (b === LF) lfs.push(i);
			});
			if (lfs.length) out[rng.pick(lfs)] = 0x0d;
			return out;
		},
	},
	{
		name: "remove-lf",
		apply(rng, buf) {
			const lfs: number[] = [];
			buf.forEach((b, i) => {
				if (b === LF) lfs.push(i);
			});
			if (lfs.length === 0) return buf;
			const at = rng.pick(lfs);
			return concat(buf.subarray(0, at), buf.subarray(at + 1));
		},
	},
	{ name: "insert-lf", apply: (rng, buf) => insertAt(buf, rng.int(buf.length + 1), Uint8Array.of(rng.chance(0.5) ? LF : 0x0d, LF)) },
	{ name: "insert-cr", apply: (rng, buf) => insertAt(buf, rng.int(buf.length + 1), Uint8Array.of(0x0d)) },
	{
		name: "u2028",
		apply(rng, buf) {
			let out = buf;
			for (let n = 1 + rng.int(3); n > 0; n--) out = insertAt(out, rng.int(out.length + 1), enc.encode(rng.pick(["\u2028", "\u2029", "\u0085", "\ufeff"])));
			return out;
		},
	},
	{
		name: "u2028-in-string",
		apply(rng, buf) {
			return editJsonLine(rng, buf, (obj) => {
				const text = JSON.stringify(obj);
				const at = text.indexOf('"text":"');
				if (at < 0) return `${text.slice(0, -1)},"x":"a\u2028b\u2029c"}`;
				return `${text.slice(0, at + 8)}line\u2028break\u2029para ${text.slice(at + 8)}`;
			});
		},
	},
	{
		name: "huge-number",
		apply(rng, buf) {
			const text = new TextDecoder().decode(buf);
			const spots = [...text.matchAll(/(?<=[:,[])-?\d+(\.\d+)?([eE][+-]?\d+)?(?=[,\]}])/g)];
			if (spots.length === 0) return buf;
			const m = rng.pick(spots);
			return enc.encode(text.slice(0, m.index) + rng.pick(HUGE_NUMBERS) + text.slice(m.index! + m[0].length));
		},
	},
	{
		name: "wrong-type",
		apply(rng, buf) {
			return editJsonLine(rng, buf, (obj) => {
				if (!setPath(obj, rng.pick(FIELD_PATHS))) return null;
				return JSON.stringify(obj).replace(JSON.stringify(PLACEHOLDER), rng.pick(WRONG_VALUES));
			});
		},
	},
	{
		name: "wrong-type-known-field",
		apply(rng, buf) {
			// The classics: message.content a number, parentId an object, id not a string, huge timestamps.
			const cases: [string[], string][] = [
				[["message", "content"], rng.pick(["42", "1e400", "true", '{"type":"text","text":"x"}'])],
				[["parentId"], rng.pick(["{}", '{"id":"x"}', "[]", "7", "true"])],
				[["id"], rng.pick(["7", "{}", "[]", "null", '""', "true"])],
				[["timestamp"], rng.pick(["1e20", "1e308", "-1e20", "8.64e15", "8640000000000001", "-8640000000000001", "1e400", "{}", "[]"])],
				[["message", "timestamp"], rng.pick(["1e20", "-1e20", "8640000000000001"])],
				[
					["message", "role"],
					rng.pick(["7", "{}", "null", '"toolResult"', '"bashExecution"', '"custom"', '"hookMessage"', '"system"', '"assistant"', '"user"']),
				],
				[["type"], JSON.stringify(rng.pick(ENTRY_TYPES))],
				[["version"], rng.pick(["1", "2", "3", "1e400", "-1", "0.5", '"3"', "null", "9007199254740993"])],
				[["cwd"], rng.pick(["7", '"relative/dir"', '"."', '""', '"/work/demo/../demo/app"', '"/work/demo/app/"', '"//work//demo//app"', "null"])],
				[["message", "exitCode"], rng.pick(['"0"', "1e400", "-1", "1.5", "9007199254740993"])],
				[["firstKeptEntryIndex"], rng.pick(["1e400", "-1", "1.5", "0", "9007199254740993"])],
			];
			const [path, value] = rng.pick(cases);
			return editJsonLine(rng, buf, (obj) => {
				if (!setPath(obj, path)) return null;
				return JSON.stringify(obj).replace(JSON.stringify(PLACEHOLDER), value);
			});
		},
	},
	{
		name: "missing-field",
		apply(rng, buf) {
			return editJsonLine(rng, buf, (obj) => {
				deletePath(obj, rng.pick(FIELD_PATHS));
				if (rng.chance(0.3)) deletePath(obj, rng.pick(FIELD_PATHS));
				return JSON.stringify(obj);
			});
		},
	},
	{
		name: "id-collision",
		apply(rng, buf) {
			return editJsonLine(rng, buf, (obj, all) => {
				const ids = idsOf(all);
				if (ids.length === 0) return null;
				const mode = rng.int(4);
				if (mode === 0)
					obj.id = rng.pick(ids); // duplicate id
				else if (mode === 1 && typeof obj.id === "string")
					obj.parentId = obj.id; // self-parent
				else if (mode === 2)
					obj.parentId = rng.pick(ids); // maybe a cycle or a branch
				else obj.id = `${rng.pick(ids)}~dup${1 + rng.int(3)}`; // a literal derived-looking id
				return JSON.stringify(obj);
			});
		},
	},
	{
		name: "not-an-object",
		apply(rng, buf) {
			const lines = splitLines(buf);
			lines.splice(rng.int(lines.length), 0, enc.encode(rng.pick(["[]", "1", '"s"', "null", "true", "[{}]", "{}", "1e400", '"\\u0000"'])));
			return joinLines(lines);
		},
	},
	{
		name: "header-damage",
		apply(rng, buf) {
			const lines = splitLines(buf);
			const choice = rng.int(5);
			if (choice === 0)
				lines.splice(0, 1); // no header
			else if (choice === 1)
				lines.unshift(enc.encode('{"type":"title","title":"slot title\\u0000x","pad":"                "}')); // oh-my-pi slot
			else if (choice === 2)
				lines.unshift(enc.encode("   \t\r")); // blank first line
			else if (choice === 3)
				lines.push(lines[0]!, new Uint8Array(0)); // a second header at the end
			else lines[0] = enc.encode('{"type":"session","id":""}'); // empty id
			return joinLines(lines);
		},
	},
	{
		name: "header-numbers",
		apply(rng, buf) {
			// The header's numbers decide how every later entry is read (version < 2: derived ids).
			const lines = splitLines(buf);
			const text = new TextDecoder().decode(lines[0]);
			const value = rng.pick(["1e400", "-1e400", "1e-400", "2.5", "1.9999999999999999", "9007199254740993", '"3"', "null", "[]"]);
			const replaced = /"version":[^,}]*/.test(text) ? text.replace(/"version":[^,}]*/, `"version":${value}`) : text.replace(/^\{/, `{"version":${value},`);
			lines[0] = enc.encode(replaced);
			return joinLines(lines);
		},
	},
	{
		name: "blank-lines",
		apply(rng, buf) {
			const lines = splitLines(buf);
			lines.splice(rng.int(lines.length), 0, enc.encode(rng.pick(["", " ", "\t", "\r", " \r", "\u00a0"])));
			return joinLines(lines);
		},
	},
	{
		name: "torn-tail",
		apply(rng, buf) {
			const lines = splitLines(buf);
			if (lines.length < 2) return buf;
			const last = lines[lines.length - 2]!;
			return concat(buf, last.subarray(0, rng.int(last.length + 1)));
		},
	},
	{
		name: "deep-nesting",
		apply(rng, buf) {
			const depth = rng.pick([64, 1000, 5000]);
			return editJsonLine(rng, buf, (obj) => {
				if (!setPath(obj, rng.pick([["message", "content"], ["message", "content", "1", "arguments"], ["details"], ["content"]]))) return null;
				const nested = rng.chance(0.5) ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
				return JSON.stringify(obj).replace(JSON.stringify(PLACEHOLDER), nested);
			});
		},
	},
];

// ---------------------------------------------------------------------------------------------
// An independent reading of the bytes: which diagnostics must a new file produce?
// ---------------------------------------------------------------------------------------------

interface ExpectedDiag {
	line: number;
	offset: number;
	kind: string;
}

const decoder = new TextDecoder("utf-8", { fatal: false });

function isPlainObject(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** docs/cli.md: "A malformed line is a diagnostic with file, line and byte offset". */
function expectedDiagnostics(bytes: Uint8Array): ExpectedDiag[] {
	const out: ExpectedDiag[] = [];
	let started = false;
	let header: { version: number } | null = null;
	let start = 0;
	let line = 1;
	let seq = 0;
	let dupCount = 0;
	const ids = new Set<string>();
	for (;;) {
		const nl = bytes.indexOf(LF, start);
		if (nl < 0) break; // torn tail: not durable
		const raw = bytes.subarray(start, nl);
		const offset = start;
		const thisLine = line;
		start = nl + 1;
		line++;
		if ([...raw].every((b) => b === 0x20 || b === 0x09 || b === 0x0d)) continue;
		const text = decoder.decode(raw[raw.length - 1] === 0x0d ? raw.subarray(0, raw.length - 1) : raw);
		let value: unknown;
		try {
			value = JSON.parse(text);
		} catch {
			out.push({ line: thisLine, offset, kind: "malformed-json" });
			continue;
		}
		if (!isPlainObject(value)) {
			out.push({ line: thisLine, offset, kind: "not-an-object" });
			continue;
		}
		if (!header) {
			if (!started && value.type === "title" && thisLine === 1) {
				started = true;
				continue;
			}
			started = true;
			const optionalString = (k: string) => value[k] === undefined || typeof value[k] === "string";
			const valid =
				value.type === "session" &&
				typeof value.id === "string" &&
				value.id.length > 0 &&
				(value.version === undefined || (typeof value.version === "number" && !Number.isNaN(value.version))) &&
				["timestamp", "cwd", "parentSession", "branchedFrom", "title"].every(optionalString);
			if (!valid) {
				out.push({ line: thisLine, offset, kind: "missing-header" });
				break;
			}
			header = { version: typeof value.version === "number" ? value.version : 1 };
			continue;
		}
		const legacy = header.version < 2 || typeof value.id !== "string" || value.id === "";
		let id = legacy ? `v1-${seq}` : (value.id as string);
		if (ids.has(id)) {
			dupCount++;
			out.push({ line: thisLine, offset, kind: "duplicate-id" });
			id = `${id}~dup${dupCount}`;
		}
		ids.add(id);
		seq++;
	}
	return out;
}

// ---------------------------------------------------------------------------------------------
// Probing what was indexed
// ---------------------------------------------------------------------------------------------

const KNOWN_DIAGNOSTIC_KINDS = new Set(["malformed-json", "not-an-object", "missing-header", "duplicate-id", "oversized-line"]);

interface Failure {
	what: string;
	error: string;
}

function guard(failures: Failure[], what: string, fn: () => void): void {
	try {
		fn();
	} catch (err) {
		if (isPiEventsError(err)) return;
		failures.push({ what, error: err instanceof Error ? `${err.name}: ${err.message}\n${err.stack?.split("\n").slice(1, 4).join("\n")}` : String(err) });
	}
}

function probe(db: Database, rng: Rng, failures: Failure[], count: number): number {
	let probes = 0;
	const events = db
		.query("SELECT s.session_id, e.entry_id, e.event_key FROM events e JOIN sessions s ON s.session_key = e.session_key ORDER BY random() LIMIT ?1")
		.all(count) as { session_id: string; entry_id: string; event_key: number }[];
	const roots = (db.query("SELECT DISTINCT cwd_real FROM sessions WHERE cwd_real IS NOT NULL").all() as { cwd_real: string }[]).map((r) => r.cwd_real);
	const scopes: Scope[] = [{ roots: null, current: null }, ...roots.slice(0, 3).map((r) => ({ roots: [r], current: null }))];
	for (const e of events) {
		const scope = rng.pick(scopes);
		const access = new Gate(db, scope);
		const fragments = db.query("SELECT fragment_id FROM fragments WHERE event_key = ?1").all(e.event_key) as { fragment_id: string }[];
		const fragmentId = fragments.length > 0 && rng.chance(0.5) ? rng.pick(fragments).fragment_id : undefined;
		guard(failures, `read ${e.session_id}/${e.entry_id}`, () => {
			const r = readEvent(access, {
				sessionId: e.session_id,
				entryId: e.entry_id,
				fragmentId,
				offset: fragmentId ? rng.int(30_000) : undefined,
				length: fragmentId ? 1 + rng.int(20_000) : undefined,
				order: rng.chance(0.5) ? "branch" : "append",
				before: rng.int(21),
				after: rng.int(21),
			});
			renderRead(r);
			JSON.stringify(r);
		});
		guard(failures, `trace ${e.session_id}/${e.entry_id}`, () => {
			const t = traceEvent(access, e.session_id, e.entry_id);
			renderTrace(t, { color: rng.chance(0.5) });
			JSON.stringify(t);
		});
		probes += 2;
	}
	// Edge rows: extreme or odd column values that damaged input can produce, read, traced and
	// searched in full (random sampling alone rarely lands on them).
	const edges = db
		.query(
			`SELECT s.session_id, e.entry_id, e.event_key, e.byte_offset, e.byte_length, f.path FROM events e
			 JOIN sessions s ON s.session_key = e.session_key JOIN files f ON f.file_key = s.file_key
			 WHERE e.ts_ms < 0 OR e.ts_ms > 8.64e15 OR typeof(e.ts_ms) = 'real' OR e.parent_id = e.entry_id OR e.entry_id LIKE '%~dup%'
			   OR e.exit_code < 0 OR e.exit_code > 255 OR typeof(e.exit_code) = 'real' OR typeof(s.version) = 'real' OR s.version > 3 OR s.version < 1
			   OR s.cwd_real IS NULL OR e.branch_state = 'unknown'
			 ORDER BY random() LIMIT ?1`,
		)
		.all(count) as { session_id: string; entry_id: string; event_key: number; byte_offset: number; byte_length: number; path: string }[];
	for (const e of edges) {
		const access = new Gate(db, scopes[0]!);
		guard(failures, `read (edge) ${e.session_id}/${e.entry_id}`, () => {
			const r = readEvent(access, { sessionId: e.session_id, entryId: e.entry_id, order: rng.chance(0.5) ? "branch" : "append", before: 20, after: 20 });
			renderRead(r);
		});
		guard(failures, `trace (edge) ${e.session_id}/${e.entry_id}`, () => {
			renderTrace(traceEvent(access, e.session_id, e.entry_id), { color: false });
		});
		// A word of the entry's own line, searched within its session: the edge row becomes a hit.
		let word: string | undefined;
		try {
			const fd = readFileSync(e.path).subarray(e.byte_offset, e.byte_offset + e.byte_length);
			const words = new TextDecoder().decode(fd).match(/[A-Za-z]{4,}/g) ?? [];
			word = words.length > 0 ? rng.pick(words) : undefined;
		} catch {
			word = undefined;
		}
		if (word) {
			guard(failures, `search (edge) ${word} in ${e.session_id}`, () => {
				const result = search(new Gate(db, scopes[0]!), { query: word!, filters: { sessionIds: [e.session_id] }, limit: 100 });
				renderHits(result.hits, { color: false });
			});
		}
		probes += 3;
	}
	const vocab = (db.query("SELECT term FROM fts_terms ORDER BY random() LIMIT ?1").all(count * 2) as { term: string }[]).map((r) => r.term);
	const garbage = ['"', "a*", "NEAR(a b)", "x:y", "-", "(", "'; DROP TABLE events; --", "\u0000", "\uE001abc", "e\u0301", "数据库", "~dup1", "..", "/"];
	for (let i = 0; i < count; i++) {
		const terms: string[] = [];
		for (let n = 1 + rng.int(3); n > 0; n--) terms.push(vocab.length > 0 && rng.chance(0.8) ? rng.pick(vocab) : rng.pick(garbage));
		const query = rng.chance(0.2) ? `"${terms.join(" ")}"` : terms.join(" ");
		const scope = rng.pick(scopes);
		const filters = rng.chance(0.3) ? { isError: rng.chance(0.5), branchStates: [rng.pick(["selected", "alternate", "unknown"] as const)] } : {};
		guard(failures, `search ${JSON.stringify(query)}`, () => {
			const result = search(new Gate(db, scope), { query, filters, limit: 1 + rng.int(100) });
			renderHits(result.hits, { color: rng.chance(0.5) });
			JSON.stringify(result);
		});
		probes++;
	}
	return probes;
}

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

function checkReport(report: SyncReport, sourceRoot: string, failures: Failure[]): void {
	for (const p of report.problems) {
		// The only expected file-level problem: a changed file that cannot be parsed keeps its last good index.
		if (!/^kept the last known-good index of .*: it changed and /.test(p)) failures.push({ what: "sync problem", error: p });
	}
	expect(report.diagnosticCount).toBe(report.diagnostics.length);
	for (const d of report.diagnostics) {
		const ok =
			typeof d.file === "string" &&
			d.file.startsWith(sourceRoot) &&
			Number.isInteger(d.line) &&
			d.line >= 1 &&
			Number.isInteger(d.offset) &&
			d.offset >= 0 &&
			KNOWN_DIAGNOSTIC_KINDS.has(d.kind) &&
			typeof d.detail === "string";
		if (!ok) failures.push({ what: "diagnostic shape", error: JSON.stringify(d) });
	}
}

describe("fuzzed session files", () => {
	test(
		`${ROUNDS} rounds of mutated fixtures: no throw, exact diagnostics, queries safe, index intact`,
		() => {
			const rng = new Rng(SEED);
			const dir = makeTempDir("pi-events-fuzz-");
			const sessions = join(dir, "sessions");
			mkdirSync(sessions, { recursive: true });
			const sources: SourceDir[] = [{ path: sessions, origin: "flag" }];
			const db = openIndex(join(dir, "index.db"));
			const failures: Failure[] = [];
			const diagMismatches: string[] = [];

			const fixtures = allFixtureFiles().map((f) => ({ name: f.name, bytes: new Uint8Array(readFileSync(f.path)) }));
			// The 300 KB big-output fixture is used, but rarely: it dominates the time per case.
			const weighted = fixtures.flatMap((f) => (f.bytes.length > 100_000 ? [f] : [f, f, f, f, f]));
			const mutate = (bytes: Uint8Array): { bytes: Uint8Array; ops: string[] } => {
				let out = bytes;
				const ops: string[] = [];
				for (let n = 1 + rng.int(4); n > 0; n--) {
					const m = rng.pick(MUTATIONS);
					ops.push(m.name);
					out = m.apply(rng, out);
				}
				return { bytes: out, ops };
			};

			const evolvingDir = join(sessions, "evolving");
			mkdirSync(evolvingDir, { recursive: true });
			const evolving: string[] = [];
			for (let i = 0; i < EVOLVING; i++) {
				const p = join(evolvingDir, `evolving-${i}.jsonl`);
				writeFileSync(p, rng.pick(weighted).bytes);
				evolving.push(p);
			}

			let cases = 0;
			let probes = 0;
			let totalDiagnostics = 0;
			const opCounts = new Map<string, number>();
			const started = performance.now();
			for (let round = 0; round < ROUNDS; round++) {
				const roundDir = join(sessions, `round-${round}`);
				mkdirSync(roundDir, { recursive: true });
				const written = new Map<string, { bytes: Uint8Array; ops: string[] }>();
				for (let i = 0; i < NEW_PER_ROUND; i++) {
					const m = mutate(rng.pick(weighted).bytes);
					for (const op of m.ops) opCounts.set(op, (opCounts.get(op) ?? 0) + 1);
					const path = join(roundDir, `case-${round}-${i}.jsonl`);
					writeFileSync(path, m.bytes);
					written.set(path, m);
					cases++;
				}
				// Evolve the in-place files: append (clean or damaged lines, torn tails), rewrite, truncate, remove.
				for (const path of evolving) {
					const current = existsSync(path) ? new Uint8Array(readFileSync(path)) : null;
					const action = rng.int(8);
					if (current === null || action === 0) writeFileSync(path, mutate(rng.pick(weighted).bytes).bytes);
					else if (action === 1) writeFileSync(path, current.subarray(0, rng.int(current.length + 1)));
					else if (action === 2) rmSync(path);
					else if (action === 3) writeFileSync(path, mutate(current).bytes);
					else {
						// Append lines of another fixture (clean or damaged), maybe leaving a torn tail.
						const donor = splitLines(rng.chance(0.5) ? rng.pick(weighted).bytes : mutate(rng.pick(weighted).bytes).bytes);
						const from = rng.int(donor.length);
						let suffix = joinLines([...donor.slice(from, from + 1 + rng.int(6)), new Uint8Array(0)]);
						if (rng.chance(0.3)) suffix = suffix.subarray(0, rng.int(suffix.length + 1));
						writeFileSync(path, concat(current, suffix));
					}
					cases++;
				}
				// Forget older rounds now and then: the remove path on damaged sessions.
				if (round >= 2 && rng.chance(0.5)) rmSync(join(sessions, `round-${round - 2}`), { recursive: true, force: true });

				let report: SyncReport | undefined;
				try {
					report = syncIndex(db, { sourceDirs: sources, maxDiagnostics: 1_000_000 });
				} catch (err) {
					failures.push({ what: `syncIndex round ${round}`, error: err instanceof Error ? `${err.name}: ${err.message}\n${err.stack}` : String(err) });
					continue;
				}
				checkReport(report, sessions, failures);
				totalDiagnostics += report.diagnosticCount;

				// Exact diagnostics for the new files of this round.
				const byFile = new Map<string, ExpectedDiag[]>();
				for (const d of report.diagnostics) {
					if (!written.has(d.file)) continue;
					const list = byFile.get(d.file) ?? [];
					list.push({ line: d.line, offset: d.offset, kind: d.kind });
					byFile.set(d.file, list);
				}
				for (const [path, m] of written) {
					let expected = expectedDiagnostics(m.bytes);
					let actual = byFile.get(path) ?? [];
					// Which later line collides with a derived id depends on how ids are derived: when a
					// literal id looks derived (x~dup1), duplicate-id diagnostics are not compared.
					if (/~dup\d+"/.test(new TextDecoder().decode(m.bytes))) {
						expected = expected.filter((d) => d.kind !== "duplicate-id");
						actual = actual.filter((d) => d.kind !== "duplicate-id");
					}
					const key = (d: ExpectedDiag) => `${d.kind}@${d.line}:${d.offset}`;
					const e = expected.map(key).sort().join(" ");
					const a = actual.map(key).sort().join(" ");
					if (e !== a && diagMismatches.length < 10) diagMismatches.push(`${path} [${m.ops.join(", ")}]\n  expected: ${e}\n  actual:   ${a}`);
				}
				probes += probe(db, rng, failures, PROBES_PER_ROUND);
				// Keep fuzzing through known failures (every round adds coverage); only a flood stops the run.
				if (failures.length > 20_000) break;
			}
			const elapsed = performance.now() - started;

			// Integrity at the end (collected, so the summary above always prints).
			const integrityProblems: string[] = [];
			const integrity = (db.query("PRAGMA integrity_check").all() as { integrity_check: string }[]).map((r) => r.integrity_check);
			if (integrity.join() !== "ok") integrityProblems.push(`integrity_check: ${integrity.slice(0, 5).join("; ")}`);
			try {
				db.run("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 0)");
			} catch (err) {
				integrityProblems.push(`fts integrity-check: ${String(err)}`);
			}
			const zero: [string, string][] = [
				["fragments without an event", "SELECT count(*) AS n FROM fragments f LEFT JOIN events e ON e.event_key = f.event_key WHERE e.event_key IS NULL"],
				["events without a session", "SELECT count(*) AS n FROM events e LEFT JOIN sessions s ON s.session_key = e.session_key WHERE s.session_key IS NULL"],
				["sessions without a file", "SELECT count(*) AS n FROM sessions s LEFT JOIN files f ON f.file_key = s.file_key WHERE f.file_key IS NULL"],
				[
					"file evidence without an event",
					"SELECT count(*) AS n FROM event_files ef LEFT JOIN events e ON e.event_key = ef.event_key WHERE e.event_key IS NULL",
				],
				["FTS rows without a fragment", "SELECT count(*) AS n FROM fts f WHERE f.rowid NOT IN (SELECT frag_key FROM fragments)"],
				["fragments without an FTS row", "SELECT (SELECT count(*) FROM fragments) - (SELECT count(*) FROM fts) AS n"],
				[
					"wrong entry counts",
					"SELECT count(*) AS n FROM sessions s WHERE s.entry_count != (SELECT count(*) FROM events e WHERE e.session_key = s.session_key)",
				],
			];
			for (const [what, sql] of zero) {
				const n = (db.query(sql).get() as { n: number }).n;
				if (n !== 0) integrityProblems.push(`${what}: ${n}`);
			}
			for (const r of db.query("SELECT path FROM files").all() as { path: string }[])
				if (!existsSync(r.path)) integrityProblems.push(`indexed file gone: ${r.path}`);

			// The index maintained through thousands of damaged appends, rewrites and removals equals a
			// fresh index of the same files (files kept last-good excluded: they differ by design).
			const kept = new Set((db.query("SELECT path FROM files WHERE status = 'failed'").all() as { path: string }[]).map((r) => r.path));
			const freshDb = openIndex(join(dir, "fresh.db"));
			const freshReport = syncIndex(freshDb, { sourceDirs: sources, maxDiagnostics: 0 });
			for (const problem of freshReport.problems) failures.push({ what: "fresh index problem", error: problem });
			const strip = (dump: Record<string, unknown[]>) => {
				const isKept = (row: unknown): boolean =>
					JSON.stringify(row)
						.split('"')
						.some((part) => kept.has(part));
				const out: Record<string, unknown[]> = {};
				for (const [table, rows] of Object.entries(dump)) {
					if (table === "meta" || table === "fts_terms") continue; // vocab depends on kept files' stale terms
					out[table] = rows.filter((r) => !isKept(r));
				}
				return out;
			};
			const incremental = strip(dumpIndex(db));
			const fresh = strip(dumpIndex(freshDb));
			freshDb.close();
			db.close();
			const differing = Object.keys(fresh).filter((t) => JSON.stringify(fresh[t]) !== JSON.stringify(incremental[t]));
			const firstDiff = differing.map((t) => {
				const a = new Set((incremental[t] ?? []).map((r) => JSON.stringify(r)));
				const b = new Set((fresh[t] ?? []).map((r) => JSON.stringify(r)));
				return `${t}: only incremental ${[...a]
					.filter((x) => !b.has(x))
					.slice(0, 2)
					.join(" | ")
					.slice(0, 1500)}; only fresh ${[...b]
					.filter((x) => !a.has(x))
					.slice(0, 2)
					.join(" | ")
					.slice(0, 1500)}`;
			});

			const ops = [...opCounts.entries()]
				.sort((a, b) => b[1] - a[1])
				.map(([k, v]) => `${k} ${v}`)
				.join(", ");
			console.log(
				`fuzz: ${cases} cases (seed ${SEED}, ${ROUNDS} rounds, ${probes} query probes, ${totalDiagnostics} diagnostics) in ${(elapsed / 1000).toFixed(1)} s`,
			);
			console.log(`fuzz: mutations applied: ${ops}`);
			// One line per distinct failure (message without temp paths, and its first frame).
			const distinct = new Map<string, { example: Failure; n: number }>();
			for (const f of failures) {
				const lines = f.error.split("\n");
				const key =
					`${f.what.split(" ")[0]}: ${lines[0]!.replace(/\/tmp\/\S+/g, "<file>")} ${lines.find((l) => l.includes("/src/")) ?? lines.find((l) => l.includes(" at ")) ?? ""}`
						.replace(/\s+/g, " ")
						.replace(/:\d+:\d+\)/, ")")
						.trim();
				const seen = distinct.get(key);
				if (seen) seen.n++;
				else distinct.set(key, { example: f, n: 1 });
			}
			if (distinct.size) {
				console.log(
					`fuzz failures: ${failures.length}, ${distinct.size} distinct:\n${[...distinct.values()].map((d) => `- ${d.n}× ${d.example.what}: ${d.example.error}`).join("\n")}`,
				);
			}
			if (diagMismatches.length) console.log(`fuzz diagnostic mismatches:\n${diagMismatches.join("\n")}`);
			if (differing.length) console.log(`fuzz incremental vs fresh:\n${firstDiff.join("\n")}`);

			expect(cases).toBeGreaterThanOrEqual(LONG ? 100_000 : 10_000);
			expect([...distinct.keys()]).toEqual([]);
			expect(diagMismatches).toEqual([]);
			expect(differing).toEqual([]);
			expect(integrityProblems).toEqual([]);
		},
		LONG ? 1_800_000 : 120_000,
	);
});
