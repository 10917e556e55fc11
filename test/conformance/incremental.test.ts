/**
 * THE key invariant of incremental indexing: however a session file reached its current bytes
 * (grown line by line, lines written in two pieces, truncated, rewritten), the index equals a
 * fresh index built from the current bytes in one go. Checked after every step, for every
 * fixture file (pi-generated and legacy/broken shapes).
 */
import type { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync, renameSync, truncateSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { type SyncReport, syncIndex } from "../../src/sync/sync.ts";
import type { SourceDir } from "../../src/source/discover.ts";
import { openIndex } from "../../src/store/db.ts";
import { allFixtureFiles, cleanupTempDirs, dumpIndex, makeTempDir } from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

/** Split bytes into LF-terminated pieces (the last piece may lack its LF: a torn tail). */
function splitLines(buf: Buffer): Buffer[] {
	const out: Buffer[] = [];
	let start = 0;
	for (;;) {
		const nl = buf.indexOf(0x0a, start);
		if (nl < 0) break;
		out.push(buf.subarray(start, nl + 1));
		start = nl + 1;
	}
	if (start < buf.length) out.push(buf.subarray(start));
	return out;
}

interface Harness {
	path: string;
	sources: SourceDir[];
	db: Database;
	sync(): SyncReport;
	/** Assert the incremental index equals a fresh one-shot index of the file as it is now. */
	expectEqualToRebuild(step: string): void;
}

function harness(fixture: string): Harness {
	const dir = makeTempDir("pi-events-conf-");
	const sessions = join(dir, "sessions");
	const sub = join(sessions, "--work-demo--");
	require("node:fs").mkdirSync(sub, { recursive: true });
	const path = join(sub, basename(fixture));
	const sources: SourceDir[] = [{ path: sessions, origin: "flag" }];
	const db = openIndex(join(dir, "index", "incremental.db"));
	return {
		path,
		sources,
		db,
		sync: () => syncIndex(db, { sourceDirs: sources }),
		expectEqualToRebuild(step: string) {
			const fresh = openIndex(":memory:");
			try {
				syncIndex(fresh, { sourceDirs: sources });
				const got = dumpIndex(db);
				const want = dumpIndex(fresh);
				if (!Bun.deepEquals(got, want)) {
					// toEqual gives the readable diff; the log line says which step diverged.
					console.error(`${basename(path)}: incremental index differs from a fresh rebuild after step "${step}"`);
					expect(got).toEqual(want);
				}
			} finally {
				fresh.close();
			}
		},
	};
}

const fixtures = allFixtureFiles();

describe("incremental index == fresh rebuild, at every step of growth", () => {
	test.each(fixtures.map((f) => [`${f.group}/${f.name}`, f.path] as const))("%s", (_name, fixture) => {
		const bytes = readFileSync(fixture);
		const pieces = splitLines(bytes);
		const h = harness(fixture);
		try {
			writeFileSync(h.path, "");
			h.sync();
			h.expectEqualToRebuild("empty file");
			pieces.forEach((piece, k) => {
				// Odd lines arrive in two writes (first half without LF); every fourth line is cut
				// just before its LF (between CR and LF for CRLF files).
				const cut = k % 2 === 1 ? Math.floor(piece.length / 2) : k % 4 === 0 && piece.length > 1 ? piece.length - 1 : 0;
				if (cut > 0) {
					appendFileSync(h.path, piece.subarray(0, cut));
					h.sync();
					h.expectEqualToRebuild(`line ${k + 1}: first ${cut} bytes`);
					appendFileSync(h.path, piece.subarray(cut));
				} else {
					appendFileSync(h.path, piece);
				}
				h.sync();
				h.expectEqualToRebuild(`line ${k + 1} complete`);
			});
			expect(readFileSync(h.path).equals(bytes)).toBe(true);

			// A no-op sync changes nothing.
			const noop = h.sync();
			expect(noop.bytesRead).toBe(0);
			h.expectEqualToRebuild("no-op");

			// Truncate to half (same inode), then rewrite the whole file in place.
			truncateSync(h.path, Math.floor(bytes.length / 2));
			h.sync();
			h.expectEqualToRebuild("truncated to half");
			writeFileSync(h.path, bytes);
			h.sync();
			h.expectEqualToRebuild("rewritten in place");

			// Atomic replacement with identical bytes (pi's migration rewrite): new inode.
			writeFileSync(`${h.path}.tmp`, bytes);
			renameSync(`${h.path}.tmp`, h.path);
			h.sync();
			h.expectEqualToRebuild("replaced by rename");
		} finally {
			h.db.close();
		}
	});
});

describe("incremental index == fresh rebuild, all fixtures in one sessions dir", () => {
	test("grown in round-robin across files (interleaved appends)", () => {
		const h = harness("unused.jsonl");
		const dir = join(h.path, "..");
		// cycle.jsonl is left out here: it has its own test above, and this one checks cross-file effects.
		const files = fixtures
			.filter((f) => f.name !== "cycle.jsonl")
			.map((f) => ({ dest: join(dir, `${f.group}-${f.name}`), pieces: splitLines(readFileSync(f.path)) }));
		try {
			for (const f of files) writeFileSync(f.dest, "");
			const maxLines = Math.max(...files.map((f) => f.pieces.length));
			for (let k = 0; k < maxLines; k++) {
				for (const f of files) if (k < f.pieces.length) appendFileSync(f.dest, f.pieces[k]!);
				h.sync();
				if (k % 5 === 4 || k === maxLines - 1) h.expectEqualToRebuild(`round ${k + 1}`);
			}
		} finally {
			h.db.close();
		}
	});
});

// ---------------------------------------------------------------------------------------------
// Synthetic adversarial growth: shapes the fixtures do not cover, grown one line at a time.
// ---------------------------------------------------------------------------------------------

const HEADER = { type: "session", version: 3, id: "11111111-2222-4333-8444-555555555555", timestamp: "2026-05-01T00:00:00.000Z", cwd: "/work/demo/synthetic" };
let clock = 0;
function msg(id: string, parentId: string | null, role: "user" | "assistant", text: string) {
	clock++;
	const timestamp = new Date(Date.UTC(2026, 4, 1, 0, 0, clock)).toISOString();
	const message =
		role === "user"
			? { role, content: [{ type: "text", text }], timestamp: Date.parse(timestamp) }
			: { role, content: [{ type: "text", text }], provider: "anthropic", model: "m", stopReason: "stop", timestamp: Date.parse(timestamp) };
	return { type: "message", id, parentId, timestamp, message };
}
const entry = (type: string, id: string, parentId: string | null, extra: Record<string, unknown> = {}) => ({
	type,
	id,
	parentId,
	timestamp: "2026-05-01T01:00:00.000Z",
	...extra,
});

const scenarios: [string, unknown[]][] = [
	[
		"compaction appended, then a branch from before the compaction",
		[
			HEADER,
			msg("u1", null, "user", "first question alpha"),
			msg("a1", "u1", "assistant", "first answer alpha"),
			msg("u2", "a1", "user", "second question beta"),
			msg("a2", "u2", "assistant", "second answer beta"),
			entry("compaction", "c1", "a2", {
				summary: "summary gamma",
				firstKeptEntryId: "u2",
				tokensBefore: 10,
				details: { readFiles: ["r.ts"], modifiedFiles: ["m.ts"] },
			}),
			msg("u3", "c1", "user", "after compaction delta"),
			msg("b1", "a1", "user", "branch from before compaction epsilon"),
			msg("b2", "b1", "assistant", "branch answer epsilon"),
			msg("u4", "u3", "user", "back to the compacted branch zeta"),
		],
	],
	[
		"context edits: remove a target, restore it, remove it again",
		[
			HEADER,
			msg("u1", null, "user", "question"),
			msg("a1", "u1", "assistant", "failing answer"),
			entry("context_edit", "e1", "a1", { targetId: "a1", replacement: null }),
			msg("u2", "e1", "user", "next"),
			entry("context_edit", "e2", "u2", { targetId: "a1", replacement: { content: [{ type: "text", text: "restored" }] } }),
			msg("a2", "e2", "assistant", "answer"),
			entry("context_edit", "e3", "a2", { targetId: "a1", replacement: null }),
			msg("u3", "e3", "user", "last"),
		],
	],
	[
		"duplicate ids appended long after the original, and as the parent of later entries",
		[
			HEADER,
			msg("u1", null, "user", "one"),
			msg("a1", "u1", "assistant", "two"),
			msg("u2", "a1", "user", "three"),
			msg("a1", "u2", "assistant", "duplicate of a1"),
			msg("u3", "a1", "user", "child of the ambiguous id"),
			msg("u1", "u3", "user", "duplicate of u1"),
			msg("a9", "u1", "assistant", "child of another ambiguous id"),
		],
	],
	[
		"second root, label, session names and empty branch summary",
		[
			HEADER,
			msg("u1", null, "user", "root one"),
			entry("session_info", "s1", "u1", { name: "First name" }),
			msg("u2", null, "user", "root two"),
			entry("label", "l1", "u2", { targetId: "u1", label: "start" }),
			entry("branch_summary", "bs1", "l1", { fromId: "u1", summary: "" }),
			entry("session_info", "s2", "bs1", { name: "  Second   name " }),
			entry("branch_summary", "bs2", "s2", { fromId: "u1", summary: "real summary theta" }),
			msg("a2", "bs2", "assistant", "done"),
		],
	],
	[
		"blank lines, malformed lines, non-object lines and unknown types between entries",
		[
			HEADER,
			msg("u1", null, "user", "before"),
			"",
			"   ",
			"{not json",
			"[1,2,3]",
			"42",
			entry("future_kind", "f1", "u1", { text: "unknown entry text" }),
			msg("a1", "f1", "assistant", "after"),
			entry("custom", "c1", "a1", { customType: "x", data: { text: "hidden custom text" } }),
			msg("u2", "c1", "user", "end"),
		],
	],
	[
		"title slot before the header and a title_change",
		[
			{ type: "title", v: 1, title: "Slot title", pad: " ".repeat(120) },
			HEADER,
			msg("u1", null, "user", "hello"),
			entry("title_change", "t1", "u1", { title: "Changed title" }),
			msg("a1", "t1", "assistant", "hi"),
		],
	],
	[
		"turns: a branch inside a turn, a new prompt on an old branch, a child appended before its parent, entries before the first prompt",
		[
			HEADER,
			entry("model_change", "m0", null, { provider: "anthropic", modelId: "m" }),
			msg("u1", "m0", "user", "why does the build fail"),
			msg("a1", "u1", "assistant", "looking at the build log"),
			msg("a2", "a1", "assistant", "the cache key was stale"),
			// Rewound to a1: the turn of u1 goes on along another branch.
			msg("a3", "a1", "assistant", "the lockfile changed"),
			msg("u2", "a3", "user", "ok, fix it"),
			// Its parent arrives only later (a forward reference): no turn until then, then u3's.
			msg("a5", "u3", "assistant", "fixed on the old branch"),
			msg("u3", "a2", "user", "and on the first branch?"),
			msg("a4", "u2", "assistant", "fixed: the lockfile is regenerated"),
		],
	],
];

describe("incremental index == fresh rebuild, synthetic adversarial growth", () => {
	test("the comparison covers turn data: each event's turn, as the pure turn rule gives it", () => {
		const lines = scenarios.find(([name]) => name.startsWith("turns:"))![1];
		const h = harness("turns.jsonl");
		try {
			writeFileSync(h.path, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
			h.sync();
			const turns = h.db
				.query(
					"SELECT e.entry_id, p.entry_id AS prompt FROM events e LEFT JOIN events p ON p.session_key = e.session_key AND p.seq = e.turn_seq ORDER BY e.seq",
				)
				.all();
			expect(turns).toEqual([
				{ entry_id: "m0", prompt: null },
				{ entry_id: "u1", prompt: "u1" },
				{ entry_id: "a1", prompt: "u1" },
				{ entry_id: "a2", prompt: "u1" },
				{ entry_id: "a3", prompt: "u1" },
				{ entry_id: "u2", prompt: "u2" },
				{ entry_id: "a5", prompt: "u3" },
				{ entry_id: "u3", prompt: "u3" },
				{ entry_id: "a4", prompt: "u2" },
			]);
			// A wrong turn is a difference the comparison sees.
			h.db.run("UPDATE events SET turn_seq = NULL WHERE entry_id = 'a4'");
			expect(
				Bun.deepEquals(
					dumpIndex(h.db),
					(() => {
						const fresh = openIndex(":memory:");
						try {
							syncIndex(fresh, { sourceDirs: h.sources });
							return dumpIndex(fresh);
						} finally {
							fresh.close();
						}
					})(),
				),
			).toBe(false);
		} finally {
			h.db.close();
		}
	});

	test.each(scenarios)("%s", (_name, lines) => {
		const text = lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n";
		const h = harness("synthetic.jsonl");
		try {
			writeFileSync(h.path, "");
			h.sync();
			for (const [k, piece] of splitLines(Buffer.from(text)).entries()) {
				const cut = Math.floor(piece.length / 3);
				if (k % 2 === 0 && cut > 0) {
					appendFileSync(h.path, piece.subarray(0, cut));
					h.sync();
					h.expectEqualToRebuild(`line ${k + 1}: first ${cut} bytes`);
					appendFileSync(h.path, piece.subarray(cut));
				} else {
					appendFileSync(h.path, piece);
				}
				h.sync();
				h.expectEqualToRebuild(`line ${k + 1} complete`);
			}
		} finally {
			h.db.close();
		}
	});
});
