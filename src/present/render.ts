/**
 * Pure renderers for people: search hits, freshness lines. Colour is a parameter, decided by the
 * shell (TTY and NO_COLOR), never detected here.
 */
import { BUSY_PROBLEM } from "../model.ts";
import type { Freshness } from "../sync/freshness.ts";
import { type Hit, RECENT_MATCHES, type SearchCoverage } from "../query/search/search.ts";
import { groupThousands } from "../project/text.ts";
import type { SessionSummary } from "../query/sessions.ts";
import type { RootSource } from "../auth/scope.ts";
import type { ScopeView } from "../query/scope-view.ts";
import type { Highlight } from "../query/snippet.ts";
import { TURN_PREVIEW_CHARS } from "../query/turns.ts";
import { terminalSafe, terminalSafeDeep } from "./terminal.ts";
import { stateWords } from "./states.ts";

export interface Style {
	color: boolean;
}

const ansi = (code: string, s: string, style: Style) => (style.color ? `\x1b[${code}m${s}\x1b[0m` : s);

const MARK_OPEN = "«";
const MARK_CLOSE = "»";

/**
 * A snippet with its matched spans marked: bold on a terminal, else « ». Without colour a literal
 * « or » of the source is shown as \« or \», and backslashes right before a « or » (literal or
 * mark) are doubled, so an odd run of backslashes before one always means "literal".
 */
export function markSnippet(text: string, highlights: readonly Highlight[], style: Style): string {
	const parts: { text: string; mark?: boolean }[] = [];
	let cursor = 0;
	for (const [start, end] of highlights) {
		if (start < cursor || end > text.length || end <= start) continue;
		parts.push({ text: text.slice(cursor, start) }, { text: text.slice(start, end), mark: true });
		cursor = end;
	}
	parts.push({ text: text.slice(cursor) });
	if (style.color) return parts.map((p) => (p.mark ? `\x1b[1m${p.text}\x1b[0m` : p.text)).join("");
	let out = "";
	for (const p of parts) {
		const escaped = p.text.replace(/(\\*)([«»])/g, (_, slashes: string, ch: string) => `${slashes}${slashes}\\${ch}`);
		// A mark follows (or closes) this text: double the backslashes that end it.
		const beforeMark = p.mark || p !== parts[parts.length - 1];
		const piece = beforeMark ? escaped.replace(/(\\+)$/, "$1$1") : escaped;
		out += p.mark ? `${MARK_OPEN}${piece}${MARK_CLOSE}` : piece;
	}
	return out;
}

interface HitStyle extends Style {
	/** Show each hit's session file and line (JSON always carries them). */
	paths?: boolean;
	/** The authorization root: a hit's cwd is shown relative to it, and not at all when equal. */
	root?: string | null;
	/** Cut snippets to this many characters (a text budget: present/search-text.ts); whole by default. */
	snippetChars?: number;
	/** Cut outcome lines to this many characters; OUTCOME_LINE_CHARS by default. */
	outcomeChars?: number;
}

const NAME_CHARS = 48;

/** The earlier question a "later" hit took up: its hit number when shown, else its ids. */
function laterOf(hits: readonly Hit[], h: Hit): string {
	const up = h.takesUp;
	if (!up) return "an earlier question";
	const at = hits.findIndex((o) => o.sessionId === up.sessionId && o.entryId === up.entryId);
	return at >= 0 ? `hit ${at + 1}` : `${up.sessionId.slice(0, 8)} ${up.entryId}`;
}

export function renderHits(unsafeHits: Hit[], style: HitStyle): string {
	const out: string[] = [];
	const hits = terminalSafeDeep(unsafeHits);
	// Events already on screen (as a hit, or as a hit's outcome), by session and entry: the hit number that showed them.
	const shown = new Map<string, number>();
	hits.forEach((h, i) => {
		const when = h.timestamp ? h.timestamp.replace("T", " ").slice(0, 16) : "no time";
		const flags = [
			h.match === "turn" ? "turn match: its turn holds the words" : null,
			h.match === "later" ? `later: took up ${laterOf(hits, h)} again` : null,
			h.derived ? "derived: a pi-events echo" : null,
			h.isError ? "error" : null,
			...stateWords(h),
		]
			.filter(Boolean)
			.join(", ");
		const who = h.toolName ? `${h.semanticKind} ${h.toolName}` : h.semanticKind;
		const name = h.sessionName ? `  "${h.sessionName.length > NAME_CHARS ? `${h.sessionName.slice(0, NAME_CHARS - 1)}…` : h.sessionName}"` : "";
		const where = cwdLabel(h.cwd, style.root ?? null);
		const more = h.otherMatchingEvents ? `  (+${h.otherMatchingEvents} more in this session)` : "";
		out.push(
			`${ansi("1", `${i + 1}.`, style)} ${when}  ${ansi("36", who, style)}${flags ? `  [${flags}]` : ""}${name}${where ? `  ${ansi("2", where, style)}` : ""}${more}`,
		);
		const snippet = clip(h.snippet, h.highlights, style.snippetChars ?? Number.POSITIVE_INFINITY);
		out.push(`   ${markSnippet(snippet.text, snippet.highlights, style)}`);
		out.push(`   ${ansi("2", `${h.sessionId} ${h.entryId} ${h.fragmentId}${style.paths ? `  ${h.sessionFile}:${h.line}` : ""}`, style)}`);
		const outcome = outcomeLine(h, shown, style);
		if (outcome) out.push(`   ${outcome}`);
		if (h.duplicates) out.push(`   ${ansi("2", copiesLine(h.duplicates), style)}`);
		shown.set(`${h.sessionId}\u0000${h.entryId}`, i + 1);
		const end = h.turn?.outcome;
		if (end) shown.set(`${h.sessionId}\u0000${end.entryId}`, shown.get(`${h.sessionId}\u0000${end.entryId}`) ?? i + 1);
	});
	return out.length > 0 ? `${out.join("\n")}\n` : "";
}

/** Most characters of the outcome line under a hit: the whole JSON preview (TURN_PREVIEW_CHARS, plus its ellipses). */
export const OUTCOME_LINE_CHARS = TURN_PREVIEW_CHARS + 2;

/**
 * The line under a hit that says how its turn ended (`→ <outcome preview>`), or null when the hit
 * is the outcome itself or the turn has none. An outcome already shown above is named, not repeated.
 */
function outcomeLine(h: Hit, shown: ReadonlyMap<string, number>, style: HitStyle): string | null {
	const outcome = h.turn?.outcome;
	if (!outcome || outcome.entryId === h.entryId || outcome.preview === undefined) return null;
	const before = shown.get(`${h.sessionId}\u0000${outcome.entryId}`);
	if (before !== undefined) return ansi("2", `→ the outcome shown at ${before}.`, style);
	const { text, highlights } = clip(outcome.preview, outcome.highlights ?? [], style.outcomeChars ?? OUTCOME_LINE_CHARS);
	return `→ ${markSnippet(text, highlights, style)} ${ansi("2", `(${outcome.entryId})`, style)}`;
}

/** A preview cut to `max` characters (an ellipsis marks the cut), its marks kept where they still fit. */
function clip(text: string, highlights: readonly Highlight[], max: number): { text: string; highlights: Highlight[] } {
	if (text.length <= max) return { text, highlights: [...highlights] };
	const space = text.lastIndexOf(" ", max - 1);
	const cut = space > max - 20 ? space : max - 1;
	return { text: `${text.slice(0, cut)}…`, highlights: highlights.filter(([, end]) => end <= cut) };
}

/** The copies folded into a hit: how many, and the first few by id. */
function copiesLine(d: NonNullable<Hit["duplicates"]>): string {
	const listed = d.ids.slice(0, 3).map((c) => `${c.sessionId} ${c.entryId}`);
	return `= ${d.count} identical cop${d.count === 1 ? "y" : "ies"} folded in: ${listed.join(", ")}${d.count > listed.length ? ", …" : ""}`;
}

/** A cwd as shown beside a hit: relative to the root when under it, nothing when it is the root. */
function cwdLabel(cwd: string | null, root: string | null): string {
	if (cwd === null) return "?";
	if (root === null) return cwd;
	if (cwd === root) return "";
	const base = root.endsWith("/") ? root : `${root}/`;
	return cwd.startsWith(base) ? cwd.slice(base.length) : cwd;
}

export function freshnessLine(f: Freshness, coverage?: SearchCoverage): string {
	const parts: string[] = [];
	// Another process updating the index is why this answer was not synced: said first, once, and
	// running `pi-events index` meanwhile would only wait for it.
	const busy = f.problems.includes(BUSY_PROBLEM);
	if (f.synced) parts.push(f.syncAgeMs === undefined ? `synced in ${f.syncMs} ms` : `synced ${Math.round(f.syncAgeMs)} ms before this call`);
	else if (busy) parts.push(BUSY_PROBLEM);
	else parts.push(`not synced (last sync ${f.lastSyncAt ?? "never"})`);
	if (f.pendingFiles > 0) {
		const files = `${groupThousands(f.pendingFiles)} changed session file${f.pendingFiles === 1 ? "" : "s"} not indexed yet`;
		parts.push(busy ? files : `${files} (run pi-events index)`);
	}
	if (f.missingFiles > 0) parts.push(`${f.missingFiles} indexed files gone`);
	if (f.newDiagnostics > 0) parts.push(`${f.newDiagnostics} new diagnostics`);
	if (coverage?.mode === "recent") {
		parts.push(
			coverage.filterOnly
				? "filters alone match across more history than one search reads: only the most recently active sessions were read; narrow the filters (a time range, a session) or add a term"
				: `very common terms: showing the best of the newest ${groupThousands(RECENT_MATCHES)} matches at most; add a rarer term, a time range or a session to rank them all`,
		);
	}
	if (coverage?.truncated) {
		const count = (n: number, what: string) => `${groupThousands(n)}${coverage.matchesExact ? "" : "+"} ${what}${n === 1 && coverage.matchesExact ? "" : "s"}`;
		parts.push(
			`more than shown: ${count(coverage.estimatedMatches, "matching event")} in ${count(coverage.estimatedSessions, "session")} (raise the limit to see more)`,
		);
	}
	if (coverage && coverage.ignoredTerms.length > 0) parts.push(`ignored: ${coverage.ignoredTerms.map((t) => JSON.stringify(t)).join(" ")}`);
	for (const p of f.problems) if (p !== BUSY_PROBLEM) parts.push(p);
	return terminalSafe(parts.join("; "));
}

/**
 * What to change when a search found nothing, from `coverage.emptyBecause` (null when there are
 * hits). `exactFlag` names how forms were turned off in this surface (`--exact`, `exact: true`).
 */
export function noHitsHint(coverage: SearchCoverage, forms: { exact: boolean; exactFlag: string; derivedFlag: string }): string | null {
	switch (coverage.emptyBecause) {
		case "terms": {
			const list = coverage.unmatchedTerms.map((t) => JSON.stringify(t)).join(", ");
			const them = coverage.unmatchedTerms.length === 1 ? "it" : "them";
			// Only a plain word has other forms: a hyphenated or code-shaped term matches as typed.
			const plain = coverage.unmatchedTerms.every((t) => /^\p{L}+$/u.test(t));
			const how = forms.exact
				? ` (${forms.exactFlag} is on: without it, other word forms count too)`
				: plain
					? " in any word form"
					: " as typed (a term with a hyphen, digits or punctuation matches exactly: type its words apart for their other forms)";
			return `nothing in your scope contains ${list}${how}: check the spelling, try another word, or leave ${them} out`;
		}
		case "together":
			return "every term occurs in your scope, but never all in one part of an event (a message, a tool call and its result are separate), nor all in one turn's conversation (its prompt, assistant texts and tool calls): try fewer terms";
		case "filters":
			// Very common words were looked for in the newest sessions only (coverage mode "recent").
			if (coverage.mode === "recent") {
				return "the query's words are very common, so only the newest sessions were searched, and there the filters leave nothing: add a rarer word, or loosen the filters";
			}
			return "the query matches in your scope, but the filters leave nothing: loosen them (kind, role, tool, time, error, branch, selection, file)";
		case "derived":
			return `only pi-events' own echoes match (earlier searches and reads): ${forms.derivedFlag} shows them`;
		default:
			return null;
	}
}

/**
 * The line that answers an empty search: what was looked for, in whose sessions (the root named),
 * and why nothing matched. When the root holds no session at all it says only that, and how to pick
 * another root (`pick`: the surface's way).
 */
export function noHitsLine(
	query: string,
	coverage: SearchCoverage,
	scope: ScopeView,
	forms: { exact: boolean; exactFlag: string; derivedFlag: string; pick: string },
): string {
	const what = query.trim() === "" ? "no event matches the filters" : `no hits for ${JSON.stringify(query.trim())}`;
	if (coverage.emptyBecause === "no-sessions") return `${what}: ${noSessionsAtAll(scope, forms.pick)}`;
	// With no terms, only the filters can leave nothing.
	const hint = coverage.filterOnly && coverage.emptyBecause === "filters" ? "loosen them" : noHitsHint(coverage, forms);
	return `${what} in ${scopeName(scope)}${hint ? `: ${hint}` : ""}`;
}

const ROOT_SOURCE_NAMES: Record<RootSource, string> = {
	flag: "--root",
	config: "root in the config file",
	git: "Git root",
	cwd: "working directory",
};

/** Whose history an answer covers: "sessions under /work/app (Git root)", or every workspace's. */
export function scopeName(scope: ScopeView): string {
	if (scope.roots === null) return "sessions of every workspace (--all)";
	return `sessions under ${scope.roots.join(", ")}${scope.rootSource ? ` (${ROOT_SOURCE_NAMES[scope.rootSource]})` : ""}`;
}

/**
 * What an answer says when the root holds no session at all: plainly, with the surface's way to
 * pick another root (`pick`), and nothing about sessions outside it.
 */
export function noSessionsAtAll(scope: ScopeView, pick: string): string {
	if (scope.roots === null) return "no sessions are indexed at all: run pi-events index, and check where sessions are found (pi-events status)";
	return `there are no ${scopeName(scope)} at all (only sessions started in the root or below are visible): ${pick}`;
}

/** How to pick another root, per surface. */
export const PICK_ROOT = {
	cli: "pick another root with --root DIR, or use --all for every workspace",
	tool: "the root is the caller's Git root or working directory; pick another with `root` in pi-events' config file, or PI_EVENTS_ARGS=\"--root DIR\" for the pi extension",
} as const;

/** How each surface names its switches in an empty search's explanation. */
export const NO_HITS_FORMS = {
	cli: { exactFlag: "--exact", derivedFlag: "--include-derived", pick: PICK_ROOT.cli },
	tool: { exactFlag: "exact: true", derivedFlag: "includeDerived: true", pick: PICK_ROOT.tool },
} as const;

/** The header of a session list, or its explanation when empty. */
export function sessionsHead(result: { sessions: unknown[]; total: number; scope: ScopeView; emptyBecause: string | null }, pick: string): string {
	const { sessions, total, scope } = result;
	if (sessions.length > 0) return `${sessions.length} of ${total} ${scopeName(scope)}, most recently active first`;
	if (result.emptyBecause === "no-sessions") return noSessionsAtAll(scope, pick);
	return `none of the ${scopeName(scope)} was active in that time range: widen it`;
}

/** The session list for people and models: newest first, one header line and the first request. */
export function renderSessions(unsafeSessions: SessionSummary[], style: HitStyle): string {
	const out: string[] = [];
	const sessions = terminalSafeDeep(unsafeSessions);
	sessions.forEach((s, i) => {
		const when = (t: string | null) => (t ? t.replace("T", " ").slice(0, 16) : "no time");
		const name = s.name ? `  "${s.name.length > NAME_CHARS ? `${s.name.slice(0, NAME_CHARS - 1)}…` : s.name}"` : "";
		const where = cwdLabel(s.cwd, style.root ?? null);
		const marks = [
			s.abandonedBranches ? "abandoned branches" : null,
			s.forked ? (s.parentSessionId ? `fork of ${s.parentSessionId.slice(0, 8)}` : "fork") : null,
		]
			.filter(Boolean)
			.join(", ");
		out.push(
			`${ansi("1", `${i + 1}.`, style)} ${when(s.lastTimestamp)} (since ${when(s.firstTimestamp)})  ${s.entryCount} entries${marks ? `  [${marks}]` : ""}${name}${where ? `  ${ansi("2", where, style)}` : ""}`,
		);
		if (s.firstUserMessage) out.push(`   ${s.firstUserMessage}`);
		out.push(`   ${ansi("2", `${s.sessionId}${style.paths ? `  ${s.sessionFile}` : ""}`, style)}`);
	});
	return out.length > 0 ? `${out.join("\n")}\n` : "";
}
