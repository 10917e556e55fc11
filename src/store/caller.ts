/**
 * Store lookups that resolve a caller's current session: which indexed session a file holds, and
 * where the invocation cutoff falls in it. Plain data; the gate (auth/) decides what they mean.
 */
import type { Database } from "bun:sqlite";

/**
 * Resolve the current session's invocation cutoff: the append position of the invoking entry,
 * read from the caller's OWN session file only. Another file carrying the same session id (a
 * copy, or one planted in any workspace) must never move the cutoff: when the caller's file is
 * known, only that file counts, and if it is not indexed the cutoff is 0 (the whole session is
 * hidden: fail closed). When only the id is known, every file with the id is a candidate and the
 * smallest cutoff wins, so an extra file can only hide more, never reveal more.
 */
export function invocationCutoff(db: Database, sessionId: string, ownFile: string | null, toolCallId: string | null): number {
	const keys = (
		ownFile === null
			? db.query("SELECT session_key FROM sessions WHERE session_id = ?1").all(sessionId)
			: db
					.query(
						`SELECT s.session_key FROM sessions s JOIN files f ON f.file_key = s.file_key
						 WHERE s.session_id = ?1 AND (f.path = ?2 OR f.real_path = ?2)`,
					)
					.all(sessionId, ownFile)
	) as { session_key: number }[];
	if (keys.length === 0) return 0;
	// With a tool-call id (MCP), the invoking entry is the one holding that call; without one (the
	// bash tool), it is the last assistant message that made tool calls. Not indexed yet: 0.
	const perFile = toolCallId
		? db.query(
				`SELECT min(seq) AS seq FROM events
				 WHERE session_key = ?1 AND call_ids IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(call_ids) WHERE value = ?2)`,
			)
		: db.query("SELECT max(seq) AS seq FROM events WHERE session_key = ?1 AND role = 'assistant' AND call_ids IS NOT NULL");
	let cutoff = Number.POSITIVE_INFINITY;
	for (const { session_key } of keys) {
		const row = (toolCallId ? perFile.get(session_key, toolCallId) : perFile.get(session_key)) as { seq: number | null };
		cutoff = Math.min(cutoff, row.seq ?? 0);
	}
	return cutoff;
}

export function sessionIdOfFile(db: Database, path: string): string | null {
	const row = db
		.query("SELECT s.session_id FROM sessions s JOIN files f ON f.file_key = s.file_key WHERE f.path = ?1 OR f.real_path = ?1 LIMIT 1")
		.get(path) as { session_id: string } | null;
	return row?.session_id ?? null;
}
