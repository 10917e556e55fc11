/**
 * English word forms (pure): the Porter stemmer (M. F. Porter, "An algorithm for suffix
 * stripping", 1980; step 1c as revised in Porter2), so `crash`, `crashed`, `crashes` and `crashing`
 * share the stem `crash`, and `migrate`, `migrating`, `migration` share `migrat`. Used on both
 * sides: the index stores the stems of a fragment's words in the `forms` column, and a query
 * word also matches its stem there (query/fts.ts).
 */

/** Words shorter than this are left alone (Porter's own rule is 2; 3 keeps `as`/`is`/`us` intact). */
const MIN_LENGTH = 3;

const isConsonant = (w: string, i: number): boolean => {
	const c = w.charCodeAt(i);
	if (c === 97 || c === 101 || c === 105 || c === 111 || c === 117) return false; // a e i o u
	if (c === 121) return i === 0 ? true : !isConsonant(w, i - 1); // y after a consonant is a vowel
	return true;
};

/** m(): the number of VC sequences in w[0, end). */
function measure(w: string, end: number): number {
	let n = 0;
	let i = 0;
	while (i < end && isConsonant(w, i)) i++;
	for (;;) {
		while (i < end && !isConsonant(w, i)) i++;
		if (i >= end) return n;
		while (i < end && isConsonant(w, i)) i++;
		n++;
		if (i >= end) return n;
	}
}

function hasVowel(w: string, end: number): boolean {
	for (let i = 0; i < end; i++) if (!isConsonant(w, i)) return true;
	return false;
}

/** *d: ends with a double consonant. */
function doubleConsonant(w: string, end: number): boolean {
	return end >= 2 && w[end - 1] === w[end - 2] && isConsonant(w, end - 1);
}

/** *o: ends cvc, where the last c is not w, x or y. */
function cvc(w: string, end: number): boolean {
	if (end < 3 || !isConsonant(w, end - 1) || isConsonant(w, end - 2) || !isConsonant(w, end - 3)) return false;
	const c = w[end - 1];
	return c !== "w" && c !== "x" && c !== "y";
}

/** Replace `suffix` with `repl` when the stem before it has m() > min. Returns null when the suffix does not match. */
function replaceIf(w: string, suffix: string, repl: string, min: number): string | null {
	if (!w.endsWith(suffix)) return null;
	const stem = w.length - suffix.length;
	return measure(w, stem) > min ? w.slice(0, stem) + repl : w;
}

const STEP2: [string, string][] = [
	["ational", "ate"],
	["tional", "tion"],
	["enci", "ence"],
	["anci", "ance"],
	["izer", "ize"],
	["abli", "able"],
	["alli", "al"],
	["entli", "ent"],
	["eli", "e"],
	["ousli", "ous"],
	["ization", "ize"],
	["ation", "ate"],
	["ator", "ate"],
	["alism", "al"],
	["iveness", "ive"],
	["fulness", "ful"],
	["ousness", "ous"],
	["aliti", "al"],
	["iviti", "ive"],
	["biliti", "ble"],
];
const STEP3: [string, string][] = [
	["icate", "ic"],
	["ative", ""],
	["alize", "al"],
	["iciti", "ic"],
	["ical", "ic"],
	["ful", ""],
	["ness", ""],
];
const STEP4 = ["al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize"];

/** The Porter stem of a lowercase ASCII word; anything else is returned unchanged. */
export function stem(word: string): string {
	if (word.length < MIN_LENGTH || !/^[a-z]+$/.test(word)) return word;
	let w = word;
	// Step 1a
	if (w.endsWith("sses")) w = w.slice(0, -2);
	else if (w.endsWith("ies")) w = w.slice(0, -2);
	else if (w.endsWith("ss")) {
		// unchanged
	} else if (w.endsWith("s")) w = w.slice(0, -1);
	// Step 1b
	let step1bExtra = false;
	if (w.endsWith("eed")) {
		if (measure(w, w.length - 3) > 0) w = w.slice(0, -1);
	} else if (w.endsWith("ed") && hasVowel(w, w.length - 2)) {
		w = w.slice(0, -2);
		step1bExtra = true;
	} else if (w.endsWith("ing") && hasVowel(w, w.length - 3)) {
		w = w.slice(0, -3);
		step1bExtra = true;
	}
	if (step1bExtra) {
		if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
		else if (doubleConsonant(w, w.length) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
		else if (measure(w, w.length) === 1 && cvc(w, w.length)) w += "e";
	}
	// Step 1c, as revised in Porter2: y → i only after a consonant that is not the first letter
	// (`flaky` → `flaki`, but `deploy` stays `deploy`, like `deployment` → `deploy`).
	if (w.endsWith("y") && w.length > 2 && isConsonant(w, w.length - 2)) w = `${w.slice(0, -1)}i`;
	// Step 2
	for (const [suffix, repl] of STEP2) {
		if (w.endsWith(suffix)) {
			w = replaceIf(w, suffix, repl, 0) ?? w;
			break;
		}
	}
	// Step 3
	for (const [suffix, repl] of STEP3) {
		if (w.endsWith(suffix)) {
			w = replaceIf(w, suffix, repl, 0) ?? w;
			break;
		}
	}
	// Step 4
	for (const suffix of STEP4) {
		if (!w.endsWith(suffix)) continue;
		const at = w.length - suffix.length;
		if (suffix === "ion") {
			if (measure(w, at) > 1 && (w[at - 1] === "s" || w[at - 1] === "t")) w = w.slice(0, at);
		} else if (measure(w, at) > 1) w = w.slice(0, at);
		break;
	}
	// Step 5a
	if (w.endsWith("e")) {
		const m = measure(w, w.length - 1);
		if (m > 1 || (m === 1 && !cvc(w, w.length - 1))) w = w.slice(0, -1);
	}
	// Step 5b
	if (measure(w, w.length) > 1 && doubleConsonant(w, w.length) && w.endsWith("l")) w = w.slice(0, -1);
	return w;
}

/** Words outside these lengths are left alone: short ones are their own stem, long ones are not English. */
const MIN_WORD = 4;
const MAX_WORD = 24;
/**
 * The forms table starts small (most syncs touch a few sessions) and doubles up to this size, then
 * starts over. 2^16 slots hold 32K words: the words that repeat come back within a few fragments of
 * a reset. At 2^20 the table reached 340K words (about 90 MB of a cold index's peak RSS at 1 GB)
 * and prepared files no faster (side by side: 8.5–10.3 s against 9.4 s for 1,500 files).
 */
const INITIAL_BITS = 10;
const MAX_BITS = 16;

/**
 * Stems of single words asked for by searches (snippets, proximity), shared by every search of a
 * process: `stem` is pure, and a long-lived server answers the same vocabulary again and again.
 * Bounded: cleared when full.
 */
const searchStems = new Map<string, string>();
const SEARCH_STEMS_MAX = 1 << 16;

/**
 * Stems with a memory: a corpus repeats the same few thousand words millions of times. One
 * instance per indexing writer or per search; `stemOf` answers from a memo shared by the process.
 */
export class WordForms {
	private readonly memo = searchStems;
	// formsText's own table: open addressing on a hash computed while scanning, so the common case
	// (a word seen before) costs no substring and no string hashing.
	// Allocated on first use: a search only needs stemOf.
	private keys: string[] = [];
	private stems: string[] = [];
	private hashes = new Int32Array(0);
	private used = 0;

	stemOf(word: string): string {
		let s = this.memo.get(word);
		if (s === undefined) {
			if (this.memo.size >= SEARCH_STEMS_MAX) this.memo.clear();
			s = stem(word);
			this.memo.set(word, s);
		}
		return s;
	}

	/**
	 * The `forms` column of a fragment: the distinct stems of its words that differ from the word
	 * itself (`crashed` → `crash`, `migration` → `migrat`). A word that is its own stem is
	 * already in the body, where the query's stem alternative finds it. Once per stem: frequency is
	 * the body's business; the forms column only says "some form of this word is here".
	 *
	 * This runs over every indexed character: one pass over char codes, where a word is a run of
	 * token characters (letters, digits, anything non-ASCII, as unicode61 sees it) and only runs of
	 * 4–24 ASCII letters are stemmed.
	 */
	formsText(...texts: string[]): string {
		if (this.keys.length === 0) this.allocate(INITIAL_BITS);
		let mask = this.keys.length - 1;
		let out: string[] | null = null;
		let seen: Set<string> | null = null;
		for (const text of texts) {
			const lower = text.toLowerCase();
			const n = lower.length;
			let i = 0;
			while (i < n) {
				let c = lower.charCodeAt(i);
				if (c < 128 && !((c >= 97 && c <= 122) || (c >= 48 && c <= 57))) {
					i++;
					continue;
				}
				const start = i;
				let letters = true;
				let h = 0x811c9dc5 | 0;
				while (i < n) {
					c = lower.charCodeAt(i);
					if (c >= 97 && c <= 122) {
						h = Math.imul(h ^ c, 16777619);
						i++;
					} else if ((c >= 48 && c <= 57) || c >= 128) {
						letters = false;
						i++;
					} else break;
				}
				const len = i - start;
				if (!letters || len < MIN_WORD || len > MAX_WORD) continue;
				let slot = h & mask;
				let found: string;
				for (;;) {
					const k = this.keys[slot]!;
					if (k.length === 0) {
						if (this.used * 2 >= mask) {
							this.grow();
							mask = this.keys.length - 1;
							slot = h & mask;
							while (this.keys[slot]!.length > 0) slot = (slot + 1) & mask;
						}
						// A copy, not a slice: a slice keeps the whole lowercased fragment text alive as
						// long as the table holds the word (hundreds of MB over a cold index).
						const word = Buffer.from(lower.slice(start, i), "latin1").toString("latin1");
						const st = stem(word);
						found = st === word ? "" : st;
						this.keys[slot] = word;
						this.stems[slot] = found;
						this.hashes[slot] = h;
						this.used++;
						break;
					}
					if (this.hashes[slot] === h && k.length === len && lower.startsWith(k, start)) {
						found = this.stems[slot]!;
						break;
					}
					slot = (slot + 1) & mask;
				}
				if (found.length > 0) {
					seen ??= new Set();
					if (!seen.has(found)) {
						seen.add(found);
						(out ??= []).push(found);
					}
				}
			}
		}
		return out ? out.join(" ") : "";
	}

	private allocate(bits: number): void {
		this.keys = new Array<string>(1 << bits).fill("");
		this.stems = new Array<string>(1 << bits).fill("");
		this.hashes = new Int32Array(1 << bits);
		this.used = 0;
	}

	/** Double the table (rehashing what it holds), or start over once it is at its largest. */
	private grow(): void {
		const { keys, stems, hashes } = this;
		const bits = Math.log2(keys.length) + 1;
		if (bits > MAX_BITS) {
			this.allocate(INITIAL_BITS);
			return;
		}
		this.allocate(bits);
		const mask = this.keys.length - 1;
		for (let i = 0; i < keys.length; i++) {
			const k = keys[i]!;
			if (k.length === 0) continue;
			let slot = hashes[i]! & mask;
			while (this.keys[slot]!.length > 0) slot = (slot + 1) & mask;
			this.keys[slot] = k;
			this.stems[slot] = stems[i]!;
			this.hashes[slot] = hashes[i]!;
			this.used++;
		}
	}
}
