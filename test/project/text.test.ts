/**
 * groupThousands writes integers as toLocaleString("en-US") does (the omission marker, counts in
 * reports and hints), without ICU.
 */
import { expect, test } from "bun:test";
import { groupThousands, OMISSION_MARKER_RE } from "../../src/project/text.ts";

test("groupThousands matches toLocaleString('en-US') for integers of every length and sign", () => {
	const values = [0, 1, 9, 10, 99, 100, 999, 1_000, 1_001, 9_999, 10_000, 123_456, 999_999, 1_000_000, 1_234_567, 2 ** 31, Number.MAX_SAFE_INTEGER];
	let seed = 7;
	for (let i = 0; i < 2_000; i++) {
		seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
		values.push(seed % 10 ** (1 + (i % 12)));
	}
	for (const n of [...values, ...values.map((v) => -v).filter((v) => v !== 0)]) {
		expect(groupThousands(n)).toBe(n.toLocaleString("en-US"));
	}
});

test("the omission marker it writes is the one OMISSION_MARKER_RE finds", () => {
	expect(`a\n[… ${groupThousands(1_234_567)} characters omitted …]\nb`).toMatch(OMISSION_MARKER_RE);
});
