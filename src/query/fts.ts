/**
 * Pure query language: plain terms and "quoted phrases", joined by implicit AND. Everything else
 * is literal text: FTS5 operators, column filters, `*`, `^`, parentheses and stray quotes never
 * reach FTS5 as syntax, because every term is emitted as a quoted FTS5 string.
 */
import { PiEventsError } from "../errors.ts";
import { stem } from "../project/stem.ts";
import { CJK_RUN, spaceChars, splitCamel } from "../project/text.ts";

/** Longest accepted query, in characters (an agent may paste a whole log). */
export const MAX_QUERY_CHARS = 2000;
/** At most this many terms take part in a search; later ones are reported as ignored. */
const MAX_TERMS = 16;

export interface QueryTerm {
	/** The term as the user wrote it (a phrase without its quotes). */
	text: string;
	phrase: boolean;
	/** Index tokens of the term (lowercased, diacritics removed), used for estimates and highlights. */
	tokens: string[];
	/** FTS5 alternatives, OR-ed: the literal form and split forms (camelCase parts, CJK characters), and the word's stem. */
	alternatives: string[];
	/** The English stem a plain word also matches by (project/stem.ts); null for phrases, code-shaped terms and with `exact`. */
	stem: string | null;
}

interface QueryOptions {
	/** Words match as typed only: no other word forms. */
	exact?: boolean;
}

export interface ParsedQuery {
	terms: QueryTerm[];
	/** The FTS5 MATCH expression. */
	match: string;
	/** Terms dropped because they hold nothing searchable, or beyond MAX_TERMS. */
	ignored: string[];
}

export function parseQuery(input: string, options: QueryOptions = {}): ParsedQuery {
	if (input.length > MAX_QUERY_CHARS) {
		throw new PiEventsError("E_BAD_QUERY", `the query is ${input.length} characters long; the limit is ${MAX_QUERY_CHARS}`);
	}
	// Control characters and private-use characters (the gap and scope tokens) are never searchable text.
	const clean = input.replace(/[\u0000-\u001f\u007f\ue000-\uf8ff]/g, " ");
	const raw: { text: string; phrase: boolean }[] = [];
	const re = /"([^"]*)"|([^\s"]+)/g;
	for (let m = re.exec(clean); m !== null; m = re.exec(clean)) {
		if (m[1] !== undefined) raw.push({ text: m[1].trim(), phrase: true });
		else if (m[2] !== undefined) raw.push({ text: m[2], phrase: false });
	}
	// A stray (unbalanced) quote is not matched by the pattern: it simply separates words.
	const terms: QueryTerm[] = [];
	const ignored: string[] = [];
	const seen = new Set<string>();
	for (const r of raw) {
		const tokens = indexTokens(r.text);
		if (tokens.length === 0) {
			if (r.text) ignored.push(r.text);
			continue;
		}
		const key = `${r.phrase}:${tokens.join(" ")}`;
		if (seen.has(key)) continue;
		seen.add(key);
		if (terms.length >= MAX_TERMS) {
			ignored.push(r.text);
			continue;
		}
		const alternatives = alternativesOf(r.text);
		// A plain English word also matches its other forms: its stem, in any column, is in the forms
		// column of every fragment holding a form (`crashed`, `crashes`), or in the body as a word.
		// Only plain words of letters (in any case, so results never depend on case): not paths, numbers or identifiers with digits.
		const word = !r.phrase && !options.exact && tokens.length === 1 && /^[a-z]{3,}$/.test(tokens[0]!) && /^[A-Za-z]+$/.test(r.text) ? tokens[0]! : null;
		const wordStem = word === null ? null : stem(word);
		// Its stem in any column: the forms column (other forms) and the words themselves. When the
		// word is its own stem, that one unqualified phrase replaces the literal one (one posting
		// list, not two: `the` stays as cheap as before).
		if (wordStem !== null) {
			if (wordStem === word && alternatives.length === 1) alternatives[0] = quote(word);
			else alternatives.push(quote(wordStem));
		}
		terms.push({ text: r.text, phrase: r.phrase, tokens, alternatives, stem: wordStem });
	}
	if (terms.length === 0) {
		throw new PiEventsError("E_BAD_QUERY", input.trim() === "" ? "the query is empty" : "the query has no letters or digits to search for");
	}
	const match = terms.map(termMatch).join(" AND ");
	return { terms, match, ignored };
}

/** One term's MATCH expression: its alternatives, OR-ed. */
export function termMatch(term: QueryTerm): string {
	return term.alternatives.length === 1 ? term.alternatives[0]! : `(${term.alternatives.join(" OR ")})`;
}

function quote(text: string): string {
	return `"${text.replaceAll('"', '""')}"`;
}

/** The text as typed matches the words of a fragment (body and aux), never its stems (forms). */
const COLUMNS = "{body aux} : ";

function literal(text: string): string {
	return `${COLUMNS}${quote(text)}`;
}

/** The index tokens an alternative searches for (its column filter is syntax, not words). */
export function alternativeTokens(alternative: string): string[] {
	return indexTokens(alternative.startsWith(COLUMNS) ? alternative.slice(COLUMNS.length) : alternative);
}

function alternativesOf(text: string): string[] {
	const alts = new Set<string>([literal(text)]);
	const camel = splitCamel(text);
	if (camel !== text) alts.add(literal(camel));
	if (CJK_RUN.test(text)) {
		CJK_RUN.lastIndex = 0;
		alts.add(literal(text.replace(CJK_RUN, (run) => ` ${spaceChars(run)} `).trim()));
	}
	CJK_RUN.lastIndex = 0;
	return [...alts];
}

/**
 * Approximately how unicode61 (remove_diacritics 2) tokenizes: case-folded letters and digits,
 * diacritics removed, everything else a separator.
 */
function indexTokens(text: string): string[] {
	return foldText(text)
		.split(/[^\p{L}\p{N}\p{Mn}]+/u)
		.filter((t) => t.length > 0);
}

/** Lowercase and strip diacritics, keeping one output character per input UTF-16 unit where possible. */
export function foldText(text: string): string {
	return text
		.normalize("NFKD")
		.replace(/\p{M}+/gu, "")
		.toLowerCase();
}
