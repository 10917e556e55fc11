import { afterAll, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readLineAt, SourceFiles } from "../../src/source/read.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

const openFds = () => readdirSync("/proc/self/fd").length;

test.skipIf(process.platform !== "linux")("an answer's reads open each file once and close them all at the end", () => {
	const dir = makeTempDir();
	const paths = [join(dir, "a.jsonl"), join(dir, "b.jsonl")];
	for (const [i, p] of paths.entries()) writeFileSync(p, `{"n":${i}}\n{"second":${i}}\n`);
	const before = openFds();
	const files = new SourceFiles();
	const texts: string[] = [];
	for (let round = 0; round < 3; round++) {
		for (const p of paths) texts.push(new TextDecoder().decode(files.readLineAt(p, 8, 13)));
	}
	// Two files, six reads: two descriptors.
	expect(openFds() - before).toBe(2);
	expect(texts).toEqual(Array(3).fill(['{"second":0}\n', '{"second":1}\n']).flat());
	expect(files.readLineAt(paths[0]!, 0, 8)).toEqual(readLineAt(paths[0]!, 0, 8));
	files.close();
	expect(openFds()).toBe(before);
});
