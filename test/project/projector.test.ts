/**
 * Semantic projection: per entry type, which fragments (kind and id) an entry produces, what
 * never becomes searchable (thinking, images, signatures, usage, system prompts, unknown custom
 * state), bounded head+tail of huge outputs, file evidence, bash exit codes, legacy ids.
 * Checked on the real fixture files (parsed with the real parser) and on small synthetic entries.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { syncIndex } from "../../src/sync/sync.ts";
import { type ProjectedEvent, projectEntry } from "../../src/project/projector.ts";
import { boundText, GAP_TOKEN, HEAD_CHARS, MAX_FRAGMENT_CHARS, OMISSION_MARKER_RE, TAIL_CHARS } from "../../src/project/text.ts";
import { frameLines } from "../../src/source/jsonl.ts";
import { initialParserState, parseLines } from "../../src/source/session-parser.ts";
import { openIndex } from "../../src/store/db.ts";
import { allFixtureFiles, cleanupTempDirs, copyIntoSessions, legacyFixture, makeTempDir, piFixture } from "../helpers/temp.ts";

afterAll(cleanupTempDirs);

/** Parse a whole fixture file with the real parser (framing, header, projection, duplicates). */
function parseFile(path: string) {
	const buf = readFileSync(path);
	const state = initialParserState();
	const { lines } = frameLines(buf, 0, 1);
	const out = parseLines(state, lines, { file: path, idExists: () => false, project: projectEntry });
	const raw = new Map<string, any>();
	for (const e of out.events) {
		const bytes = buf.subarray(e.locator.offset, e.locator.offset + e.locator.length);
		raw.set(e.entryId, JSON.parse(bytes.toString("utf8")));
	}
	const byId = (id: string): ProjectedEvent => {
		const e = out.events.find((x) => x.entryId === id);
		if (!e) throw new Error(`no event ${id} in ${path}`);
		return e;
	};
	return { state, events: out.events, diagnostics: out.diagnostics, raw, byId };
}

const fragIds = (e: ProjectedEvent) => e.fragments.map((f) => f.fragmentId);
const allText = (e: ProjectedEvent) => e.fragments.map((f) => `${f.text}\n${f.indexText}`).join("\n");

function ctx(seq = 0, version = 3) {
	return { seq, version, previousEntryId: null, locator: { file: "/x.jsonl", offset: 0, length: 1, line: 2, hash: "0" } };
}

describe("basic fixture: fragments per entry type", () => {
	const fx = piFixture("basic");
	const n = fx.notes;
	const parsed = parseFile(fx.path);

	test("parses with no diagnostics and the manifest's entry count", () => {
		expect(parsed.diagnostics).toEqual([]);
		expect(parsed.events.length).toBe(n.entryCount);
		expect(parsed.state.header?.sessionId).toBe(fx.sessionId);
		expect(parsed.state.header?.cwd).toBe(fx.cwd);
	});

	test.each([
		["modelChange", "model_change", null, []],
		["thinkingLevelChange", "thinking_level_change", null, []],
		["firstUser", "message", "user", ["user.text#0"]],
		["assistantRead", "message", "assistant", ["assistant.text#1", "tool.call#2"]],
		["readResult", "message", "toolResult", ["tool.result#0"]],
		["assistantEditWrite", "message", "assistant", ["assistant.text#0", "tool.call#1", "tool.call#2"]],
		["editResult", "message", "toolResult", ["tool.result#0"]],
		["writeErrorResult", "message", "toolResult", ["tool.result#0"]],
		["bashExecution", "message", "bashExecution", ["bash.command#0", "bash.output#0"]],
		["assistantBash", "message", "assistant", ["assistant.text#0", "tool.call#1"]],
		["bashToolResult", "message", "toolResult", ["tool.result#0"]],
		["assistantAfterBash", "message", "assistant", ["assistant.text#0"]],
		["customEntry", "custom", null, []],
		["customMessage", "custom_message", null, ["custom.message#0"]],
		["sessionInfo", "session_info", null, ["session.name#0"]],
		["modelChange2", "model_change", null, []],
		["thinkingLevelChange2", "thinking_level_change", null, []],
		["imageUser", "message", "user", ["user.text#0"]],
		["finalAssistant", "message", "assistant", ["assistant.text#1"]],
	] as const)("%s → %s/%s → %j", (note, eventType, role, fragments) => {
		const e = parsed.byId(n[note]);
		expect(e.eventType).toBe(eventType);
		expect(e.role).toBe(role);
		expect(fragIds(e)).toEqual([...fragments]);
		expect(e.idDerived).toBe(false);
		// Fragment ids are unique within the event and their kind prefixes the id.
		expect(new Set(fragIds(e)).size).toBe(e.fragments.length);
		for (const f of e.fragments) expect(f.fragmentId.startsWith(`${f.kind}#`)).toBe(true);
	});

	test("label: no fragment, target and label kept as metadata", () => {
		const label = parsed.events.find((e) => e.eventType === "label")!;
		expect(label.fragments).toEqual([]);
		expect(label.targetId).toBe(n.labelTarget);
		expect(label.meta.label).toBe(n.label);
	});

	test("metadata of model and thinking-level changes", () => {
		expect(parsed.byId(n.modelChange).meta).toMatchObject({ provider: "anthropic", model: "claude-sonnet-4-5" });
		expect(parsed.byId(n.modelChange2).meta).toMatchObject({ provider: "openai", model: "gpt-5.1-codex" });
		expect(parsed.byId(n.thinkingLevelChange).meta.thinkingLevel).toBe("medium");
		expect(parsed.byId(n.thinkingLevelChange2).meta.thinkingLevel).toBe("high");
	});

	test("session name is normalized text of the session_info entry", () => {
		const e = parsed.byId(n.sessionInfo);
		expect(e.fragments[0]!.text).toBe(n.sessionName);
		expect(e.meta.name).toBe(n.sessionName);
	});

	test("tool calls: name, call id and rendered arguments", () => {
		const e = parsed.byId(n.assistantRead);
		expect(e.toolName).toBe("read");
		expect(e.callIds).toEqual([n.readCall]);
		const call = e.fragments.find((f) => f.kind === "tool.call")!;
		expect(call.text.split("\n")[0]).toBe("read");
		expect(call.text).toContain("path: src/auth/session.ts");
		const ew = parsed.byId(n.assistantEditWrite);
		expect(ew.callIds).toEqual([n.editCall, n.writeCall]);
	});

	test("tool results: tool name, call id and error state", () => {
		const ok = parsed.byId(n.readResult);
		expect(ok).toMatchObject({ toolName: "read", toolCallId: n.readCall, isError: false });
		const err = parsed.byId(n.writeErrorResult);
		expect(err).toMatchObject({ toolName: "write", toolCallId: n.writeCall, isError: true });
		expect(err.fragments[0]!.text).toContain("ECONNREFUSED 127.0.0.1:5432");
		expect(parsed.byId(n.bashToolResult).isError).toBe(true);
	});

	test("bashExecution: command and output fragments, exit code 0 is not an error", () => {
		const e = parsed.byId(n.bashExecution);
		expect(e.fragments.find((f) => f.kind === "bash.command")!.text).toBe("bun install --frozen-lockfile");
		expect(e.fragments.find((f) => f.kind === "bash.output")!.text).toContain("Checked 214 installs");
		expect(e.exitCode).toBe(0);
		expect(e.isError).toBe(false);
	});

	test("file evidence from read, edit and write calls", () => {
		expect(parsed.byId(n.assistantRead).files).toEqual([{ path: "src/auth/session.ts", op: "read" }]);
		expect(parsed.byId(n.assistantEditWrite).files).toEqual([
			{ path: "src/auth/session.ts", op: "changed" },
			{ path: "src/auth/pool.ts", op: "changed" },
		]);
		// A bash call names no file; tool results carry no evidence of their own.
		expect(parsed.byId(n.assistantBash).files).toEqual([]);
		expect(parsed.byId(n.readResult).files).toEqual([]);
	});

	test("thinking blocks and their signatures never reach a fragment", () => {
		for (const id of [n.assistantRead, n.finalAssistant]) {
			const e = parsed.byId(id);
			const raw = parsed.raw.get(id);
			const thinking = raw.message.content.filter((b: any) => b.type === "thinking");
			expect(thinking.length).toBeGreaterThan(0);
			for (const b of thinking) {
				expect(allText(e)).not.toContain(b.thinking);
				expect(allText(e)).not.toContain(b.thinkingSignature);
			}
			expect(e.meta.omitted).toContain("thinking");
		}
	});

	test("image data never reaches a fragment; the omission is recorded", () => {
		const e = parsed.byId(n.imageUser);
		const raw = parsed.raw.get(n.imageUser);
		const image = raw.message.content.find((b: any) => b.type === "image");
		expect(allText(e)).not.toContain(image.data);
		expect(allText(e)).not.toContain(image.data.slice(0, 24));
		expect(e.meta.omitted).toEqual(["image"]);
		expect(JSON.stringify(e)).not.toContain(image.data.slice(0, 24));
	});

	test("unknown custom entry state is not in any fragment or metadata", () => {
		const e = parsed.byId(n.customEntry);
		expect(e.customType).toBe("auth-helper-state");
		expect(e.fragments).toEqual([]);
		expect(JSON.stringify({ ...e, locator: null })).not.toContain(n.secretToken);
		for (const other of parsed.events) expect(allText(other)).not.toContain(n.secretToken);
	});

	test("custom_message: visible text, custom type and display flag", () => {
		const e = parsed.byId(n.customMessage);
		expect(e.customType).toBe("auth-helper");
		expect(e.meta.display).toBe(true);
		expect(e.fragments[0]!.text).toContain("staging database is read-only");
	});

	test("usage and provider bookkeeping never reach a fragment", () => {
		for (const e of parsed.events) {
			const t = allText(e);
			for (const word of ["totalTokens", "cacheRead", "cacheWrite", "responseId", "anthropic-messages", "msg_01"]) expect(t).not.toContain(word);
		}
	});
});

describe("every fixture: private and non-searchable payloads are never in fragment text", () => {
	/** Strings that must never be indexed, collected from the raw entry. */
	function forbidden(entry: any): string[] {
		const out: string[] = [];
		const walk = (v: any, key: string | null, parent: any) => {
			if (typeof v === "string") {
				if (v.length < 8) return;
				if (key === "thinking" || key === "data" || /signature/i.test(key ?? "")) out.push(v);
				if (parent?.type === "redactedThinking") out.push(v);
				return;
			}
			if (Array.isArray(v)) for (const x of v) walk(x, key, parent);
			else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k, v);
		};
		walk(entry, null, null);
		if (entry.type === "custom") walk(entry.data, "data", entry);
		if (entry.type === "compaction" && entry.systemMessage) out.push(JSON.stringify(entry.systemMessage.content ?? "").slice(1, 60));
		if (entry.type === "message" && entry.message?.role === "system" && typeof entry.message.content === "string") out.push(entry.message.content);
		return out;
	}

	test.each(allFixtureFiles().map((f) => [`${f.group}/${f.name}`, f.path] as const))("%s", (_name, path) => {
		const parsed = parseFile(path);
		for (const e of parsed.events) {
			const t = allText(e);
			for (const s of forbidden(parsed.raw.get(e.entryId))) expect(t).not.toContain(s);
			for (const f of e.fragments) {
				expect(f.text.trim()).not.toBe("");
				expect(f.fullLength).toBeGreaterThanOrEqual(f.text.length - 80);
			}
			if (e.eventType === "custom" || e.eventType === "label" || e.eventType === "model_change" || e.eventType === "thinking_level_change") {
				expect(e.fragments).toEqual([]);
			}
		}
	});

	test("system prompt markers (system message and compaction systemMessage snapshots) are not searchable", () => {
		for (const name of ["compaction", "context-edit"]) {
			const parsed = parseFile(piFixture(name).path);
			for (const e of parsed.events) expect(allText(e)).not.toContain("system-prompt-marker-zebra");
			const system = parsed.byId(piFixture(name).notes.system);
			expect(system.role).toBe("system");
			expect(system.fragments).toEqual([]);
		}
	});
});

describe("summaries and their file evidence", () => {
	test("compaction: summary fragment, first kept entry, tokens and detail files", () => {
		const fx = piFixture("compaction");
		const parsed = parseFile(fx.path);
		const c1 = parsed.byId(fx.notes.compaction1);
		expect(fragIds(c1)).toEqual(["summary.compaction#0"]);
		expect(c1.fragments[0]!.text).toContain("first-compaction-summary-marker");
		expect(c1.targetId).toBe(fx.notes.compaction1FirstKept);
		expect(c1.meta.firstKeptEntryId).toBe(fx.notes.compaction1FirstKept);
		expect(c1.meta.tokensBefore).toBe(48211);
		expect(c1.files).toEqual([
			{ path: "src/a.ts", op: "read" },
			{ path: "src/b.ts", op: "changed" },
		]);
		const c2 = parsed.byId(fx.notes.compaction2);
		expect(c2.files).toEqual([
			{ path: "src/a.ts", op: "read" },
			{ path: "src/c.ts", op: "read" },
			{ path: "src/b.ts", op: "changed" },
		]);
	});

	test("branch summary: summary fragment, fromId and detail files", () => {
		const fx = piFixture("branch-summary");
		const parsed = parseFile(fx.path);
		const b = parsed.byId(fx.notes.branchSummary);
		expect(fragIds(b)).toEqual(["summary.branch#0"]);
		expect(b.targetId).toBe(fx.notes.branchSummaryFromId);
		expect(b.meta.fromId).toBe(fx.notes.branchSummaryFromId);
		expect(b.files).toEqual([
			...fx.notes.details.readFiles.map((path: string) => ({ path, op: "read" })),
			...fx.notes.details.modifiedFiles.map((path: string) => ({ path, op: "changed" })),
		]);
		expect(b.meta.emptySummary).toBeUndefined();
	});

	test("branch summary with an empty summary produces no fragment and is flagged", () => {
		const e = projectEntry({ type: "branch_summary", id: "bs", parentId: "p", fromId: "f", summary: "" }, ctx());
		expect(e.fragments).toEqual([]);
		expect(e.meta.emptySummary).toBe(true);
		expect(e.targetId).toBe("f");
	});

	test("compaction details with non-string paths and unknown keys are ignored", () => {
		const e = projectEntry(
			{
				type: "compaction",
				id: "c",
				parentId: null,
				summary: "s",
				firstKeptEntryId: "k",
				details: { readFiles: ["a", 3, null, ""], modifiedFiles: "b", other: ["z"] },
			},
			ctx(),
		);
		expect(e.files).toEqual([{ path: "a", op: "read" }]);
	});
});

describe("huge outputs are bounded head + tail with a marker", () => {
	const fx = piFixture("big-output");
	const parsed = parseFile(fx.path);
	const big = parsed.byId(fx.notes.bigToolResult);
	const frag = big.fragments.find((f) => f.kind === "tool.result")!;

	test("the fragment keeps head and tail evidence, drops the middle, and reports its full length", () => {
		expect(frag.bounded).toBe(true);
		expect(frag.fullLength).toBe(fx.notes.bigToolResultChars);
		expect(frag.text).toContain(fx.notes.markers.head);
		expect(frag.text).toContain(fx.notes.markers.tail);
		expect(frag.text).not.toContain(fx.notes.markers.middle);
		expect(frag.text).toMatch(OMISSION_MARKER_RE);
		expect(frag.text.length).toBeLessThan(MAX_FRAGMENT_CHARS + 100);
		// The tail is the true end of the output.
		const rawText: string = parsed.raw.get(fx.notes.bigToolResult).message.content[0].text;
		expect(frag.text.endsWith(rawText.slice(-TAIL_CHARS))).toBe(true);
		expect(frag.text.startsWith(rawText.slice(0, HEAD_CHARS))).toBe(true);
	});

	test("the FTS body replaces the marker by the gap token so no phrase spans the omission", () => {
		expect(frag.indexText).toContain(GAP_TOKEN);
		expect(frag.indexText).not.toMatch(OMISSION_MARKER_RE);
		expect(frag.indexText).not.toContain("characters omitted");
	});

	test("in the index: the tail is findable, the middle and the marker words are not, and no phrase crosses the gap", () => {
		const dir = makeTempDir();
		const sessions = join(dir, "sessions");
		copyIntoSessions(sessions, fx.path);
		const db = openIndex(join(dir, "index.db"));
		try {
			syncIndex(db, { sourceDirs: [{ path: sessions, origin: "flag" }] });
			const count = (q: string) => (db.query("SELECT count(*) AS n FROM fts WHERE fts MATCH ?1").get(q) as { n: number }).n;
			expect(count('"linker failed marker tail"')).toBeGreaterThanOrEqual(1);
			expect(count('"BUILD START marker head"')).toBe(1);
			expect(count('"marker middle"')).toBe(0);
			expect(count("omitted")).toBe(0);
			// Last word of the head and first word of the tail are not adjacent in the source.
			const head = frag.text
				.split(OMISSION_MARKER_RE)[0]!
				.trimEnd()
				.split(/[^A-Za-z0-9]+/)
				.filter(Boolean)
				.pop()!;
			const tail = frag.text
				.split(OMISSION_MARKER_RE)[1]!
				.trimStart()
				.split(/[^A-Za-z0-9]+/)
				.filter(Boolean)[0]!;
			expect(count(`"${head}"`)).toBeGreaterThanOrEqual(1);
			expect(count(`"${head} ${tail}"`)).toBe(0);
		} finally {
			db.close();
		}
	});

	test("boundText: short text untouched, long text bounded, surrogate pairs never split", () => {
		expect(boundText("short")).toEqual({ text: "short", fullLength: 5, bounded: false, indexText: "short" });
		const exact = "a".repeat(MAX_FRAGMENT_CHARS);
		expect(boundText(exact).bounded).toBe(false);
		const long = `${"a".repeat(HEAD_CHARS - 1)}😀${"b".repeat(50_000)}😀${"c".repeat(TAIL_CHARS - 2)}`;
		const b = boundText(long);
		expect(b.bounded).toBe(true);
		expect(b.fullLength).toBe(long.length);
		expect(b.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
		expect(b.text).not.toMatch(/(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
		const [head, tail] = b.text.split(OMISSION_MARKER_RE);
		expect(long.startsWith(head!)).toBe(true);
		expect(long.endsWith(tail!)).toBe(true);
		expect(b.text).toContain(`${(long.length - head!.length - tail!.length).toLocaleString("en-US")} characters omitted`);
	});
});

describe("bash exit codes (legacy bash-exitcodes fixture)", () => {
	const parsed = parseFile(legacyFixture("bash-exitcodes"));

	test.each([
		["b1", "number exit code 2", 2, true, "make lint", "exit-number-marker"],
		["b2", "exitCode null", null, null, "make test", "exit-null-marker"],
		["b3", "exitCode missing, cancelled", null, true, "make serve", "exit-missing-marker"],
	] as const)("%s: %s", (id, _what, exitCode, isError, command, marker) => {
		const e = parsed.byId(id);
		expect(e.role).toBe("bashExecution");
		expect(e.exitCode).toBe(exitCode);
		expect(e.isError).toBe(isError);
		expect(fragIds(e)).toEqual(["bash.command#0", "bash.output#0"]);
		expect(e.fragments[0]!.text).toBe(command);
		expect(e.fragments[1]!.text).toContain(marker);
	});

	test("b3 keeps cancelled and excludeFromContext as metadata", () => {
		expect(parsed.byId("b3").meta).toMatchObject({ cancelled: true, excludeFromContext: true });
	});

	test("a bashExecution with empty output produces only the command fragment", () => {
		const e = projectEntry({ type: "message", id: "x", parentId: null, message: { role: "bashExecution", command: "true", output: "", exitCode: 0 } }, ctx());
		expect(fragIds(e)).toEqual(["bash.command#0"]);
		expect(e.isError).toBe(false);
	});
});

describe("legacy v1 files: derived ids", () => {
	const parsed = parseFile(legacyFixture("v1"));

	test("every entry gets a deterministic derived id chained to the previous entry", () => {
		expect(parsed.state.header?.version).toBe(1);
		parsed.events.forEach((e, i) => {
			expect(e.entryId).toBe(`v1-${i}`);
			expect(e.idDerived).toBe(true);
			expect(e.seq).toBe(i);
			expect(e.parentId).toBe(i === 0 ? null : `v1-${i - 1}`);
		});
		// Deterministic: parsing again gives the same ids.
		expect(parseFile(legacyFixture("v1")).events.map((e) => e.entryId)).toEqual(parsed.events.map((e) => e.entryId));
	});

	test("branchedFrom becomes the parent session", () => {
		expect(parsed.state.header?.parentSession).toContain("2025-12-04T18-00-00-000Z_00000000-0000-4000-8000-000000000000.jsonl");
	});

	test("v1 compaction firstKeptEntryIndex (header = 0) maps to the derived id of that entry", () => {
		const c = parsed.events.find((e) => e.eventType === "compaction")!;
		const raw = parsed.raw.get(c.entryId);
		expect(c.targetId).toBe(`v1-${raw.firstKeptEntryIndex - 1}`);
		const kept = parsed.byId(c.targetId!);
		expect(kept.role).toBe("user");
		expect(kept.fragments[0]!.text).toBe("Remove the duplicate line then.");
		expect(c.fragments[0]!.text).toContain("legacy-v1-compaction-summary");
	});

	test("v1 tool calls and results still project", () => {
		const call = parsed.events.find((e) => e.callIds.includes("toolu_v1_cron"))!;
		expect(call.fragments.map((f) => f.kind)).toEqual(["assistant.text", "tool.call"]);
		const result = parsed.events.find((e) => e.toolCallId === "toolu_v1_cron")!;
		expect(result.fragments[0]!.text).toContain("--legacy-duplicate-cron");
	});

	test("an entry without an id in a v3 file also gets a derived id", () => {
		const e = projectEntry({ type: "message", message: { role: "user", content: "hi" } }, { ...ctx(4, 3), previousEntryId: "prev" });
		expect(e.entryId).toBe("v1-4");
		expect(e.idDerived).toBe(true);
		expect(e.parentId).toBe("prev");
	});
});

describe("legacy v2 files", () => {
	const parsed = parseFile(legacyFixture("v2"));

	test("hookMessage (v2) projects like a custom message", () => {
		const h = parsed.byId("h1");
		expect(h.role).toBe("hookMessage");
		expect(fragIds(h)).toEqual(["custom.message#0"]);
		expect(h.customType).toBe("todo-hook");
		expect(h.fragments[0]!.text).toContain("hook-message-marker");
		expect(h.meta.display).toBe(true);
	});

	test("custom entry state stays out, custom_message content goes in", () => {
		expect(parsed.byId("c1").fragments).toEqual([]);
		for (const e of parsed.events) expect(allText(e)).not.toContain("SECRET_CUSTOM_STATE_TOKEN");
		expect(parsed.byId("cm1").fragments[0]!.text).toContain("custom-message-v2-marker");
		expect(parsed.byId("cm1").meta.display).toBe(false);
	});

	test("ids are recorded, not derived", () => {
		for (const e of parsed.events) expect(e.idDerived).toBe(false);
	});
});

describe("synthetic entries", () => {
	test("string user content, empty and whitespace-only text produce no empty fragments", () => {
		expect(fragIds(projectEntry({ type: "message", id: "u", parentId: null, message: { role: "user", content: "hello" } }, ctx()))).toEqual(["user.text#0"]);
		expect(fragIds(projectEntry({ type: "message", id: "u", parentId: null, message: { role: "user", content: "   " } }, ctx()))).toEqual([]);
		const blocks = projectEntry(
			{
				type: "message",
				id: "u",
				parentId: null,
				message: {
					role: "user",
					content: [
						{ type: "text", text: "" },
						{ type: "image", data: "AAAA", mimeType: "image/png" },
						{ type: "text", text: "two" },
					],
				},
			},
			ctx(),
		);
		expect(fragIds(blocks)).toEqual(["user.text#2"]);
		expect(blocks.meta.omitted).toEqual(["image"]);
	});

	test("redacted thinking and signatures on text blocks are never indexed", () => {
		const e = projectEntry(
			{
				type: "message",
				id: "a",
				parentId: null,
				message: {
					role: "assistant",
					stopReason: "stop",
					content: [
						{ type: "redactedThinking", data: "REDACTED_PAYLOAD_XYZ" },
						{ type: "text", text: "visible answer", textSignature: "TEXT_SIGNATURE_XYZ" },
					],
				},
			},
			ctx(),
		);
		expect(fragIds(e)).toEqual(["assistant.text#1"]);
		expect(JSON.stringify(e)).not.toContain("REDACTED_PAYLOAD_XYZ");
		expect(JSON.stringify(e)).not.toContain("TEXT_SIGNATURE_XYZ");
		expect(e.isError).toBe(false);
	});

	test("custom entries are never searchable whatever strings they hold", () => {
		const e = projectEntry(
			{ type: "custom", id: "c", parentId: null, customType: "x", data: { text: "visible looking text", content: [{ type: "text", text: "also text" }] } },
			ctx(),
		);
		expect(e.fragments).toEqual([]);
	});

	test("unknown entry types become typed events without fragments", () => {
		const e = projectEntry({ type: "some_future_type", id: "f", parentId: "p", text: "do not index", summary: "nor this" }, ctx());
		expect(e.eventType).toBe("some_future_type");
		expect(e.fragments).toEqual([]);
	});

	test("file evidence: file_path / filePath aliases, case-insensitive tool names, no duplicates", () => {
		const e = projectEntry(
			{
				type: "message",
				id: "a",
				parentId: null,
				message: {
					role: "assistant",
					content: [
						{ type: "toolCall", id: "1", name: "Read", arguments: { file_path: "a.ts" } },
						{ type: "toolCall", id: "2", name: "write", arguments: { filePath: "b.ts", content: "x" } },
						{ type: "toolCall", id: "3", name: "read", arguments: { path: "a.ts" } },
						{ type: "toolCall", id: "4", name: "grep", arguments: { path: "src" } },
					],
				},
			},
			ctx(),
		);
		expect(e.files).toEqual([
			{ path: "a.ts", op: "read" },
			{ path: "b.ts", op: "changed" },
		]);
		expect(e.callIds).toEqual(["1", "2", "3", "4"]);
		expect(e.toolName).toBe("Read");
	});

	test("fragment ids are deterministic for unchanged content", () => {
		const entry = JSON.parse(readFileSync(piFixture("basic").path, "utf8").split("\n")[5]!);
		const a = projectEntry(entry, ctx(4));
		const b = projectEntry(JSON.parse(JSON.stringify(entry)), ctx(4));
		expect(a.fragments).toEqual(b.fragments);
	});
});
