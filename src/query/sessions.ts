/**
 * The session list (`pi-events sessions`, `event_sessions`): the sessions the caller may see,
 * most recently active first, each with its id, name, cwd, first and last time, entry count and
 * its first user message (bounded, re-read from the source). The calling session is left out, as
 * in search.
 */
import { PiEventsError } from "../errors.ts";
import { isoTime } from "../project/projector.ts";
import type { Gate, ListedSessionRow, SessionSummaryRow } from "../gate/gate.ts";
import { fragmentTexts } from "./source-text.ts";
import { type ScopeView, scopeView } from "./scope-view.ts";

export const DEFAULT_SESSIONS = 20;
export const MAX_SESSIONS = 100;
/** Characters of the first user message shown. */
const FIRST_MESSAGE_CHARS = 200;

export interface SessionSummary {
	sessionId: string;
	name: string | null;
	cwd: string | null;
	sessionFile: string;
	/** The session header's creation time. */
	firstTimestamp: string | null;
	/** The latest entry's time. */
	lastTimestamp: string | null;
	entryCount: number;
	/** The first user message, whitespace normalised, at most FIRST_MESSAGE_CHARS (then ending in …). */
	firstUserMessage: string | null;
	/** Some of its entries lie on abandoned branches (off the path to its latest entry): `read --order branch` and `trace` show them. */
	abandonedBranches: boolean;
	/** Its header names a parent session: it was forked from another (pi's fork, or a branched-session copy). */
	forked: boolean;
	/** The parent's session id, when the parent is indexed and in your scope (else null, also when forked). */
	parentSessionId: string | null;
}

interface SessionsRequest {
	sinceMs?: number;
	untilMs?: number;
	limit?: number;
}

interface SessionsResult {
	sessions: SessionSummary[];
	/** Sessions in scope within the time range. */
	total: number;
	/** True when the limit left some out. */
	truncated: boolean;
	/** Whose sessions these are: the authorization root and how it was chosen. */
	scope: ScopeView;
	/**
	 * Why the list is empty: "no-sessions" (the root holds no session at all, the calling one
	 * aside), "time-range" (it holds some, none active in the range); null when not empty.
	 */
	emptyBecause: "no-sessions" | "time-range" | null;
}

export function listSessions(gate: Gate, request: SessionsRequest): SessionsResult {
	const limit = request.limit ?? DEFAULT_SESSIONS;
	if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SESSIONS) {
		throw new PiEventsError("E_USAGE", `limit must be an integer from 1 to ${MAX_SESSIONS}`);
	}
	const { sinceMs, untilMs } = request;
	// A session is in the range when it was active in it: its last entry at or after `since`, and
	// it began before `until`.
	const listed = gate.listableSessions();
	const inRange =
		sinceMs === undefined && untilMs === undefined
			? listed
			: listed.filter((s) => {
					const first = startMs(s);
					const last = s.last_ts_ms ?? first;
					if (sinceMs !== undefined && (last === null || last < sinceMs)) return false;
					if (untilMs !== undefined && (first ?? last) !== null && (first ?? last)! >= untilMs) return false;
					return true;
				});
	// Copies of one session (an /export + /import pair) are listed once: the first, most recently active.
	const seen = new Set<string>();
	const unique = inRange.filter((s) => !seen.has(s.session_id) && seen.add(s.session_id));
	return {
		// Only the shown sessions' full rows and files are read.
		sessions: gate.summaries(unique.slice(0, limit)).map((s) => summary(gate, s)),
		total: unique.length,
		truncated: unique.length > limit,
		scope: scopeView(gate.scope),
		emptyBecause: unique.length > 0 ? null : listed.length > 0 ? "time-range" : "no-sessions",
	};
}

function startMs(s: ListedSessionRow): number | null {
	const ms = s.created ? Date.parse(s.created) : Number.NaN;
	return Number.isNaN(ms) ? null : ms;
}

function summary(gate: Gate, s: SessionSummaryRow): SessionSummary {
	return {
		sessionId: s.session_id,
		name: s.name || null,
		cwd: s.cwd,
		sessionFile: s.path,
		firstTimestamp: isoTime(startMs(s)),
		lastTimestamp: isoTime(s.last_ts_ms),
		entryCount: s.entry_count,
		firstUserMessage: firstUserMessage(gate, s),
		abandonedBranches: s.abandoned === 1,
		forked: s.forked === 1,
		// The parent is named only when the gate shows it (indexed, in scope); a fork's own header is in scope.
		parentSessionId: s.parent_real ? (gate.sessionAtPath(s.parent_real)?.row.session_id ?? null) : null,
	};
}

function firstUserMessage(gate: Gate, s: SessionSummaryRow): string | null {
	const event = gate.firstUserEvent(s);
	if (!event) return null;
	const texts = fragmentTexts({
		path: s.path,
		byteOffset: event.byte_offset,
		byteLength: event.byte_length,
		contentHash: event.content_hash,
		seq: event.seq,
		version: s.version,
		parentId: event.parent_id,
	});
	const text = texts ? [...texts.values()].join(" ").replace(/\s+/g, " ").trim() : null;
	if (!text) return null;
	return text.length > FIRST_MESSAGE_CHARS ? `${text.slice(0, FIRST_MESSAGE_CHARS - 1)}…` : text;
}
