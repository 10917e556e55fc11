/**
 * Pure text helpers for projection: head/tail bounding with a visible omission marker,
 * tool-argument normalisation, and the auxiliary token text that makes code-shaped and CJK
 * text findable by its natural parts.
 */

/** Fragments longer than this keep a head and a tail around an omission marker. */
export const MAX_FRAGMENT_CHARS = 24_000;
export const HEAD_CHARS = 12_000;
export const TAIL_CHARS = 12_000;

/**
 * A private-use character that the FTS tokenizer treats as a token character. The omission
 * marker is indexed as this lone token, which no query can contain (queries strip it), so a
 * phrase can never match across the gap and the marker's words are never hits.
 */
export const GAP_TOKEN = "\uE000";

/**
 * An integer with thousands separators, as `toLocaleString("en-US")` writes it (1234567 →
 * "1,234,567"), without loading ICU: the first toLocaleString of a process cost 2.5 ms
 * (bun 1.4.4), more than a whole no-op sync.
 */
export function groupThousands(n: number): string {
	const digits = String(Math.abs(Math.trunc(n)));
	return `${n < 0 ? "-" : ""}${digits.replace(/\B(?=(\d{3})+$)/g, ",")}`;
}

function omissionMarker(omittedChars: number): string {
	return `\n[… ${groupThousands(omittedChars)} characters omitted …]\n`;
}

/** Matches the marker produced by omissionMarker. */
export const OMISSION_MARKER_RE = /\n\[… [\d,]+ characters omitted …\]\n/;

interface BoundedText {
	text: string;
	fullLength: number;
	bounded: boolean;
	/** The FTS body: like `text`, but the marker replaced by GAP_TOKEN. */
	indexText: string;
}

/** Keep a bounded head and tail so the last lines of a huge log stay searchable. */
export function boundText(full: string): BoundedText {
	if (full.length <= MAX_FRAGMENT_CHARS) return { text: full, fullLength: full.length, bounded: false, indexText: full };
	let headEnd = HEAD_CHARS;
	let tailStart = full.length - TAIL_CHARS;
	// Never split a surrogate pair.
	if (isHighSurrogate(full.charCodeAt(headEnd - 1))) headEnd--;
	if (isLowSurrogate(full.charCodeAt(tailStart))) tailStart++;
	const head = full.slice(0, headEnd);
	const tail = full.slice(tailStart);
	const omitted = tailStart - headEnd;
	return {
		text: head + omissionMarker(omitted) + tail,
		fullLength: full.length,
		bounded: true,
		indexText: `${head} ${GAP_TOKEN} ${tail}`,
	};
}

function isHighSurrogate(c: number): boolean {
	return c >= 0xd800 && c <= 0xdbff;
}
function isLowSurrogate(c: number): boolean {
	return c >= 0xdc00 && c <= 0xdfff;
}

/** Collapse runs of whitespace to one space and trim. */
export function normalizeWhitespace(text: string): string {
	return text.replace(/\s+/g, " ").trim();
}

/**
 * Tool name and arguments as searchable text: one `key: value` line per leaf argument, nested
 * keys joined with dots (`edits.0.newText`), strings verbatim. Never JSON-escaped: an escaped
 * `\n` or `\t` would glue its letter to the next word (`\treturn` → `treturn`).
 */
export function renderToolCall(name: string, args: unknown): string {
	const lines = [name];
	flattenArgs(args, "", lines, 0);
	return lines.join("\n");
}

const MAX_ARG_DEPTH = 6;

function flattenArgs(value: unknown, key: string, lines: string[], depth: number): void {
	if (value === undefined || value === null) return;
	if (typeof value === "string") {
		lines.push(key ? `${key}: ${value}` : value);
	} else if (typeof value === "number" || typeof value === "boolean") {
		lines.push(key ? `${key}: ${value}` : String(value));
	} else if (typeof value === "object" && depth < MAX_ARG_DEPTH) {
		const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as Record<string, unknown>);
		for (const [k, v] of entries) flattenArgs(v, key ? `${key}.${k}` : k, lines, depth + 1);
	}
}

const CAMEL_BOUNDARY = /([a-z0-9])([A-Z])|([A-Z]+)([A-Z][a-z])/g;
/** Scripts written without spaces between words: indexed per character so any word is findable. */
export const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u3005\u30fc]+/g;

const HUMP = /[a-z][A-Z]|[A-Z][A-Z][a-z]/g;
const isWordCode = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * Extra tokens indexed beside the text (never shown): camelCase identifiers split into their
 * parts (`parseSessionEntries` → `parse session entries`) and CJK runs split into single
 * characters (the query side splits CJK the same way and searches them as a phrase).
 * This runs over every indexed character: a cheap regex finds humps, and only the words around
 * them are scanned (a general identifier regex backtracks badly on long words).
 */
export function auxTokens(text: string): string {
	const parts: string[] = [];
	const seen = new Set<string>();
	const n = text.length;
	HUMP.lastIndex = 0;
	for (let m = HUMP.exec(text); m !== null; m = HUMP.exec(text)) {
		let start = m.index;
		while (start > 0 && isWordCode(text.charCodeAt(start - 1))) start--;
		let end = m.index + m[0].length;
		while (end < n && isWordCode(text.charCodeAt(end))) end++;
		while (start < end && text.charCodeAt(start) <= 57) start++; // identifiers start with a letter
		HUMP.lastIndex = end;
		const ident = text.slice(start, end);
		if (seen.has(ident)) continue;
		seen.add(ident);
		parts.push(ident);
	}
	// One replace over all identifiers at once: far cheaper than splitting each.
	if (parts.length > 0) parts.splice(0, parts.length, splitCamel(parts.join("\n")));
	CJK_RUN.lastIndex = 0;
	if (CJK_RUN.test(text)) {
		CJK_RUN.lastIndex = 0;
		for (const run of text.match(CJK_RUN) ?? []) parts.push(spaceChars(run));
	}
	CJK_RUN.lastIndex = 0;
	return parts.join("\n");
}

export function splitCamel(ident: string): string {
	return ident.replace(CAMEL_BOUNDARY, "$1$3 $2$4");
}

export function spaceChars(run: string): string {
	return Array.from(run).join(" ");
}
