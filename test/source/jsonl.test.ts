/**
 * JSONL framing: only LF ends a record, a trailing CR is stripped on decode, U+2028/U+2029
 * inside strings never split, a torn tail is never returned, offsets are bytes and line numbers
 * are physical. Checked on the pure framer and on the streaming file reader.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodeLine, frameLines, isBlankLine } from "../../src/source/jsonl.ts";
import { readDurableLines } from "../../src/source/read.ts";
import { cleanupTempDirs, legacyFixture, makeTempDir } from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

const enc = new TextEncoder();

interface Expected {
	offset: number;
	length: number;
	line: number;
	text: string;
}

interface FrameCase {
	name: string;
	input: string;
	baseOffset?: number;
	firstLine?: number;
	lines: Expected[];
	consumed: number;
}

const L2028 = "\u2028";
const L2029 = "\u2029";

const cases: FrameCase[] = [
	{ name: "empty buffer", input: "", lines: [], consumed: 0 },
	{ name: "one LF line", input: "a\n", lines: [{ offset: 0, length: 1, line: 1, text: "a" }], consumed: 2 },
	{
		name: "two LF lines",
		input: "a\nbb\n",
		lines: [
			{ offset: 0, length: 1, line: 1, text: "a" },
			{ offset: 2, length: 2, line: 2, text: "bb" },
		],
		consumed: 5,
	},
	{
		name: "CRLF: CR counted in length, stripped on decode",
		input: "ab\r\ncd\r\n",
		lines: [
			{ offset: 0, length: 3, line: 1, text: "ab" },
			{ offset: 4, length: 3, line: 2, text: "cd" },
		],
		consumed: 8,
	},
	{
		name: "mixed LF and CRLF",
		input: "a\r\nb\nc\r\n",
		lines: [
			{ offset: 0, length: 2, line: 1, text: "a" },
			{ offset: 3, length: 1, line: 2, text: "b" },
			{ offset: 5, length: 2, line: 3, text: "c" },
		],
		consumed: 8,
	},
	{ name: "bare CR is not a separator", input: "a\rb\n", lines: [{ offset: 0, length: 3, line: 1, text: "a\rb" }], consumed: 4 },
	{ name: "only one trailing CR is stripped", input: "a\r\r\n", lines: [{ offset: 0, length: 3, line: 1, text: "a\r" }], consumed: 4 },
	{
		name: "U+2028 inside a JSON string does not split",
		input: `{"t":"x${L2028}y"}\n`,
		lines: [{ offset: 0, length: enc.encode(`{"t":"x${L2028}y"}`).length, line: 1, text: `{"t":"x${L2028}y"}` }],
		consumed: enc.encode(`{"t":"x${L2028}y"}\n`).length,
	},
	{
		name: "U+2029 inside a JSON string does not split",
		input: `{"t":"p${L2029}q"}\n{"n":2}\n`,
		lines: [
			{ offset: 0, length: enc.encode(`{"t":"p${L2029}q"}`).length, line: 1, text: `{"t":"p${L2029}q"}` },
			{ offset: enc.encode(`{"t":"p${L2029}q"}\n`).length, length: 7, line: 2, text: `{"n":2}` },
		],
		consumed: enc.encode(`{"t":"p${L2029}q"}\n{"n":2}\n`).length,
	},
	{ name: "torn tail only", input: '{"a":1', lines: [], consumed: 0 },
	{
		name: "torn tail after complete lines is not returned",
		input: '{"a":1}\n{"b":',
		lines: [{ offset: 0, length: 7, line: 1, text: '{"a":1}' }],
		consumed: 8,
	},
	{
		name: "torn tail ending in CR (CRLF cut between CR and LF)",
		input: '{"a":1}\r\n{"b":2}\r',
		lines: [{ offset: 0, length: 8, line: 1, text: '{"a":1}' }],
		consumed: 9,
	},
	{
		name: "empty lines are framed with length 0 and counted",
		input: "\n\na\n\n",
		lines: [
			{ offset: 0, length: 0, line: 1, text: "" },
			{ offset: 1, length: 0, line: 2, text: "" },
			{ offset: 2, length: 1, line: 3, text: "a" },
			{ offset: 4, length: 0, line: 4, text: "" },
		],
		consumed: 5,
	},
	{
		name: "offsets are bytes, not characters (multi-byte UTF-8)",
		input: "é数\nx\n",
		lines: [
			{ offset: 0, length: 5, line: 1, text: "é数" },
			{ offset: 6, length: 1, line: 2, text: "x" },
		],
		consumed: 8,
	},
	{
		name: "base offset and first line shift every locator",
		input: "a\nb\n",
		baseOffset: 1000,
		firstLine: 41,
		lines: [
			{ offset: 1000, length: 1, line: 41, text: "a" },
			{ offset: 1002, length: 1, line: 42, text: "b" },
		],
		consumed: 4,
	},
];

describe("frameLines", () => {
	test.each(cases)("$name", (c) => {
		const buf = enc.encode(c.input);
		const { lines, consumed } = frameLines(buf, c.baseOffset ?? 0, c.firstLine ?? 1);
		expect(consumed).toBe(c.consumed);
		expect(lines.map((l) => ({ offset: l.offset, length: l.length, line: l.line, text: decodeLine(l.bytes) }))).toEqual(c.lines);
		// The bytes of each line are exactly the source bytes at its locator.
		for (const l of lines) {
			const rel = l.offset - (c.baseOffset ?? 0);
			expect(Buffer.from(l.bytes).equals(Buffer.from(buf.subarray(rel, rel + l.length)))).toBe(true);
			expect(l.bytes.length).toBe(l.length);
		}
	});

	test("framing the real CRLF/U+2028 fixture gives one record per CRLF and keeps the separators in the text", () => {
		const buf = readFileSync(legacyFixture("crlf-u2028"));
		const crlf = buf.toString("latin1").split("\r\n").length - 1;
		const { lines, consumed } = frameLines(buf, 0, 1);
		expect(lines.length).toBe(crlf);
		expect(consumed).toBe(buf.length);
		const texts = lines.map((l) => decodeLine(l.bytes));
		for (const t of texts) {
			expect(t.endsWith("\r")).toBe(false);
			expect(() => JSON.parse(t)).not.toThrow();
		}
		const all = texts.join("\n");
		expect(all).toContain(L2028);
		expect(all).toContain(L2029);
	});
});

describe("decodeLine", () => {
	test.each([
		["plain", "abc", "abc"],
		["strips one trailing CR", "abc\r", "abc"],
		["keeps an inner CR", "a\rb", "a\rb"],
		["keeps U+2028", `a${L2028}b`, `a${L2028}b`],
		["empty", "", ""],
		["lone CR", "\r", ""],
	])("%s", (_name, input, expected) => {
		expect(decodeLine(enc.encode(input))).toBe(expected);
	});

	test("invalid UTF-8 becomes U+FFFD instead of throwing", () => {
		expect(decodeLine(new Uint8Array([0x61, 0xff, 0x62]))).toBe("a\uFFFDb");
	});
});

describe("isBlankLine", () => {
	test.each([
		["", true],
		["   ", true],
		["\t \t", true],
		["\r", true],
		[" \r", true],
		[" x ", false],
		["{}", false],
		[L2028, false],
	])("%j → %p", (input, expected) => {
		expect(isBlankLine(enc.encode(input))).toBe(expected);
	});
});

describe("readDurableLines (file reader)", () => {
	const dir = makeTempDir();

	function readAll(path: string, start = 0, firstLine = 1) {
		const got: { offset: number; length: number; line: number; text: string }[] = [];
		const res = readDurableLines(path, start, firstLine, (lines) => {
			for (const l of lines) got.push({ offset: l.offset, length: l.length, line: l.line, text: decodeLine(l.bytes) });
		});
		return { got, res };
	}

	test.each(cases.filter((c) => !c.baseOffset))("file: $name", (c) => {
		const path = join(dir, "case.jsonl");
		writeFileSync(path, c.input);
		const { got, res } = readAll(path);
		expect(got).toEqual(c.lines);
		expect(res.end).toBe(c.consumed);
		expect(res.nextLine).toBe(1 + c.lines.length);
		expect(res.stat.size).toBe(enc.encode(c.input).length);
	});

	test("resuming at the durable end returns only the new lines, with continuing line numbers", () => {
		const path = join(dir, "resume.jsonl");
		writeFileSync(path, '{"a":1}\n{"b":2}\n{"c":');
		const first = readAll(path);
		expect(first.got.map((l) => l.text)).toEqual(['{"a":1}', '{"b":2}']);
		expect(first.res.end).toBe(16);
		writeFileSync(path, '{"a":1}\n{"b":2}\n{"c":3}\n{"d":4}\n');
		const second = readAll(path, first.res.end, first.res.nextLine);
		expect(second.got).toEqual([
			{ offset: 16, length: 7, line: 3, text: '{"c":3}' },
			{ offset: 24, length: 7, line: 4, text: '{"d":4}' },
		]);
		expect(second.res.end).toBe(32);
		expect(second.res.nextLine).toBe(5);
	});

	test("resuming with nothing new returns no lines and the same end", () => {
		const path = join(dir, "same.jsonl");
		writeFileSync(path, '{"a":1}\n{"b"');
		const { got, res } = readAll(path, 8, 2);
		expect(got).toEqual([]);
		expect(res.end).toBe(8);
		expect(res.nextLine).toBe(2);
	});

	test("lines spanning the 4 MiB read chunk and a line larger than one chunk keep exact locators", () => {
		const path = join(dir, "big.jsonl");
		const parts: string[] = [];
		for (let i = 0; i < 7; i++) parts.push(JSON.stringify({ i, pad: "x".repeat(900_000 + i * 13) }));
		parts.push(JSON.stringify({ huge: "y".repeat(5 * 1024 * 1024) }));
		parts.push(JSON.stringify({ after: "é" }));
		const text = `${parts.join("\n")}\n{"torn":`;
		writeFileSync(path, text);
		const { got, res } = readAll(path);
		let offset = 0;
		const expected = parts.map((p, i) => {
			const len = Buffer.byteLength(p);
			const e = { offset, length: len, line: i + 1, text: p };
			offset += len + 1;
			return e;
		});
		expect(got.length).toBe(expected.length);
		for (let i = 0; i < expected.length; i++) {
			expect({ ...got[i]!, text: got[i]!.text.length }).toEqual({ ...expected[i]!, text: expected[i]!.text.length });
			expect(got[i]!.text === expected[i]!.text).toBe(true);
		}
		expect(res.end).toBe(offset);
		expect(res.nextLine).toBe(parts.length + 1);
	});
});

describe("the streaming reader reuses its buffer from file to file", () => {
	/** Every line of `path` as the reader hands it over, decoded at once (the views are reused). */
	function readAll(path: string): string[] {
		const out: string[] = [];
		readDurableLines(path, 0, 1, (lines) => {
			for (const l of lines) out.push(decodeLine(l.bytes));
		});
		return out;
	}

	test("files of every size in turn, each read whole and unchanged, while Buffer's shared pool is in use", () => {
		const dir = makeTempDir("pi-events-reuse-");
		// A long file (several 4 MB chunks), tiny ones (Buffer's pool size), one line longer than a chunk, then small again.
		const shapes: string[][] = [
			Array.from({ length: 3000 }, (_, i) => `{"n":${i},"text":"${"a".repeat(3000 + (i % 7))}"}`),
			['{"tiny":1}'],
			['{"tiny":2}', '{"tiny":3}'],
			[`{"long":"${"b".repeat(5 * 1024 * 1024)}"}`, '{"after":"long"}'],
			Array.from({ length: 50 }, (_, i) => `{"small":${i}}`),
			['{"tiny":4}'],
		];
		const paths = shapes.map((lines, i) => {
			const path = join(dir, `f${i}.jsonl`);
			writeFileSync(path, `${lines.join("\n")}\n`);
			return path;
		});
		// Other code allocating from the shared pool between reads must never see its bytes change.
		const pooled = Buffer.from("pooled bytes stay as they were");
		for (let round = 0; round < 2; round++) {
			for (const [i, path] of paths.entries()) expect(readAll(path)).toEqual(shapes[i]!);
			expect(pooled.toString()).toBe("pooled bytes stay as they were");
		}
	});
});
