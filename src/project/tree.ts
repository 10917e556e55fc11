/**
 * Pure per-session tree classification: the materialized leaf (last appended entry), the selected
 * root-to-leaf path, and for every entry its branchState and selectionState, compaction- and
 * context-edit-aware the way pi 1.x builds model context (buildSessionProjection). Cycle-safe:
 * where pi would loop or guess, this reports `unknown`.
 */
import type { BranchState, SelectionState } from "../model.ts";

export interface TreeNode {
	entryId: string;
	parentId: string | null;
	eventType: string;
	role: string | null;
	/** compaction: firstKeptEntryId; context_edit: targetId. */
	targetId: string | null;
	/** True when the entry has a non-empty summary (branch summaries with no text produce no message). */
	hasSummary?: boolean;
	/** context_edit only: true when the replacement is null (the target leaves the context). */
	removesTarget?: boolean;
	/** True when the entry's id collided with another entry's id in the same file. */
	ambiguousId?: boolean;
}

export interface Classification {
	branchState: BranchState;
	selectionState: SelectionState;
}

/** Entries that can become model messages (pi's sessionEntryToContextMessages). */
export function producesMessages(node: TreeNode): boolean {
	switch (node.eventType) {
		case "message":
		case "custom_message":
		case "compaction":
			return true;
		case "branch_summary":
			return node.hasSummary !== false;
		default:
			return false;
	}
}

/**
 * Classify every node (given in append order). Returns an array aligned with `nodes`.
 */
export function classifySession(nodes: readonly TreeNode[]): Classification[] {
	const result: Classification[] = nodes.map((n) => ({
		branchState: "unknown",
		selectionState: producesMessages(n) ? "unknown" : "not-applicable",
	}));
	if (nodes.length === 0) return result;

	const indexById = new Map<string, number>();
	const ambiguous = new Set<string>();
	nodes.forEach((n, i) => {
		if (indexById.has(n.entryId) || n.ambiguousId) ambiguous.add(n.entryId.replace(/~dup\d+$/, ""));
		indexById.set(n.entryId, i);
	});

	// Which entries sit on a parent chain that loops (or runs through an ambiguous id)?
	const doubtful = findDoubtful(nodes, indexById, ambiguous);
	// Without a trustworthy path to the materialized leaf, nothing is selected or alternate.
	if (doubtful[nodes.length - 1]) return result;

	const path = selectedPath(nodes, indexById);
	const onPath = new Set(path);
	for (let i = 0; i < nodes.length; i++) {
		if (doubtful[i]) continue;
		result[i]!.branchState = onPath.has(i) ? "selected" : "alternate";
		if (!onPath.has(i) && producesMessages(nodes[i]!)) result[i]!.selectionState = "not-selected";
	}
	const { inContext, compactionPos } = compactionContext(nodes, path);
	const removed = removedByContextEdits(nodes, path, inContext);
	for (let pos = 0; pos < path.length; pos++) {
		const nodeIndex = path[pos]!;
		const node = nodes[nodeIndex]!;
		if (!producesMessages(node)) continue;
		let state: SelectionState;
		if (!inContext[pos]) state = "summarized";
		// An older compaction kept inside the newest range contributes nothing: its summary is superseded.
		else if (node.eventType === "compaction" && pos !== compactionPos) state = "summarized";
		else if (removed.has(node.entryId)) state = "not-selected";
		else state = "direct";
		result[nodeIndex]!.selectionState = state;
	}
	return result;
}

/** The selected path: from the materialized leaf (the last appended entry) up to its root, root first. */
function selectedPath(nodes: readonly TreeNode[], indexById: Map<string, number>): number[] {
	const seen = new Set<number>();
	const path: number[] = [];
	let cursor: number | undefined = nodes.length - 1;
	while (cursor !== undefined && !seen.has(cursor)) {
		seen.add(cursor);
		path.push(cursor);
		const parent: string | null = nodes[cursor]!.parentId;
		cursor = parent === null ? undefined : indexById.get(parent);
	}
	return path.reverse();
}

/**
 * Which positions of the path are in the model context: with a compaction, only the latest on the
 * path counts, and before it only the entries from its first kept entry on (system prompts never).
 */
function compactionContext(nodes: readonly TreeNode[], path: number[]): { inContext: boolean[]; compactionPos: number } {
	let compactionPos = -1;
	path.forEach((nodeIndex, pos) => {
		if (nodes[nodeIndex]!.eventType === "compaction") compactionPos = pos;
	});
	const inContext = new Array<boolean>(path.length).fill(compactionPos < 0);
	if (compactionPos >= 0) {
		const compaction = nodes[path[compactionPos]!]!;
		inContext[compactionPos] = true;
		let foundFirstKept = false;
		for (let pos = 0; pos < compactionPos; pos++) {
			const node = nodes[path[pos]!]!;
			if (node.entryId === compaction.targetId) foundFirstKept = true;
			const isSystem = node.eventType === "message" && node.role === "system";
			inContext[pos] = foundFirstKept && !isSystem;
		}
		for (let pos = compactionPos + 1; pos < path.length; pos++) inContext[pos] = true;
	}
	return { inContext, compactionPos };
}

/** Context edits: the latest edit per target among the context entries decides whether it is removed. */
function removedByContextEdits(nodes: readonly TreeNode[], path: number[], inContext: boolean[]): Set<string> {
	const removed = new Set<string>();
	for (let pos = 0; pos < path.length; pos++) {
		if (!inContext[pos]) continue;
		const node = nodes[path[pos]!]!;
		if (node.eventType !== "context_edit" || node.targetId === null) continue;
		if (node.removesTarget) removed.add(node.targetId);
		else removed.delete(node.targetId);
	}
	return removed;
}

/** Nodes whose ancestry contains a cycle or an ambiguous (duplicated) id. */
function findDoubtful(nodes: readonly TreeNode[], indexById: Map<string, number>, ambiguous: Set<string>): boolean[] {
	const verdict = new Array<0 | 1 | 2>(nodes.length).fill(0); // 0 unknown yet, 1 fine, 2 doubtful
	for (let start = 0; start < nodes.length; start++) {
		if (verdict[start] !== 0) continue;
		const trail: number[] = [];
		const onTrail = new Set<number>();
		let cursor: number | undefined = start;
		let outcome: 1 | 2 = 1;
		while (cursor !== undefined) {
			if (verdict[cursor] !== 0) {
				outcome = verdict[cursor] as 1 | 2;
				break;
			}
			if (onTrail.has(cursor)) {
				outcome = 2;
				break;
			}
			const node: TreeNode = nodes[cursor]!;
			if (ambiguous.has(node.entryId.replace(/~dup\d+$/, ""))) {
				outcome = 2;
				trail.push(cursor);
				break;
			}
			onTrail.add(cursor);
			trail.push(cursor);
			cursor = node.parentId === null ? undefined : indexById.get(node.parentId);
		}
		for (const i of trail) verdict[i] = outcome;
	}
	return verdict.map((v) => v === 2);
}
