#!/usr/bin/env bun
/**
 * A live pi-like writer for the live-writers suite (a separate process, so its appends race with
 * `pi-events index` and `serve` for real):
 *
 *   bun test/reliability/writer.ts '{"files":[...],"seed":1,"durationMs":8000}'
 *       appends pi 1.x entries to its files until the time is up; some lines are written in 2-4
 *       pieces cut at arbitrary BYTE offsets (inside UTF-8 sequences, just before the LF) with
 *       pauses between them. Prints {"lines":{file:count}} and exits 0.
 *   bun test/reliability/writer.ts '{"files":[one],"seed":1,"die":5}'
 *       appends 5 complete entries, then the first part of a 6th, prints "torn" and waits to be
 *       killed (a pi process that dies mid-write).
 */
import { appendFileSync } from "node:fs";
import { lastEntryId, piEntry, Rng, sleep } from "./util.ts";

interface Config {
	files: string[];
	seed: number;
	durationMs?: number;
	/** Chance that a line is written in pieces. */
	pieces?: number;
	die?: number;
	/** Planted tag prefix (unique per writer). */
	tag?: string;
}

const config = JSON.parse(process.argv[2] ?? "{}") as Config;
const rng = new Rng(config.seed);
const prefix = config.tag ?? `zqw${config.seed}n`;
let serial = 0;
let clock = Date.parse("2026-11-25T08:00:00.000Z") + config.seed * 1000;
const parents = new Map<string, string | null>(config.files.map((f) => [f, lastEntryId(f)]));

function nextLine(file: string): Buffer {
	clock += 500 + rng.int(5000);
	const id = rng.hex(8);
	const entry = piEntry(rng, id, parents.get(file) ?? null, clock, `${prefix}${++serial}x`);
	// Non-ASCII text, so that byte cuts can fall inside a UTF-8 sequence.
	if (entry.type === "message") (entry as { note?: string }).note = "café 数据库 ✓";
	parents.set(file, id);
	return Buffer.from(`${JSON.stringify(entry)}\n`);
}

if (config.die !== undefined) {
	const file = config.files[0]!;
	for (let i = 0; i < config.die; i++) appendFileSync(file, nextLine(file));
	const line = nextLine(file);
	appendFileSync(file, line.subarray(0, Math.floor(line.length / 2)));
	process.stdout.write("torn\n");
	await sleep(3_600_000);
}

const lines: Record<string, number> = {};
const until = Date.now() + (config.durationMs ?? 5000);
while (Date.now() < until) {
	const file = rng.pick(config.files);
	const line = nextLine(file);
	if (rng.chance(config.pieces ?? 0.35)) {
		const n = rng.range(2, 4);
		const cuts = new Set<number>();
		if (rng.chance(0.3)) cuts.add(line.length - 1); // the LF arrives on its own
		while (cuts.size < n - 1) cuts.add(rng.range(1, line.length - 1));
		let at = 0;
		for (const cut of [...cuts].sort((a, b) => a - b)) {
			appendFileSync(file, line.subarray(at, cut));
			at = cut;
			await sleep(rng.range(2, 60));
		}
		appendFileSync(file, line.subarray(at));
	} else {
		appendFileSync(file, line);
	}
	lines[file] = (lines[file] ?? 0) + 1;
	await sleep(rng.int(15));
}
process.stdout.write(`${JSON.stringify({ lines })}\n`);
