/**
 * Relevance that depends on nothing outside the fragment being scored. FTS5's bm25() takes its
 * statistics (how many fragments hold a term, the average length) from the whole index, every
 * workspace included, so its scores and even its order told a scoped caller whether a word occurs
 * in sessions it may not see. Here each fragment is scored from its own term counts and length
 * alone: BM25's shape (k1 = 1.2, b = 0.75: term frequency saturates, long fragments are damped)
 * with every query word weighing the same and lengths compared to a fixed 400 characters instead
 * of an average over some population. Adding or removing any other fragment, in scope or not,
 * cannot change a fragment's relevance. (On the evaluation it also ranks better than bm25() did:
 * docs/relevance.md, "Retrieval quality".)
 */

/**
 * Column weights: the visible text fully, derived split tokens (aux: camelCase parts, CJK) half,
 * word forms (stems, once per fragment) half, so an exact form outscores a form-only match; scope
 * tokens never.
 */
const COLUMN_WEIGHTS: Readonly<Record<string, number>> = { body: 1.0, aux: 0.5, forms: 0.5 };
const K1 = 1.2;
const B = 0.75;
/** The length a fragment's is compared to (characters); a constant, so no population leaks in. */
const REFERENCE_LENGTH = 400;

interface ScoredCandidate {
	frag_key: number;
	/** Kind weight of the fragment. */
	weight: number;
	/** Length of the fragment text, in characters. */
	length: number;
}

export interface Occurrences {
	doc: number;
	col: string;
	term: string;
	/** Occurrences of `term` in column `col` of fragment `doc`. */
	n: number;
}

/**
 * Relevance per fragment key, larger is better (0 when no query token occurs in a weighted column).
 * `common` tokens (too frequent in the index to count: store/search.ts) count as one occurrence
 * in the text of every candidate: BM25 would give such a word almost no weight anyway.
 */
export function scoreFragments(
	candidates: readonly ScoredCandidate[],
	occurrences: readonly Occurrences[],
	common: readonly string[] = [],
): Map<number, number> {
	// Terms numbered in the order they first occur (occurrences come term by term; common ones
	// last), and each fragment's column-weighted count per term kept under one number, fragment ×
	// terms + term: no map per fragment (a thousand candidates made a thousand).
	const termIndex = new Map<string, number>();
	for (const o of occurrences) if (!termIndex.has(o.term)) termIndex.set(o.term, termIndex.size);
	for (const term of common) if (!termIndex.has(term)) termIndex.set(term, termIndex.size);
	const terms = Math.max(1, termIndex.size);
	const isCandidate = new Set(candidates.map((c) => c.frag_key));
	// As FTS5's bm25(): per term, the column-weighted occurrence count, saturated once.
	const freq = new Map<number, number>();
	const add = (doc: number, term: string, weighted: number) => {
		const key = doc * terms + termIndex.get(term)!;
		freq.set(key, (freq.get(key) ?? 0) + weighted);
	};
	for (const o of occurrences) {
		const w = COLUMN_WEIGHTS[o.col] ?? 0;
		if (!isCandidate.has(o.doc) || w === 0 || o.n <= 0) continue;
		add(o.doc, o.term, w * o.n);
	}
	for (const c of candidates) for (const term of common) add(c.frag_key, term, COLUMN_WEIGHTS.body!);
	const scores = new Map<number, number>();
	for (const c of candidates) {
		const norm = lengthNorm(c.length);
		let sum = 0;
		for (let t = 0; t < terms; t++) {
			const f = freq.get(c.frag_key * terms + t);
			if (f !== undefined) sum += (f * (K1 + 1)) / (f + norm);
		}
		scores.set(c.frag_key, sum * c.weight);
	}
	return scores;
}

/** BM25's length damping of a fragment of `length` characters (the denominator's k1 · (1 − b + b · length / reference)). */
export function lengthNorm(length: number): number {
	return K1 * (1 - B + (B * Math.max(1, length)) / REFERENCE_LENGTH);
}

/** A relevance as shown: its share of the best relevance in the answer, 0 to 1, three decimals. */
export function shareOfBest(value: number, best: number): number {
	return best > 0 ? Math.round((value / best) * 1000) / 1000 : 0;
}
