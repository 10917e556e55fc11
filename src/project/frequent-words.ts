/**
 * Words too frequent in any agent's history to count one by one (pure). Counting how often a word
 * occurs in a few candidate fragments means reading every occurrence of it in the whole index
 * (store/search.ts termOccurrences: `the` held 342,491 positions in the 200 MB bench index, read
 * in 291 ms; seconds at 5 GB), so a search counts such a word as present once in each candidate.
 *
 * Which words those are must not depend on other workspaces' history: deciding it by a count over
 * the whole index told a scoped caller, through the scores, whether a word it chose occurs more
 * than 5,000 times elsewhere. So the decision is this fixed list (the same in every index), plus a
 * count within the caller's own scope (gate.ts termOccurrences). The list: English function words,
 * the words that lead the bench corpus's vocabulary (bench/corpus.ts HEAD_WORDS: the most frequent
 * words of coding sessions), common programming words, numbers of up to four digits and single
 * characters; and the word forms (stems) of them all, as the forms column holds them.
 */
import { stem } from "./stem.ts";

const WORDS = `
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most my
myself no nor not now of off on once only or other our ours ourselves out over own same she should so
some such than that the their theirs them themselves then there these they this those through to too
under until up very was we were what when where which while who whom why will with would you your
yours yourself yourselves let lets ok okay yes like see use used using get got make made need needs
error errors function file files test tests code type value values return call add fix check run new
data change changes build line lines looks look path paths config import export const string number
true false null undefined async await missing instead still first last issue problem works working
failed failing fail fails pass passes passed right wrong output input result results method class
module package version server client request response user session index query search token tokens
time other one two three way work want try tried done go going thing things think know just really
set read write open close start stop list name names key keys id ids src lib dist node npm bun main
app api log logs debug info warn warning var default object array map new case else try catch throw
throws finally for while do break continue switch void int str bool self this def fn pub mut use
mod impl struct enum import from export require module exports console print printf println echo cd ls
cat grep rg sed git diff commit branch status stdout stderr exit exited command commands bash shell
script run runs running ran json yaml toml md ts tsx js jsx py rs go sh txt html css http https www com
org localhost tmp home usr bin etc dev test spec describe it expect should assert equal equals tobe
`;

const FREQUENT: ReadonlySet<string> = (() => {
	const words = new Set(WORDS.split(/\s+/).filter((w) => w.length > 0));
	for (const w of [...words]) words.add(stem(w));
	return words;
})();

/** Whether an index token (lowercase, diacritics removed) is counted as present once in every candidate. */
export function isFrequentWord(token: string): boolean {
	return token.length <= 1 || /^\d{1,4}$/.test(token) || FREQUENT.has(token);
}
