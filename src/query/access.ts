/**
 * Authorization for exact reads and traces. A session is visible when its canonical cwd lies in
 * the scope; the current session only before its invocation cutoff. An unauthorized or excluded
 * target fails exactly like a missing one: same error, same message, no hint that it exists.
 */
import type { Database } from "bun:sqlite";
import { type Scope, sessionInScope } from "../auth/scope.ts";
import { PiEventsError } from "../errors.ts";
import { canonicalPath } from "../source/paths.ts";
import { invocationCutoff, sessionIdOfFile } from "../store/caller.ts";
import { type EventRow, EventStore, type SessionRow } from "../store/events.ts";

export class Access {
	readonly store: EventStore;
	private readonly currentId: string | null;
	private cutoff: number | null | undefined;

	constructor(
		private readonly db: Database,
		readonly scope: Scope,
	) {
		this.store = new EventStore(db);
		const current = scope.current;
		// A file given under another spelling (a symlinked directory) must still be recognised: fail closed.
		this.currentId = current?.sessionId ?? (current?.sessionFile ? sessionIdOfFile(db, canonicalPath(current.sessionFile)) : null);
	}

	sessionVisible(session: SessionRow): boolean {
		return sessionInScope(this.scope, session.cwd_real);
	}

	eventVisible(session: SessionRow, event: EventRow): boolean {
		if (!this.sessionVisible(session)) return false;
		if (this.currentId === null || session.session_id !== this.currentId) return true;
		this.cutoff ??= this.invocationCutoff(this.currentId);
		return event.seq < this.cutoff;
	}

	/**
	 * The session's name and materialized leaf as the caller may see them: for the current session,
	 * as they were before the invocation cutoff (nothing appended later leaks, not even a rename).
	 */
	sessionFacts(session: SessionRow): { name: string | null; leafEntryId: string | null } {
		if (this.currentId === null || session.session_id !== this.currentId) {
			return { name: session.name || null, leafEntryId: session.leaf_entry };
		}
		this.cutoff ??= this.invocationCutoff(this.currentId);
		const facts = this.store.factsBefore(session.session_key, this.cutoff);
		return { name: facts.name, leafEntryId: facts.leaf };
	}

	private invocationCutoff(currentId: string): number {
		const current = this.scope.current;
		const ownFile = current?.sessionFile ? canonicalPath(current.sessionFile) : null;
		return invocationCutoff(this.db, currentId, ownFile, current?.toolCallId ?? null);
	}

	/** The visible file of a session id (the one with the most entries when an id is duplicated). */
	session(sessionId: string): SessionRow {
		const visible = this.store.sessionsById(sessionId).filter((s) => this.sessionVisible(s));
		if (visible.length === 0) throw notFound(sessionId);
		return visible[0]!;
	}

	event(sessionId: string, entryId: string): { session: SessionRow; event: EventRow } {
		for (const session of this.store.sessionsById(sessionId)) {
			if (!this.sessionVisible(session)) continue;
			const event = this.store.event(session.session_key, entryId);
			if (event && this.eventVisible(session, event)) return { session, event };
		}
		throw notFound(sessionId, entryId);
	}
}

export function notFound(sessionId: string, entryId?: string): PiEventsError {
	return new PiEventsError(
		"E_NOT_FOUND",
		entryId === undefined
			? `no session ${JSON.stringify(sessionId)} in your scope`
			: `no event ${JSON.stringify(entryId)} in session ${JSON.stringify(sessionId)} in your scope`,
	);
}
