/**
 * Traces (src/query/trace.ts traceEvent): the local branch picture of the design example,
 * recorded vs derived relationships (tool results, compaction boundaries, branch-summary sources,
 * labels, context edits, file evidence), and cross-session fork lineage resolved only to indexed,
 * authorized files: copied entries linked by full (sessionId, entryId) identity in both
 * directions, and nothing at all revealed about a parent outside the caller's root or a parent
 * file that is gone.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import type { Scope } from "../../src/auth/scope.ts";
import { PiEventsError } from "../../src/errors.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { Gate } from "../../src/gate/gate.ts";
import { type Relation, type TraceResult, traceEvent } from "../../src/query/trace.ts";
import { openIndex } from "../../src/store/db.ts";
import { cleanupTempDirs, makeTempDir } from "../helpers/temp.ts";
import { type Setup, setupFixtures, UNSCOPED } from "./setup.ts";

afterAll(cleanupTempDirs);

let s: Setup;
beforeAll(() => {
	s = setupFixtures();
});

const trace = (sessionId: string, entryId: string, scope: Scope = UNSCOPED): TraceResult => traceEvent(s.access(scope), sessionId, entryId);
const ids = (views: { entryId: string }[]) => views.map((v) => v.entryId);
/** Relations as compact tuples: [relation, direction, label, "sessionId/entryId" | path | session id | null]. */
const rels = (t: TraceResult, filter?: (r: Relation) => boolean) =>
	t.relations
		.filter((r) => !filter || filter(r))
		.map((r) => [
			r.relation,
			r.direction,
			r.label,
			r.node ? `${r.node.sessionId}/${r.node.entryId}` : (r.path ?? (r.session ? `session:${r.session.sessionId}` : null)),
		]);
const notLocal = (r: Relation) => !["parent", "child", "sibling"].includes(r.relation);

function traceError(sessionId: string, entryId: string, scope: Scope = UNSCOPED): PiEventsError {
	try {
		trace(sessionId, entryId, scope);
	} catch (err) {
		if (err instanceof PiEventsError) return err;
		throw err;
	}
	throw new Error("trace did not fail");
}

describe("the design example (branched)", () => {
	test("E: parent B, child F, sibling C labelled derived, toward the leaf F", () => {
		const b = s.fx("branched");
		const n = b.notes;
		const t = trace(b.sessionId, n.E);
		expect(t.target.entryId).toBe(n.E);
		expect(t.parent?.entryId).toBe(n.B);
		expect(ids(t.children)).toEqual([n.F]);
		expect(ids(t.siblings)).toEqual([n.C]);
		expect(t.siblings[0]!.branchState).toBe("alternate");
		expect(t.towardLeaf?.entryId).toBe(n.F);
		const sid = b.sessionId;
		expect(rels(t)).toEqual([
			["parent", "out", "recorded", `${sid}/${n.B}`],
			["child", "out", "recorded", `${sid}/${n.F}`],
			["sibling", "out", "derived", `${sid}/${n.C}`],
		]);
		expect(t.session).toEqual({ sessionId: sid, cwd: "/work/demo/app", name: null, file: b.path, leafEntryId: n.F });
	});

	test("B: both child branches C and E, toward the leaf E, no siblings", () => {
		const b = s.fx("branched");
		const n = b.notes;
		const t = trace(b.sessionId, n.B);
		expect(t.parent?.entryId).toBe(n.A);
		expect(ids(t.children)).toEqual([n.C, n.E]);
		expect(t.children.map((c) => c.branchState)).toEqual(["alternate", "selected"]);
		expect(t.siblings).toEqual([]);
		expect(t.towardLeaf?.entryId).toBe(n.E);
		expect(rels(t)).toEqual([
			["parent", "out", "recorded", `${b.sessionId}/${n.A}`],
			["child", "out", "recorded", `${b.sessionId}/${n.C}`],
			["child", "out", "recorded", `${b.sessionId}/${n.E}`],
		]);
	});

	test("off the selected path the way to the leaf goes back up: C → B, D → C; the leaf F has none", () => {
		const b = s.fx("branched");
		const n = b.notes;
		const c = trace(b.sessionId, n.C);
		expect(c.towardLeaf?.entryId).toBe(n.B);
		expect(ids(c.siblings)).toEqual([n.E]);
		expect(ids(c.children)).toEqual([n.D]);
		expect(trace(b.sessionId, n.D).towardLeaf?.entryId).toBe(n.C);
		const f = trace(b.sessionId, n.F);
		expect(f.towardLeaf).toBeNull();
		expect(f.children).toEqual([]);
		const a = trace(b.sessionId, n.A);
		expect(a.parent).toBeNull();
		expect(a.siblings).toEqual([]);
		expect(a.towardLeaf?.entryId).toBe(n.B);
	});

	test("nodes carry bounded previews, not whole contents", () => {
		const big = s.fx("big-output");
		const t = trace(big.sessionId, big.notes.assistantCall);
		const child = t.children[0]!;
		expect(child.entryId).toBe(big.notes.bigToolResult);
		expect(child.preview!.length).toBeLessThanOrEqual(160);
		expect(JSON.stringify(t).length).toBeLessThan(20_000);
	});

	test("several roots: the other root is a sibling", () => {
		const m = s.fx("multi-root");
		const t = trace(m.sessionId, m.notes.root2User);
		expect(t.parent).toBeNull();
		expect(ids(t.siblings)).toEqual([m.notes.root1User]);
		expect(rels(t)).toContainEqual(["sibling", "out", "derived", `${m.sessionId}/${m.notes.root1User}`]);
		expect(t.towardLeaf?.entryId).toBe(m.notes.root2Assistant);
	});
});

describe("typed relationships", () => {
	test("tool-result-for in both directions (one call, and an assistant turn with two calls)", () => {
		const f = s.fx("basic");
		const n = f.notes;
		const sid = f.sessionId;
		expect(rels(trace(sid, n.assistantRead), notLocal)).toEqual([
			["tool-result-for", "in", "recorded", `${sid}/${n.readResult}`],
			["file-read", "out", "recorded", "src/auth/session.ts"],
		]);
		expect(rels(trace(sid, n.readResult), notLocal)).toEqual([["tool-result-for", "out", "recorded", `${sid}/${n.assistantRead}`]]);
		expect(rels(trace(sid, n.assistantEditWrite), notLocal)).toEqual([
			["tool-result-for", "in", "recorded", `${sid}/${n.editResult}`],
			["tool-result-for", "in", "recorded", `${sid}/${n.writeErrorResult}`],
			["file-changed", "out", "recorded", "src/auth/pool.ts"],
			["file-changed", "out", "recorded", "src/auth/session.ts"],
		]);
		expect(rels(trace(sid, n.writeErrorResult), notLocal)).toEqual([["tool-result-for", "out", "recorded", `${sid}/${n.assistantEditWrite}`]]);
	});

	test("labels: label → target and target ← label", () => {
		const f = s.fx("basic");
		const t = trace(f.sessionId, f.notes.firstUser);
		const labelRel = t.relations.filter((r) => r.relation === "labels");
		expect(labelRel).toHaveLength(1);
		expect(labelRel[0]).toMatchObject({ direction: "in", label: "recorded", node: { eventType: "label" } });
		const labelId = labelRel[0]!.node!.entryId;
		expect(rels(trace(f.sessionId, labelId), notLocal)).toEqual([["labels", "out", "recorded", `${f.sessionId}/${f.notes.labelTarget}`]]);
	});

	test("compacts: each compaction points at its first kept entry (both directions); its details give file evidence", () => {
		const c = s.fx("compaction");
		const n = c.notes;
		const sid = c.sessionId;
		expect(rels(trace(sid, n.compaction1), notLocal)).toEqual([
			["compacts", "out", "recorded", `${sid}/${n.compaction1FirstKept}`],
			["file-changed", "out", "recorded", "src/b.ts"],
			["file-read", "out", "recorded", "src/a.ts"],
		]);
		expect(rels(trace(sid, n.compaction2), notLocal)).toContainEqual(["compacts", "out", "recorded", `${sid}/${n.compaction2FirstKept}`]);
		expect(rels(trace(sid, n.compaction1FirstKept), (r) => r.relation === "compacts")).toEqual([["compacts", "in", "recorded", `${sid}/${n.compaction1}`]]);
		expect(rels(trace(sid, n.compaction2FirstKept), (r) => r.relation === "compacts")).toEqual([["compacts", "in", "recorded", `${sid}/${n.compaction2}`]]);
	});

	test("branch-summary-from: the summary points at the old leaf (1.x fromId), and back", () => {
		const b = s.fx("branch-summary");
		const n = b.notes;
		const sid = b.sessionId;
		const t = trace(sid, n.branchSummary);
		expect(rels(t, notLocal)).toEqual([
			["branch-summary-from", "out", "recorded", `${sid}/${n.branchSummaryFromId}`],
			["file-changed", "out", "recorded", "src/routes/users.ts"],
			["file-read", "out", "recorded", "src/routes/users.ts"],
		]);
		expect(t.parent?.entryId).toBe(n.branchFromId);
		expect(rels(trace(sid, n.branchSummaryFromId), (r) => r.relation === "branch-summary-from")).toEqual([
			["branch-summary-from", "in", "recorded", `${sid}/${n.branchSummary}`],
		]);
		// The summary and the abandoned branch are siblings under the branch point.
		expect(ids(t.siblings)).toEqual([n.abandonedUser]);
	});

	test("context edits point at the entry they hide or replace", () => {
		const c = s.fx("context-edit");
		const n = c.notes;
		expect(rels(trace(c.sessionId, n.hideFailed), notLocal)).toEqual([["edits-context-of", "out", "recorded", `${c.sessionId}/${n.hiddenTarget}`]]);
		expect(rels(trace(c.sessionId, n.replacedTarget), (r) => r.relation === "edits-context-of")).toEqual([
			["edits-context-of", "in", "recorded", `${c.sessionId}/${n.replaceToolResult}`],
		]);
	});

	test("an entry with no special relations has none beyond the tree", () => {
		const b = s.fx("branched");
		expect(rels(trace(b.sessionId, b.notes.F), notLocal)).toEqual([]);
	});
});

describe("fork lineage", () => {
	const parent = () => s.fx("fork-parent");
	const forkFrom = () => s.fx("fork-child-forkfrom");
	const branched = () => s.fx("fork-child-branched");

	test("forkFrom child → parent: session-parent and the copied entry by full identity (derived)", () => {
		const p = parent();
		const c = forkFrom();
		const t = trace(c.sessionId, p.notes.user1);
		expect(t.target.sessionId).toBe(c.sessionId);
		expect(rels(t, notLocal)).toEqual([
			["labels", "in", "recorded", `${c.sessionId}/27e7e0fb`],
			["session-parent", "out", "recorded", `session:${p.sessionId}`],
			["copied-from", "out", "derived", `${p.sessionId}/${p.notes.user1}`],
		]);
		const sp = t.relations.find((r) => r.relation === "session-parent")!;
		expect(sp.node).toBeNull();
		expect(sp.session).toEqual({ sessionId: p.sessionId, cwd: "/work/demo/app", name: null });
		const copied = t.relations.find((r) => r.relation === "copied-from")!;
		expect(copied.node).toMatchObject({ sessionId: p.sessionId, entryId: p.notes.user1, parentId: "99b243cb" });
	});

	test("parent → children: each child session and each copy, from both fork kinds", () => {
		const p = parent();
		const c = forkFrom();
		const b = branched();
		const t = trace(p.sessionId, p.notes.user1);
		expect(rels(t, (r) => r.relation === "session-child" || r.relation === "copied-from").sort()).toEqual(
			[
				["session-child", "in", "recorded", `session:${c.sessionId}`],
				["copied-from", "in", "derived", `${c.sessionId}/${p.notes.user1}`],
				["session-child", "in", "recorded", `session:${b.sessionId}`],
				["copied-from", "in", "derived", `${b.sessionId}/${p.notes.user1}`],
			].sort(),
		);
		// The side branch was copied by forkFrom only (createBranchedSession keeps one path).
		const side = trace(p.sessionId, p.notes.sideUser);
		expect(rels(side, (r) => r.relation === "copied-from")).toEqual([["copied-from", "in", "derived", `${c.sessionId}/${p.notes.sideUser}`]]);
		// Entries appended in the child after the fork are not copies.
		const fresh = trace(c.sessionId, c.notes.childUser);
		expect(rels(fresh, notLocal)).toEqual([["session-parent", "out", "recorded", `session:${p.sessionId}`]]);
		// A parent entry with no copies still lists the child sessions.
		expect(rels(trace(p.sessionId, p.notes.sideAssistant), (r) => r.relation === "session-child")).toHaveLength(2);
	});

	test("createBranchedSession child: re-chained parent, copied entries linked, the new label is not a copy", () => {
		const p = parent();
		const b = branched();
		const n = b.notes;
		const t = trace(b.sessionId, n.rechainedEntry);
		expect(t.parent?.entryId).toBe(n.rechainedParentInChild);
		const copied = t.relations.find((r) => r.relation === "copied-from")!;
		expect(copied).toMatchObject({
			direction: "out",
			label: "derived",
			node: { sessionId: p.sessionId, entryId: n.rechainedEntry, parentId: n.rechainedParentInParent },
		});
		const leafOfPath = trace(b.sessionId, n.branchedFromLeaf);
		expect(leafOfPath.children).toHaveLength(1);
		const newLabel = leafOfPath.children[0]!;
		expect(newLabel.eventType).toBe("label");
		const lt = trace(b.sessionId, newLabel.entryId);
		expect(rels(lt, notLocal)).toEqual([
			["labels", "out", "recorded", `${b.sessionId}/${p.notes.labelTarget}`],
			["session-parent", "out", "recorded", `session:${p.sessionId}`],
		]);
		// The parent's own label was left out of the child: it has only the forkFrom copy.
		expect(rels(trace(p.sessionId, "27e7e0fb"), (r) => r.relation === "copied-from")).toEqual([
			["copied-from", "in", "derived", `${s.fx("fork-child-forkfrom").sessionId}/27e7e0fb`],
		]);
	});

	test("a parent outside the caller's root: no parent ids at all, session-parent with node and session null", () => {
		const child = s.fx("fork-outside-root"); // /work/demo/app
		const par = s.fx("fork-outside-parent"); // /work/demo/other
		const app: Scope = { roots: ["/work/demo/app"], current: null };
		for (const entryId of [par.notes.user1, child.notes.childUser]) {
			const t = trace(child.sessionId, entryId, app);
			const lineage = t.relations.filter((r) => ["session-parent", "copied-from"].includes(r.relation));
			expect(lineage).toHaveLength(1);
			expect(lineage[0]).toMatchObject({ relation: "session-parent", direction: "out", label: "recorded", node: null, session: null });
			const json = JSON.stringify(t);
			expect(json).not.toContain(par.sessionId);
			expect(json).not.toContain(par.file);
			expect(json).not.toContain("/work/demo/other");
		}
		// With a scope that includes both, the same trace resolves the parent.
		const both = trace(child.sessionId, par.notes.user1, UNSCOPED);
		expect(rels(both, (r) => ["session-parent", "copied-from"].includes(r.relation))).toEqual([
			["session-parent", "out", "recorded", `session:${par.sessionId}`],
			["copied-from", "out", "derived", `${par.sessionId}/${par.notes.user1}`],
		]);
		// And the parent's side: the child in another root is not revealed.
		const other: Scope = { roots: ["/work/demo/other"], current: null };
		const pt = trace(par.sessionId, par.notes.user1, other);
		expect(pt.relations.filter((r) => r.relation === "session-child" || r.relation === "copied-from")).toEqual([]);
		expect(JSON.stringify(pt)).not.toContain(child.sessionId);
		expect(rels(trace(par.sessionId, par.notes.user1, UNSCOPED), (r) => r.relation === "session-child")).toEqual([
			["session-child", "in", "recorded", `session:${child.sessionId}`],
		]);
	});

	test("a dangling parentSession (the parent file moved away): session-parent with node and session null", () => {
		const d = setupFixtures({ dangling: ["fork-child-forkfrom"] });
		const c = d.fx("fork-child-forkfrom");
		const p = d.fx("fork-parent");
		const t = traceEvent(d.access(), c.sessionId, p.notes.user1);
		const lineage = t.relations.filter((r) => ["session-parent", "copied-from"].includes(r.relation));
		expect(lineage).toHaveLength(1);
		expect(lineage[0]).toMatchObject({ relation: "session-parent", node: null, session: null });
		expect(JSON.stringify(t)).not.toContain(p.sessionId);
		// The parent, indexed at another path, does not claim the dangling child; the intact child remains.
		const pt = traceEvent(d.access(), p.sessionId, p.notes.user1);
		expect(rels(pt, (r) => r.relation === "session-child")).toEqual([["session-child", "in", "recorded", `session:${d.fx("fork-child-branched").sessionId}`]]);
		expect(JSON.stringify(pt)).not.toContain(c.sessionId);
	});
});

describe("fork lineage through another spelling of the same path", () => {
	test("sessions indexed through a symlinked directory still resolve a parentSession recorded with the real path", () => {
		// pi records parentSession as the path it was given; pi-events discovers files under the
		// directory it was given. When one of them goes through a symlink (a symlinked ~/.pi, or
		// --sessions-dir pointing at a link), both name the same indexed, authorized file.
		const t = setupFixtures({ names: ["fork-parent", "fork-child-forkfrom"] });
		const link = join(makeTempDir("pi-events-link-"), "sessions-link");
		symlinkSync(t.sessions, link);
		const db = openIndex(":memory:");
		syncIndex(db, { sourceDirs: [{ path: link, origin: "flag" }] });
		const c = t.fx("fork-child-forkfrom");
		const p = t.fx("fork-parent");
		const tr = traceEvent(new Gate(db, UNSCOPED), c.sessionId, p.notes.user1);
		expect(rels(tr, (r) => ["session-parent", "copied-from"].includes(r.relation))).toEqual([
			["session-parent", "out", "recorded", `session:${p.sessionId}`],
			["copied-from", "out", "derived", `${p.sessionId}/${p.notes.user1}`],
		]);
		db.close();
	});

	test("...and the parent, indexed through the symlink, finds its child", () => {
		const t = setupFixtures({ names: ["fork-parent", "fork-child-forkfrom"] });
		const link = join(makeTempDir("pi-events-link-"), "sessions-link");
		symlinkSync(t.sessions, link);
		const db = openIndex(":memory:");
		syncIndex(db, { sourceDirs: [{ path: link, origin: "flag" }] });
		const c = t.fx("fork-child-forkfrom");
		const p = t.fx("fork-parent");
		const tr = traceEvent(new Gate(db, UNSCOPED), p.sessionId, p.notes.user1);
		expect(rels(tr, (r) => ["session-child", "copied-from"].includes(r.relation))).toEqual([
			["session-child", "in", "recorded", `session:${c.sessionId}`],
			["copied-from", "in", "derived", `${c.sessionId}/${p.notes.user1}`],
		]);
		db.close();
	});
});

describe("authorization", () => {
	test("outside the scope or missing: the same E_NOT_FOUND", () => {
		const other = s.fx("multi-root");
		const app: Scope = { roots: ["/work/demo/app"], current: null };
		const hidden = traceError(other.sessionId, other.notes.root1User, app);
		expect(hidden.code).toBe("E_NOT_FOUND");
		expect(hidden.message).toBe(`no event ${JSON.stringify(other.notes.root1User)} in session ${JSON.stringify(other.sessionId)} in your scope`);
		const missing = traceError(other.sessionId, "deadbeef", UNSCOPED);
		expect(missing.code).toBe("E_NOT_FOUND");
		expect(missing.message).toBe(`no event "deadbeef" in session ${JSON.stringify(other.sessionId)} in your scope`);
	});

	test("the current-session cutoff hides the invoking entry and everything after it from the tree", () => {
		const f = s.fx("basic");
		const scope: Scope = { roots: ["/work/demo/app"], current: { sessionId: f.sessionId, sessionFile: null, toolCallId: f.notes.bashToolCall } };
		expect(traceError(f.sessionId, f.notes.assistantBash, scope).code).toBe("E_NOT_FOUND");
		const t = trace(f.sessionId, f.notes.bashExecution, scope);
		expect(t.parent?.entryId).toBe(f.notes.writeErrorResult);
		expect(t.children).toEqual([]);
		expect(t.towardLeaf).toBeNull();
		expect(rels(t, notLocal)).toEqual([]);
		// The call whose result comes after the cutoff shows no result.
		const before = { roots: scope.roots, current: { ...scope.current!, toolCallId: f.notes.readCall } };
		expect(rels(trace(f.sessionId, f.notes.firstUser, before), (r) => r.relation !== "parent")).toEqual([]);
	});

	test("a trace before the cutoff reveals no entry id appended at or after it (not the materialized leaf either)", () => {
		const f = s.fx("basic");
		const scope: Scope = { roots: ["/work/demo/app"], current: { sessionId: f.sessionId, sessionFile: null, toolCallId: f.notes.bashToolCall } };
		const t = trace(f.sessionId, f.notes.bashExecution, scope);
		const json = JSON.stringify(t);
		for (const id of [f.notes.assistantBash, f.notes.bashToolResult, f.notes.finalAssistant]) expect(json).not.toContain(id);
		expect(t.session.leafEntryId).not.toBe(f.notes.leafId);
	});

	test("a trace before the cutoff does not reveal a session name set after it", () => {
		const f = s.fx("basic");
		const scope: Scope = { roots: ["/work/demo/app"], current: { sessionId: f.sessionId, sessionFile: null, toolCallId: f.notes.bashToolCall } };
		expect(trace(f.sessionId, f.notes.bashExecution, scope).session.name).toBeNull();
	});
});
