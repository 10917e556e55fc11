/**
 * Traces (`pi-events trace`, `event_trace`): the target's parent, children, siblings, the
 * neighbour toward the materialized leaf, and typed relationships labelled recorded / derived /
 * inferred. Nodes carry bounded metadata and previews, never whole contents. Cross-session
 * lineage resolves `parentSession` only to indexed, authorized files, and stops at anything else
 * without revealing it.
 */
import type { EventRow, SessionRow } from "../store/events.ts";
import type { Access } from "./access.ts";
import { type EventView, eventView } from "./views.ts";

/** Most children and siblings listed in a trace (the totals are always given). */
export const MAX_TRACE_NODES = 50;

export type RelationLabel = "recorded" | "derived" | "inferred";

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

export function traceEvent(access: Access, sessionId: string, entryId: string): TraceResult {
	const { session, event } = access.event(sessionId, entryId);
	const store = access.store;
	const visible = (r: EventRow | null | undefined): r is EventRow => !!r && access.eventVisible(session, r);
	const view = (r: EventRow) => eventView(r, session, store);

	const parentRow = event.parent_id ? store.event(session.session_key, event.parent_id) : null;
	const parent = visible(parentRow) ? parentRow : null;
	const allChildren = store.children(session.session_key, event.entry_id).filter(visible);
	const allSiblings = (parent ? store.children(session.session_key, parent.entry_id) : store.roots(session.session_key)).filter(
		(r) => r.entry_id !== event.entry_id && visible(r),
	);
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

	// Tool calls and their results share a recorded tool-call id.
	if (event.tool_call_id) {
		const caller = store.callerOf(session.session_key, event.tool_call_id);
		if (visible(caller)) rel("tool-result-for", "out", "recorded", caller);
	}
	for (const callId of event.call_ids ? (JSON.parse(event.call_ids) as string[]) : []) {
		for (const result of store.resultsFor(session.session_key, callId)) if (visible(result)) rel("tool-result-for", "in", "recorded", result);
	}

	// Pointers recorded in the target (compaction boundary, branch-summary source, label/edit target).
	const pointerRelation: Record<string, string> = { compaction: "compacts", branch_summary: "branch-summary-from", label: "labels", context_edit: "edits-context-of" };
	const outgoing = pointerRelation[event.event_type];
	if (outgoing && event.target_id) {
		const target = store.event(session.session_key, event.target_id);
		if (visible(target)) rel(outgoing, "out", "recorded", target);
		else relations.push({ relation: outgoing, direction: "out", label: "recorded", node: null, note: `points at ${JSON.stringify(event.target_id)}, which is not in this session's index` });
	}
	for (const pointer of store.pointingAt(session.session_key, event.entry_id)) {
		const relation = pointerRelation[pointer.event_type];
		if (relation && visible(pointer)) rel(relation, "in", "recorded", pointer);
	}

	for (const f of store.files(event.event_key)) {
		relations.push({ relation: f.op === "read" ? "file-read" : "file-changed", direction: "out", label: "recorded", node: null, path: f.path });
	}

	relations.push(...lineage(access, session, event));

	return {
		target: view(event),
		session: { sessionId: session.session_id, cwd: session.cwd, file: session.path, ...access.sessionFacts(session) },
		parent: parent ? view(parent) : null,
		children: children.map(view),
		siblings: siblingRows.map(view),
		childrenTotal: allChildren.length,
		siblingsTotal: allSiblings.length,
		towardLeaf: towardLeaf ? view(towardLeaf) : null,
		relations,
	};
}

/**
 * Cross-session lineage. The header's parentSession (a path, possibly relative) is resolved only
 * to an indexed file whose session is authorized; within it, an entry with the same id is a copy
 * made by pi's fork operations. Children that name this session as parent are found the same way.
 */
function lineage(access: Access, session: SessionRow, event: EventRow): Relation[] {
	const store = access.store;
	const out: Relation[] = [];
	if (session.parent_session) {
		const parent = session.parent_real ? store.sessionByRealPath(session.parent_real) : null;
		if (parent && access.sessionVisible(parent)) {
			out.push({ relation: "session-parent", direction: "out", label: "recorded", node: null, session: sessionInfo(parent, access) });
			const copy = store.event(parent.session_key, event.entry_id);
			if (copy && !event.id_derived && access.eventVisible(parent, copy)) {
				out.push({ relation: "copied-from", direction: "out", label: "derived", node: eventView(copy, parent, store) });
			}
		} else {
			out.push({ relation: "session-parent", direction: "out", label: "recorded", node: null, session: null, note: "the parent session is not available (not indexed, moved, or outside your scope)" });
		}
	}
	for (const child of store.childrenOfFile(session.real_path)) {
		if (child.session_key === session.session_key || !access.sessionVisible(child)) continue;
		out.push({ relation: "session-child", direction: "in", label: "recorded", node: null, session: sessionInfo(child, access) });
		const copy = store.event(child.session_key, event.entry_id);
		if (copy && !event.id_derived && access.eventVisible(child, copy)) {
			out.push({ relation: "copied-from", direction: "in", label: "derived", node: eventView(copy, child, store) });
		}
	}
	return out;
}

function sessionInfo(s: SessionRow, access: Access) {
	return { sessionId: s.session_id, cwd: s.cwd, name: access.sessionFacts(s).name };
}
