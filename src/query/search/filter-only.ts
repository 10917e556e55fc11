/**
 * Filter-only search: no terms, at least one narrowing filter; newest (or oldest) first. Sessions
 * are visited in the order of their newest (oldest) event, each one's fragments that the filters
 * allow read through its session index, until no unvisited session can change the answer or
 * FILTER_SCAN_BUDGET fragments were examined.
 */
import type { BrowseSessionRow, Gate, RankedRow, ScopedBrowse } from "../../gate/gate.ts";
import { WordForms } from "../../project/stem.ts";
import { TextWords } from "../relevance.ts";
import { FILTER_SCAN_BUDGET } from "./bounds.ts";
import { notEmpty } from "./explain.ts";
import { buildHits, type TextTools } from "./hits.ts";
import { betterEvidence, byTime, selectEvents } from "./order.ts";
import type { SearchPlan } from "./plan.ts";
import type { SearchCoverage, SearchResult } from "./types.ts";

export function filterOnlySearch(gate: Gate, plan: SearchPlan, tools: TextTools, started: number): SearchResult {
	const result = scanFiltered(gate, plan, tools, started);
	// Nothing passed the filters: when pi-events' own echoes would have, say so (and how to see
	// them), as a search with terms does. Only an empty answer pays for this second look.
	if (result.hits.length === 0 && plan.includeDerived !== true) {
		const withEchoes = filterOnlySearch(gate, { ...plan, includeDerived: true, limit: 1 }, tools, started);
		if (withEchoes.hits.length > 0) result.coverage.emptyBecause = "derived";
		result.elapsedMs = withEchoes.elapsedMs;
	}
	return result;
}

function scanFiltered(gate: Gate, plan: SearchPlan, tools: TextTools, started: number): SearchResult {
	const { filters } = plan;
	const browse = gate.browse(filters, { includeDerived: plan.includeDerived });
	const newest = plan.sort !== "oldest";
	// Newest first, by the sessions' newest event; oldest first, by their oldest (a session's events
	// lie between the two). Sessions with no event in the time range are never read. They come from
	// an index in that order as the search goes: it usually stops after a few.
	const cursor = browse?.sessionCursor({ order: newest ? "activity" : "first", sinceMs: filters.sinceMs, untilMs: filters.untilMs });
	try {
		const sessions = new SessionQueue(() => cursor?.next() ?? null);
		const { scan, mode } = scanSessions(browse, sessions, plan);
		return answer(browse, scan, { mode, complete: sessions.peek() === null }, plan, tools, started);
	} finally {
		cursor?.close();
	}
}

/** Sessions in visiting order, pulled from a source as needed. */
class SessionQueue {
	private readonly buffer: BrowseSessionRow[] = [];
	private exhausted = false;

	constructor(private readonly pull: () => BrowseSessionRow | null) {}

	/** The next session, without taking it; null when none is left. */
	peek(): BrowseSessionRow | null {
		this.fill(1);
		return this.buffer[0] ?? null;
	}

	/** Up to `n` next sessions, taken. */
	take(n: number): BrowseSessionRow[] {
		this.fill(n);
		return this.buffer.splice(0, n);
	}

	private fill(n: number): void {
		while (!this.exhausted && this.buffer.length < n) {
			const s = this.pull();
			if (s === null) this.exhausted = true;
			else this.buffer.push(s);
		}
	}
}

/** What the visited sessions hold: every fragment read, each event's and session's best, and the first `limit` units' times. */
class Scan {
	readonly rows: RankedRow[] = [];
	readonly bestOfEvent = new Map<number, RankedRow>();
	readonly bestOfSession = new Map<number, RankedRow>();
	/** Times of the first `limit` units (events, or sessions when grouped) in the order, as sort keys (a missing time sorts last). */
	private top: number[] = [];
	/** How many units were found. */
	private units = 0;
	readonly newest: boolean;
	readonly order: (a: RankedRow, b: RankedRow) => number;

	constructor(private readonly plan: SearchPlan) {
		this.newest = plan.sort !== "oldest";
		this.order = this.newest ? byTime(-1) : byTime(1);
	}

	private key(ts: number | null | undefined): number {
		return (ts ?? null) === null ? (this.newest ? -Infinity : Infinity) : (ts as number);
	}

	/** Enough units to fill the limit and know that more exist, and no session from `next` on can hold one that comes before the limit-th. */
	done(next: BrowseSessionRow): boolean {
		const { limit } = this.plan;
		if (this.units <= limit) return false;
		const kth = this.top[limit - 1]!;
		// Oldest first, a session whose oldest time is not known (NULL) bounds nothing: it is read.
		const bound = this.newest ? (next.last_ts_ms ?? -Infinity) : (next.first_ts_ms ?? -Infinity);
		return this.newest ? bound < kth : bound > kth;
	}

	/** The fragments of a batch of sessions. */
	add(fragments: readonly RankedRow[]): void {
		const fresh = new Map<number, Map<number, RankedRow>>();
		for (const row of fragments) {
			this.rows.push(row);
			let events = fresh.get(row.session_key);
			if (!events) fresh.set(row.session_key, (events = new Map()));
			if (betterEvidence(row, events.get(row.event_key))) events.set(row.event_key, row);
		}
		const { limit, grouped } = this.plan;
		for (const [sessionKey, events] of fresh) {
			const added = [...events.values()].sort(this.order);
			for (const e of added) this.bestOfEvent.set(e.event_key, e);
			this.bestOfSession.set(sessionKey, added[0]!);
			const newUnits = grouped ? [added[0]!] : added;
			this.units += newUnits.length;
			this.top = this.top
				.concat(newUnits.slice(0, limit).map((u) => this.key(u.ts_ms)))
				.sort((a, b) => (this.newest ? b - a : a - b))
				.slice(0, limit);
		}
	}
}

/**
 * Visit sessions in batches that double (1, 2, 4, … up to 64): few statements when the filters
 * are selective, little reading past the answer when they are not.
 */
function scanSessions(browse: ScopedBrowse | null, sessions: SessionQueue, plan: SearchPlan): { scan: Scan; mode: SearchCoverage["mode"] } {
	const scan = new Scan(plan);
	let examined = 0;
	let visited = 0;
	let batch = 1;
	for (let next = sessions.peek(); next !== null; next = sessions.peek()) {
		if (scan.done(next)) break;
		if (visited > 0 && examined >= FILTER_SCAN_BUDGET) return { scan, mode: "recent" };
		const group = sessions.take(batch);
		visited += group.length;
		batch = Math.min(batch * 2, 64);
		examined += group.reduce((n, s) => n + s.fragment_count, 0);
		scan.add(browse!.fragmentsOf(group.map((s) => s.session_key)));
	}
	return { scan, mode: "full" };
}

/** Where a scope that admits nothing reads turns: there are no hits to read them for. */
const NO_TURNS = { turnOf: () => null };

function answer(
	browse: ScopedBrowse | null,
	scan: Scan,
	read: { mode: SearchCoverage["mode"]; complete: boolean },
	plan: SearchPlan,
	tools: TextTools,
	started: number,
): SearchResult {
	const events = [...scan.bestOfEvent.values()].sort(scan.order);
	const units = plan.grouped ? [...scan.bestOfSession.values()].sort(scan.order) : events;
	const perSession = new Map<number, number>();
	for (const e of events) perSession.set(e.session_key, (perSession.get(e.session_key) ?? 0) + 1);
	const perEvent = new Map<number, number>();
	for (const r of scan.rows) perEvent.set(r.event_key, (perEvent.get(r.event_key) ?? 0) + 1);
	// The gate checks every hydrated row against the rule once more and names the current session as of its cutoff.
	const selected = browse ? selectEvents(browse, units, plan.limit, false, plan.grouped) : [];
	// No query words: relevance is the kind weight alone, shown as its share of the best.
	const best = events.reduce((max, e) => Math.max(max, e.relevance), 0);
	const hitTools = { ...tools, forms: new WordForms(), words: new TextWords() };
	const hits = buildHits(selected, {
		matched: perEvent,
		texts: new Map(),
		terms: [],
		tools: hitTools,
		best,
		eventsPerSession: plan.grouped ? perSession : null,
		turns: browse?.turns() ?? NO_TURNS,
	});
	const coverage: SearchCoverage = {
		mode: read.mode,
		estimatedMatches: events.length,
		matchesExact: read.complete,
		estimatedSessions: perSession.size,
		truncated: units.length > hits.length,
		rankedShare: read.mode === "full" ? 1 : null,
		filterOnly: true,
		ignoredTerms: [],
		// No terms: an empty answer can only be the filters'.
		...(hits.length > 0 ? notEmpty() : { emptyBecause: "filters" as const, unmatchedTerms: [] }),
	};
	return { hits, coverage, elapsedMs: performance.now() - started };
}
