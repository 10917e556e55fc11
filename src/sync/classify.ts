/**
 * Branch and selection states after a sync: the whole session through the pure tree rules, or,
 * for the common linear append, only the new entries.
 */
import type { ProjectedEvent } from "../project/projector.ts";
import { type Classification, classifySession, producesMessages, type TreeNode } from "../project/tree.ts";
import { startsTurn, turnPromptPositions } from "../project/turn.ts";
import type { IndexWriter, TreeRow } from "../store/write.ts";

function toNode(row: TreeRow): TreeNode {
	return nodeOf(row.entry_id, row.parent_id, row.event_type, row.role, row.target_id, row.meta ? (JSON.parse(row.meta) as TreeMeta) : {});
}

type TreeMeta = { emptySummary?: boolean; removesTarget?: boolean };

function nodeOf(entryId: string, parentId: string | null, eventType: string, role: string | null, targetId: string | null, meta: TreeMeta): TreeNode {
	return {
		entryId,
		parentId,
		eventType,
		role,
		targetId,
		hasSummary: !meta.emptySummary,
		removesTarget: meta.removesTarget === true,
		ambiguousId: /~dup\d+$/.test(entryId),
	};
}

/**
 * The states of a whole session from its projected events (append order), before they are
 * written: what classifyFull computes from the rows, so a new file needs no UPDATE per event.
 * Meta counts only for the two kinds loadTreeRows reads it for.
 */
export function classifyEvents(events: readonly ProjectedEvent[]): EventClassification[] {
	const nodes = events.map((e) =>
		nodeOf(e.entryId, e.parentId, e.eventType, e.role, e.targetId, e.eventType === "branch_summary" || e.eventType === "context_edit" ? e.meta : {}),
	);
	return withTurns(classifySession(nodes), nodes, (i) => events[i]!.seq);
}

/** A tree classification and the turn: the append position (seq) of the turn's prompt, null before the first prompt. */
export type EventClassification = Classification & { turnSeq: number | null };

function withTurns(states: Classification[], nodes: readonly TreeNode[], seqAt: (i: number) => number): EventClassification[] {
	const prompts = turnPromptPositions(nodes);
	return states.map((s, i) => {
		const prompt = prompts[i];
		return { ...s, turnSeq: prompt === null || prompt === undefined ? null : seqAt(prompt) };
	});
}

export function classifyFull(writer: IndexWriter, sessionKey: number): void {
	const rows = writer.loadTreeRows(sessionKey);
	const nodes = rows.map(toNode);
	const states = withTurns(classifySession(nodes), nodes, (i) => rows[i]!.seq);
	rows.forEach((row, i) => {
		const s = states[i]!;
		if (s.branchState !== row.branch_state || s.selectionState !== row.selection_state || s.turnSeq !== row.turn_seq) {
			writer.updateTreeState(row.event_key, s.branchState, s.selectionState, s.turnSeq);
		}
	});
}

/**
 * The common append extends the selected path from the old leaf with plain entries: old states
 * stay right and the new entries are selected. Anything else (a new branch, a compaction, a
 * context edit, a duplicate id) reclassifies the whole session.
 */
export function classifyAfterAppend(
	writer: IndexWriter,
	sessionKey: number,
	oldLeaf: { entry_id: string; branch_state: string; turn_seq: number | null } | null,
	added: ProjectedEvent[],
): void {
	let previous = oldLeaf?.entry_id ?? null;
	let linear = oldLeaf !== null && oldLeaf.branch_state === "selected";
	for (const e of added) {
		if (!linear) break;
		const special = e.eventType === "compaction" || e.eventType === "context_edit" || (e.idDerived && /~dup\d+$/.test(e.entryId));
		// An earlier entry naming this id as its parent (a forward reference) can close a cycle.
		if (e.parentId !== previous || special || writer.hasEarlierChildNamed(sessionKey, e.entryId, e.seq)) linear = false;
		previous = e.entryId;
	}
	if (!linear) {
		classifyFull(writer, sessionKey);
		return;
	}
	const rows = writer.loadTreeRowsTail(sessionKey, added[0]!.seq);
	// Each new entry's parent is the one before it (the first's, the old leaf): a prompt starts a turn, anything else continues its parent's.
	let turn = oldLeaf?.turn_seq ?? null;
	for (const row of rows) {
		const node = toNode(row);
		if (startsTurn(node)) turn = row.seq;
		writer.updateTreeState(row.event_key, "selected", producesMessages(node) ? "direct" : "not-applicable", turn);
	}
}
