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

const cache = new Map<string, string>();
const CACHE_LIMIT = 200_000;

/** stem() memoised: a corpus repeats the same few thousand words millions of times. */
export function stemCached(word: string): string {
	let s = cache.get(word);
	if (s === undefined) {
		if (cache.size >= CACHE_LIMIT) cache.clear();
		s = stem(word);
		cache.set(word, s);
	}
	return s;
}

/** Lowercase ASCII words of a text as unicode61 would cut them (other token characters join a word and disqualify it). */
const WORDS = /[a-z0-9\u00aa-\uffff]+/g;
const STEMMABLE = /^[a-z]{3,}$/;

/**
 * The `forms` column of a fragment: the distinct stems of its words that differ from the word
 * itself (`crashed` → `crash`, `migration` → `migrat`). A word that is its own stem is already
 * in the body, where the query's stem alternative finds it. Once per stem: frequency is the body's
 * business, the forms column only says "some form of this word is here".
 */
export function formsText(text: string): string {
	const seen = new Set<string>();
	const out: string[] = [];
	const lower = text.toLowerCase();
	WORDS.lastIndex = 0;
	for (let m = WORDS.exec(lower); m !== null; m = WORDS.exec(lower)) {
		const word = m[0];
		if (word.length < 4 || seen.has(word) || !STEMMABLE.test(word)) continue;
		seen.add(word);
		const s = stemCached(word);
		if (s !== word && !seen.has(s)) {
			seen.add(s);
			out.push(s);
		}
	}
	return out.join(" ");
}
