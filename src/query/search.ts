/**
 * The search use case: parse the query, resolve the scope and the current session's cutoff,
 * rank fragments (full BM25 when the terms are selective; newest-first windows under a time
 * budget when they are very common), coalesce fragments of one event into one hit with the
 * strongest fragment as evidence, and attach bounded snippets.
 */
import type { Database } from "bun:sqlite";
import type { Scope } from "../auth/scope.ts";
import { PiEventsError } from "../errors.ts";
import type { BranchState, ContextRole, SelectionState, SemanticKind } from "../model.ts";
import { makeSnippet } from "../present/snippet.ts";
import {
	type CandidateRow,
	countMatches,
	hydrate,
	matchedPerEvent,
	rankFragments,
	type RankedRow,
	invocationCutoff,
	maxFragmentKey,
	type SqlFilters,
	sessionIdOfFile,
} from "../store/search.ts";
import { canonicalPath } from "../source/paths.ts";
import { EventStore } from "../store/events.ts";
import { parseQuery } from "./fts.ts";
import { fragmentTexts } from "./source-text.ts";

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;
/**
 * Above this many matching fragments, rank newest-first windows instead of everything: BM25
 * costs about 1-2 µs per matching fragment (measured), so ranking everything for a very common
 * term would cost tens of milliseconds per call.
 */
export const FULL_RANK_LIMIT = 4_000;
/** Matching fragments ranked per window in the common-term path. */
const WINDOW_TARGET_MATCHES = 2_000;
/** Time budget for the common-term path, in ms. */
const COMMON_BUDGET_MS = 30;

export type SearchFilters = Omit<SqlFilters, "roots" | "excludeSessionIds" | "cutoff">;

export interface SearchRequest {
	query: string;
	filters: SearchFilters;
	limit?: number;
	scope: Scope;
}

export interface Hit {
	sessionId: string;
	entryId: string;
	fragmentId: string;
	eventType: string;
	semanticKind: SemanticKind;
	role: string | null;
	toolName: string | null;
	timestamp: string | null;
	cwd: string | null;
	sessionFile: string;
	sessionName: string | null;
	line: number;
	snippet: string;
	score: number;
	isError: boolean | null;
	exitCode: number | null;
	branchState: BranchState;
	contextRole: ContextRole;
	selectionState: SelectionState;
	/** True when the source file changed since indexing: the snippet is a notice, not text. */
	stale: boolean;
	/** How many fragments of this event matched. */
	matchedFragments: number;
}

export interface SearchCoverage {
	/** "full": every match was ranked; "recent": very common terms, newest windows ranked under a budget. */
	mode: "full" | "recent";
	/** Matching fragments before filters. */
	estimatedMatches: number;
	/** For "recent": the share of the index (by fragment position, newest first) that was ranked. */
	rankedShare: number;
	ignoredTerms: string[];
}

export interface SearchResult {
	hits: Hit[];
	coverage: SearchCoverage;
	elapsedMs: number;
}

export function search(db: Database, request: SearchRequest): SearchResult {
	const started = performance.now();
	const limit = request.limit ?? DEFAULT_LIMIT;
	if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
		throw new PiEventsError("E_USAGE", `limit must be an integer from 1 to ${MAX_LIMIT}`);
	}
	const parsed = parseQuery(request.query);
	const filters = resolveFilters(db, request);

	// Counting matches is cheap (no ranking, no joins): it decides how to rank.
	const estimated = countMatches(db, parsed.match);
	// Several fragments of one event may match: fetch extra candidates to fill `limit` events.
	const fetch = Math.min(limit * 5, 500);
	let ranked: RankedRow[];
	let mode: SearchCoverage["mode"] = "full";
	let rankedShare = 1;
	if (estimated <= FULL_RANK_LIMIT) {
		ranked = rankFragments(db, parsed.match, filters, fetch, null);
	} else {
		mode = "recent";
		const top = maxFragmentKey(db);
		const width = Math.max(1000, Math.floor((top * WINDOW_TARGET_MATCHES) / estimated));
		ranked = [];
		let hi = top;
		while (hi > 0) {
			const lo = Math.max(1, hi - width + 1);
			ranked.push(...rankFragments(db, parsed.match, filters, fetch, { lo, hi }));
			hi = lo - 1;
			if (new Set(ranked.map((r) => r.event_key)).size >= limit || performance.now() - started > COMMON_BUDGET_MS) break;
		}
		rankedShare = top > 0 ? (top - hi) / top : 1;
		if (hi <= 0) mode = "full";
	}

	// One hit per event (its best fragment), cut at `limit` with ties broken by the full order.
	const truncated = mode === "full" && ranked.length >= fetch;
	const rows = selectEvents(db, ranked, limit, truncated ? (score) => rankFragments(db, parsed.match, filters, TIE_CAP, null, score) : null);
	if (filters.cutoff) {
		// The current session's name as it was before the cutoff: a later rename must not leak.
		const store = new EventStore(db);
		for (const row of rows) {
			if (row.session_id === filters.cutoff.sessionId) row.session_name = store.factsBefore(row.session_key, filters.cutoff.seq).name;
		}
	}
	const matched = matchedPerEvent(
		db,
		parsed.match,
		rows.map((r) => r.event_key),
		filters.kinds,
	);
	const hits = rows.map((row) => ({ row, matched: matched.get(row.event_key) ?? 1 }));
	const termTokens = parsed.terms.map((t) => t.tokens);
	return {
		hits: hits.map(({ row, matched }) => toHit(row, matched, fragmentText(row), termTokens)),
		coverage: { mode, estimatedMatches: estimated, rankedShare, ignoredTerms: parsed.ignored },
		elapsedMs: performance.now() - started,
	};
}

/** Most tied fragments considered when a cut falls inside a tie (identical copies, e.g. forks). */
const TIE_CAP = 1000;

/**
 * The best fragment per event, cut at `limit`. Events whose score ties with the last one kept
 * are ordered by the full tie-break (newest first, then session, entry, fragment id), including
 * tied fragments beyond what was fetched, so a smaller limit always yields a prefix of a larger one.
 */
function selectEvents(db: Database, ranked: RankedRow[], limit: number, moreTied: ((score: number) => RankedRow[]) | null): CandidateRow[] {
	const best = bestPerEvent(ranked);
	if (best.length === 0) return [];
	const boundary = best[Math.min(limit, best.length) - 1]!.score;
	const sure = best.filter((r) => r.score < boundary);
	let tied = best.filter((r) => r.score === boundary);
	if (moreTied) {
		const seen = new Set(best.map((r) => r.event_key));
		tied = tied.concat(bestPerEvent(moreTied(boundary)).filter((r) => !seen.has(r.event_key)));
	}
	// Hydrate a little past the cut: an /export + /import pair holds the same (sessionId, entryId)
	// in two files, and such copies are one event, shown once.
	const want = limit * 2;
	const rows = hydrate(db, sure.slice(0, want)).sort(compareRows);
	if (rows.length < want && tied.length > 0) rows.push(...hydrate(db, tied).sort(compareRows).slice(0, want - rows.length));
	const seen = new Set<string>();
	return rows.filter((r) => {
		const key = `${r.session_id}\u0000${r.entry_id}`;
		if (seen.has(key)) return false;
		seen.add(key);
		return true;
	}).slice(0, limit);
}

function bestPerEvent(ranked: RankedRow[]): RankedRow[] {
	const best = new Map<number, RankedRow>();
	for (const r of ranked) {
		const seen = best.get(r.event_key);
		if (!seen || r.score < seen.score || (r.score === seen.score && r.frag_key > seen.frag_key)) best.set(r.event_key, r);
	}
	return [...best.values()].sort((a, b) => a.score - b.score || b.frag_key - a.frag_key);
}

function resolveFilters(db: Database, request: SearchRequest): SqlFilters {
	const { scope, filters } = request;
	const current = scope.current;
	let currentId = current?.sessionId ?? null;
	if (!currentId && current?.sessionFile) currentId = sessionIdOfFile(db, canonicalPath(current.sessionFile));
	const excludeSessionIds: string[] = [];
	let cutoff: SqlFilters["cutoff"] = null;
	if (currentId) {
		if (filters.sessionIds?.includes(currentId)) {
			cutoff = { sessionId: currentId, seq: invocationCutoff(db, currentId, current?.toolCallId ?? null) };
		} else {
			excludeSessionIds.push(currentId);
		}
	}
	return { ...filters, roots: scope.roots, excludeSessionIds, cutoff };
}

function compareRows(a: CandidateRow, b: CandidateRow): number {
	return (
		a.score - b.score ||
		(b.ts_ms ?? 0) - (a.ts_ms ?? 0) ||
		cmp(a.session_id, b.session_id) ||
		cmp(a.entry_id, b.entry_id) ||
		cmp(a.fragment_id, b.fragment_id)
	);
}

function cmp(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}

/** The hit's evidence text, re-derived from the source; null when the source changed since indexing. */
function fragmentText(row: CandidateRow): string | null {
	const texts = fragmentTexts({
		path: row.session_file,
		byteOffset: row.byte_offset,
		byteLength: row.byte_length,
		contentHash: row.content_hash,
		seq: row.seq,
		version: row.version,
		parentId: row.parent_id,
	});
	return texts?.get(row.fragment_id) ?? null;
}

function toHit(row: CandidateRow, matched: number, body: string | null, termTokens: string[][]): Hit {
	return {
		sessionId: row.session_id,
		entryId: row.entry_id,
		fragmentId: row.fragment_id,
		eventType: row.event_type,
		semanticKind: row.kind,
		role: row.role,
		toolName: row.tool_name,
		timestamp: row.ts_ms === null ? null : new Date(row.ts_ms).toISOString(),
		cwd: row.cwd,
		sessionFile: row.session_file,
		sessionName: row.session_name || null,
		line: row.line,
		snippet: body === null ? "[the source changed since it was indexed: run pi-events index]" : makeSnippet(body, termTokens),
		stale: body === null,
		score: Math.round(-row.score * 1000) / 1000,
		isError: row.is_error === null ? null : row.is_error === 1,
		exitCode: row.exit_code,
		branchState: row.branch_state,
		contextRole: row.context_role as ContextRole,
		selectionState: row.selection_state,
		matchedFragments: matched,
	};
}
