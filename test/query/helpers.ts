/**
 * Helpers shared by the query, auth and search-cli suites: hand-written v3 session files (a header
 * plus a few message entries), and real indexes built with openIndex + syncIndex in temp dirs.
 */
import { markSnippet } from "../../src/present/render.ts";
import type { Database } from "bun:sqlite";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Scope } from "../../src/auth/scope.ts";
import { syncIndex } from "../../src/sync/sync.ts";
import { type SearchFilters, type SearchResult, search } from "../../src/query/search/search.ts";
import { Gate } from "../../src/gate/gate.ts";
import type { SourceDir } from "../../src/source/discover.ts";
import { openIndex } from "../../src/store/db.ts";
import { makeTempDir } from "../helpers/temp.ts";

export type Entry = Record<string, unknown>;

export interface SessionSpec {
	id: string;
	/** The header cwd; `undefined` leaves the key out. */
	cwd?: string;
	timestamp?: string;
	entries: Entry[];
}

/** The JSONL text of a v3 session: header then entries, one per line, LF-terminated. */
export function sessionText(spec: SessionSpec): string {
	const header: Record<string, unknown> = {
		type: "session",
		version: 3,
		id: spec.id,
		timestamp: spec.timestamp ?? "2026-10-01T10:00:00.000Z",
	};
	if (spec.cwd !== undefined) header.cwd = spec.cwd;
	return [header, ...spec.entries].map((e) => JSON.stringify(e)).join("\n") + "\n";
}

/** Write a session file `<dir>/<name>.jsonl` (name defaults to the session id). */
export function writeSession(dir: string, spec: SessionSpec, name = spec.id): string {
	mkdirSync(dir, { recursive: true });
	const path = join(dir, `${name}.jsonl`);
	writeFileSync(path, sessionText(spec));
	return path;
}

const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

export function userEntry(id: string, parentId: string | null, timestamp: string, text: string): Entry {
	return {
		type: "message",
		id,
		parentId,
		timestamp,
		message: { role: "user", content: [{ type: "text", text }], timestamp: Date.parse(timestamp) },
	};
}

export interface ToolCallSpec {
	id: string;
	name: string;
	arguments: Record<string, unknown>;
}

export function assistantEntry(id: string, parentId: string | null, timestamp: string, text: string | null, toolCalls: ToolCallSpec[] = []): Entry {
	const content: unknown[] = [];
	if (text !== null) content.push({ type: "text", text });
	for (const c of toolCalls) content.push({ type: "toolCall", id: c.id, name: c.name, arguments: c.arguments });
	return {
		type: "message",
		id,
		parentId,
		timestamp,
		message: {
			role: "assistant",
			content,
			api: "anthropic-messages",
			provider: "anthropic",
			model: "claude-sonnet-4-5",
			usage,
			stopReason: toolCalls.length > 0 ? "toolUse" : "stop",
			timestamp: Date.parse(timestamp) - 1000,
		},
	};
}

export function toolResultEntry(
	id: string,
	parentId: string | null,
	timestamp: string,
	toolCallId: string,
	toolName: string,
	text: string,
	isError = false,
): Entry {
	return {
		type: "message",
		id,
		parentId,
		timestamp,
		message: { role: "toolResult", toolCallId, toolName, content: [{ type: "text", text }], isError, timestamp: Date.parse(timestamp) },
	};
}

/** A session that is one user message. */
export function oneMessageSession(id: string, cwd: string | undefined, text: string, timestamp = "2026-10-01T10:00:05.000Z"): SessionSpec {
	return { id, cwd, entries: [userEntry(`u-${id.slice(0, 6)}`, null, timestamp, text)] };
}

export interface TestIndex {
	dir: string;
	db: Database;
	sources: SourceDir[];
	sync: () => ReturnType<typeof syncIndex>;
	close: () => void;
}

/** A file-backed index in a temp dir, synced once from `sourceDirs`. */
export function buildIndex(sourceDirs: string[]): TestIndex {
	const dir = makeTempDir("pi-events-q-");
	const db = openIndex(join(dir, "index.db"));
	const sources: SourceDir[] = sourceDirs.map((path) => ({ path, origin: "flag" }));
	const sync = () => syncIndex(db, { sourceDirs: sources });
	const report = sync();
	if (report.problems.length > 0) throw new Error(`sync problems: ${report.problems.join("; ")}`);
	return { dir, db, sources, sync, close: () => db.close() };
}

export const UNSCOPED: Scope = { roots: null, current: null };

/** Run search() unscoped (or with a scope) and return the result. */
export function run(
	db: Database,
	query: string,
	filters: SearchFilters = {},
	opts: { limit?: number; scope?: Scope; exact?: boolean; includeDerived?: boolean } = {},
): SearchResult {
	return search(new Gate(db, opts.scope ?? UNSCOPED), { query, filters, limit: opts.limit ?? 100, exact: opts.exact, includeDerived: opts.includeDerived });
}

/** `sessionId/entryId` of each hit. */
export function ids(result: SearchResult): string[] {
	return result.hits.map((h) => `${h.sessionId}/${h.entryId}`);
}

/** A hit's snippet with its highlights marked « » (the text rendering, no colour). */
export function marked(hit: { snippet: string; highlights: [number, number][] }): string {
	return markSnippet(hit.snippet, hit.highlights, { color: false });
}

/** Strip « » marks, ellipses and the omission marker from a snippet. */
export function plainSnippet(snippet: string): string {
	return snippet
		.replace(/\[… [\d,]+ characters omitted …\]/g, "")
		.replaceAll("«", "")
		.replaceAll("»", "")
		.replaceAll("…", "");
}
