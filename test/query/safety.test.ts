/**
 * Query safety over a real index (fixtures + planted sessions): no FTS5 operator, column filter,
 * special character, SQL fragment, control character or odd Unicode ever reaches SQLite as
 * syntax. The only error a query can produce is E_BAD_QUERY (nothing searchable, or too long);
 * everything else is literal text with implicit AND. Code-shaped queries find the fixture text.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PiEventsError } from "../../src/errors.ts";
import { boundText, OMISSION_MARKER_RE } from "../../src/project/text.ts";
import { MAX_QUERY_CHARS, parseQuery } from "../../src/query/fts.ts";
import type { SearchResult } from "../../src/query/search/search.ts";
import { cleanupTempDirs, makeTempDir, PI_FIXTURES, piFixture } from "../helpers/temp.ts";
import { buildIndex, ids, oneMessageSession, run, type TestIndex, writeSession } from "./helpers.ts";

const basic = piFixture("basic");
const bigOutput = piFixture("big-output");
const B = (entryId: string) => `${basic.sessionId}/${entryId}`;

/** Planted sessions: id → text. Each id is a valid-looking uuid so it sorts deterministically. */
const PLANTED = {
	notFound: { id: "0000aaaa-0000-4000-8000-000000000001", text: "The CDN answered NOT found for the bundle request." },
	deployOr: {
		id: "0000aaaa-0000-4000-8000-000000000002",
		text: "We must choose: deploy OR rollback, not both AND never neither.",
	},
	colx: { id: "0000aaaa-0000-4000-8000-000000000003", text: "The flag col:x is set, body:x too, and aux:x as well." },
	colApart: { id: "0000aaaa-0000-4000-8000-000000000004", text: "A col is one thing, a body another, and x is a letter." },
	near: { id: "0000aaaa-0000-4000-8000-000000000005", text: "The helper NEAR(alpha beta, 2) was logged verbatim." },
	nearFar: { id: "0000aaaa-0000-4000-8000-000000000006", text: "Greek letters alpha gamma beta in a row." },
	percent: { id: "0000aaaa-0000-4000-8000-000000000007", text: "Discount of 100% on the under_score_rate column." },
	drop: { id: "0000aaaa-0000-4000-8000-000000000008", text: "The bad migration ran DROP TABLE events; -- and nobody noticed." },
	backslash: { id: "0000aaaa-0000-4000-8000-000000000009", text: "Saved to C:\\Users\\devuser\\notes.txt on the laptop." },
	deployment: { id: "0000aaaa-0000-4000-8000-00000000000a", text: "The deployment pipeline stalled overnight." },
	quote: { id: "0000aaaa-0000-4000-8000-00000000000b", text: "He said \"hello world\" and left; it's O'Brien's desk." },
} as const;
const P = (k: keyof typeof PLANTED) => `${PLANTED[k].id}/u-${PLANTED[k].id.slice(0, 6)}`;

let idx: TestIndex;

beforeAll(() => {
	const planted = join(makeTempDir("pi-events-planted-"), "sessions");
	for (const p of Object.values(PLANTED)) writeSession(planted, oneMessageSession(p.id, "/work/demo/planted", p.text));
	idx = buildIndex([PI_FIXTURES, planted]);
});

afterAll(() => {
	idx?.close();
	cleanupTempDirs();
});

/** Run a query; return the result, or the PiEventsError it threw. Any other error fails the test. */
function attempt(query: string): SearchResult | PiEventsError {
	try {
		return run(idx.db, query);
	} catch (err) {
		if (err instanceof PiEventsError) return err;
		throw new Error(`query ${JSON.stringify(query)} threw a non-PiEventsError: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
	}
}

function hitsOf(query: string): string[] {
	const r = attempt(query);
	if (r instanceof PiEventsError) throw new Error(`query ${JSON.stringify(query)} failed: ${r.code} ${r.message}`);
	// The events that hold the words: a turn's answer that joins them (match "turn") holds none.
	return ids({ ...r, hits: r.hits.filter((h) => h.match === "event") });
}

/** Hits restricted to planted sessions (the fixtures contain common words too). */
function plantedHits(query: string): string[] {
	return hitsOf(query)
		.filter((h) => h.startsWith("0000aaaa"))
		.sort();
}

const OPERATORS_ALONE = [
	"AND",
	"OR",
	"NOT",
	"NEAR",
	"NEAR(a b, 2)",
	"NEAR/3",
	"col:x",
	"body:x",
	"aux:x",
	"{body}: x",
	"{body aux}: x",
	"- body : x",
	"*",
	"^",
	"+",
	"-",
	"(",
	")",
	"()",
	'"',
	'""',
	'"""',
	'"unbalanced',
	'unbalanced"',
	'a"b"c"',
	"''",
	"'",
	"\\",
	"\\\\",
	'\\"',
	"%",
	"_",
	"%_%",
	"'; DROP TABLE events; --",
	'"; DROP TABLE fts; --',
	"1=1) OR (1=1",
	"rank:1",
	"rowid:1",
	"fts:x",
	"MATCH",
	"x:*",
	"a*",
	"^a",
	"a:b:c",
	"(a OR b) NOT c",
	"a OR b",
	"a AND",
	"NOT NOT NOT",
	"\u0000",
	"\u0007",
	"\u001b[31m",
	"\u007f",
	"\r\n\t",
	"\uE000",
	"\uE000\uE000",
	"\uE001",
	"\uD800",
	"\uDFFF",
	"🙂",
	"\u202E",
	"\u200B",
	"\u0301",
	"\u00AD",
	"ＡＢＣ",
	"İstanbul",
	"ß",
	"数据库",
	"café",
	"\u00A0",
	"\u2028",
	"   ",
	"",
];

describe("no query ever produces an SQLite or FTS5 error", () => {
	test.each(OPERATORS_ALONE.map((q) => [JSON.stringify(q), q]))("alone: %s", (_label, q) => {
		const r = attempt(q);
		if (r instanceof PiEventsError) expect(r.code).toBe("E_BAD_QUERY");
	});

	test.each(OPERATORS_ALONE.map((q) => [JSON.stringify(q), q]))("mixed with words: %s", (_label, q) => {
		for (const mixed of [`deploy ${q}`, `${q} rollback`, `deploy${q}rollback`, `"deploy ${q} rollback"`, `${q}${q}deploy${q}`]) {
			const r = attempt(mixed);
			// A query with a letter in it is always searchable.
			if (r instanceof PiEventsError) throw new Error(`${JSON.stringify(mixed)} failed: ${r.code} ${r.message}`);
			expect(Array.isArray(r.hits)).toBe(true);
		}
	});

	test("every operator and special character in one query", () => {
		const q = OPERATORS_ALONE.join(" ");
		expect(q.length).toBeLessThanOrEqual(MAX_QUERY_CHARS);
		const r = attempt(q);
		expect(r).not.toBeInstanceOf(PiEventsError);
	});

	test("queries with nothing searchable are E_BAD_QUERY, and say why", () => {
		for (const q of ["", "   ", "*", "^", "+", "-", "(", ")", '"', '""', "''", "\\", "%", "_", "\u0000", "\uE000", "🙂", "\u0301", "-- ; ' \" ( ) * ^"]) {
			const r = attempt(q);
			expect(r).toBeInstanceOf(PiEventsError);
			expect((r as PiEventsError).code).toBe("E_BAD_QUERY");
			expect((r as PiEventsError).message.length).toBeGreaterThan(0);
		}
		expect((attempt("") as PiEventsError).message).toContain("empty");
	});

	test("a 2,000-character query is searched; a 2,001-character one is E_BAD_QUERY", () => {
		const q2000 = `deploy rollback ${"x".repeat(MAX_QUERY_CHARS - 16)}`.slice(0, MAX_QUERY_CHARS);
		expect(q2000.length).toBe(2000);
		expect(attempt(q2000)).not.toBeInstanceOf(PiEventsError);
		const padded = `deploy rollback${" ".repeat(MAX_QUERY_CHARS - 15)}`;
		expect(padded.length).toBe(2000);
		expect(plantedHits(padded)).toEqual([P("deployOr")]);

		const q2001 = `${q2000}y`;
		expect(q2001.length).toBe(2001);
		const err = attempt(q2001);
		expect(err).toBeInstanceOf(PiEventsError);
		expect((err as PiEventsError).code).toBe("E_BAD_QUERY");
		expect((err as PiEventsError).message).toContain("2001");
	});

	test("a 2,000-character pasted log with hundreds of words is searched (extra terms reported as ignored)", () => {
		const words = Array.from({ length: 400 }, (_, i) => `w${i}`);
		let q = "";
		for (const w of words) if (q.length + w.length + 1 <= MAX_QUERY_CHARS) q += `${w} `;
		q = q.padEnd(MAX_QUERY_CHARS, " ");
		const r = attempt(q);
		expect(r).not.toBeInstanceOf(PiEventsError);
		expect((r as SearchResult).coverage.ignoredTerms.length).toBeGreaterThan(0);
	});

	test("the index is intact after SQL-shaped queries", () => {
		const count = () => (idx.db.query("SELECT count(*) AS n FROM events").get() as { n: number }).n;
		const before = count();
		for (const q of ["'; DROP TABLE events; --", '"; DROP TABLE fts; --', "'); DELETE FROM fragments; --", "x'; PRAGMA writable_schema=1; --"]) attempt(q);
		expect(count()).toBe(before);
		expect(hitsOf("ECONNREFUSED").length).toBeGreaterThan(0);
	});

	test("the MATCH expression quotes every term (no bare operator reaches FTS5)", () => {
		for (const q of OPERATORS_ALONE) {
			let parsed: ReturnType<typeof parseQuery>;
			try {
				parsed = parseQuery(q);
			} catch {
				continue;
			}
			// Strip quoted strings (with their fixed column filter: words are matched in body and aux,
			// stems anywhere); what remains may only be AND/OR and parentheses between them.
			const rest = parsed.match.replace(/(\{body aux\} : )?"(?:[^"]|"")*"/g, "S");
			expect(rest).toMatch(/^(\(?S( OR S)*\)?)( AND \(?S( OR S)*\)?)*$/);
		}
	});
});

describe("operators are literal text", () => {
	test("NOT found finds the text 'NOT found'", () => {
		expect(plantedHits("NOT found")).toEqual([P("notFound")]);
		expect(plantedHits("not FOUND")).toEqual([P("notFound")]);
	});

	test("NOT alone is a word, not an exclusion", () => {
		const hits = plantedHits("NOT");
		expect(hits).toContain(P("notFound"));
		expect(hits).toContain(P("deployOr"));
		// As an operator this would exclude the session that contains "rollback".
		expect(plantedHits("deploy NOT rollback")).toEqual([P("deployOr")]);
		expect(plantedHits("NOT rollback")).toEqual([P("deployOr")]);
	});

	test("OR is a word with AND semantics, not a disjunction", () => {
		expect(plantedHits("deploy OR rollback")).toEqual([P("deployOr")]);
		expect(plantedHits('"deploy OR rollback"')).toEqual([P("deployOr")]);
		expect(plantedHits('"rollback OR deploy"')).toEqual([]);
		// As a disjunction this would find "found".
		expect(plantedHits("found OR zzqqxxunknown")).toEqual([]);
		expect(plantedHits("(deploy OR rollback)")).toEqual([P("deployOr")]);
		expect(plantedHits("deploy AND zzqqxxunknown")).toEqual([]);
	});

	test("col:x matches the text col:x (tokens col, x as a phrase), not a column filter", () => {
		expect(plantedHits("col:x")).toEqual([P("colx")]);
		expect(plantedHits("body:x")).toEqual([P("colx")]);
		expect(plantedHits("aux:x")).toEqual([P("colx")]);
		// As separate words both sessions match.
		expect(plantedHits("col x")).toEqual([P("colx"), P("colApart")]);
		// {body}: x is the words "body" and "x", not a column restriction.
		expect(plantedHits("{body}: x")).toEqual([P("colx"), P("colApart")]);
	});

	test("NEAR(...) is literal: the NEAR group is not an FTS5 proximity query", () => {
		expect(plantedHits("NEAR(alpha beta, 2)")).toEqual([P("near")]);
		expect(plantedHits("NEAR")).toEqual([P("near")]);
		expect(plantedHits("alpha beta")).toEqual([P("near"), P("nearFar")]);
	});

	test("* is not a prefix operator and ^ is not an initial-token anchor", () => {
		// A word also matches its other forms (deploy ~ deployment), but `deploy*` is no word: literal, no prefix.
		expect(plantedHits("deploy*")).toEqual([P("deployOr")]);
		expect(plantedHits("deploy")).toEqual([P("deployOr"), P("deployment")].sort());
		expect(plantedHits("deployment")).toEqual([P("deployOr"), P("deployment")].sort());
		expect(ids(run(idx.db, "deployment", {}, { exact: true })).filter((h) => h.startsWith("0000aaaa"))).toEqual([P("deployment")]);
		expect(plantedHits("^rollback")).toEqual([P("deployOr")]);
		expect(plantedHits("deploy + rollback")).toEqual([P("deployOr")]);
	});

	test("a leading - does not exclude", () => {
		expect(plantedHits("-rollback")).toEqual([P("deployOr")]);
		expect(plantedHits("deploy -rollback")).toEqual([P("deployOr")]);
	});

	test("unbalanced quotes separate words; balanced quotes make phrases", () => {
		expect(plantedHits('"deploy OR')).toEqual([P("deployOr")]);
		expect(plantedHits('rollback"')).toEqual([P("deployOr")]);
		expect(plantedHits('"hello world"')).toEqual([P("quote")]);
		expect(plantedHits('"world hello"')).toEqual([]);
		expect(plantedHits("O'Brien's")).toEqual([P("quote")]);
	});

	test("% and _ are not LIKE wildcards; 100% finds 100; under_score_rate is a phrase", () => {
		expect(plantedHits("100%")).toEqual([P("percent")]);
		expect(plantedHits("under_score_rate")).toEqual([P("percent")]);
		expect(plantedHits("under%rate")).toEqual([]);
		expect(plantedHits("under_rate")).toEqual([]);
	});

	test("SQL fragments are searched as words", () => {
		expect(plantedHits("'; DROP TABLE events; --")).toEqual([P("drop")]);
		const r = run(idx.db, "'; DROP TABLE events; --");
		expect(r.coverage.ignoredTerms).toEqual(["';", "--"]);
	});

	test("backslashes are separators", () => {
		expect(plantedHits("C:\\Users\\devuser")).toEqual([P("backslash")]);
		expect(plantedHits("devuser\\notes.txt")).toEqual([P("backslash")]);
	});

	test("control characters separate words", () => {
		expect(plantedHits("deploy\u0000rollback")).toEqual([P("deployOr")]);
		expect(plantedHits("deploy\u001brollback\u0007")).toEqual([P("deployOr")]);
		expect(plantedHits("deploy\trollback\r\n")).toEqual([P("deployOr")]);
	});

	test("the private gap character U+E000 is never searchable and never bridges the omission gap", () => {
		expect(attempt("\uE000")).toBeInstanceOf(PiEventsError);
		expect(plantedHits("deploy\uE000rollback")).toEqual([P("deployOr")]);
		// The big-output fragment is indexed as head GAP tail: a phrase of the last head word and the
		// first tail word must not match across the gap, with or without a U+E000 in the query.
		const entry = readFileSync(bigOutput.path, "utf8")
			.split("\n")
			.filter(Boolean)
			.map((l) => JSON.parse(l))
			.find((e) => e.id === bigOutput.notes.bigToolResult);
		const full = (entry.message.content as { type: string; text: string }[]).map((b) => b.text).join("");
		const bounded = boundText(full);
		expect(bounded.bounded).toBe(true);
		const [head, tail] = bounded.text.split(OMISSION_MARKER_RE);
		const lastHead = head!.match(/[A-Za-z0-9]+(?=[^A-Za-z0-9]*$)/)![0];
		const firstTail = tail!.match(/[A-Za-z0-9]+/)![0];
		const big = `${bigOutput.sessionId}/${bigOutput.notes.bigToolResult}`;
		const inBig = (q: string) => ids(run(idx.db, q, { sessionIds: [bigOutput.sessionId] }));
		expect(inBig(lastHead)).toContain(big);
		expect(inBig(firstTail)).toContain(big);
		for (const q of [`"${lastHead} ${firstTail}"`, `"${lastHead} \uE000 ${firstTail}"`, `"${lastHead}\uE000${firstTail}"`]) {
			expect(inBig(q)).not.toContain(big);
		}
		// The marker's own words are not indexed.
		expect(inBig('"characters omitted"')).not.toContain(big);
		expect(inBig("omitted")).not.toContain(big);
	});
});

describe("code-shaped queries find the basic fixture", () => {
	test("src/auth/session.ts: the read call ranks first", () => {
		const hits = hitsOf("src/auth/session.ts");
		expect(hits[0]).toBe(B(basic.notes.assistantRead));
		expect(hits).toContain(B(basic.notes.firstUser));
		expect(hits).toContain(B(basic.notes.assistantEditWrite));
	});

	test("ECONNREFUSED finds the failed write and both replies that mention it", () => {
		expect(hitsOf("ECONNREFUSED").sort()).toEqual([B(basic.notes.writeErrorResult), B(basic.notes.assistantAfterBash), B(basic.notes.finalAssistant)].sort());
	});

	test("parseSessionEntries, and its camelCase parts", () => {
		expect(hitsOf("parseSessionEntries")).toContain(B(basic.notes.firstUser));
		expect(hitsOf("session entries")).toContain(B(basic.notes.firstUser));
		expect(hitsOf('"parse session entries"')).toContain(B(basic.notes.firstUser));
		expect(hitsOf("SessionEntries")).toContain(B(basic.notes.firstUser));
	});

	test("snake_case_name", () => {
		const hits = hitsOf("snake_case_name");
		expect(hits).toContain(B(basic.notes.firstUser));
		expect(hits).toContain(B(basic.notes.readResult));
		expect(hitsOf('"snake case name"')).toContain(B(basic.notes.firstUser));
	});

	test("--frozen-lockfile finds the bash command", () => {
		const r = run(idx.db, "--frozen-lockfile");
		expect(ids(r)[0]).toBe(B(basic.notes.bashExecution));
		expect(r.hits[0]!.semanticKind).toBe("bash.command");
	});

	test("exit code 137", () => {
		expect(hitsOf("exit code 137").sort()).toEqual([B(basic.notes.bashToolResult), B(basic.notes.assistantAfterBash)].sort());
		expect(hitsOf('"exit code 137"')).toContain(B(basic.notes.bashToolResult));
		expect(hitsOf('"code exit 137"')).toEqual([]);
	});

	test("CJK substrings", () => {
		for (const q of ["数据库", "连接失败", "库连", "数据库连接失败了", "失败了"]) {
			expect(hitsOf(q)).toEqual([B(basic.notes.firstUser)]);
		}
		expect(hitsOf("数据失败")).toEqual([]);
	});

	test("accent folding, both ways", () => {
		for (const q of ["cafe", "café", "CAFÉ", "Cafe", "cafe\u0301", "resume", "résumé", "re\u0301sume\u0301", "naive", "naïve"]) {
			expect(hitsOf(q)).toEqual([B(basic.notes.firstUser)]);
		}
	});

	test("case insensitivity", () => {
		const expected = hitsOf("ECONNREFUSED");
		for (const q of ["econnrefused", "EconnRefused", "eCONNREFUSED"]) expect(hitsOf(q)).toEqual(expected);
		expect(hitsOf("PARSESESSIONENTRIES")).toEqual(hitsOf("parsesessionentries"));
		expect(hitsOf("Auth Refactor")).toContain(B(basic.notes.sessionInfo));
	});

	test("the custom entry's state is never searchable", () => {
		expect(hitsOf("SECRET_CUSTOM_STATE_TOKEN")).toEqual([]);
	});
});
