/**
 * The scope rule (auth/scope.ts) rendered as SQL (pure: text and parameters, no database). Used
 * where the scope is applied beside the MATCH rather than inside it (ranking few matches; see
 * gate/gate.ts). `s` is the sessions table, `f` the fragments table, `e` the events table.
 */
import type { Clause, Cutoff, SessionRule } from "./scope.ts";
import { ruleClauses } from "./scope.ts";

interface SqlCondition {
	sql: string;
	params: (string | number)[];
}

const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");

function clauseSql(clause: Clause): SqlCondition {
	switch (clause.kind) {
		case "nothing":
			return { sql: "0", params: [] };
		case "cwd-under": {
			// Equal, or a prefix ending at a component boundary. instr, not LIKE: no wildcards in paths.
			const sql = clause.paths.map(() => "(s.cwd_real = ? OR instr(s.cwd_real, ?) = 1)").join(" OR ");
			return { sql: `(${sql})`, params: clause.paths.flatMap((p) => [p, p === "/" ? "/" : `${p}/`]) };
		}
		case "session-in":
			return { sql: `s.session_id IN (${marks(clause.ids.length)})`, params: clause.ids };
		case "session-not-in":
			return { sql: `s.session_id NOT IN (${marks(clause.ids.length)})`, params: clause.ids };
	}
}

/** The session rule as a condition on `s` (sessions); "1" when it admits everything. */
export function sessionRuleSql(rule: SessionRule): SqlCondition {
	const parts = ruleClauses(rule).map(clauseSql);
	if (parts.length === 0) return { sql: "1", params: [] };
	return { sql: parts.map((p) => p.sql).join(" AND "), params: parts.flatMap((p) => p.params) };
}

/**
 * The cutoff as a condition on an event (`event`: its alias) whose session key is `sessionKey`;
 * null without a cutoff.
 */
export function cutoffSql(cutoff: Cutoff | null, event = "e", sessionKey = "f.session_key"): SqlCondition | null {
	if (cutoff === null) return null;
	return {
		sql: `NOT (${event}.seq >= ? AND ${sessionKey} IN (SELECT session_key FROM sessions WHERE session_id = ?))`,
		params: [cutoff.seq, cutoff.sessionId],
	};
}

/** A half-open range [from, to) of `sessions.cwd_real` values. */
export interface CwdRange {
	from: string;
	to: string;
}

/**
 * Ranges of cwd that hold every session the rule admits, for reading a narrow scope's sessions
 * through the cwd index instead of walking all of them: a superset (the rule itself still
 * decides). For a root p that is [p, p + "0"): every cwd equal to p or under "p/" sorts there,
 * since "0" follows "/" (and with it, only siblings such as "p-x", which the rule refuses). Null
 * when the rule has no cwd clause; empty when it admits nothing.
 */
export function cwdRanges(rule: SessionRule): CwdRange[] | null {
	let ranges: CwdRange[] | null = null;
	for (const clause of ruleClauses(rule)) {
		if (clause.kind === "nothing") return [];
		// The last cwd clause: the request's cwd filter, within the caller's roots.
		if (clause.kind === "cwd-under") ranges = clause.paths.map((p) => (p === "/" ? { from: "/", to: "0" } : { from: p, to: `${p}0` }));
	}
	return ranges;
}
