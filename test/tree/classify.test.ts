/**
 * Pure table tests of project/tree.ts classifySession: the materialized leaf (last appended
 * entry), branchState along the root-to-leaf path, and selectionState the way pi 1.x builds the
 * model context (latest compaction on the path, its firstKeptEntryId boundary, context edits,
 * empty branch summaries), plus the shapes where the classifier must say `unknown` rather than
 * guess (parentId cycles, duplicate ids) without looping.
 */
import { describe, expect, test } from "bun:test";
import { type Classification, classifySession, producesMessages, type TreeNode } from "../../src/project/tree.ts";

type Extra = Partial<Omit<TreeNode, "entryId" | "parentId">>;

/** A user message (default) or any other entry type. */
function node(entryId: string, parentId: string | null, extra: Extra = {}): TreeNode {
	const eventType = extra.eventType ?? "message";
	return {
		entryId,
		parentId,
		eventType,
		role: extra.role !== undefined ? extra.role : eventType === "message" ? "user" : null,
		targetId: extra.targetId ?? null,
		...(extra.hasSummary !== undefined ? { hasSummary: extra.hasSummary } : {}),
		...(extra.removesTarget !== undefined ? { removesTarget: extra.removesTarget } : {}),
		...(extra.ambiguousId !== undefined ? { ambiguousId: extra.ambiguousId } : {}),
	};
}
const assistant = (id: string, parent: string | null) => node(id, parent, { role: "assistant" });
const system = (id: string, parent: string | null) => node(id, parent, { role: "system" });
const compaction = (id: string, parent: string, firstKept: string | null) => node(id, parent, { eventType: "compaction", targetId: firstKept });
const contextEdit = (id: string, parent: string, target: string, removes: boolean) =>
	node(id, parent, { eventType: "context_edit", targetId: target, removesTarget: removes });

/** Classify and return `{ id: "branchState/selectionState" }` for compact exact assertions. */
function classify(nodes: TreeNode[]): Record<string, string> {
	const states: Classification[] = classifySession(nodes);
	expect(states).toHaveLength(nodes.length);
	const out: Record<string, string> = {};
	nodes.forEach((n, i) => {
		const key = out[n.entryId] !== undefined ? `${n.entryId}#${i}` : n.entryId;
		out[key] = `${states[i]!.branchState}/${states[i]!.selectionState}`;
	});
	return out;
}

describe("classifySession: the design example", () => {
	// A -> B -> C -> D (old branch), then branch(B): E -> F. Append order A..F, leaf F.
	const tree = [node("A", null), assistant("B", "A"), node("C", "B"), assistant("D", "C"), node("E", "B"), assistant("F", "E")];

	test("A, B, E, F are selected and direct; C, D are alternate and not selected", () => {
		expect(classify(tree)).toEqual({
			A: "selected/direct",
			B: "selected/direct",
			C: "alternate/not-selected",
			D: "alternate/not-selected",
			E: "selected/direct",
			F: "selected/direct",
		});
	});

	test("the materialized leaf is the last appended entry, not the deepest or the first branch", () => {
		// Same tree, but the old branch's D is appended last: now C, D are selected and E, F alternate.
		const reordered = [node("A", null), assistant("B", "A"), node("E", "B"), assistant("F", "E"), node("C", "B"), assistant("D", "C")];
		expect(classify(reordered)).toEqual({
			A: "selected/direct",
			B: "selected/direct",
			E: "alternate/not-selected",
			F: "alternate/not-selected",
			C: "selected/direct",
			D: "selected/direct",
		});
	});

	test("a leaf in the middle of the tree (an appended child of B) leaves both old branches alternate", () => {
		const withG = [...tree, node("G", "B")];
		const got = classify(withG);
		expect(got.G).toBe("selected/direct");
		expect(got.B).toBe("selected/direct");
		for (const id of ["C", "D", "E", "F"]) expect(got[id]).toBe("alternate/not-selected");
	});

	test("an empty session classifies to nothing", () => {
		expect(classifySession([])).toEqual([]);
	});

	test("a single root entry is selected", () => {
		expect(classify([node("only", null)])).toEqual({ only: "selected/direct" });
	});
});

describe("classifySession: compaction", () => {
	test("entries before firstKeptEntryId are summarized, the kept range and everything after are direct", () => {
		const nodes = [
			node("u1", null),
			assistant("a1", "u1"),
			node("u2", "a1"),
			assistant("a2", "u2"),
			compaction("c", "a2", "u2"),
			node("u3", "c"),
			assistant("a3", "u3"),
		];
		expect(classify(nodes)).toEqual({
			u1: "selected/summarized",
			a1: "selected/summarized",
			u2: "selected/direct",
			a2: "selected/direct",
			c: "selected/direct",
			u3: "selected/direct",
			a3: "selected/direct",
		});
	});

	test("system messages before the compaction never count directly, even inside the kept range (pi snapshots them into the compaction)", () => {
		const nodes = [
			system("s0", null),
			node("u1", "s0"),
			assistant("a1", "u1"),
			system("s1", "a1"),
			node("u2", "s1"),
			compaction("c", "u2", "u1"),
			system("s2", "c"),
			node("u3", "s2"),
		];
		const got = classify(nodes);
		expect(got.s0).toBe("selected/summarized");
		expect(got.s1).toBe("selected/summarized");
		expect(got.u1).toBe("selected/direct");
		expect(got.a1).toBe("selected/direct");
		expect(got.u2).toBe("selected/direct");
		expect(got.c).toBe("selected/direct");
		// After the latest compaction every message counts again, a system message included.
		expect(got.s2).toBe("selected/direct");
		expect(got.u3).toBe("selected/direct");
	});

	test("firstKeptEntryId not on the selected path: everything before the compaction is summarized", () => {
		const nodes = [
			node("u1", null),
			assistant("a1", "u1"),
			node("side", "u1"), // an alternate branch: the compaction points here
			node("u2", "a1"),
			compaction("c", "u2", "side"),
			node("u3", "c"),
		];
		expect(classify(nodes)).toEqual({
			u1: "selected/summarized",
			a1: "selected/summarized",
			side: "alternate/not-selected",
			u2: "selected/summarized",
			c: "selected/direct",
			u3: "selected/direct",
		});
	});

	test("firstKeptEntryId missing from the session (or null) summarizes everything before", () => {
		for (const firstKept of ["no-such-id", null]) {
			const nodes = [node("u1", null), assistant("a1", "u1"), compaction("c", "a1", firstKept), node("u2", "c")];
			expect(classify(nodes)).toEqual({
				u1: "selected/summarized",
				a1: "selected/summarized",
				c: "selected/direct",
				u2: "selected/direct",
			});
		}
	});

	test("only the latest compaction on the path counts; an older one before its kept range is summarized", () => {
		const nodes = [
			node("u1", null),
			assistant("a1", "u1"),
			node("u2", "a1"),
			assistant("a2", "u2"),
			compaction("c1", "a2", "u2"),
			node("u3", "c1"),
			assistant("a3", "u3"),
			compaction("c2", "a3", "u3"),
			node("u4", "c2"),
		];
		expect(classify(nodes)).toEqual({
			u1: "selected/summarized",
			a1: "selected/summarized",
			u2: "selected/summarized",
			a2: "selected/summarized",
			c1: "selected/summarized",
			u3: "selected/direct",
			a3: "selected/direct",
			c2: "selected/direct",
			u4: "selected/direct",
		});
	});

	test("an older compaction inside the newest kept range contributes nothing (superseded), its kept neighbours stay direct", () => {
		const nodes = [
			node("u1", null),
			assistant("a1", "u1"),
			node("u2", "a1"),
			assistant("a2", "u2"),
			compaction("c1", "a2", "u2"),
			node("u3", "c1"),
			assistant("a3", "u3"),
			compaction("c2", "a3", "a2"), // kept range starts before c1
			node("u4", "c2"),
		];
		expect(classify(nodes)).toEqual({
			u1: "selected/summarized",
			a1: "selected/summarized",
			u2: "selected/summarized",
			a2: "selected/direct",
			c1: "selected/summarized",
			u3: "selected/direct",
			a3: "selected/direct",
			c2: "selected/direct",
			u4: "selected/direct",
		});
	});

	test("a compaction on an abandoned branch does not affect the selected path", () => {
		const nodes = [
			node("u1", null),
			assistant("a1", "u1"),
			node("u2", "a1"),
			assistant("a2", "u2"),
			compaction("c", "a2", "u2"),
			node("u3", "c"),
			node("b1", "a1"), // branch from a1, after the compaction
			assistant("b2", "b1"),
		];
		expect(classify(nodes)).toEqual({
			u1: "selected/direct",
			a1: "selected/direct",
			u2: "alternate/not-selected",
			a2: "alternate/not-selected",
			c: "alternate/not-selected",
			u3: "alternate/not-selected",
			b1: "selected/direct",
			b2: "selected/direct",
		});
	});
});

describe("classifySession: context edits", () => {
	test("a context_edit with replacement null removes its target from the context", () => {
		const nodes = [node("u1", null), assistant("bad", "u1"), contextEdit("hide", "bad", "bad", true), node("u2", "hide"), assistant("a2", "u2")];
		expect(classify(nodes)).toEqual({
			u1: "selected/direct",
			bad: "selected/not-selected",
			hide: "selected/not-applicable",
			u2: "selected/direct",
			a2: "selected/direct",
		});
	});

	test("a replacement keeps the target direct (its content changes, it still produces a message)", () => {
		const nodes = [node("u1", null), node("r1", "u1", { role: "toolResult" }), contextEdit("rep", "r1", "r1", false)];
		expect(classify(nodes)).toEqual({ u1: "selected/direct", r1: "selected/direct", rep: "selected/not-applicable" });
	});

	test("the latest edit of a target decides (remove then replace = direct; replace then remove = removed)", () => {
		const restore = [node("u1", null), contextEdit("e1", "u1", "u1", true), contextEdit("e2", "e1", "u1", false)];
		expect(classify(restore).u1).toBe("selected/direct");
		const remove = [node("u1", null), contextEdit("e1", "u1", "u1", false), contextEdit("e2", "e1", "u1", true)];
		expect(classify(remove).u1).toBe("selected/not-selected");
	});

	test("an edit on an abandoned branch does not apply to the selected path", () => {
		const nodes = [node("u1", null), assistant("a1", "u1"), contextEdit("hide", "a1", "a1", true), node("u2", "a1")];
		expect(classify(nodes)).toEqual({
			u1: "selected/direct",
			a1: "selected/direct",
			hide: "alternate/not-applicable",
			u2: "selected/direct",
		});
	});

	test("an edit summarized away by a later compaction no longer applies", () => {
		// The edit lies before the compaction's kept range, so pi drops it with the rest.
		const nodes = [node("u1", null), contextEdit("hide", "u1", "u1", true), node("u2", "hide"), compaction("c", "u2", "u2")];
		const got = classify(nodes);
		expect(got.u1).toBe("selected/summarized");
		expect(got.u2).toBe("selected/direct");
		// And an edit inside the kept range still removes a kept target.
		const kept = [node("u1", null), node("u2", "u1"), contextEdit("hide", "u2", "u2", true), compaction("c", "hide", "u2")];
		expect(classify(kept).u2).toBe("selected/not-selected");
	});

	test("removing the latest compaction itself removes its summary", () => {
		const nodes = [node("u1", null), compaction("c", "u1", null), contextEdit("hide", "c", "c", true), node("u2", "hide")];
		expect(classify(nodes).c).toBe("selected/not-selected");
	});
});

describe("classifySession: branch summaries and entries that never become messages", () => {
	test("a branch_summary with text is direct; an empty one produces no message (not-applicable)", () => {
		const nodes = [
			node("u1", null),
			node("abandoned", "u1"),
			node("bs", "u1", { eventType: "branch_summary", targetId: "abandoned", hasSummary: true }),
			node("bsEmpty", "bs", { eventType: "branch_summary", targetId: "abandoned", hasSummary: false }),
			node("u2", "bsEmpty"),
		];
		expect(classify(nodes)).toEqual({
			u1: "selected/direct",
			abandoned: "alternate/not-selected",
			bs: "selected/direct",
			bsEmpty: "selected/not-applicable",
			u2: "selected/direct",
		});
	});

	test("metadata and control entries are not-applicable on and off the path; custom_message is a message", () => {
		const meta = ["model_change", "thinking_level_change", "label", "custom", "session_info", "usage", "title_change", "some_future_type"];
		const nodes: TreeNode[] = [node("u1", null)];
		let parent = "u1";
		for (const t of meta) {
			nodes.push(node(t, parent, { eventType: t }));
			parent = t;
		}
		nodes.push(node("cm", parent, { eventType: "custom_message" }));
		// The same types on an abandoned branch off u1.
		nodes.push(node("alt-label", "u1", { eventType: "label", targetId: "u1" }), node("alt-cm", "alt-label", { eventType: "custom_message" }));
		nodes.push(node("leaf", "cm"));
		const got = classify(nodes);
		for (const t of meta) expect(got[t]).toBe("selected/not-applicable");
		expect(got.cm).toBe("selected/direct");
		expect(got["alt-label"]).toBe("alternate/not-applicable");
		expect(got["alt-cm"]).toBe("alternate/not-selected");
		expect(got.leaf).toBe("selected/direct");
	});

	test("producesMessages follows pi's sessionEntryToContextMessages", () => {
		expect(producesMessages(node("m", null))).toBe(true);
		expect(producesMessages(node("cm", null, { eventType: "custom_message" }))).toBe(true);
		expect(producesMessages(node("c", null, { eventType: "compaction" }))).toBe(true);
		expect(producesMessages(node("b", null, { eventType: "branch_summary" }))).toBe(true);
		expect(producesMessages(node("b", null, { eventType: "branch_summary", hasSummary: false }))).toBe(false);
		for (const t of ["label", "custom", "context_edit", "model_change", "thinking_level_change", "session_info", "usage"]) {
			expect(producesMessages(node("x", null, { eventType: t }))).toBe(false);
		}
	});
});

describe("classifySession: several roots, orphans, cycles, duplicate ids", () => {
	test("several roots: only the leaf's tree is selected", () => {
		const nodes = [node("r1", null), assistant("r1a", "r1"), node("r2", null), assistant("r2a", "r2")];
		expect(classify(nodes)).toEqual({
			r1: "alternate/not-selected",
			r1a: "alternate/not-selected",
			r2: "selected/direct",
			r2a: "selected/direct",
		});
	});

	test("an orphan (parent id not in the file) is a root of its own, like pi treats it", () => {
		const nodes = [node("u1", null), assistant("a1", "u1"), node("x1", "missing9"), assistant("x2", "x1")];
		expect(classify(nodes)).toEqual({
			u1: "alternate/not-selected",
			a1: "alternate/not-selected",
			x1: "selected/direct",
			x2: "selected/direct",
		});
	});

	test("a parentId cycle holding the leaf makes everything unknown, and terminates", () => {
		const nodes = [node("n1", null), assistant("n2", "n1"), node("n3", "n2"), node("a", "b"), assistant("b", "a")];
		expect(classify(nodes)).toEqual({
			n1: "unknown/unknown",
			n2: "unknown/unknown",
			n3: "unknown/unknown",
			a: "unknown/unknown",
			b: "unknown/unknown",
		});
	});

	test("a leaf below a cycle is unknown too (its ancestry never reaches a root)", () => {
		const nodes = [node("a", "b"), node("b", "a"), node("c", "b"), node("label", "c", { eventType: "label" })];
		expect(classify(nodes)).toEqual({
			a: "unknown/unknown",
			b: "unknown/unknown",
			c: "unknown/unknown",
			label: "unknown/not-applicable",
		});
	});

	test("a self-parented entry is a cycle", () => {
		expect(classify([node("self", "self")])).toEqual({ self: "unknown/unknown" });
	});

	test("a cycle away from the selected path stays unknown while the path is classified", () => {
		const nodes = [node("n1", null), node("a", "b"), node("b", "a"), node("ac", "a"), assistant("n2", "n1")];
		expect(classify(nodes)).toEqual({
			n1: "selected/direct",
			a: "unknown/unknown",
			b: "unknown/unknown",
			ac: "unknown/unknown",
			n2: "selected/direct",
		});
	});

	test("a long chain is classified without recursion limits", () => {
		const nodes: TreeNode[] = [node("e0", null)];
		for (let i = 1; i < 20_000; i++) nodes.push(node(`e${i}`, `e${i - 1}`));
		const states = classifySession(nodes);
		expect(states.every((s) => s.branchState === "selected" && s.selectionState === "direct")).toBe(true);
	});

	test("duplicate ids as the indexer stores them (second copy renamed ~dupN, flagged ambiguous): unknown", () => {
		const nodes = [
			node("u1", null),
			assistant("a1", "u1"),
			node("dup1", "a1"),
			node("dup1~dup1", "a1", { ambiguousId: true }),
			assistant("a2", "dup1"), // whose child is it? pi keeps the last one; we do not guess
		];
		expect(classify(nodes)).toEqual({
			u1: "unknown/unknown",
			a1: "unknown/unknown",
			dup1: "unknown/unknown",
			"dup1~dup1": "unknown/unknown",
			a2: "unknown/unknown",
		});
	});

	test("raw duplicate ids (same entryId twice) are unknown too", () => {
		const nodes = [node("u1", null), node("d", "u1"), node("d", "u1"), assistant("a2", "d")];
		const states = classifySession(nodes);
		expect(states.map((s) => `${s.branchState}/${s.selectionState}`)).toEqual(["unknown/unknown", "unknown/unknown", "unknown/unknown", "unknown/unknown"]);
	});

	test("duplicates off the selected path do not spoil the path", () => {
		const nodes = [node("u1", null), assistant("a1", "u1"), node("d", "a1"), node("d~dup1", "a1", { ambiguousId: true }), node("u2", "a1")];
		expect(classify(nodes)).toEqual({
			u1: "selected/direct",
			a1: "selected/direct",
			d: "unknown/unknown",
			"d~dup1": "unknown/unknown",
			u2: "selected/direct",
		});
	});
});
