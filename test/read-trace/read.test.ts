/**
 * Exact reads (src/query/read.ts readEvent) on indexed copies of the pi fixtures: identity,
 * metadata and content exactly as in the source line; append vs branch neighbours on the design's
 * example tree; unresolved forks; character windows into a ~300 KB tool output; stale sources;
 * unknown fragments; omitted payloads; authorization (scope roots and the current-session cutoff),
 * where hidden and missing targets must fail alike.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Scope } from "../../src/auth/scope.ts";
import { PiEventsError } from "../../src/errors.ts";
import { Gate } from "../../src/gate/gate.ts";
import { DEFAULT_WINDOW, MAX_WINDOW, PART_CHARS, type ReadRequest, type ReadResult, readEvent } from "../../src/query/read.ts";
import { cleanupTempDirs, legacyFixture } from "../helpers/temp.ts";
import { type Setup, setupFixtures, sourceOf, UNSCOPED } from "./setup.ts";

afterAll(cleanupTempDirs);

let s: Setup;

/** A hand-written session whose abandoned branch forks again: x (alternate) has children x1 and x2. */
const FORK_SESSION = "0badf0c0-0000-4000-8000-000000000001";
function forkSessionText(): string {
	const ts = (m: number) => `2026-11-20T09:${String(m).padStart(2, "0")}:00.000Z`;
	const msg = (id: string, parentId: string | null, role: "user" | "assistant", text: string, m: number) =>
		JSON.stringify({
			type: "message",
			id,
			parentId,
			timestamp: ts(m),
			message:
				role === "user"
					? { role, content: [{ type: "text", text }], timestamp: Date.parse(ts(m)) }
					: { role, content: [{ type: "text", text }], provider: "anthropic", model: "claude-sonnet-4-5", stopReason: "stop", timestamp: Date.parse(ts(m)) },
		});
	return `${[
		JSON.stringify({ type: "session", version: 3, id: FORK_SESSION, timestamp: ts(0), cwd: "/work/demo/app" }),
		msg("r", null, "user", "root question fork-read-marker", 1),
		msg("a", "r", "assistant", "root answer", 2),
		msg("x", "a", "user", "abandoned question", 3),
		msg("x1", "x", "assistant", "first retry of the abandoned answer", 4),
		msg("x2", "x", "assistant", "second retry of the abandoned answer", 5),
		msg("y", "a", "user", "the question that was kept", 6),
		msg("z", "y", "assistant", "the kept answer (leaf)", 7),
	].join("\n")}\n`;
}

beforeAll(() => {
	s = setupFixtures();
	writeFileSync(join(dirname(s.fx("branched").path), "fork-in-alternate.jsonl"), forkSessionText());
	s.sync();
});

const read = (req: ReadRequest, scope: Scope = UNSCOPED): ReadResult => readEvent(s.access(scope), req);
const ids = (views: { entryId: string }[]) => views.map((v) => v.entryId);

function readError(req: ReadRequest, scope: Scope = UNSCOPED): PiEventsError {
	try {
		read(req, scope);
	} catch (err) {
		if (err instanceof PiEventsError) return err;
		throw err;
	}
	throw new Error(`read of ${req.sessionId}/${req.entryId} did not fail`);
}

const notFoundMessage = (sessionId: string, entryId: string) => `no event ${JSON.stringify(entryId)} in session ${JSON.stringify(sessionId)} in your scope`;

describe("identity, metadata and content are exact", () => {
	test("a user entry of the design example (E): every field of the event view and locator", () => {
		const b = s.fx("branched");
		const src = sourceOf(b.path, b.notes.E);
		const r = read({ sessionId: b.sessionId, entryId: b.notes.E });
		expect(r.event).toEqual({
			sessionId: b.sessionId,
			entryId: b.notes.E,
			idDerived: false,
			parentId: b.notes.B,
			seq: 4,
			eventType: "message",
			role: "user",
			toolName: null,
			toolCallId: null,
			customType: null,
			timestamp: src.json.timestamp,
			isError: null,
			exitCode: null,
			branchState: "selected",
			contextRole: "conversation",
			selectionState: "direct",
			preview: src.json.message.content[0].text,
			locator: { file: b.path, line: src.line, byteOffset: src.byteOffset, byteLength: src.byteLength },
			meta: {},
			files: [],
		});
		expect(r.session).toEqual({ sessionId: b.sessionId, cwd: "/work/demo/app", name: null, file: b.path });
		expect(r.content).toEqual([
			{
				fragmentId: "user.text#0",
				kind: "user.text",
				chars: src.json.message.content[0].text.length,
				text: src.json.message.content[0].text,
				truncated: false,
			},
		]);
		expect(r.window).toBeNull();
		expect(r.omitted).toEqual([]);
		expect(r.neighbours).toEqual({ order: "append", only: null, before: [], after: [], alternatives: [], alternativesTotal: 0, stoppedAt: null });
	});

	test("an assistant entry with thinking, text and a tool call: meta, files, content parts, omitted fields", () => {
		const f = s.fx("basic");
		const src = sourceOf(f.path, f.notes.assistantRead);
		const r = read({ sessionId: f.sessionId, entryId: f.notes.assistantRead });
		expect(r.event.entryId).toBe(f.notes.assistantRead);
		expect(r.event.parentId).toBe(f.notes.firstUser);
		expect(r.event.role).toBe("assistant");
		expect(r.event.toolName).toBe("read");
		expect(r.event.isError).toBe(false);
		expect(r.event.timestamp).toBe(src.json.timestamp);
		expect(r.event.locator).toEqual({ file: f.path, line: src.line, byteOffset: src.byteOffset, byteLength: src.byteLength });
		expect(r.event.meta).toEqual({ provider: "anthropic", model: src.json.message.model, stopReason: "toolUse" });
		// File evidence as recorded in the tool call, plus its absolute form under the session cwd.
		expect(r.event.files).toEqual([{ path: "src/auth/session.ts", op: "read", absolutePath: "/work/demo/app/src/auth/session.ts" }]);
		const blocks = src.json.message.content as any[];
		expect(r.content).toEqual([
			{ fragmentId: "assistant.text#1", kind: "assistant.text", chars: blocks[1].text.length, text: blocks[1].text, truncated: false },
			{
				fragmentId: "tool.call#2",
				kind: "tool.call",
				chars: "read\npath: src/auth/session.ts".length,
				text: "read\npath: src/auth/session.ts",
				truncated: false,
			},
		]);
		// Private reasoning and its signature are reported as omitted, never returned.
		expect(r.omitted).toEqual(["thinking", "signatures"]);
		const json = JSON.stringify(r);
		expect(json).not.toContain(blocks[0].thinking);
		expect(json).not.toContain(blocks[0].thinkingSignature);
		expect(r.session.name).toBe("Auth refactor");
	});

	test("an image user message: the image is omitted, its bytes never returned", () => {
		const f = s.fx("basic");
		const src = sourceOf(f.path, f.notes.imageUser);
		const r = read({ sessionId: f.sessionId, entryId: f.notes.imageUser });
		expect(r.omitted).toEqual(["image"]);
		expect(r.content.map((c) => c.fragmentId)).toEqual(["user.text#0"]);
		expect(r.content[0]!.text).toBe(src.json.message.content[0].text);
		expect(JSON.stringify(r)).not.toContain(src.json.message.content[1].data);
	});

	test("a tool result with an error and a bashExecution: error state, exit code, CJK and accented text", () => {
		const f = s.fx("basic");
		const w = read({ sessionId: f.sessionId, entryId: f.notes.writeErrorResult });
		expect(w.event.isError).toBe(true);
		expect(w.event.toolName).toBe("write");
		expect(w.event.toolCallId).toBe(f.notes.writeCall);
		expect(w.content[0]!.text).toContain("Error: ECONNREFUSED 127.0.0.1:5432");
		const bash = read({ sessionId: f.sessionId, entryId: f.notes.bashExecution });
		const src = sourceOf(f.path, f.notes.bashExecution);
		expect(bash.event.role).toBe("bashExecution");
		expect(bash.event.exitCode).toBe(0);
		expect(bash.event.isError).toBe(false);
		expect(bash.event.meta).toEqual({ cancelled: false, truncated: false });
		expect(bash.content.map((c) => [c.fragmentId, c.text])).toEqual([
			["bash.command#0", src.json.message.command],
			["bash.output#0", src.json.message.output],
		]);
		const user = read({ sessionId: f.sessionId, entryId: f.notes.firstUser });
		expect(user.content[0]!.text).toBe(sourceOf(f.path, f.notes.firstUser).json.message.content[0].text);
		expect(user.content[0]!.text).toContain("数据库连接失败了");
		expect(user.content[0]!.text).toContain("café résumé naïve");
	});

	test("metadata entries: label, session_info, compaction with details files", () => {
		const f = s.fx("basic");
		const labelId = labelIdOf(f.path);
		const label = read({ sessionId: f.sessionId, entryId: labelId });
		expect(label.event.eventType).toBe("label");
		expect(label.event.contextRole).toBe("metadata");
		expect(label.event.selectionState).toBe("not-applicable");
		expect(label.event.meta).toEqual({ label: "auth-start" });
		expect(label.content).toEqual([]);
		const info = read({ sessionId: f.sessionId, entryId: f.notes.sessionInfo });
		expect(info.event.meta).toEqual({ name: "Auth refactor" });
		const c = s.fx("compaction");
		const comp = read({ sessionId: c.sessionId, entryId: c.notes.compaction1 });
		expect(comp.event.eventType).toBe("compaction");
		expect(comp.event.contextRole).toBe("summary");
		expect(comp.event.selectionState).toBe("summarized");
		expect(comp.event.meta).toMatchObject({ firstKeptEntryId: c.notes.compaction1FirstKept });
		expect(comp.event.files).toEqual([
			{ path: "src/b.ts", op: "changed", absolutePath: "/work/demo/app/src/b.ts" },
			{ path: "src/a.ts", op: "read", absolutePath: "/work/demo/app/src/a.ts" },
		]);
		expect(comp.content[0]!.text).toBe(sourceOf(c.path, c.notes.compaction1).json.summary);
	});
});

/** The id of basic's label entry (not in the manifest notes by id). */
function labelIdOf(path: string): string {
	const lines = readFileSync(path, "utf8")
		.split("\n")
		.filter(Boolean)
		.map((l) => JSON.parse(l));
	return lines.find((l) => l.type === "label").id;
}

describe("append order and branch order neighbours (the design example)", () => {
	test("append neighbours of E are D before and F after", () => {
		const b = s.fx("branched");
		const r = read({ sessionId: b.sessionId, entryId: b.notes.E, before: 1, after: 1 });
		expect(r.neighbours.order).toBe("append");
		expect(ids(r.neighbours.before)).toEqual([b.notes.D]);
		expect(ids(r.neighbours.after)).toEqual([b.notes.F]);
		expect(r.neighbours.before[0]!.branchState).toBe("alternate");
		expect(r.neighbours.alternatives).toEqual([]);
		expect(r.neighbours.stoppedAt).toBeNull();
		// Wider windows stay in file order and stop at the file's ends.
		const wide = read({ sessionId: b.sessionId, entryId: b.notes.E, before: 20, after: 20 });
		expect(ids(wide.neighbours.before)).toEqual([b.notes.A, b.notes.B, b.notes.C, b.notes.D]);
		expect(ids(wide.neighbours.after)).toEqual([b.notes.F]);
	});

	test("branch neighbours of E: B before (its parent, not D), F after", () => {
		const b = s.fx("branched");
		const r = read({ sessionId: b.sessionId, entryId: b.notes.E, order: "branch", before: 1, after: 1 });
		expect(r.neighbours.order).toBe("branch");
		expect(ids(r.neighbours.before)).toEqual([b.notes.B]);
		expect(ids(r.neighbours.after)).toEqual([b.notes.F]);
		const all = read({ sessionId: b.sessionId, entryId: b.notes.E, order: "branch", before: 20, after: 20 });
		expect(ids(all.neighbours.before)).toEqual([b.notes.A, b.notes.B]);
		expect(ids(all.neighbours.after)).toEqual([b.notes.F]);
		expect(all.neighbours.stoppedAt).toBe("end");
	});

	test("successors of B follow E then F and report C as the alternative", () => {
		const b = s.fx("branched");
		const r = read({ sessionId: b.sessionId, entryId: b.notes.B, order: "branch", after: 20 });
		expect(ids(r.neighbours.after)).toEqual([b.notes.E, b.notes.F]);
		expect(ids(r.neighbours.alternatives)).toEqual([b.notes.C]);
		expect(r.neighbours.stoppedAt).toBe("end");
		// The alternative is reported, never spliced into the linear context.
		expect(ids(r.neighbours.after)).not.toContain(b.notes.D);
		const one = read({ sessionId: b.sessionId, entryId: b.notes.B, order: "branch", after: 1 });
		expect(ids(one.neighbours.after)).toEqual([b.notes.E]);
		expect(ids(one.neighbours.alternatives)).toEqual([b.notes.C]);
		expect(one.neighbours.stoppedAt).toBeNull();
	});

	test("reading C (alternate) in branch order continues to D; its predecessors are B and A", () => {
		const b = s.fx("branched");
		const r = read({ sessionId: b.sessionId, entryId: b.notes.C, order: "branch", before: 20, after: 20 });
		expect(ids(r.neighbours.before)).toEqual([b.notes.A, b.notes.B]);
		expect(ids(r.neighbours.after)).toEqual([b.notes.D]);
		expect(r.neighbours.alternatives).toEqual([]);
		expect(r.neighbours.stoppedAt).toBe("end");
	});

	test("an alternate entry at an unresolved fork stops with stoppedAt 'fork' and lists both candidates", () => {
		const r = read({ sessionId: FORK_SESSION, entryId: "x", order: "branch", before: 20, after: 20 });
		expect(r.event.branchState).toBe("alternate");
		expect(ids(r.neighbours.before)).toEqual(["r", "a"]);
		expect(r.neighbours.after).toEqual([]);
		expect(r.neighbours.stoppedAt).toBe("fork");
		expect(ids(r.neighbours.alternatives)).toEqual(["x1", "x2"]);
		// From the selected path the walk follows the materialized leaf instead.
		const fromA = read({ sessionId: FORK_SESSION, entryId: "a", order: "branch", after: 20 });
		expect(ids(fromA.neighbours.after)).toEqual(["y", "z"]);
		expect(ids(fromA.neighbours.alternatives)).toEqual(["x"]);
		expect(fromA.neighbours.stoppedAt).toBe("end");
		// Reading one of the candidates walks up through the fork point.
		const x2 = read({ sessionId: FORK_SESSION, entryId: "x2", order: "branch", before: 20 });
		expect(ids(x2.neighbours.before)).toEqual(["r", "a", "x"]);
	});

	test("neighbour counts are bounded and validated", () => {
		const b = s.fx("branched");
		for (const bad of [-1, 21, 1.5]) {
			const err = readError({ sessionId: b.sessionId, entryId: b.notes.E, before: bad });
			expect(err.code).toBe("E_USAGE");
			expect(err.message).toBe("before must be an integer from 0 to 20");
		}
		expect(readError({ sessionId: b.sessionId, entryId: b.notes.E, after: 99, order: "branch" }).code).toBe("E_USAGE");
	});

	test("a parentId cycle (legacy cycle.jsonl) reads in branch order without looping", () => {
		const dest = join(s.sessions, "--work-demo-legacy--", "cycle.jsonl");
		mkdirSync(dirname(dest), { recursive: true });
		copyFileSync(legacyFixture("cycle"), dest);
		s.sync();
		const session = "00000000-0000-4000-8000-000000000008";
		const r = read({ sessionId: session, entryId: "a", order: "branch", before: 20, after: 20 });
		expect(r.event.branchState).toBe("unknown");
		expect(ids(r.neighbours.before)).toEqual(["b"]);
		// b is already on the way up; the walk down does not revisit it.
		expect(r.neighbours.after).toEqual([]);
		expect(r.neighbours.stoppedAt).toBe("end");
	});
});

describe("fragment windows into the ~300 KB tool output", () => {
	const full = () => {
		const f = s.fx("big-output");
		return sourceOf(f.path, f.notes.bigToolResult).json.message.content[0].text as string;
	};

	test("without a window each part shows its first characters and its exact size", () => {
		const f = s.fx("big-output");
		const text = full();
		expect(text.length).toBe(f.notes.bigToolResultChars);
		const r = read({ sessionId: f.sessionId, entryId: f.notes.bigToolResult });
		expect(r.content).toEqual([{ fragmentId: "tool.result#0", kind: "tool.result", chars: text.length, text: text.slice(0, PART_CHARS), truncated: true }]);
		expect(r.window).toBeNull();
		expect(r.event.isError).toBe(true);
	});

	test("window at the start (default length)", () => {
		const f = s.fx("big-output");
		const text = full();
		const r = read({ sessionId: f.sessionId, entryId: f.notes.bigToolResult, fragmentId: "tool.result#0" });
		expect(r.window).toEqual({
			fragmentId: "tool.result#0",
			offset: 0,
			length: DEFAULT_WINDOW,
			totalChars: text.length,
			text: text.slice(0, DEFAULT_WINDOW),
			hasMore: true,
		});
		expect(r.window!.text.startsWith(f.notes.markers.head)).toBe(true);
		// With a window, the parts carry no text (the window is the content).
		expect(r.content).toEqual([{ fragmentId: "tool.result#0", kind: "tool.result", chars: text.length, text: "", truncated: true }]);
	});

	test("window in the middle, around marker-middle", () => {
		const f = s.fx("big-output");
		const text = full();
		const offset = f.notes.markers.middleCharOffset - 100;
		const r = read({ sessionId: f.sessionId, entryId: f.notes.bigToolResult, fragmentId: "tool.result#0", offset, length: 250 });
		expect(r.window).toEqual({
			fragmentId: "tool.result#0",
			offset,
			length: 250,
			totalChars: text.length,
			text: text.slice(offset, offset + 250),
			hasMore: true,
		});
		expect(r.window!.text).toContain(f.notes.markers.middle);
	});

	test("window at the end: shorter than asked, hasMore false, ends with the tail marker", () => {
		const f = s.fx("big-output");
		const text = full();
		const offset = text.length - 100;
		const r = read({ sessionId: f.sessionId, entryId: f.notes.bigToolResult, fragmentId: "tool.result#0", offset, length: MAX_WINDOW });
		expect(r.window).toEqual({ fragmentId: "tool.result#0", offset, length: 100, totalChars: text.length, text: text.slice(offset), hasMore: false });
		expect(r.window!.text.trimEnd().endsWith(f.notes.markers.tail)).toBe(true);
		// Exactly up to the end: no more.
		const exact = read({ sessionId: f.sessionId, entryId: f.notes.bigToolResult, fragmentId: "tool.result#0", offset: text.length - 10, length: 10 });
		expect(exact.window!.hasMore).toBe(false);
		expect(exact.window!.text).toBe(text.slice(-10));
		// Past the end: empty.
		const past = read({ sessionId: f.sessionId, entryId: f.notes.bigToolResult, fragmentId: "tool.result#0", offset: text.length + 5, length: 10 });
		expect(past.window).toMatchObject({ length: 0, text: "", hasMore: false, totalChars: text.length });
	});

	test("consecutive windows reassemble the source text exactly", () => {
		const f = s.fx("big-output");
		const text = full();
		let offset = 0;
		let assembled = "";
		for (;;) {
			const r = read({ sessionId: f.sessionId, entryId: f.notes.bigToolResult, fragmentId: "tool.result#0", offset, length: MAX_WINDOW });
			assembled += r.window!.text;
			offset += r.window!.length;
			if (!r.window!.hasMore) break;
		}
		expect(assembled.length).toBe(text.length);
		expect(assembled === text).toBe(true);
	});

	test("window bounds are validated", () => {
		const f = s.fx("big-output");
		const base = { sessionId: f.sessionId, entryId: f.notes.bigToolResult, fragmentId: "tool.result#0" };
		expect(readError({ ...base, length: MAX_WINDOW + 1 }).code).toBe("E_USAGE");
		expect(readError({ ...base, length: 0 }).code).toBe("E_USAGE");
		expect(readError({ ...base, offset: -1 }).code).toBe("E_USAGE");
	});

	test("an unknown fragment id fails and lists the available ones", () => {
		const f = s.fx("basic");
		const err = readError({ sessionId: f.sessionId, entryId: f.notes.assistantRead, fragmentId: "tool.result#9" });
		expect(err.code).toBe("E_USAGE");
		expect(err.message).toBe(`event ${f.notes.assistantRead} has no fragment "tool.result#9" (it has: assistant.text#1, tool.call#2)`);
		const label = readError({ sessionId: f.sessionId, entryId: labelIdOf(f.path), fragmentId: "user.text#0" });
		expect(label.message).toContain("(it has no text fragments)");
	});
});

describe("stale sources", () => {
	/** A fresh, separately indexed copy so the other tests keep their files intact. */
	function isolated() {
		const t = setupFixtures({ names: ["branched", "big-output"] });
		return { t, b: t.fx("branched"), big: t.fx("big-output") };
	}

	test("rewritten with the same size but different bytes: E_STALE, until re-indexed", () => {
		const { t, b } = isolated();
		const before = readFileSync(b.path);
		const after = Buffer.from(before.toString("utf8").replace("echo step", "ECHO STEP"), "utf8");
		expect(after.length).toBe(before.length);
		writeFileSync(b.path, after);
		const err = (() => {
			try {
				readEvent(t.access(), { sessionId: b.sessionId, entryId: b.notes.E });
			} catch (e) {
				return e as PiEventsError;
			}
			throw new Error("no error");
		})();
		expect(err).toBeInstanceOf(PiEventsError);
		expect(err.code).toBe("E_STALE");
		expect(err.message).toContain(b.path);
		// Never stale text served as exact: after a sync the new text is read.
		t.sync();
		const r = readEvent(t.access(), { sessionId: b.sessionId, entryId: b.notes.E });
		expect(r.content[0]!.text.startsWith("ECHO STEP")).toBe(true);
	});

	test("truncated before the entry, or removed: E_STALE", () => {
		const { t, b, big } = isolated();
		const src = sourceOf(b.path, b.notes.F);
		truncateSync(b.path, src.byteOffset + 10);
		const code = (fn: () => unknown) => {
			try {
				fn();
			} catch (e) {
				return (e as PiEventsError).code;
			}
			return "no error";
		};
		expect(code(() => readEvent(t.access(), { sessionId: b.sessionId, entryId: b.notes.F }))).toBe("E_STALE");
		// A window read re-reads the source too.
		rmSync(big.path);
		expect(code(() => readEvent(t.access(), { sessionId: big.sessionId, entryId: big.notes.bigToolResult, fragmentId: "tool.result#0" }))).toBe("E_STALE");
	});
});

describe("authorization", () => {
	test("a target outside the scope fails with E_NOT_FOUND, shaped exactly like a missing one", () => {
		const app: Scope = { roots: ["/work/demo/app"], current: null };
		const other = s.fx("multi-root"); // /work/demo/other
		const extra = s.fx("retry"); // /work/demo/app-extra: a prefix collision, not inside /work/demo/app
		for (const [f, id] of [
			[other, other.notes.root1User],
			[extra, extra.notes.user],
		] as const) {
			// Visible without a scope...
			expect(read({ sessionId: f.sessionId, entryId: id }).event.entryId).toBe(id);
			// ...hidden in scope, exactly like an entry that does not exist.
			const hidden = readError({ sessionId: f.sessionId, entryId: id }, app);
			expect(hidden.code).toBe("E_NOT_FOUND");
			expect(hidden.message).toBe(notFoundMessage(f.sessionId, id));
		}
		const b = s.fx("branched");
		const missing = readError({ sessionId: b.sessionId, entryId: "deadbeef" }, app);
		expect(missing.code).toBe("E_NOT_FOUND");
		expect(missing.message).toBe(notFoundMessage(b.sessionId, "deadbeef"));
		const noSession = readError({ sessionId: "00000000-dead-beef-0000-000000000000", entryId: "deadbeef" }, app);
		expect(noSession.message).toBe(notFoundMessage("00000000-dead-beef-0000-000000000000", "deadbeef"));
	});

	test("sessions under the root (subdirectories) are visible; the scope does not leak through neighbours", () => {
		const app: Scope = { roots: ["/work/demo/app"], current: null };
		const api = s.fx("context-edit"); // /work/demo/app/packages/api
		expect(read({ sessionId: api.sessionId, entryId: api.notes.user1 }, app).event.entryId).toBe(api.notes.user1);
		const otherScope: Scope = { roots: ["/work/demo/other"], current: null };
		const b = s.fx("branched");
		expect(readError({ sessionId: b.sessionId, entryId: b.notes.E, before: 3, after: 3 }, otherScope).code).toBe("E_NOT_FOUND");
	});

	describe("the current-session cutoff", () => {
		const basic = () => s.fx("basic");
		const cutoffScope = (current: Partial<NonNullable<Scope["current"]>>): Scope => ({
			roots: ["/work/demo/app"],
			current: { sessionId: null, sessionFile: null, toolCallId: null, ...current },
		});

		test("the invoking entry and everything after it are hidden; earlier entries are readable", () => {
			const f = basic();
			const scope = cutoffScope({ sessionId: f.sessionId, toolCallId: f.notes.bashToolCall });
			// The invoking entry is the assistant message holding the bash tool call (seq 9).
			for (const id of [f.notes.assistantBash, f.notes.bashToolResult, f.notes.sessionInfo, f.notes.finalAssistant]) {
				const err = readError({ sessionId: f.sessionId, entryId: id }, scope);
				expect(err.code).toBe("E_NOT_FOUND");
				expect(err.message).toBe(notFoundMessage(f.sessionId, id));
			}
			const last = read({ sessionId: f.sessionId, entryId: f.notes.bashExecution, before: 2, after: 20 }, scope);
			expect(last.event.entryId).toBe(f.notes.bashExecution);
			expect(ids(last.neighbours.before)).toEqual([f.notes.editResult, f.notes.writeErrorResult]);
			expect(last.neighbours.after).toEqual([]);
			const branch = read({ sessionId: f.sessionId, entryId: f.notes.bashExecution, order: "branch", after: 20 }, scope);
			expect(branch.neighbours.after).toEqual([]);
			expect(branch.neighbours.alternatives).toEqual([]);
			// Other sessions are not affected by the cutoff.
			const b = s.fx("branched");
			expect(read({ sessionId: b.sessionId, entryId: b.notes.F }, scope).event.entryId).toBe(b.notes.F);
		});

		test("the same cutoff when the current session is given by its file", () => {
			const f = basic();
			const scope = cutoffScope({ sessionFile: f.path, toolCallId: f.notes.bashToolCall });
			expect(readError({ sessionId: f.sessionId, entryId: f.notes.assistantBash }, scope).code).toBe("E_NOT_FOUND");
			expect(read({ sessionId: f.sessionId, entryId: f.notes.bashExecution }, scope).event.seq).toBe(8);
		});

		test("the current session file given through a symlinked directory still gets its cutoff (fail closed, not open)", () => {
			const f = basic();
			const link = join(s.dir, "sessions-link");
			if (!existsSync(link)) symlinkSync(s.sessions, link);
			const spelled = join(link, basename(dirname(f.path)), basename(f.path));
			expect(readFileSync(spelled).equals(readFileSync(f.path))).toBe(true);
			const scope = cutoffScope({ sessionFile: spelled, toolCallId: f.notes.bashToolCall });
			expect(readError({ sessionId: f.sessionId, entryId: f.notes.assistantBash }, scope).code).toBe("E_NOT_FOUND");
			expect(readError({ sessionId: f.sessionId, entryId: f.notes.finalAssistant }, scope).code).toBe("E_NOT_FOUND");
		});

		test("an earlier tool call moves the cutoff earlier; an unknown one hides the whole session (fail closed)", () => {
			const f = basic();
			const early = cutoffScope({ sessionId: f.sessionId, toolCallId: f.notes.readCall });
			expect(read({ sessionId: f.sessionId, entryId: f.notes.firstUser }, early).event.entryId).toBe(f.notes.firstUser);
			expect(readError({ sessionId: f.sessionId, entryId: f.notes.assistantRead }, early).code).toBe("E_NOT_FOUND");
			expect(readError({ sessionId: f.sessionId, entryId: f.notes.readResult }, early).code).toBe("E_NOT_FOUND");
			const unknown = cutoffScope({ sessionId: f.sessionId, toolCallId: "toolu_not_indexed_yet" });
			expect(readError({ sessionId: f.sessionId, entryId: f.notes.modelChange }, unknown).code).toBe("E_NOT_FOUND");
		});

		test("without a tool-call id the last assistant message with tool calls is the invoking entry", () => {
			const f = basic();
			const scope = cutoffScope({ sessionId: f.sessionId });
			expect(readError({ sessionId: f.sessionId, entryId: f.notes.assistantBash }, scope).code).toBe("E_NOT_FOUND");
			expect(read({ sessionId: f.sessionId, entryId: f.notes.bashExecution }, scope).event.entryId).toBe(f.notes.bashExecution);
		});

		test("a read before the cutoff reveals nothing appended at or after it (not even the session name)", () => {
			const f = basic();
			const scope = cutoffScope({ sessionId: f.sessionId, toolCallId: f.notes.bashToolCall });
			const r = read({ sessionId: f.sessionId, entryId: f.notes.bashExecution, before: 20, after: 20 }, scope);
			const json = JSON.stringify(r);
			for (const id of [f.notes.assistantBash, f.notes.bashToolResult, f.notes.sessionInfo, f.notes.finalAssistant, f.notes.leafId]) {
				expect(json).not.toContain(id);
			}
			// The name comes from the session_info entry appended after the invocation.
			expect(r.session.name).toBeNull();
		});
	});
});

test("the Gate is the only gate: a fresh Gate sees the same event", () => {
	const b = s.fx("branched");
	const a1 = readEvent(new Gate(s.db, UNSCOPED), { sessionId: b.sessionId, entryId: b.notes.A });
	const a2 = readEvent(s.access(), { sessionId: b.sessionId, entryId: b.notes.A });
	expect(a1).toEqual(a2);
});
