/** Bounded event metadata with a short preview: what reads, traces and neighbours return per node. */
import type { EventRow, VisibleSession } from "../gate/gate.ts";
import type { EventRecord } from "../model.ts";
import { isoTime } from "../project/projector.ts";
import { fragmentTexts } from "./source-text.ts";

const PREVIEW_CHARS = 160;

/** The event's identity and recorded facts as projected (model.ts), with its tree state and a preview. */
export type EventView = Pick<
	EventRecord,
	"entryId" | "idDerived" | "parentId" | "seq" | "eventType" | "role" | "toolName" | "toolCallId" | "customType" | "isError" | "exitCode"
> & {
	sessionId: string;
	timestamp: string | null;
	branchState: string;
	contextRole: string;
	selectionState: string;
	/** The first characters of the event's first fragment (whitespace normalised, from the source), or null. */
	preview: string | null;
};

export function eventView(e: EventRow, visible: VisibleSession): EventView {
	const session = visible.row;
	const first = visible.fragments(e)[0];
	const text = first
		? fragmentTexts({
				path: session.path,
				byteOffset: e.byte_offset,
				byteLength: e.byte_length,
				contentHash: e.content_hash,
				seq: e.seq,
				version: session.version,
				parentId: e.parent_id,
			})?.get(first.fragment_id)
		: undefined;
	const flat = text === undefined ? null : text.replace(/\s+/g, " ").trim();
	return {
		sessionId: session.session_id,
		entryId: e.entry_id,
		idDerived: e.id_derived === 1,
		parentId: e.parent_id,
		seq: e.seq,
		eventType: e.event_type,
		role: e.role,
		toolName: e.tool_name,
		toolCallId: e.tool_call_id,
		customType: e.custom_type,
		timestamp: isoTime(e.ts_ms),
		isError: e.is_error === null ? null : e.is_error === 1,
		exitCode: e.exit_code,
		branchState: e.branch_state,
		contextRole: e.context_role,
		selectionState: e.selection_state,
		preview: flat === null ? null : flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS - 1)}…` : flat,
	};
}
