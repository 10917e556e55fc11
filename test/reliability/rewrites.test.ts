/**
 * Rewrites, replacements and disappearances of session files, done the way pi, oh-my-pi and
 * people do them. Each scenario ends in the right index state: equal to a clean rebuild of the
 * same files, with the expected session and event counts and ids (and, where it matters, what a
 * search and an exact read return).
 */
import type { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import {
	appendFileSync,
	closeSync,
	copyFileSync,
	mkdirSync,
	openSync,
	readFileSync,
	renameSync,
	rmSync,
	truncateSync,
	unlinkSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { basename, join } from "node:path";
import { syncIndex, type SyncReport } from "../../src/sync/sync.ts";
import { Gate } from "../../src/gate/gate.ts";
import { readEvent } from "../../src/query/read.ts";
import type { SourceDir } from "../../src/source/discover.ts";
import { openIndex } from "../../src/store/db.ts";
import { cleanupTempDirs, encodeCwd, makeTempDir } from "../helpers/temp.ts";
import { assistantEntry, type Entry, ids, run, sessionText, toolResultEntry, UNSCOPED, userEntry } from "../query/helpers.ts";
import { cleanDump, dumpDiff, expectSameAsRebuild } from "./util.ts";
import { dumpIndex } from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

function canMount(): boolean {
	if (process.platform !== "linux" || process.getuid?.() !== 0) return false;
	const dir = join(makeTempDir("pi-events-mnt-"), "probe");
	mkdirSync(dir);
	const ok = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stderr: "pipe" }).exitCode === 0;
	if (ok) Bun.spawnSync(["umount", dir]);
	return ok;
}
const MOUNT = canMount();

interface Env {
	root: string;
	/** pi's layout: `<a>/<encoded cwd>/<file>.jsonl`. */
	a: string;
	/** A flat archive directory (like --sessions-dir or PI_CODING_AGENT_SESSION_DIR). */
	b: string;
	sources: SourceDir[];
	db: Database;
	sync(): SyncReport;
	/** Assert the index equals a clean rebuild of the files as they are now. */
	clean(label: string): void;
	sessions(sessionId: string): { path: string; entry_count: number }[];
	eventIds(path: string): string[];
	close(): void;
}

function env(): Env {
	const root = makeTempDir("pi-events-rw-");
	const a = join(root, "agent", "sessions");
	const b = join(root, "archive");
	mkdirSync(a, { recursive: true });
	mkdirSync(b, { recursive: true });
	const sources: SourceDir[] = [
		{ path: a, origin: "pi" },
		{ path: b, origin: "flag" },
	];
	const db = openIndex(join(root, "index", "index.db"));
	return {
		root,
		a,
		b,
		sources,
		db,
		sync: () => syncIndex(db, { sourceDirs: sources }),
		clean: (label) => expectSameAsRebuild(db, sources, label),
		sessions: (sessionId) =>
			db
				.query("SELECT f.path, s.entry_count FROM sessions s JOIN files f ON f.file_key = s.file_key WHERE s.session_id = ?1 ORDER BY f.path")
				.all(sessionId) as { path: string; entry_count: number }[],
		eventIds: (path) =>
			(
				db
					.query(
						"SELECT e.entry_id FROM events e JOIN sessions s ON s.session_key = e.session_key JOIN files f ON f.file_key = s.file_key WHERE f.path = ?1 ORDER BY e.seq",
					)
					.all(path) as { entry_id: string }[]
			).map((r) => r.entry_id),
		close: () => db.close(),
	};
}

const T = (min: number) => new Date(Date.parse("2026-10-01T10:00:00.000Z") + min * 60_000).toISOString();

/** A v3 session of `n` exchanges (user, assistant with a tool call, tool result), ids `<p>u1`, `<p>a1`, `<p>r1`, ... */
function conversation(p: string, n: number, tag: string): Entry[] {
	const out: Entry[] = [];
	let parent: string | null = null;
	for (let i = 1; i <= n; i++) {
		const u = userEntry(`${p}u${i}`, parent, T(3 * i), `${tag} question ${i}: why does the cron job run twice`);
		const a = assistantEntry(`${p}a${i}`, u.id as string, T(3 * i + 1), `${tag} answer ${i}: the lock is taken too late`, [
			{ id: `call_${p}${i}`, name: "bash", arguments: { command: `grep -rn cron${i} src/` } },
		]);
		const r = toolResultEntry(`${p}r${i}`, a.id as string, T(3 * i + 2), `call_${p}${i}`, "bash", `${tag} output ${i}: src/cron.ts:${i}: schedule()`);
		out.push(u, a, r);
		parent = r.id as string;
	}
	return out;
}

function write(path: string, text: string | Buffer): string {
	mkdirSync(join(path, ".."), { recursive: true });
	writeFileSync(path, text);
	return path;
}

function piPath(dir: string, cwd: string, id: string, minute = 0): string {
	return join(dir, encodeCwd(cwd), `${T(minute).replace(/[:.]/g, "-")}_${id}.jsonl`);
}

// ---------------------------------------------------------------------------------------------

describe("pi's v1 → v3 migration rewrite", () => {
	const sid = "0000aaaa-0000-4000-8000-000000000001";
	const v1Entries = [
		{ type: "model_change", timestamp: T(0), provider: "anthropic", modelId: "claude-sonnet-4-5" },
		{
			type: "message",
			timestamp: T(1),
			message: { role: "user", content: [{ type: "text", text: "zqmig question: why is the nightly build red" }], timestamp: Date.parse(T(1)) },
		},
		{
			type: "message",
			timestamp: T(2),
			message: {
				role: "assistant",
				content: [{ type: "text", text: "zqmig answer: a flaky snapshot test" }],
				provider: "anthropic",
				model: "claude-sonnet-4-5",
				stopReason: "stop",
				timestamp: Date.parse(T(2)),
			},
		},
		{ type: "message", timestamp: T(3), message: { role: "user", content: "zqmig followup: then quarantine it", timestamp: Date.parse(T(3)) } },
		// firstKeptEntryIndex indexes the whole file array, header = 0: entry 3 is the follow-up.
		{ type: "compaction", timestamp: T(4), summary: "zqmig summary of the build investigation", firstKeptEntryIndex: 3, tokensBefore: 5000 },
		{
			type: "message",
			timestamp: T(5),
			message: { role: "hookMessage", customType: "note", content: "zqmig hook note", display: true, timestamp: Date.parse(T(5)) },
		},
		{
			type: "message",
			timestamp: T(6),
			message: { role: "user", content: [{ type: "text", text: "zqmig last question before the crash" }], timestamp: Date.parse(T(6)) },
		},
	];
	const torn = `{"type":"message","timestamp":"${T(7)}","message":{"role":"assistant","content":[{"type":"text","text":"zqmig torn ans`;

	test("v1 with a torn tail → pi's \\n repair → in-place rewrite line by line (observed at every step) → real ids, nothing derived, nothing lost", () => {
		const e = env();
		try {
			const header = { type: "session", id: sid, timestamp: T(0), cwd: "/work/demo/legacy" };
			const path = write(piPath(e.a, "/work/demo/legacy", sid), `${[header, ...v1Entries].map((x) => JSON.stringify(x)).join("\n")}\n${torn}`);
			expect(e.sync().sessions.new).toBe(1);
			expect(e.eventIds(path)).toEqual(v1Entries.map((_, i) => `v1-${i}`));
			const comp = e.db.query("SELECT target_id FROM events WHERE event_type = 'compaction'").get() as { target_id: string };
			expect(comp.target_id).toBe("v1-2");
			e.clean("v1 indexed");

			// pi 1.x opens the file: the torn line gets its "\n" first (now one malformed line).
			appendFileSync(path, "\n");
			expect(e.sync().sessions.appended).toBe(1);
			expect(e.eventIds(path)).toHaveLength(v1Entries.length);
			e.clean("after the \\n repair");

			// migrateV1ToV2 + V2ToV3 exactly like pi: ids and parentIds appended to each object,
			// firstKeptEntryIndex → firstKeptEntryId, version set on the header, hookMessage → custom.
			const entries: Record<string, unknown>[] = [structuredClone(header), ...structuredClone(v1Entries)];
			let prev: string | null = null;
			const newIds: string[] = [];
			entries.forEach((entry, i) => {
				if (entry.type === "session") {
					entry.version = 2;
					return;
				}
				entry.id = `${(0x1000 + i * 7919).toString(16).padStart(8, "c")}`;
				entry.parentId = prev;
				prev = entry.id as string;
				newIds.push(prev);
				if (entry.type === "compaction" && typeof entry.firstKeptEntryIndex === "number") {
					entry.firstKeptEntryId = (entries[entry.firstKeptEntryIndex] as { id: string }).id;
					delete entry.firstKeptEntryIndex;
				}
			});
			for (const entry of entries) {
				if (entry.type === "session") entry.version = 3;
				const m = entry.message as { role?: string } | undefined;
				if (m?.role === "hookMessage") m.role = "custom";
			}
			// _rewriteFile: openSync(file, "w") then one write per entry; the torn line is gone.
			const fd = openSync(path, "w");
			try {
				const r = e.sync(); // observed truncated to 0: the last known-good index is kept
				expect(r.sessions.keptLastGood).toBe(1);
				expect(e.eventIds(path)).toHaveLength(v1Entries.length);
				entries.forEach((entry, i) => {
					writeSync(fd, `${JSON.stringify(entry)}\n`);
					const step = e.sync();
					expect(step.problems).toEqual([]);
					e.clean(`rewrite observed after line ${i + 1} of ${entries.length}`);
				});
			} finally {
				closeSync(fd);
			}
			expect(e.sync().sessions.unchanged).toBe(1);
			e.clean("migrated");
			expect(e.eventIds(path)).toEqual(newIds);
			const derived = e.db.query("SELECT count(*) AS n FROM events WHERE id_derived = 1").get() as { n: number };
			expect(derived.n).toBe(0);
			const comp2 = e.db.query("SELECT target_id FROM events WHERE event_type = 'compaction'").get() as { target_id: string };
			expect(comp2.target_id).toBe(newIds[2]!);
			const file = e.db.query("SELECT diagnostics FROM files WHERE path = ?1").get(path) as { diagnostics: number };
			expect(file.diagnostics).toBe(0);
			const ses = e.db.query("SELECT version FROM sessions WHERE session_id = ?1").get(sid) as { version: number };
			expect(ses.version).toBe(3);
			// Searches find the migrated ids only.
			expect(ids(run(e.db, "zqmig question nightly"))).toEqual([`${sid}/${newIds[1]}`]);
			expect(ids(run(e.db, "zqmig torn"))).toEqual([]);
			expect(ids(run(e.db, "zqmig hook note"))).toEqual([`${sid}/${newIds[5]}`]);
		} finally {
			e.close();
		}
	});
});

describe("oh-my-pi title slot rewritten in place", () => {
	function slot(title: string, updatedAt: string): Buffer {
		const base = { type: "title", v: 1, title, source: "user", updatedAt, pad: "" };
		const pad = 255 - Buffer.byteLength(JSON.stringify(base));
		const line = Buffer.from(`${JSON.stringify({ ...base, pad: " ".repeat(pad) })}\n`);
		expect(line.length).toBe(256);
		return line;
	}

	test("same size, bytes 0-255 only: rebuilt with the new title; with an append too; events and ids unchanged", () => {
		const e = env();
		try {
			const sid = "0000bbbb-0000-4000-8000-000000000002";
			const body = sessionText({ id: sid, cwd: "/work/omp", entries: conversation("o", 4, "zqomp") });
			const path = write(piPath(e.a, "/work/omp", sid), Buffer.concat([slot("Cron fix", T(0)), Buffer.from(body)]));
			e.sync();
			const before = e.eventIds(path);
			expect(before).toHaveLength(12);
			e.clean("indexed");

			const titleOf = () =>
				(JSON.parse((e.db.query("SELECT parser_state FROM files WHERE path = ?1").get(path) as { parser_state: string }).parser_state) as { slotTitle: string })
					.slotTitle;
			for (const [i, title] of ["Cron fix — renamed ✓", "Cron fix (final)", "Cron"].entries()) {
				const size = readFileSync(path).length;
				const fd = openSync(path, "r+");
				writeSync(fd, slot(title, T(10 + i)), 0, 256, 0);
				closeSync(fd);
				expect(readFileSync(path).length).toBe(size);
				const r = e.sync();
				expect(r.sessions.rebuilt).toBe(1);
				expect(titleOf()).toBe(title);
				expect(e.eventIds(path)).toEqual(before);
				e.clean(`title slot rewrite ${i + 1}`);
			}
			// A slot rewrite and an append between two syncs.
			const fd = openSync(path, "r+");
			writeSync(fd, slot("Cron fix v2", T(20)), 0, 256, 0);
			closeSync(fd);
			appendFileSync(path, `${JSON.stringify(userEntry("ou9", "or4", T(30), "zqomp appended after the rename"))}\n`);
			expect(e.sync().sessions.rebuilt).toBe(1);
			expect(titleOf()).toBe("Cron fix v2");
			expect(e.eventIds(path)).toEqual([...before, "ou9"]);
			e.clean("title slot rewrite + append");
		} finally {
			e.close();
		}
	});
});

describe("truncation", () => {
	test("to a line boundary, mid-line, to the header, to nothing, then regrown: each state is a clean rebuild (the empty one keeps the last good)", () => {
		const e = env();
		try {
			const sid = "0000cccc-0000-4000-8000-000000000003";
			const entries = conversation("t", 6, "zqtrunc");
			const text = sessionText({ id: sid, cwd: "/work/trunc", entries });
			const path = write(piPath(e.a, "/work/trunc", sid), text);
			e.sync();
			expect(e.eventIds(path)).toHaveLength(18);
			const lineEnds: number[] = [];
			for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) lineEnds.push(i + 1);

			truncateSync(path, lineEnds[10]!); // header + 10 entries
			expect(e.sync().sessions.rebuilt).toBe(1);
			expect(e.eventIds(path)).toEqual(entries.slice(0, 10).map((x) => x.id as string));
			e.clean("line boundary");
			expect(ids(run(e.db, "zqtrunc output 6"))).toEqual([]);

			truncateSync(path, lineEnds[6]! + 20); // 6 entries and a torn start of the 7th
			expect(e.sync().sessions.rebuilt).toBe(1);
			expect(e.eventIds(path)).toEqual(entries.slice(0, 6).map((x) => x.id as string));
			e.clean("mid-line");

			truncateSync(path, lineEnds[0]!); // the header only
			e.sync();
			expect(e.eventIds(path)).toEqual([]);
			expect(e.sessions(sid)).toHaveLength(1);
			e.clean("header only");

			truncateSync(path, 0);
			const r = e.sync();
			expect(r.sessions.keptLastGood).toBe(1);
			expect(r.problems.join("\n")).toContain(path);
			expect(e.sessions(sid)).toHaveLength(1);

			writeFileSync(path, text); // same inode, grown back
			expect(e.sync().sessions.rebuilt).toBe(1);
			expect(e.eventIds(path)).toEqual(entries.map((x) => x.id as string));
			e.clean("regrown");
		} finally {
			e.close();
		}
	});
});

describe("a file replaced by another session", () => {
	test("renamed over: the old session leaves the index entirely, the new one takes the path", () => {
		const e = env();
		try {
			const oldId = "0000dddd-0000-4000-8000-000000000004";
			const newId = "0000dddd-0000-4000-8000-000000000005";
			const path = write(piPath(e.a, "/work/rep", oldId), sessionText({ id: oldId, cwd: "/work/rep", entries: conversation("x", 3, "zqold") }));
			e.sync();
			const tmp = join(e.root, "incoming.jsonl");
			writeFileSync(tmp, sessionText({ id: newId, cwd: "/work/rep", entries: conversation("y", 2, "zqnew") }));
			renameSync(tmp, path);
			const r = e.sync();
			expect(r.sessions).toMatchObject({ rebuilt: 1, new: 0, removed: 0 });
			expect(e.sessions(oldId)).toEqual([]);
			expect(e.sessions(newId)).toEqual([{ path, entry_count: 6 }]);
			expect(ids(run(e.db, "zqold"))).toEqual([]);
			expect(ids(run(e.db, "zqnew question 2"))).toEqual([`${newId}/yu2`]);
			e.clean("replaced");
		} finally {
			e.close();
		}
	});
});

describe("a file renamed or moved", () => {
	test("within its directory, between project directories and between two source directories: old path removed, new path indexed, never twice", () => {
		const e = env();
		try {
			const sid = "0000eeee-0000-4000-8000-000000000006";
			let path = write(piPath(e.a, "/work/mv", sid), sessionText({ id: sid, cwd: "/work/mv", entries: conversation("m", 3, "zqmove") }));
			e.sync();
			const hit = [`${sid}/mu2`];
			const moves = [
				join(e.a, encodeCwd("/work/mv"), `renamed_${sid}.jsonl`), // renamed in place
				join(e.a, encodeCwd("/work/other"), `renamed_${sid}.jsonl`), // another project dir
				join(e.b, `archived_${sid}.jsonl`), // into another source dir (flat)
				join(e.a, encodeCwd("/work/mv"), `back_${sid}.jsonl`), // and back
			];
			for (const dest of moves) {
				mkdirSync(join(dest, ".."), { recursive: true });
				renameSync(path, dest);
				const r = e.sync();
				expect(r.sessions).toMatchObject({ new: 1, removed: 1 });
				expect(e.sessions(sid)).toEqual([{ path: dest, entry_count: 9 }]);
				expect((e.db.query("SELECT count(*) AS n FROM files WHERE path = ?1").get(path) as { n: number }).n).toBe(0);
				expect(ids(run(e.db, "zqmove question 2"))).toEqual(hit);
				e.clean(`moved to ${dest}`);
				path = dest;
			}
			// A move across file systems is a copy, then a delete: seen in between, the session is in
			// two files for a moment, and a search still shows each entry once.
			const dest = join(e.b, `copied_${sid}.jsonl`);
			copyFileSync(path, dest);
			e.sync();
			expect(e.sessions(sid)).toHaveLength(2);
			expect(ids(run(e.db, "zqmove question 2"))).toEqual(hit);
			e.clean("copied");
			unlinkSync(path);
			expect(e.sync().sessions.removed).toBe(1);
			expect(e.sessions(sid)).toEqual([{ path: dest, entry_count: 9 }]);
			e.clean("copy, then delete");
		} finally {
			e.close();
		}
	});
});

describe("/export + /import", () => {
	test("the same session id in two files: each (sessionId, entryId) found once, exact reads work", () => {
		const e = env();
		try {
			const sid = "0000ffff-0000-4000-8000-000000000007";
			// The original has an abandoned branch: bu2 answered, then the user rewound to fu1.
			const main = conversation("f", 3, "zqexp");
			const alt = [userEntry("bu2", "fr1", T(50), "zqexp abandoned branch question"), assistantEntry("ba2", "bu2", T(51), "zqexp abandoned branch answer")];
			const original = [...main.slice(0, 3), ...alt, ...main.slice(3)];
			const origPath = write(piPath(e.a, "/work/exp", sid), sessionText({ id: sid, cwd: "/work/exp", entries: original }));
			e.sync();

			// /export x.jsonl: the active branch, same session id, new header timestamp, parentIds
			// re-chained linearly; /import copies it verbatim into the session dir.
			let prev: string | null = null;
			const branch = main.map((entry) => {
				const copy = { ...entry, parentId: prev };
				prev = entry.id as string;
				return copy;
			});
			const exported = join(e.root, "home", "x.jsonl");
			write(exported, sessionText({ id: sid, cwd: "/work/exp", timestamp: T(90), entries: branch }));
			const imported = join(e.a, encodeCwd("/work/exp"), "x.jsonl");
			copyFileSync(exported, imported);
			const r = e.sync();
			expect(r.sessions.new).toBe(1);
			expect(e.sessions(sid).map((s) => s.path)).toEqual([origPath, imported].sort());
			e.clean("imported");

			for (const [query, want] of [
				["zqexp question 2", [`${sid}/fu2`]],
				["zqexp output 3", [`${sid}/fr3`]],
				["zqexp abandoned branch", [`${sid}/bu2`, `${sid}/ba2`]],
			] as const) {
				const got = ids(run(e.db, query));
				expect(got.sort()).toEqual([...want].sort());
				expect(new Set(got).size).toBe(got.length);
			}
			const all = ids(run(e.db, "zqexp", {}, { limit: 100 }));
			expect(new Set(all).size).toBe(all.length);
			expect(all).toHaveLength(original.length);

			const access = new Gate(e.db, UNSCOPED);
			for (const entryId of ["fu2", "fa3", "bu2"]) {
				const read = readEvent(access, { sessionId: sid, entryId });
				expect(read.event.entryId).toBe(entryId);
				expect(read.content.map((c) => c.text).join(" ")).toContain("zqexp");
			}

			// The export file removed from the session dir again: back to one file, nothing lost.
			unlinkSync(imported);
			expect(e.sync().sessions.removed).toBe(1);
			expect(e.sessions(sid)).toEqual([{ path: origPath, entry_count: original.length }]);
			e.clean("import removed");
		} finally {
			e.close();
		}
	});
});

describe("disappearing sources", () => {
	test("a whole source directory that disappears (unmounted) keeps its sessions and reports it; back again, nothing changed", () => {
		const e = env();
		try {
			const ids1 = ["0000abab-0000-4000-8000-000000000008", "0000abab-0000-4000-8000-000000000009"];
			write(join(e.b, `${ids1[0]}.jsonl`), sessionText({ id: ids1[0]!, cwd: "/work/arch", entries: conversation("g", 2, "zqarch") }));
			write(join(e.b, `${ids1[1]}.jsonl`), sessionText({ id: ids1[1]!, cwd: "/work/arch", entries: conversation("h", 1, "zqarch") }));
			const piId = "0000abab-0000-4000-8000-00000000000a";
			write(piPath(e.a, "/work/pi", piId), sessionText({ id: piId, cwd: "/work/pi", entries: conversation("k", 1, "zqpi") }));
			e.sync();
			const want = dumpIndex(e.db);

			for (const [label, dir] of [
				["the --sessions-dir archive", e.b],
				["pi's own sessions dir", e.a],
			] as const) {
				renameSync(dir, `${dir}.away`);
				const r = e.sync();
				expect(r.sessions.removed).toBe(0);
				expect(r.problems.some((p) => p.includes(dir) && /missing|unmounted/.test(p))).toBe(true);
				const diff = dumpDiff(stripSync(dumpIndex(e.db)), stripSync(want));
				if (diff) throw new Error(`${label} missing: the index changed\n${diff}`);
				expect(ids(run(e.db, "zqarch question 1")).length).toBe(2);
				renameSync(`${dir}.away`, dir);
				const back = e.sync();
				expect(back.sessions.unchanged).toBe(3);
				expect(back.problems).toEqual([]);
				e.clean(`${label} back`);
			}
		} finally {
			e.close();
		}
	});

	test.skipIf(!MOUNT)("a real unmount of the file system holding the source directory keeps its sessions; mounted again, nothing changed", () => {
		const e = env();
		const mnt = join(e.root, "usb");
		mkdirSync(mnt);
		expect(Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt]).exitCode).toBe(0);
		try {
			const archive = join(mnt, "pi-archive");
			const sources: SourceDir[] = [...e.sources, { path: archive, origin: "config" }];
			const sid = "0000aeae-0000-4000-8000-00000000000e";
			write(join(archive, `${sid}.jsonl`), sessionText({ id: sid, cwd: "/work/usb", entries: conversation("u", 2, "zqusb") }));
			syncIndex(e.db, { sourceDirs: sources });
			expect(e.sessions(sid)).toHaveLength(1);
			const snapshot = Bun.spawnSync(["cp", "-a", archive, join(e.root, "usb-copy")]);
			expect(snapshot.exitCode).toBe(0);
			expect(Bun.spawnSync(["umount", mnt]).exitCode).toBe(0);
			const r = syncIndex(e.db, { sourceDirs: sources });
			expect(r.sessions.removed).toBe(0);
			expect(r.problems.some((p) => p.includes(archive))).toBe(true);
			expect(e.sessions(sid)).toHaveLength(1);
			expect(ids(run(e.db, "zqusb question 2"))).toEqual([`${sid}/uu2`]);
			// Mounted again (a new file system: other device and inodes): one clean state.
			expect(Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt]).exitCode).toBe(0);
			expect(Bun.spawnSync(["cp", "-a", join(e.root, "usb-copy"), archive]).exitCode).toBe(0);
			const back = syncIndex(e.db, { sourceDirs: sources });
			expect(back.problems).toEqual([]);
			expect(e.sessions(sid)).toHaveLength(1);
			expectSameAsRebuild(e.db, sources, "mounted again");
		} finally {
			Bun.spawnSync(["umount", mnt]);
			e.close();
		}
	});

	test.skipIf(!MOUNT)("a source directory that is itself a mount point, unmounted (an empty directory remains): its sessions are kept", () => {
		// docs/indexing.md: "A permission error, an I/O error or a missing (unmounted) source directory never
		// removes anything." Unmounting `--sessions-dir /mnt/usb` leaves /mnt/usb as an empty
		// directory that reads fine, on another device than the files indexed from it.
		const e = env();
		const mnt = join(e.root, "usb");
		mkdirSync(mnt);
		expect(Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt]).exitCode).toBe(0);
		try {
			const sources: SourceDir[] = [...e.sources, { path: mnt, origin: "config" }];
			const sid = "0000afaf-0000-4000-8000-00000000000f";
			write(join(mnt, `${sid}.jsonl`), sessionText({ id: sid, cwd: "/work/usb", entries: conversation("w", 2, "zqmount") }));
			syncIndex(e.db, { sourceDirs: sources });
			expect(e.sessions(sid)).toHaveLength(1);
			expect(Bun.spawnSync(["umount", mnt]).exitCode).toBe(0);
			const r = syncIndex(e.db, { sourceDirs: sources });
			expect({ removed: r.sessions.removed, sessions: e.sessions(sid).length }).toEqual({ removed: 0, sessions: 1 });
		} finally {
			Bun.spawnSync(["umount", mnt]);
			e.close();
		}
	});

	test("a deleted file is removed with every row and posting; deleting the last file of a project dir too", () => {
		const e = env();
		try {
			const one = "0000acac-0000-4000-8000-00000000000b";
			const two = "0000acac-0000-4000-8000-00000000000c";
			const p1 = write(piPath(e.a, "/work/del", one), sessionText({ id: one, cwd: "/work/del", entries: conversation("d", 2, "zqdel") }));
			const p2 = write(piPath(e.a, "/work/del2", two), sessionText({ id: two, cwd: "/work/del2", entries: conversation("e", 2, "zqkeep") }));
			e.sync();
			unlinkSync(p1);
			expect(e.sync().sessions.removed).toBe(1);
			expect(e.sessions(one)).toEqual([]);
			expect(ids(run(e.db, "zqdel"))).toEqual([]);
			e.clean("deleted");
			rmSync(join(p2, ".."), { recursive: true });
			expect(e.sync().sessions.removed).toBe(1);
			expect((e.db.query("SELECT count(*) AS n FROM events").get() as { n: number }).n).toBe(0);
			expect((e.db.query("SELECT count(*) AS n FROM fts_terms").get() as { n: number }).n).toBe(0);
			e.clean("project dir deleted");
		} finally {
			e.close();
		}
	});
});

/** A dump without the files' observation columns that a failed sync may legitimately update. */
function stripSync(d: ReturnType<typeof dumpIndex>): ReturnType<typeof dumpIndex> {
	return { ...d, meta: (d.meta ?? []).filter((m) => (m as { key: string }).key !== "last_sync") };
}

// A clean rebuild is what every scenario compares with; make sure the comparison can fail.
test("the clean-rebuild comparison detects a stale index", () => {
	const e = env();
	try {
		const sid = "0000adad-0000-4000-8000-00000000000d";
		const path = write(piPath(e.a, "/work/self", sid), sessionText({ id: sid, cwd: "/work/self", entries: conversation("s", 1, "zqself") }));
		e.sync();
		appendFileSync(path, `${JSON.stringify(userEntry("su9", "sr1", T(40), "zqself more"))}\n`);
		expect(dumpDiff(dumpIndex(e.db), cleanDump(e.sources))).not.toBeNull();
		e.sync();
		expect(dumpDiff(dumpIndex(e.db), cleanDump(e.sources))).toBeNull();
		expect(basename(path)).toContain(sid);
	} finally {
		e.close();
	}
});
