/**
 * Traces (`pi-events trace`, `event_trace`): the target's parent, children, siblings, the
 * neighbour toward the materialized leaf, and typed relationships labelled recorded / derived /
 * inferred. Nodes carry bounded metadata and previews, never whole contents. Cross-session
 * lineage resolves `parentSession` only to indexed, authorized files, and stops at anything else
 * without revealing it.
 */
import type { EventRow, Gate, VisibleSession } from "../gate/gate.ts";
import { type EventView, eventView } from "./views.ts";

/** Most children and siblings listed in a trace (the totals are always given). */
const MAX_TRACE_NODES = 50;

type RelationLabel = "recorded" | "derived" | "inferred";

export interface Relation {
	relation: string;
	/** "out": target → node; "in": node → target. */
	direction: "out" | "in";
	label: RelationLabel;
	node: EventView | null;
	/** For relations to paths or sessions rather than events. */
	path?: string;
	session?: { sessionId: string; cwd: string | null; name: string | null } | null;
	note?: string;
}

export interface TraceResult {
	target: EventView;
	session: { sessionId: string; cwd: string | null; name: string | null; file: string; leafEntryId: string | null };
	parent: EventView | null;
	/** At most MAX_TRACE_NODES each; the totals say how many there are. */
	children: EventView[];
	siblings: EventView[];
	childrenTotal: number;
	siblingsTotal: number;
	/** The adjacent node on the way to the materialized leaf (null when the target is the leaf). */
	towardLeaf: EventView | null;
	relations: Relation[];
}

export function traceEvent(gate: Gate, sessionId: string, entryId: string): TraceResult {
	const { session, event } = gate.event(gate.resolveSessionId(sessionId), entryId);
	const view = (r: EventRow) => eventView(r, session);

	const parent = event.parent_id ? session.event(event.parent_id) : null;
	const allChildren = session.children(event.entry_id);
	const allSiblings = (parent ? session.children(parent.entry_id) : session.roots()).filter((r) => r.entry_id !== event.entry_id);
	// Bounded output: a node with 100,000 children must not produce 100,000 previews.
	const children = allChildren.slice(0, MAX_TRACE_NODES);
	const siblingRows = allSiblings.slice(0, MAX_TRACE_NODES);

	let towardLeaf: EventRow | null = null;
	if (event.branch_state === "selected") towardLeaf = allChildren.find((c) => c.branch_state === "selected") ?? null;
	else if (event.branch_state === "alternate") towardLeaf = parent;

	const relations: Relation[] = [];
	const rel = (relation: string, direction: Relation["direction"], label: RelationLabel, row: EventRow) =>
		relations.push({ relation, direction, label, node: view(row) });
	if (parent) rel("parent", "out", "recorded", parent);
	for (const c of children) rel("child", "out", "recorded", c);
	for (const s of siblingRows) rel("sibling", "out", "derived", s);

	relations.push(...recordedLinks(session, event, view));
	relations.push(...lineage(gate, session, event));

	const row = session.row;
	return {
		target: view(event),
		session: { sessionId: row.session_id, cwd: row.cwd, file: row.path, name: row.name || null, leafEntryId: row.leaf_entry },
		parent: parent ? view(parent) : null,
		children: children.map(view),
		siblings: siblingRows.map(view),
		childrenTotal: allChildren.length,
		siblingsTotal: allSiblings.length,
		towardLeaf: towardLeaf ? view(towardLeaf) : null,
		relations,
	};
}

/** Links recorded in the event or pointing at it: tool call and result, compaction, summary, label and edit pointers, files. */
function recordedLinks(session: VisibleSession, event: EventRow, view: (r: EventRow) => EventView): Relation[] {
	const relations: Relation[] = [];
	const link = (relation: string, direction: Relation["direction"], label: RelationLabel, row: EventRow) =>
		relations.push({ relation, direction, label, node: view(row) });
	// Tool calls and their results share a recorded tool-call id.
	if (event.tool_call_id) {
		const caller = session.callerOf(event.tool_call_id);
		if (caller) link("tool-result-for", "out", "recorded", caller);
	}
	for (const callId of event.call_ids ? (JSON.parse(event.call_ids) as string[]) : []) {
		for (const result of session.resultsFor(callId)) link("tool-result-for", "in", "recorded", result);
	}

	// Pointers recorded in the target (compaction boundary, branch-summary source, label/edit target).
	const pointerRelation: Record<string, string> = {
		compaction: "compacts",
		branch_summary: "branch-summary-from",
		label: "labels",
		context_edit: "edits-context-of",
	};
	const outgoing = pointerRelation[event.event_type];
	if (outgoing && event.target_id) {
		const target = session.event(event.target_id);
		if (target) link(outgoing, "out", "recorded", target);
		else
			relations.push({
				relation: outgoing,
				direction: "out",
				label: "recorded",
				node: null,
				note: `points at ${JSON.stringify(event.target_id)}, which is not in this session's index`,
			});
	}
	for (const pointer of session.pointingAt(event.entry_id)) {
		const relation = pointerRelation[pointer.event_type];
		if (relation) link(relation, "in", "recorded", pointer);
	}

	for (const f of session.files(event)) {
		relations.push({ relation: f.op === "read" ? "file-read" : "file-changed", direction: "out", label: "recorded", node: null, path: f.path });
	}
	return relations;
}

/**
 * Cross-session lineage. The header's parentSession (a path, possibly relative) is resolved only
 * to an indexed file whose session is authorized; within it, an entry with the same id is a copy
 * made by pi's fork operations. Children that name this session as parent are found the same way.
 */
function lineage(gate: Gate, session: VisibleSession, event: EventRow): Relation[] {
	const out: Relation[] = [];
	if (session.row.parent_session) {
		const parent = session.row.parent_real ? gate.sessionAtPath(session.row.parent_real) : null;
		if (parent) {
			out.push({ relation: "session-parent", direction: "out", label: "recorded", node: null, session: sessionInfo(parent) });
			const copy = event.id_derived ? null : parent.event(event.entry_id);
			if (copy) out.push({ relation: "copied-from", direction: "out", label: "derived", node: eventView(copy, parent) });
		} else {
			out.push({
				relation: "session-parent",
				direction: "out",
				label: "recorded",
				node: null,
				session: null,
				note: "the parent session is not available (not indexed, moved, or outside your scope)",
			});
		}
	}
	for (const child of gate.childSessions(session)) {
		out.push({ relation: "session-child", direction: "in", label: "recorded", node: null, session: sessionInfo(child) });
		const copy = event.id_derived ? null : child.event(event.entry_id);
		if (copy) out.push({ relation: "copied-from", direction: "in", label: "derived", node: eventView(copy, child) });
	}
	return out;
}

function sessionInfo(s: VisibleSession) {
	return { sessionId: s.row.session_id, cwd: s.row.cwd, name: s.row.name || null };
}
