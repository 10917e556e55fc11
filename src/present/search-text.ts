/**
 * A search's text answer, per surface (the CLI's stdout and stderr, the event_search tool's text),
 * with its one hint: how to read a hit's whole turn and the turn after it. The fix often comes in
 * the next turn (after a short "ok, fix it"), which a hit's outcome line cannot show. Once per
 * answer, for the first hit that has a turn; each surface names its own way to read it.
 */
import type { Hit, SearchCoverage } from "../query/search/search.ts";
import type { ScopeView } from "../query/scope-view.ts";
import type { Freshness } from "../sync/freshness.ts";
import { freshnessLine, NO_HITS_FORMS, noHitsLine, OUTCOME_LINE_CHARS, renderHits, scopeName } from "./render.ts";
import { SNIPPET_CHARS } from "../query/snippet.ts";
import { terminalSafe } from "./terminal.ts";

type HitRef = Pick<Hit, "sessionId" | "turn">;

/**
 * The hint line, or null when no hit has a turn (entries before a session's first prompt). It reads
 * the turn by its prompt: a session-name hit carries another entry's turn than its own.
 */
export function nextTurnHint(hits: readonly HitRef[], readTurn: (sessionId: string, promptId: string) => string): string | null {
	const i = hits.findIndex((h) => h.turn);
	if (i < 0) return null;
	const hit = hits[i]!;
	return terminalSafe(
		`hit ${i + 1}'s whole turn and the next one (where a follow-up such as "ok, fix it" is answered): ${readTurn(hit.sessionId, hit.turn!.prompt.entryId)}`,
	);
}

/**
 * The CLI's command for it. It repeats `--root` only when the search was given one (`--all` when
 * it read every workspace): from the same directory, the default root is the search's own.
 */
export function cliReadTurn(scope: ScopeView): (sessionId: string, promptId: string) => string {
	return (sessionId, promptId) => `pi-events read ${sessionId} ${promptId} --turn --turns 1${scopeFlags(scope)}`;
}

/**
 * The flags a suggested command repeats so that it sees what this one saw: `--root DIR` when the
 * root was given that way, `--all` for every workspace; nothing for a default root (the same directory gives the same one).
 */
export function scopeFlags(scope: { roots: readonly string[] | null; rootSource?: ScopeView["rootSource"] }): string {
	if (scope.roots === null) return " --all";
	return scope.rootSource === "flag" ? ` --root ${shellWord(scope.roots[0]!)}` : "";
}

/** The tool's call for it. */
export const toolReadTurn = (sessionId: string, promptId: string) => `event_read ${JSON.stringify({ sessionId, entryId: promptId, view: "turn", turns: 1 })}`;

/**
 * The CLI's text answer to a search: the hits for stdout; for stderr, why nothing matched (when
 * so), the hint, and which history was searched with how fresh it is.
 */
export function cliSearchText(
	result: { hits: Hit[]; coverage: SearchCoverage; scope: ScopeView },
	freshness: Freshness,
	options: { query: string; color: boolean; paths: boolean; exact: boolean },
): { out: string; err: string } {
	const err: string[] = [];
	if (result.hits.length === 0) err.push(noHitsLine(options.query, result.coverage, result.scope, { ...NO_HITS_FORMS.cli, exact: options.exact }));
	const hint = nextTurnHint(result.hits, cliReadTurn(result.scope));
	if (hint) err.push(hint);
	// Which history was searched, also when it found something (an empty answer names it already):
	// the default root needs no --root. After the freshness, whose busy notice comes first.
	const searched = result.hits.length > 0 ? `; searched ${scopeName(result.scope)}` : "";
	err.push(`${freshnessLine(freshness, result.coverage)}${searched}`);
	const root = result.scope.roots?.[0] ?? null;
	const errText = err.map((line) => `pi-events: ${terminalSafe(line)}\n`).join("");
	return { out: renderHitsWithin(result.hits, { color: options.color, paths: options.paths, root }, SEARCH_TEXT_BYTES - utf8(errText)), err: errText };
}

/** A path as one shell word: as it is when that is safe, else in single quotes. */
function shellWord(path: string): string {
	return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/**
 * The event_search tool's text: a head line (how many hits, or why none, with the root named), the
 * hits, the hint, and how fresh the answer is.
 */
export function toolSearchText(
	result: { hits: Hit[]; coverage: SearchCoverage; scope: ScopeView },
	freshness: Freshness,
	options: { query: string; exact: boolean; root: string | null },
): string {
	const empty = noHitsLine(options.query, result.coverage, result.scope, { ...NO_HITS_FORMS.tool, exact: options.exact });
	const count = `${result.hits.length} hit${result.hits.length === 1 ? "" : "s"} (sessionId entryId fragmentId under each; event_read for exact content):`;
	const head = result.hits.length === 0 ? `${capital(empty)}.` : count;
	const hint = nextTurnHint(result.hits, toolReadTurn);
	const rest = `${hint ? `${capital(hint)}\n` : ""}${freshnessLine(freshness, result.coverage)}`;
	return `${head}\n${renderHitsWithin(result.hits, { color: false, root: options.root }, SEARCH_TEXT_BYTES - utf8(head) - 1 - utf8(rest))}${rest}`;
}

/** The issue's bound on a search's whole text answer (ten hits with their turns, the hint, the freshness). */
export const SEARCH_TEXT_BYTES = 6 * 1024;
/** The shortest a snippet is cut to for the budget: its lead-in and first matches. */
const MIN_SNIPPET_CHARS = 80;
/** The shortest an outcome line is cut to, and only when snippets at their shortest leave no room: its conclusion. */
const MIN_OUTCOME_CHARS = 160;

/**
 * The hits within `maxBytes` where cutting makes room: first the snippets (the evidence), to the
 * longest common length that fits, and only when they are at their shortest the outcome lines (the
 * answer). Past both floors the text is left longer than asked (the tool's own cap, 50 KB, still holds).
 */
export function renderHitsWithin(hits: Hit[], style: Parameters<typeof renderHits>[1], maxBytes: number): string {
	const render = (snippetChars?: number, outcomeChars?: number) => renderHits(hits, { ...style, snippetChars, outcomeChars });
	const whole = render();
	if (utf8(whole) <= maxBytes) return whole;
	const fits = (snippetChars: number, outcomeChars?: number) => utf8(render(snippetChars, outcomeChars)) <= maxBytes;
	if (fits(MIN_SNIPPET_CHARS)) return render(largest(MIN_SNIPPET_CHARS, SNIPPET_CHARS, (n) => fits(n)));
	return render(
		MIN_SNIPPET_CHARS,
		largest(MIN_OUTCOME_CHARS, OUTCOME_LINE_CHARS, (n) => fits(MIN_SNIPPET_CHARS, n)),
	);
}

/** The largest n in [lo, hi] for which `ok` holds (ok is monotone: true up to some n), or lo. */
function largest(lo: number, hi: number, ok: (n: number) => boolean): number {
	while (lo < hi) {
		const mid = Math.ceil((lo + hi) / 2);
		if (ok(mid)) lo = mid;
		else hi = mid - 1;
	}
	return lo;
}

const encoder = new TextEncoder();
const utf8 = (text: string) => encoder.encode(text).length;

const capital = (line: string) => `${line[0]!.toUpperCase()}${line.slice(1)}`;
