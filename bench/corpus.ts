#!/usr/bin/env bun
/**
 * Deterministic generator of a realistic pi (v3 / 1.x) session corpus for benchmarks.
 *
 *   bun bench/corpus.ts --out DIR --size 200MB [--seed 42] [--force]
 *
 * Writes DIR/sessions/<encoded cwd>/<ts>_<uuid>.jsonl and DIR/manifest.json.
 * Sizes use binary units (1MB = 1024*1024 bytes). The same seed and size always
 * produce the same bytes: every random choice comes from seeded mulberry32 streams,
 * and no clock is read.
 *
 * Sizes: most sessions are small (5-200 KB), some are 0.2-5 MB, a few are tens of MB
 * (>= 200MB: one ~20 MB session; >= 1GB: also one ~50 MB session). The corpus lands just
 * above --size: sessions are planned past the target and trimmed from the end after pass 1.
 *
 * Planted strings: zqplant1x, zqplant10x, zqplant100x, zqplant1000x, zqplant10000x appear
 * exactly 1, 10, ... 10000 times and "quantum marmalade pipeline" exactly 100 times, each in
 * its own entry. Small corpora with too few entries get capped counts (stderr warning and
 * manifest.plantNotes); manifest.planted always holds the real counts.
 *
 * Two passes: pass 1 generates every session without writing, to count the
 * "eligible" entries (user / assistant-with-text / toolResult / bashExecution messages);
 * the planted tokens are then assigned to uniformly chosen eligible entries (at most one
 * planted string per entry), and pass 2 regenerates the same sessions and writes them.
 * Session size limits are checked on the un-planted line lengths, so planting never
 * changes the structure.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, utimesSync, writeFileSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";

// ---------------------------------------------------------------------------------------------
// PRNG

class Rng {
	s: number;
	constructor(seed: number) {
		this.s = seed >>> 0;
	}
	u32(): number {
		let t = (this.s = (this.s + 0x6d2b79f5) | 0);
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return (t ^ (t >>> 14)) >>> 0;
	}
	next(): number {
		return this.u32() / 4294967296;
	}
	int(n: number): number {
		return Math.floor(this.next() * n);
	}
	range(a: number, b: number): number {
		return a + Math.floor(this.next() * (b - a + 1));
	}
	chance(p: number): boolean {
		return this.next() < p;
	}
	pick<T>(arr: readonly T[]): T {
		return arr[Math.floor(this.next() * arr.length)] as T;
	}
	logUniform(a: number, b: number): number {
		return Math.exp(Math.log(a) + this.next() * (Math.log(b) - Math.log(a)));
	}
	/** number of failures before a success with probability p, capped */
	geometric(p: number, max: number): number {
		let n = 0;
		while (n < max && !this.chance(p)) n++;
		return n;
	}
}

function hash32(...xs: number[]): number {
	let h = 0x811c9dc5;
	for (const x of xs) {
		h = Math.imul(h ^ (x >>> 0), 0x01000193);
		h ^= h >>> 13;
		h = Math.imul(h, 0x5bd1e995);
		h ^= h >>> 15;
	}
	return h >>> 0;
}

// ---------------------------------------------------------------------------------------------
// Vocabulary (fixed, independent of the seed). Ranked: earlier words are more frequent.

const HEAD_WORDS = `the to error a function and of is in it that for this we file with be on not test can you
i are as if so should but now use have or code from at will let me an type value need by was do just there then
all when return which one call add fix check make run new data change would also like because into only see here
out what get set update build line looks path config import export const string number true false null async
await missing instead still again first last before after issue problem works working failed failing passes
right wrong output input result results method class module package version server client request response
user session index query search token tokens time first other some any each more most no yes could might`;

const ENGLISH_WORDS = `about above across actually add added adding address after afternoon again against ago agree ahead
allow almost alone along already although always among amount another answer anyone anything anyway appear
apply approach area around ask asked assume attempt available avoid away back bad base basic became become
been behind being believe below best better between big bit both bottom break bring broken brought business
came careful carefully case cases cause caused certain chance changed changes choice choose clean clear clearly
close come coming common complete completely consider continue correct correctly cost couple course cover
current currently day days decide decided deep default define definitely describe detail details did didn't
different difficult direct directly does doesn't doing done don't double down during early easier easy effect
either else empty end enough entire entirely especially even ever every everything exact exactly example
except exist expect expected explain extra fact fail fairly far fast feel few fine finish finished follow
following form found free full fully future gave general generally give given go goes going gone good got
great group guess half hand handle happen happened happens hard has having help hold hope however huge idea
important include including inside instead interesting isn't it's keep kind know known large later least
leave left less level likely limit list little long look looking lot low main mainly matter maybe mean means
meant might mind minimal minor mostly move much must name near nearly necessary never next nice none normal
note nothing notice number obvious obviously often okay old once open order original otherwise our ourselves
outside over own part particular pass past perhaps place plan point possible possibly pretty previous
previously probably proper properly pull put quick quickly quite rather read real really reason recent
remove removed replace require required rest revert same save say second seem seems sense separate several
short show shown side similar simple simply since single small something sometimes soon sort specific start
started state step still stop straight strange such suggest sure take taken talk tell than thanks that's their
them themselves there's these they thing things think third those though thought three through together too
took top total tried true try trying turn twice two under understand unless until unusual upon us usual
usually very via wait want wanted way ways week well went were weird we're whatever where whether while whole
why wide within without wonder word work world worth write written wrong year yet you're your`;

const DEV_WORDS = `api app array assert assertion backend batch binary block body boolean branch browser buffer bug
bundle bytes cache callback cargo catch chunk cli clone column command commit compile compiler component
concurrency connection console constant constructor container context controller cookie coverage cpu crash
cursor daemon database dataset debug debugger declaration decode default dependency deploy deployment deprecated
diff directory dist docker docs dom duration element endpoint entry enum env environment event exception
exec exit expression extension factory feature fetch field fields filter flag flaky float folder fork format
frontend git github handler hash header headers heap helper hook host html http https implementation index
init initialize inline install instance integer interface iterator javascript json jsonl key keys lambda
latency layout lazy library lint linter listener load loader local lock log logger logging loop macro main
map memory merge message middleware migration mock model mutex namespace network node npm object offset
option optional options param parameter parse parser patch payload performance permission pipeline plugin
pointer pool port process production profile promise prompt property props protocol proxy push python
queue race react readme record redis reducer refactor reference regex registry release render repo repository
resolve resolver retry route router runtime rust schema scope script sdk selector serialize service setup
shell signal snapshot socket source spec sql stack stderr stdin stdout storage stream struct style subprocess
suite sync syntax system table target task template terminal thread timeout timestamp tmp toolchain trace
transaction transform tree tsconfig tuple typescript undefined unicode unit upstream url utf8 util validation
variable vector vendor verbose view virtual vite warning watcher webpack websocket worker workspace wrapper
yaml zod bun deno vitest jest pytest tokio serde axum express fastify prisma drizzle sqlite postgres kafka
nginx kubernetes helm terraform graphql grpc protobuf oauth jwt cors csrf ssr hydration memoize debounce
throttle semaphore backoff idempotent checksum shard replica tombstone quantum`;

const PSEUDO_SYLLABLES = `ka ro ven tis mal dor fen gli hu jor kel lan mi nor pel ras sil tor ul vex wy bar cen dil fo gar
han jun kor lim mor nel pal rin sor tan var wen bel cor dan fil gon hel jin kal lor mar nim por ril sal tem vor
wil ark bro cla dre fla gri plo ste tri vla`;

function splitWords(s: string): string[] {
	return s.split(/\s+/).filter((w) => w.length > 0);
}

const VOCAB: string[] = [];
const VOCAB_SET = new Set<string>();
function addVocab(w: string): void {
	if (!VOCAB_SET.has(w)) {
		VOCAB_SET.add(w);
		VOCAB.push(w);
	}
}
for (const w of splitWords(HEAD_WORDS)) addVocab(w);
{
	const rest = [...splitWords(ENGLISH_WORDS), ...splitWords(DEV_WORDS)];
	const r = new Rng(12345);
	for (let i = rest.length - 1; i > 0; i--) {
		const j = r.int(i + 1);
		const t = rest[i] as string;
		rest[i] = rest[j] as string;
		rest[j] = t;
	}
	for (const w of rest) addVocab(w);
}
const REAL_WORD_COUNT = VOCAB.length;
{
	// long tail of made-up words: rare terms
	const syl = splitWords(PSEUDO_SYLLABLES);
	const r = new Rng(777);
	// made-up words never collide with the planted strings: no syllable contains z or q
	while (VOCAB.length < 30000) {
		const n = r.range(2, 4);
		let w = "";
		for (let i = 0; i < n; i++) w += r.pick(syl);
		addVocab(w);
	}
}
for (const w of VOCAB) {
	if (w.includes("zq") || w.includes("marmalade")) throw new Error(`vocabulary must not contain ${w}`);
}
const VOCAB_CAP = VOCAB.map((w) => w.charAt(0).toUpperCase() + w.slice(1));

// Zipf-Mandelbrot sampling table: P(rank r) ~ 1 / (r + 1.5), with the made-up tail words
// damped (about 8% of tokens), plus a small share of fresh random words (an unbounded tail of
// terms seen once or a handful of times).
const ZIPF_BITS = 22;
const ZIPF_TABLE = new Uint16Array(1 << ZIPF_BITS);
const FRESH = 0xffff;
const FRESH_SHARE = 0.004;
{
	const weight = (r: number) => (r < REAL_WORD_COUNT ? 1 : 0.15) / (r + 1.5);
	let total = 0;
	for (let r = 0; r < VOCAB.length; r++) total += weight(r);
	const ranked = Math.round(ZIPF_TABLE.length * (1 - FRESH_SHARE));
	let acc = 0;
	let pos = 0;
	for (let r = 0; r < VOCAB.length; r++) {
		acc += weight(r);
		const end = r === VOCAB.length - 1 ? ranked : Math.round((acc / total) * ranked);
		while (pos < end) ZIPF_TABLE[pos++] = r;
	}
	while (pos < ZIPF_TABLE.length) ZIPF_TABLE[pos++] = FRESH;
}
const SYLLABLES = splitWords(PSEUDO_SYLLABLES);
function freshWord(rng: Rng): string {
	const n = 3 + (rng.u32() & 1);
	let w = "";
	for (let i = 0; i < n; i++) w += SYLLABLES[rng.u32() % SYLLABLES.length];
	return w;
}
function word(rng: Rng): string {
	const i = ZIPF_TABLE[rng.u32() >>> (32 - ZIPF_BITS)] as number;
	return i === FRESH ? freshWord(rng) : (VOCAB[i] as string);
}
function capWord(rng: Rng): string {
	const i = ZIPF_TABLE[rng.u32() >>> (32 - ZIPF_BITS)] as number;
	if (i !== FRESH) return VOCAB_CAP[i] as string;
	const w = freshWord(rng);
	return w.charAt(0).toUpperCase() + w.slice(1);
}

const IDENT_PARTS = splitWords(`get set load save parse build create update delete find fetch handle resolve render
validate compute apply read write init start stop open close merge sync flush emit dispatch register
user session config cache index query token event entry message file path node tree item list map state
context options result error value buffer stream request response handler manager service client server store
schema record batch queue worker task job plugin module loader reader writer builder parser formatter
payload header body key id name count size offset limit range cursor page filter sort order hash chunk
retry timeout deadline lock pool conn db row column table field meta info data status mode level`);

const TYPE_NAMES = splitWords(`string number boolean unknown void Buffer Uint8Array Date RegExp Error`);

// ---------------------------------------------------------------------------------------------
// Text generators

function identCamel(rng: Rng): string {
	const n = rng.range(2, 3);
	let s = rng.pick(IDENT_PARTS);
	for (let i = 1; i < n; i++) {
		const p = rng.chance(0.08) ? (VOCAB[rng.range(REAL_WORD_COUNT, VOCAB.length - 1)] as string) : rng.pick(IDENT_PARTS);
		s += p.charAt(0).toUpperCase() + p.slice(1);
	}
	return s;
}
function identSnake(rng: Rng): string {
	const n = rng.range(2, 3);
	let s = rng.pick(IDENT_PARTS);
	for (let i = 1; i < n; i++) s += `_${rng.chance(0.08) ? (VOCAB[rng.range(REAL_WORD_COUNT, VOCAB.length - 1)] as string) : rng.pick(IDENT_PARTS)}`;
	return s;
}
function identPascal(rng: Rng): string {
	const s = identCamel(rng);
	return s.charAt(0).toUpperCase() + s.slice(1);
}

/** One prose sentence built from Zipf words, with occasional inline code. */
function sentence(rng: Rng, ws: Workspace | null): string {
	const n = 4 + (rng.u32() % 17);
	let s = capWord(rng);
	for (let i = 1; i < n; i++) {
		const r = rng.u32() & 1023;
		if (r < 30) {
			s += ` \`${ws && r < 12 ? rng.pick(ws.idents) : identCamel(rng)}\``;
		} else if (r < 40 && ws) {
			s += ` \`${rng.pick(ws.files).rel}\``;
		} else if (r < 100) {
			s += `, ${word(rng)}`;
		} else {
			s += ` ${word(rng)}`;
		}
	}
	const e = rng.u32() & 31;
	return s + (e < 2 ? "?" : e < 3 ? ":" : ".");
}

function prose(rng: Rng, nChars: number, ws: Workspace | null): string {
	let s = sentence(rng, ws);
	let inPara = 1;
	while (s.length < nChars) {
		if (inPara >= 3 && rng.chance(0.3)) {
			s += "\n\n";
			inPara = 0;
		} else s += " ";
		s += sentence(rng, ws);
		inPara++;
	}
	return s;
}

/** prose that continues a sentence opener such as "Let me" */
function proseAfter(rng: Rng, nChars: number, ws: Workspace | null): string {
	const p = prose(rng, nChars, ws);
	return p.charAt(0).toLowerCase() + p.slice(1);
}

function bullets(rng: Rng, n: number, ws: Workspace | null): string {
	const out: string[] = [];
	for (let i = 0; i < n; i++) out.push(`- ${sentence(rng, ws)}`);
	return out.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Code generators

type Lang = "ts" | "py" | "rs" | "go";

function shortProse(rng: Rng): string {
	const n = rng.range(3, 9);
	let s = word(rng);
	for (let i = 1; i < n; i++) s += ` ${word(rng)}`;
	return s;
}

function tsType(rng: Rng, ws: Workspace): string {
	const r = rng.int(10);
	if (r < 4) return rng.pick(TYPE_NAMES);
	if (r < 6) return rng.pick(ws.types);
	if (r < 7) return `${rng.pick(ws.types)}[]`;
	if (r < 8) return `Promise<${rng.pick(ws.types)}>`;
	if (r < 9) return `Map<string, ${rng.pick(ws.types)}>`;
	return "Record<string, unknown>";
}

function codeLine(rng: Rng, lang: Lang, ws: Workspace, depth: number): string {
	const id = () => (rng.chance(0.6) ? rng.pick(ws.idents) : identCamel(rng));
	const ind = lang === "go" ? "\t".repeat(depth) : "    ".slice(0, lang === "py" || lang === "rs" ? 4 : 2).repeat(depth);
	const r = rng.int(20);
	switch (lang) {
		case "ts":
			switch (r) {
				case 0:
					return `${ind}const ${id()} = ${id()}.${id()}(${id()});`;
				case 1:
					return `${ind}const ${id()} = await ${id()}(${id()}, { ${id()}: ${rng.chance(0.5) ? "true" : rng.int(1000)} });`;
				case 2:
					return `${ind}if (!${id()}) {`;
				case 3:
					return `${ind}  throw new Error(\`${shortProse(rng)}: \${${id()}}\`);`;
				case 4:
					return `${ind}return ${id()};`;
				case 5:
					return `${ind}}`;
				case 6:
					return `${ind}// ${shortProse(rng)}`;
				case 7:
					return `${ind}for (const ${id()} of ${id()}) {`;
				case 8:
					return `${ind}let ${id()}: ${tsType(rng, ws)} = ${id()}.${id()} ?? ${rng.int(100)};`;
				case 9:
					return `${ind}export function ${id()}(${id()}: ${tsType(rng, ws)}, ${id()}?: ${tsType(rng, ws)}): ${tsType(rng, ws)} {`;
				case 10:
					return `${ind}export async function ${id()}(${id()}: ${rng.pick(ws.types)}): Promise<void> {`;
				case 11:
					return `${ind}${id()}.${id()} = ${id()};`;
				case 12:
					return `${ind}console.log("${shortProse(rng)}", ${id()});`;
				case 13:
					return `${ind}} catch (err) {`;
				case 14:
					return `${ind}return ${id()}.map((${id()}) => ${id()}.${id()});`;
				case 15:
					return `${ind}expect(${id()}).toBe(${rng.int(50)});`;
				case 16:
					return `${ind}import { ${id()}, ${id()} } from "./${rng.pick(ws.files).stem}";`;
				case 17:
					return `${ind}export interface ${rng.pick(ws.types)} {`;
				case 18:
					return `${ind}  ${id()}${rng.chance(0.3) ? "?" : ""}: ${tsType(rng, ws)};`;
				default:
					return `${ind}/** ${shortProse(rng)} */`;
			}
		case "py":
			switch (r) {
				case 0:
					return `${ind}${identSnake(rng)} = ${identSnake(rng)}.${identSnake(rng)}(${identSnake(rng)})`;
				case 1:
					return `${ind}if not ${identSnake(rng)}:`;
				case 2:
					return `${ind}    raise ValueError(f"${shortProse(rng)} {${identSnake(rng)}}")`;
				case 3:
					return `${ind}return ${identSnake(rng)}`;
				case 4:
					return `${ind}# ${shortProse(rng)}`;
				case 5:
					return `${ind}for ${identSnake(rng)} in ${identSnake(rng)}:`;
				case 6:
					return `${ind}def ${identSnake(rng)}(self, ${identSnake(rng)}: str, ${identSnake(rng)}=None) -> dict:`;
				case 7:
					return `${ind}class ${rng.pick(ws.types)}(${rng.pick(ws.types)}):`;
				case 8:
					return `${ind}    """${shortProse(rng)}."""`;
				case 9:
					return `${ind}self.${identSnake(rng)} = ${identSnake(rng)}`;
				case 10:
					return `${ind}logger.info("${shortProse(rng)} %s", ${identSnake(rng)})`;
				case 11:
					return `${ind}assert ${identSnake(rng)} == ${rng.int(100)}`;
				case 12:
					return `${ind}with open(${identSnake(rng)}, "r", encoding="utf-8") as f:`;
				case 13:
					return `${ind}try:`;
				case 14:
					return `${ind}except Exception as err:  # noqa: BLE001`;
				case 15:
					return `${ind}from ${ws.name.replace(/-/g, "_")}.${identSnake(rng)} import ${rng.pick(ws.types)}, ${identSnake(rng)}`;
				case 16:
					return `${ind}${identSnake(rng)} = [${identSnake(rng)} for ${identSnake(rng)} in ${identSnake(rng)} if ${identSnake(rng)}]`;
				case 17:
					return `${ind}@pytest.mark.parametrize("${identSnake(rng)}", [${rng.int(10)}, ${rng.int(10)}])`;
				case 18:
					return "";
				default:
					return `${ind}async def ${identSnake(rng)}(${identSnake(rng)}):`;
			}
		case "rs":
			switch (r) {
				case 0:
					return `${ind}let ${identSnake(rng)} = ${identSnake(rng)}.${identSnake(rng)}(&${identSnake(rng)})?;`;
				case 1:
					return `${ind}let mut ${identSnake(rng)} = Vec::with_capacity(${rng.int(256)});`;
				case 2:
					return `${ind}if ${identSnake(rng)}.is_empty() {`;
				case 3:
					return `${ind}    return Err(Error::new(ErrorKind::InvalidInput, "${shortProse(rng)}"));`;
				case 4:
					return `${ind}}`;
				case 5:
					return `${ind}// ${shortProse(rng)}`;
				case 6:
					return `${ind}pub fn ${identSnake(rng)}(&self, ${identSnake(rng)}: &str) -> Result<${rng.pick(ws.types)}, Error> {`;
				case 7:
					return `${ind}pub struct ${rng.pick(ws.types)} {`;
				case 8:
					return `${ind}    pub ${identSnake(rng)}: ${rng.pick(["u64", "String", "Option<String>", "Vec<u8>", "bool", "usize"])},`;
				case 9:
					return `${ind}match ${identSnake(rng)} {`;
				case 10:
					return `${ind}    Some(${identSnake(rng)}) => ${identSnake(rng)}(${identSnake(rng)}),`;
				case 11:
					return `${ind}    None => {}`;
				case 12:
					return `${ind}Ok(${identSnake(rng)})`;
				case 13:
					return `${ind}#[derive(Debug, Clone, Serialize, Deserialize)]`;
				case 14:
					return `${ind}impl ${rng.pick(ws.types)} {`;
				case 15:
					return `${ind}use crate::${identSnake(rng)}::${rng.pick(ws.types)};`;
				case 16:
					return `${ind}/// ${shortProse(rng)}`;
				case 17:
					return `${ind}for ${identSnake(rng)} in ${identSnake(rng)}.iter() {`;
				case 18:
					return "";
				default:
					return `${ind}assert_eq!(${identSnake(rng)}, ${rng.int(100)});`;
			}
		default:
			switch (r) {
				case 0:
					return `${ind}${id()}, err := ${id()}.${identPascal(rng)}(ctx, ${id()})`;
				case 1:
					return `${ind}if err != nil {`;
				case 2:
					return `${ind}\treturn nil, fmt.Errorf("${shortProse(rng)}: %w", err)`;
				case 3:
					return `${ind}}`;
				case 4:
					return `${ind}// ${shortProse(rng)}`;
				case 5:
					return `${ind}func ${identPascal(rng)}(${id()} string) (*${rng.pick(ws.types)}, error) {`;
				case 6:
					return `${ind}func (s *${rng.pick(ws.types)}) ${identPascal(rng)}(ctx context.Context) error {`;
				case 7:
					return `${ind}type ${rng.pick(ws.types)} struct {`;
				case 8:
					return `${ind}\t${identPascal(rng)} ${rng.pick(["string", "int64", "[]byte", "bool", "time.Duration"])} \`json:"${identSnake(rng)}"\``;
				case 9:
					return `${ind}for _, ${id()} := range ${id()} {`;
				case 10:
					return `${ind}return ${id()}, nil`;
				case 11:
					return `${ind}${id()} := make(map[string]${rng.pick(ws.types)}, ${rng.int(64)})`;
				case 12:
					return `${ind}log.Printf("${shortProse(rng)}: %v", ${id()})`;
				case 13:
					return `${ind}defer ${id()}.Close()`;
				case 14:
					return `${ind}t.Fatalf("${shortProse(rng)}: got %v, want %v", ${id()}, ${id()})`;
				case 15:
					return `${ind}switch ${id()} {`;
				case 16:
					return `${ind}case ${rng.int(10)}:`;
				case 17:
					return "";
				default:
					return `${ind}if ${id()} == nil {`;
			}
	}
}

function codeBlock(rng: Rng, lang: Lang, ws: Workspace, nLines: number): string {
	const out: string[] = [];
	let depth = 0;
	for (let i = 0; i < nLines; i++) {
		if (rng.chance(0.15)) depth = Math.min(3, depth + 1);
		// biome-ignore lint/suspicious/noDuplicateElseIf: two independent random draws, not one condition.
		else if (rng.chance(0.15)) depth = Math.max(0, depth - 1);
		out.push(codeLine(rng, lang, ws, depth));
	}
	return out.join("\n");
}

const FENCE: Record<Lang, string> = { ts: "ts", py: "python", rs: "rust", go: "go" };

// ---------------------------------------------------------------------------------------------
// Log line pools (per language), composed into build logs / test output

function makeLogPool(lang: Lang, seed: number): string[] {
	const rng = new Rng(seed);
	const fakeWs = makeWorkspaceCore(rng, "app", "/srv/app", lang);
	const pool: string[] = [];
	const f = () => rng.pick(fakeWs.files).rel;
	for (let i = 0; i < 3000; i++) {
		const r = rng.int(16);
		let l: string;
		switch (lang) {
			case "ts":
				l = [
					() =>
						`${f()}(${rng.int(400)},${rng.int(60)}): error TS${rng.range(2000, 7999)}: Argument of type '${rng.pick(fakeWs.types)}' is not assignable to parameter of type '${rng.pick(fakeWs.types)}'.`,
					() => ` ✓ ${f()} > ${shortProse(rng)} ${rng.int(200)}ms`,
					() => ` ✗ ${f()} > ${shortProse(rng)}`,
					() => `   AssertionError: expected ${rng.int(100)} to be ${rng.int(100)} // Object.is equality`,
					() => `    at ${identCamel(rng)} (${f()}:${rng.int(400)}:${rng.int(60)})`,
					() => `    at process.processTicksAndRejections (node:internal/process/task_queues:${rng.int(100)}:${rng.int(20)})`,
					() => `transforming (${rng.int(3000)}) ${f()}`,
					() => `dist/assets/${identCamel(rng)}-${rng.u32().toString(16)}.js   ${(rng.next() * 900).toFixed(2)} kB │ gzip: ${(rng.next() * 200).toFixed(2)} kB`,
					() => `npm WARN deprecated ${identSnake(rng).replace(/_/g, "-")}@${rng.int(9)}.${rng.int(20)}.${rng.int(20)}: ${shortProse(rng)}`,
					() => `[vite] hmr update ${f()}`,
					() => `warning: ${shortProse(rng)} in ${f()}`,
					() => `error: ${shortProse(rng)}`,
					() => `${new Date(1767225600000 + rng.int(3e10)).toISOString()} [${rng.pick(["INFO", "DEBUG", "WARN", "ERROR"])}] ${shortProse(rng)}`,
					() =>
						`  ${f()}:${rng.int(400)}:${rng.int(60)}  ${rng.pick(["error", "warning"])}  ${shortProse(rng)}  @typescript-eslint/${identSnake(rng).replace(/_/g, "-")}`,
					() => `Test Files  ${rng.int(5)} failed | ${rng.int(200)} passed (${rng.int(200)})`,
					() => `$ ${rng.pick(["tsc --noEmit", "vite build", "eslint .", "bun test", "vitest run"])}`,
				][r]!();
				break;
			case "py":
				l = [
					() => `${f()}::test_${identSnake(rng)} PASSED [ ${rng.int(100)}%]`,
					() => `${f()}::test_${identSnake(rng)} FAILED [ ${rng.int(100)}%]`,
					() => `E       AssertionError: assert ${rng.int(100)} == ${rng.int(100)}`,
					() => `E       TypeError: ${identSnake(rng)}() got an unexpected keyword argument '${identSnake(rng)}'`,
					() => `Traceback (most recent call last):`,
					() => `  File "/srv/app/${f()}", line ${rng.int(500)}, in ${identSnake(rng)}`,
					() => `    ${identSnake(rng)} = ${identSnake(rng)}(${identSnake(rng)})`,
					() => `${f()}:${rng.int(400)}: error: ${shortProse(rng)}  [${rng.pick(["arg-type", "attr-defined", "return-value", "union-attr"])}]`,
					() => `WARNING: ${shortProse(rng)}`,
					() => `Collecting ${identSnake(rng).replace(/_/g, "-")}==${rng.int(9)}.${rng.int(20)}.${rng.int(20)}`,
					() =>
						`${new Date(1767225600000 + rng.int(3e10)).toISOString()} ${rng.pick(["INFO", "DEBUG", "WARNING", "ERROR"])} ${identSnake(rng)}: ${shortProse(rng)}`,
					() => `FAILED ${f()}::test_${identSnake(rng)} - ${shortProse(rng)}`,
					() => `========== ${rng.int(10)} failed, ${rng.int(400)} passed, ${rng.int(9)} warnings in ${(rng.next() * 60).toFixed(2)}s ==========`,
					() => `${f()}:${rng.int(400)}:${rng.int(60)}: ${rng.pick(["E501", "F401", "W291", "E722"])} ${shortProse(rng)}`,
					() => `  warnings.warn(${JSON.stringify(shortProse(rng))}, DeprecationWarning)`,
					() => `ok`,
				][r]!();
				break;
			case "rs":
				l = [
					() => `   Compiling ${identSnake(rng).replace(/_/g, "-")} v${rng.int(3)}.${rng.int(30)}.${rng.int(20)}`,
					() => `warning: unused variable: \`${identSnake(rng)}\``,
					() => `  --> ${f()}:${rng.int(400)}:${rng.int(60)}`,
					() => `error[E0${rng.range(100, 799)}]: ${shortProse(rng)}`,
					() => `   |`,
					() => `${rng.int(400)} |     let ${identSnake(rng)} = ${identSnake(rng)}(&${identSnake(rng)});`,
					() => `   |         ^^^^^^ ${shortProse(rng)}`,
					() => `test ${identSnake(rng)}::${identSnake(rng)} ... ok`,
					() => `test ${identSnake(rng)}::${identSnake(rng)} ... FAILED`,
					() => `thread '${identSnake(rng)}' panicked at ${f()}:${rng.int(400)}:${rng.int(60)}:`,
					() => `  left: ${rng.int(1000)}`,
					() => ` right: ${rng.int(1000)}`,
					() => `    Finished \`dev\` profile [unoptimized + debuginfo] target(s) in ${(rng.next() * 90).toFixed(2)}s`,
					() => `     Running unittests src/lib.rs (target/debug/deps/${identSnake(rng)}-${rng.u32().toString(16)})`,
					() => `test result: FAILED. ${rng.int(300)} passed; ${rng.int(5)} failed; 0 ignored; 0 measured; 0 filtered out`,
					() => `note: run with \`RUST_BACKTRACE=1\` environment variable to display a backtrace`,
				][r]!();
				break;
			default:
				l = [
					() => `--- FAIL: Test${identPascal(rng)} (${(rng.next() * 3).toFixed(2)}s)`,
					() => `--- PASS: Test${identPascal(rng)} (${(rng.next() * 3).toFixed(2)}s)`,
					() => `=== RUN   Test${identPascal(rng)}`,
					() => `    ${f()}:${rng.int(400)}: ${shortProse(rng)}`,
					() => `ok  \tgithub.com/acme/${identSnake(rng).replace(/_/g, "")}\t${(rng.next() * 5).toFixed(3)}s`,
					() => `FAIL\tgithub.com/acme/${identSnake(rng).replace(/_/g, "")}\t${(rng.next() * 5).toFixed(3)}s`,
					() => `# github.com/acme/${identSnake(rng).replace(/_/g, "")}`,
					() => `${f()}:${rng.int(400)}:${rng.int(60)}: undefined: ${identCamel(rng)}`,
					() =>
						`${f()}:${rng.int(400)}:${rng.int(60)}: cannot use ${identCamel(rng)} (variable of type ${rng.pick(fakeWs.types)}) as ${rng.pick(fakeWs.types)} value`,
					() => `panic: runtime error: invalid memory address or nil pointer dereference`,
					() => `goroutine ${rng.int(400)} [running]:`,
					() => `main.${identPascal(rng)}(0xc000${rng.u32().toString(16)})`,
					() => `\t/srv/app/${f()}:${rng.int(400)} +0x${rng.int(4096).toString(16)}`,
					() =>
						`go: downloading github.com/${identSnake(rng).replace(/_/g, "")}/${identSnake(rng).replace(/_/g, "")} v${rng.int(3)}.${rng.int(30)}.${rng.int(20)}`,
					() => `${new Date(1767225600000 + rng.int(3e10)).toISOString()} level=${rng.pick(["info", "debug", "warn", "error"])} msg="${shortProse(rng)}"`,
					() => `PASS`,
				][r]!();
		}
		pool.push(l);
	}
	return pool;
}

// ---------------------------------------------------------------------------------------------
// Workspaces

interface WsFile {
	rel: string;
	stem: string;
	lang: Lang | "md" | "json";
	seed: number;
	nLines: number;
}
interface Workspace {
	index: number;
	name: string;
	cwd: string;
	dirName: string;
	lang: Lang;
	files: WsFile[];
	idents: string[];
	types: string[];
	seed: number;
	weight: number;
}

const LANG_EXT: Record<Lang, string> = { ts: "ts", py: "py", rs: "rs", go: "go" };

function makeWorkspaceCore(rng: Rng, name: string, cwd: string, lang: Lang): Workspace {
	const idents: string[] = [];
	for (let i = 0; i < 300; i++) idents.push(lang === "py" || lang === "rs" ? identSnake(rng) : identCamel(rng));
	const types: string[] = [];
	for (let i = 0; i < 60; i++) types.push(identPascal(rng));
	const dirs =
		lang === "ts"
			? ["src", "src/lib", "src/api", "src/components", "src/utils", "src/store", "test", "scripts"]
			: lang === "py"
				? [name.replace(/-/g, "_"), `${name.replace(/-/g, "_")}/core`, `${name.replace(/-/g, "_")}/api`, "tests", "scripts"]
				: lang === "rs"
					? ["src", "src/bin", "src/net", "src/storage", "tests", "benches"]
					: ["cmd/server", "internal/api", "internal/store", "internal/auth", "pkg/util"];
	const files: WsFile[] = [];
	const seen = new Set<string>();
	const nFiles = rng.range(40, 80);
	while (files.length < nFiles) {
		const dir = rng.pick(dirs);
		const stem = lang === "py" || lang === "rs" ? identSnake(rng) : lang === "go" ? identSnake(rng).replace(/_/g, "") : identCamel(rng);
		const test = dir.startsWith("test") && lang === "ts" ? ".test" : "";
		const rel = `${dir}/${lang === "py" && dir === "tests" ? `test_${stem}` : stem}${test}.${LANG_EXT[lang]}`;
		if (seen.has(rel)) continue;
		seen.add(rel);
		files.push({ rel, stem, lang, seed: rng.u32(), nLines: Math.round(rng.logUniform(30, 1500)) });
	}
	const cfg = lang === "ts" ? ["package.json", "tsconfig.json"] : lang === "py" ? ["pyproject.toml"] : lang === "rs" ? ["Cargo.toml"] : ["go.mod"];
	for (const c of cfg) files.push({ rel: c, stem: c, lang: "json", seed: rng.u32(), nLines: rng.range(15, 60) });
	files.push({ rel: "README.md", stem: "README", lang: "md", seed: rng.u32(), nLines: rng.range(20, 200) });
	files.push({ rel: "AGENTS.md", stem: "AGENTS", lang: "md", seed: rng.u32(), nLines: rng.range(10, 40) });
	return { index: -1, name, cwd, dirName: encodeCwd(cwd), lang, files, idents, types, seed: rng.u32(), weight: 1 };
}

function encodeCwd(cwd: string): string {
	return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

function makeWorkspaces(seed: number): Workspace[] {
	const rng = new Rng(hash32(seed, 0xa11ce));
	const out: Workspace[] = [];
	const langs: Lang[] = [];
	for (let i = 0; i < 32; i++) {
		const r = rng.next();
		langs.push(r < 0.55 ? "ts" : r < 0.75 ? "py" : r < 0.9 ? "rs" : "go");
	}
	for (let i = 0; i < 32; i++) {
		const nn = String(i).padStart(2, "0");
		out.push(makeWorkspaceCore(new Rng(hash32(seed, 0xb0b, i)), `proj-${nn}`, `/work/proj-${nn}`, langs[i] as Lang));
	}
	const nested = ["packages/api", "packages/web", "packages/core", "apps/cli", "services/worker", "packages/shared", "tools/codegen", "packages/ui"];
	for (let k = 0; k < 8; k++) {
		const parent = rng.int(32);
		const nn = String(parent).padStart(2, "0");
		out.push(makeWorkspaceCore(new Rng(hash32(seed, 0xbee, k)), `proj-${nn}`, `/work/proj-${nn}/${nested[k]}`, langs[parent] as Lang));
	}
	out.forEach((w, i) => {
		w.index = i;
		w.weight = 1 / (1 + ((i * 7) % out.length)) ** 0.8; // some workspaces are much busier
	});
	return out;
}

/**
 * Small LRU of generated file contents. Content depends only on the file's seed, never on
 * call order, so evicting and regenerating gives the same text.
 */
const FILE_CACHE = new Map<string, { text: string; lines: string[] }>();
const FILE_CACHE_MAX = 512;
function fileContent(ws: Workspace, f: WsFile): { text: string; lines: string[] } {
	const key = `${ws.index}:${f.rel}`;
	let c = FILE_CACHE.get(key);
	if (c) {
		FILE_CACHE.delete(key);
		FILE_CACHE.set(key, c);
		return c;
	}
	const rng = new Rng(f.seed);
	let text: string;
	if (f.lang === "md") text = `# ${ws.name}\n\n${prose(rng, f.nLines * 70, ws)}\n\n## Development\n\n${bullets(rng, 6, ws)}\n`;
	else if (f.lang === "json") {
		if (f.rel === "package.json") {
			const deps: Record<string, string> = {};
			for (let i = 0; i < 12; i++) deps[identSnake(rng).replace(/_/g, "-")] = `^${rng.int(9)}.${rng.int(20)}.${rng.int(20)}`;
			text = JSON.stringify(
				{ name: ws.name, version: "0.1.0", type: "module", scripts: { build: "tsc -p .", test: "vitest run", lint: "eslint ." }, dependencies: deps },
				null,
				2,
			);
		} else if (f.rel === "tsconfig.json") {
			text = JSON.stringify(
				{
					compilerOptions: {
						target: "ES2022",
						module: "ESNext",
						moduleResolution: "bundler",
						strict: true,
						outDir: "dist",
						rootDir: "src",
						skipLibCheck: true,
					},
					include: ["src"],
				},
				null,
				2,
			);
		} else {
			const deps = [...Array(rng.range(4, 16))].map(() => `${identSnake(rng).replace(/_/g, "-")} = "${rng.int(9)}.${rng.int(20)}"`);
			text = `[package]\nname = "${ws.name}"\nversion = "0.1.0"\n\n[dependencies]\n${deps.join("\n")}\n`;
		}
	} else text = codeBlock(rng, f.lang, ws, f.nLines);
	c = { text, lines: text.split("\n") };
	FILE_CACHE.set(key, c);
	if (FILE_CACHE.size > FILE_CACHE_MAX) FILE_CACHE.delete(FILE_CACHE.keys().next().value as string);
	return c;
}

// ---------------------------------------------------------------------------------------------
// Precomputed blobs

let B64_POOL = "";
const IMAGES: { data: string; mimeType: string }[] = [];
const LOG_POOLS: Record<Lang, string[]> = { ts: [], py: [], rs: [], go: [] };
const SYSTEM_CACHE = new Map<number, { sections: Record<string, string>; toolsAdded: unknown[] }>();

function initBlobs(seed: number): void {
	const rng = new Rng(hash32(seed, 0xb64));
	const bytes = Buffer.alloc(3 * 1024 * 1024);
	for (let i = 0; i < bytes.length; i += 4) bytes.writeUInt32LE(rng.u32(), i);
	B64_POOL = bytes.toString("base64");
	for (let k = 0; k < 6; k++) {
		const n = Math.round(rng.logUniform(1500, 40000));
		const png = Buffer.alloc(n);
		for (let i = 0; i < n; i += 4) png.writeUInt32LE(rng.u32(), Math.min(i, n - 4));
		Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).copy(png, 0);
		const jpeg = k % 3 === 2;
		if (jpeg) Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0]).copy(png, 0);
		IMAGES.push({ data: png.toString("base64"), mimeType: jpeg ? "image/jpeg" : "image/png" });
	}
	LOG_POOLS.ts = makeLogPool("ts", hash32(seed, 1));
	LOG_POOLS.py = makeLogPool("py", hash32(seed, 2));
	LOG_POOLS.rs = makeLogPool("rs", hash32(seed, 3));
	LOG_POOLS.go = makeLogPool("go", hash32(seed, 4));
}

function b64(rng: Rng, len: number): string {
	const off = rng.int(B64_POOL.length - len - 4) & ~3;
	return B64_POOL.slice(off, off + len);
}

function logText(rng: Rng, lang: Lang, nChars: number): string {
	const pool = LOG_POOLS[lang];
	const parts: string[] = [];
	let n = 0;
	// runs of consecutive pool lines look more like real logs than independent picks
	while (n < nChars) {
		let i = rng.int(pool.length);
		const run = rng.range(1, 12);
		for (let k = 0; k < run && n < nChars; k++) {
			const l = pool[i++ % pool.length] as string;
			parts.push(l);
			n += l.length + 1;
		}
	}
	return parts.join("\n");
}

const TOOL_SCHEMAS = [
	{
		name: "read",
		description:
			"Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is hit first). Use offset/limit for large files. When you need the full file, continue with offset until complete.",
		parameters: {
			type: "object",
			required: ["path"],
			properties: {
				path: { type: "string", description: "Path to the file to read (relative or absolute)" },
				offset: { type: "number", description: "Line number to start reading from (1-indexed)" },
				limit: { type: "number", description: "Maximum number of lines to read" },
			},
		},
	},
	{
		name: "bash",
		description:
			"Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.",
		parameters: {
			type: "object",
			required: ["command"],
			properties: {
				command: { type: "string", description: "Bash command to execute" },
				timeout: { type: "number", description: "Timeout in seconds (optional, no default timeout)" },
			},
		},
	},
	{
		name: "edit",
		description:
			"Edit a single file using exact text replacement. Every edits[].oldText must match a unique, non-overlapping region of the original file. If two changes affect the same block or nearby lines, merge them into one edit instead of emitting overlapping edits. Do not include large unchanged regions just to connect distant changes.",
		parameters: {
			type: "object",
			required: ["path", "edits"],
			properties: {
				path: { type: "string", description: "Path to the file to edit (relative or absolute)" },
				edits: {
					type: "array",
					description: "One or more targeted replacements. Each edit is matched against the original file, not incrementally.",
					items: {
						type: "object",
						required: ["oldText", "newText"],
						properties: {
							oldText: {
								type: "string",
								description:
									"Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.",
							},
							newText: { type: "string", description: "Replacement text for this targeted edit." },
						},
						additionalProperties: false,
					},
				},
			},
		},
	},
	{
		name: "write",
		description: "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
		parameters: {
			type: "object",
			required: ["path", "content"],
			properties: {
				path: { type: "string", description: "Path to the file to write (relative or absolute)" },
				content: { type: "string", description: "Content to write to the file" },
			},
		},
	},
];

function systemFor(ws: Workspace): { sections: Record<string, string>; toolsAdded: unknown[] } {
	let s = SYSTEM_CACHE.get(ws.index);
	if (s) return s;
	const rng = new Rng(hash32(ws.seed, 0x5e5));
	const pkg = "/home/dev/.bun/install/global/node_modules/@earendil-works/pi-coding-agent";
	const agents = prose(rng, 1800, ws);
	const sections: Record<string, string> = {
		preamble: "You are a coding assistant running inside pi, a coding agent harness. Help users inspect files, run commands, and modify code.",
		tools:
			"<tools>\n- read: Read file contents\n- bash: Execute bash commands (ls, grep, find, etc.)\n- edit: Make precise file edits with exact text replacement, including multiple disjoint edits in one call\n- write: Create or overwrite files\n\nAdditional tools may be available.\n</tools>",
		rules:
			"<rules>\n- Use bash for file operations like ls, rg, find\n- Use read to examine files instead of cat or sed.\n- Use edit for precise changes (edits[].oldText must match exactly)\n- When changing multiple separate locations in one file, use one edit call with multiple entries in edits[] instead of multiple edit calls\n- Use write only for new files or complete rewrites.\n- Be concise in your responses\n- Show file paths clearly when working with files\n</rules>",
		docs: `<docs>\nPi documentation (read only when the user asks about the harness itself, its SDK, extensions, themes, skills, or TUI):\n- Main documentation: ${pkg}/README.md\n- Additional docs: ${pkg}/docs\n- Examples: ${pkg}/examples (extensions, custom tools, SDK)\n- When reading pi docs or examples, resolve docs/... under Additional docs and examples/... under Examples, not the current working directory\n- When asked about: extensions (docs/extensions.md, examples/extensions/), themes (docs/themes.md), skills (docs/skills.md), prompt templates (docs/prompt-templates.md), TUI components (docs/tui.md), keybindings (docs/keybindings.md), SDK integrations (docs/sdk.md), custom providers (docs/custom-provider.md), adding models (docs/models.md), packages (docs/packages.md)\n- Before implementing harness changes, read the relevant docs and examples in full, following related cross-references.\n</docs>`,
		project_context: `<project_context>\nProject-specific instructions and guidelines:\n\n<project_instructions path="${ws.cwd}/AGENTS.md">\n${agents}\n</project_instructions>\n</project_context>`,
		cwd: `<cwd>\n${ws.cwd}\n</cwd>`,
	};
	s = { sections, toolsAdded: TOOL_SCHEMAS };
	SYSTEM_CACHE.set(ws.index, s);
	return s;
}

// ---------------------------------------------------------------------------------------------
// Models

interface ModelDef {
	provider: string;
	id: string;
	api: string;
	price: [number, number, number, number]; // input, output, cacheRead, cacheWrite per 1M tokens
	kind: "anthropic" | "openai" | "google";
}
const MODELS: ModelDef[] = [
	{ provider: "anthropic", id: "claude-sonnet-4-5", api: "anthropic-messages", price: [3, 15, 0.3, 3.75], kind: "anthropic" },
	{ provider: "anthropic", id: "claude-opus-4-5", api: "anthropic-messages", price: [5, 25, 0.5, 6.25], kind: "anthropic" },
	{ provider: "anthropic", id: "claude-sonnet-4-6", api: "anthropic-messages", price: [3, 15, 0.3, 3.75], kind: "anthropic" },
	{ provider: "anthropic", id: "claude-haiku-4-5", api: "anthropic-messages", price: [1, 5, 0.1, 1.25], kind: "anthropic" },
	{ provider: "openai", id: "gpt-5.1", api: "openai-responses", price: [1.25, 10, 0.125, 0], kind: "openai" },
	{ provider: "openai", id: "gpt-5.3-codex", api: "openai-responses", price: [1.75, 14, 0.175, 0], kind: "openai" },
	{ provider: "google", id: "gemini-2.5-pro", api: "google-generative-ai", price: [1.25, 10, 0.31, 0], kind: "google" },
];
const MODEL_WEIGHTS = [0.34, 0.14, 0.18, 0.06, 0.12, 0.1, 0.06];
function pickModel(rng: Rng): ModelDef {
	let r = rng.next();
	for (let i = 0; i < MODELS.length; i++) {
		r -= MODEL_WEIGHTS[i] as number;
		if (r < 0) return MODELS[i] as ModelDef;
	}
	return MODELS[0] as ModelDef;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
function base62(rng: Rng, n: number): string {
	let s = "";
	for (let i = 0; i < n; i++) s += BASE62[rng.u32() % 62];
	return s;
}
function hex(rng: Rng, n: number): string {
	let s = "";
	while (s.length < n) s += rng.u32().toString(16).padStart(8, "0");
	return s.slice(0, n);
}

// ---------------------------------------------------------------------------------------------
// Session plan

interface SessionPlan {
	index: number;
	ws: number;
	target: number; // chars
	startMs: number;
	era: 0 | 1; // 0 = pi 0.7x shapes, 1 = pi 1.x (system message, durationMs, ...)
	seed: number;
	/** a required large session: never dropped when trimming the corpus to size */
	forced: boolean;
}

const KB = 1024;
const MB = 1024 * 1024;

function planSessions(seed: number, targetBytes: number, workspaces: Workspace[]): SessionPlan[] {
	const rng = new Rng(hash32(seed, 0x91a4));
	const targets: { t: number; forced: boolean }[] = [];
	let sum = 0;
	const add = (t: number, forced = false) => {
		targets.push({ t: Math.round(t), forced });
		sum += Math.round(t);
	};
	if (targetBytes >= 1000 * MB) add(rng.range(48 * MB, 52 * MB), true);
	if (targetBytes >= 200 * MB) add(rng.range(19 * MB, 21 * MB), true);
	else if (targetBytes >= 20 * MB) add(targetBytes / 10, true);
	// a few more large sessions: roughly one per 150 MB
	const extraLarge = Math.floor(targetBytes / (150 * MB));
	for (let i = 0; i < extraLarge && sum < targetBytes * 0.7; i++) add(rng.logUniform(10 * MB, 35 * MB));
	// sample past the target: sessions come out larger than planned, and main() trims the
	// corpus to size after pass 1 by dropping sessions from the end
	while (sum < targetBytes * 1.1) {
		const r = rng.next();
		let t: number;
		if (r < 0.85) t = rng.logUniform(5 * KB, 200 * KB);
		else if (r < 0.97) t = rng.logUniform(200 * KB, 1 * MB);
		else t = rng.logUniform(1 * MB, 5 * MB);
		add(Math.max(5 * KB, Math.min(t, targetBytes / 8))); // tiny corpora still get many sessions
	}
	// shuffle so large sessions land at random points in time
	for (let i = targets.length - 1; i > 0; i--) {
		const j = rng.int(i + 1);
		const t = targets[i] as { t: number; forced: boolean };
		targets[i] = targets[j] as { t: number; forced: boolean };
		targets[j] = t;
	}
	const start = Date.UTC(2026, 0, 5, 8, 0, 0);
	const end = Date.UTC(2026, 10, 28, 20, 0, 0);
	const span = (end - start) / targets.length;
	let wsTotal = 0;
	for (const w of workspaces) wsTotal += w.weight;
	return targets.map(({ t, forced }, i) => {
		let r = rng.next() * wsTotal;
		let wi = 0;
		for (; wi < workspaces.length - 1; wi++) {
			r -= (workspaces[wi] as Workspace).weight;
			if (r < 0) break;
		}
		const era: 0 | 1 = rng.next() < 0.35 + 0.5 * (i / targets.length) ? 1 : 0; // newer sessions are mostly 1.x
		return { index: i, ws: wi, target: t, startMs: Math.round(start + (i + rng.next() * 0.9) * span), era, seed: rng.u32(), forced };
	});
}

// ---------------------------------------------------------------------------------------------
// Session generation

interface Holder {
	obj: Record<string, unknown>;
	key: string;
}
interface Sink {
	/** called with the un-planted line; returns nothing. */
	eligibleBase: number;
	plants: Map<number, string> | null;
	write: boolean;
	buf: string;
	fd: number;
	bytes: number;
	chars: number;
	entries: number;
	eligible: number;
	locations: { token: string; path: string; entryId: string; sessionId: string }[];
	relPath: string;
	sessionId: string;
	stats: Stats | null;
}
interface Stats {
	entryTypes: Record<string, number>;
	common: number[];
}
const COMMON_TERMS = ["the", "error", "function"];
const COMMON_RES = COMMON_TERMS.map((w) => new RegExp(`\\b${w}\\b`, "i"));

function insertPlant(text: string, token: string, r: Rng): string {
	if (text.length === 0) return token;
	const pos = r.int(text.length);
	const sp = text.indexOf(" ", pos);
	if (sp < 0) return `${text} ${token}`;
	return `${text.slice(0, sp + 1)}${token} ${text.slice(sp + 1)}`;
}

/** JSC lets garbage pile up well past a GB here; a full collection every 32 MB keeps RSS modest. */
let charsSinceGc = 0;
function emit(sink: Sink, entry: Record<string, unknown>, holder: Holder | null): void {
	let line = JSON.stringify(entry);
	charsSinceGc += line.length;
	if (charsSinceGc > 32 * MB) {
		charsSinceGc = 0;
		Bun.gc(true);
	}
	sink.chars += line.length + 1;
	sink.entries++;
	const st = sink.stats;
	if (st) {
		const k = entry.type === "message" ? `message:${(entry.message as { role: string }).role}` : (entry.type as string);
		st.entryTypes[k] = (st.entryTypes[k] ?? 0) + 1;
		if (holder) {
			const text = holder.obj[holder.key] as string;
			for (let i = 0; i < COMMON_RES.length; i++) if ((COMMON_RES[i] as RegExp).test(text)) st.common[i]!++;
		}
	}
	if (holder) {
		const gi = sink.eligibleBase + sink.eligible++;
		const token = sink.plants?.get(gi);
		if (token !== undefined) {
			holder.obj[holder.key] = insertPlant(holder.obj[holder.key] as string, token, new Rng(hash32(gi, 0x9147)));
			line = JSON.stringify(entry);
			sink.locations.push({ token, path: sink.relPath, entryId: entry.id as string, sessionId: sink.sessionId });
		}
	}
	if (sink.write) {
		sink.buf += `${line}\n`;
		if (sink.buf.length > 1 * MB) flush(sink);
	}
}

function flush(sink: Sink): void {
	if (sink.buf.length > 0) {
		sink.bytes += writeSync(sink.fd, sink.buf);
		sink.buf = "";
	}
}

const SKILLS = ["commit", "review", "release-notes", "debug-flaky-test", "perf-profile"];
const BASH_CMDS = [
	"git status",
	"git diff --stat",
	"git log --oneline -15",
	"ls -la",
	"bun test",
	"npm run build",
	"npm test",
	"cargo build",
	"cargo test",
	"pytest -q",
	"go test ./...",
	"make lint",
	"docker compose ps",
	"du -sh node_modules",
	"git stash list",
	"env | grep -i proxy",
	"rg -n TODO src",
	"cat package.json",
];
const LABELS = ["checkpoint", "before-refactor", "good state", "baseline", "try-2", "working", "pre-migration", "bisect-start"];
const TITLE_VERBS = ["Fix", "Refactor", "Add", "Debug", "Investigate", "Speed up", "Clean up", "Migrate", "Document", "Port", "Review"];

const TOOL_NAMES_WEIGHTS: [string, number][] = [
	["read", 0.34],
	["bash", 0.27],
	["edit", 0.19],
	["grep", 0.07],
	["write", 0.06],
	["find", 0.02],
	["ls", 0.02],
	["ci_logs", 0.01],
	["web_fetch", 0.02],
];

class SessionGen {
	rng: Rng;
	ws: Workspace;
	plan: SessionPlan;
	sink: Sink;
	t: number;
	leaf: string | null = null;
	ids = new Set<string>();
	allIds: string[] = [];
	pathTurns: { userId: string; parentId: string | null }[] = [];
	model: ModelDef;
	thinkingLevel: string;
	ctxTokens = 0;
	charsSinceCompaction = 0;
	compactionEvery: number;
	readFiles = new Set<string>();
	modifiedFiles = new Set<string>();
	hasExt: boolean;
	named = false;
	bigResultP: number;
	turnScale: number;
	/** the files this session mostly works on */
	hot: WsFile[];

	constructor(plan: SessionPlan, ws: Workspace, sink: Sink) {
		this.plan = plan;
		this.ws = ws;
		this.sink = sink;
		this.rng = new Rng(plan.seed);
		this.t = plan.startMs;
		this.model = pickModel(this.rng);
		this.thinkingLevel = this.rng.pick(["off", "low", "medium", "medium", "high", "high", "xhigh"]);
		this.hasExt = this.rng.chance(0.25);
		this.compactionEvery = this.rng.range(350, 700) * KB;
		this.bigResultP = plan.target >= 1 * MB ? 0.004 : plan.target >= 300 * KB ? 0.0015 : 0;
		this.turnScale = plan.target >= 5 * MB ? 1.6 : plan.target >= 1 * MB ? 1.3 : 1;
		this.hot = [...Array(this.rng.range(4, 14))].map(() => this.rng.pick(ws.files));
	}

	pickFile(): WsFile {
		const rng = this.rng;
		if (rng.chance(0.85)) return rng.pick(this.hot);
		const f = rng.pick(this.ws.files);
		if (rng.chance(0.3)) this.hot.push(f);
		return f;
	}

	newId(): string {
		for (;;) {
			const id = this.rng.u32().toString(16).padStart(8, "0");
			if (!this.ids.has(id)) {
				this.ids.add(id);
				this.allIds.push(id);
				return id;
			}
		}
	}
	iso(ms: number): string {
		return new Date(ms).toISOString();
	}
	tick(minMs: number, maxMs: number): number {
		this.t += this.rng.range(minMs, maxMs);
		return this.t;
	}

	append(fields: Record<string, unknown>, holder: Holder | null = null, parent: string | null | undefined = undefined): string {
		const id = this.newId();
		const entry: Record<string, unknown> = { type: fields.type, id, parentId: parent === undefined ? this.leaf : parent, timestamp: this.iso(this.t) };
		for (const k in fields) if (k !== "type") entry[k] = fields[k];
		emit(this.sink, entry, holder);
		this.leaf = id;
		return id;
	}

	message(msg: Record<string, unknown>, holder: Holder | null): string {
		return this.append({ type: "message", message: msg }, holder);
	}

	run(): void {
		const rng = this.rng;
		this.tick(100, 400);
		this.append({ type: "model_change", provider: this.model.provider, modelId: this.model.id });
		this.append({ type: "thinking_level_change", thinkingLevel: this.thinkingLevel });
		let turn = 0;
		do {
			this.turn(turn);
			turn++;
		} while (this.sink.chars < this.plan.target);
		if (rng.chance(0.08)) {
			this.tick(1000, 60000);
			this.append({ type: "label", targetId: rng.pick(this.allIds), label: rng.pick(LABELS) });
		}
	}

	turn(turn: number): void {
		const rng = this.rng;
		this.tick(turn === 0 ? 500 : 8000, turn === 0 ? 20000 : 900000);
		// pre-turn events
		if (turn > 0) {
			if (rng.chance(0.07)) {
				const n = rng.range(1, 2);
				for (let i = 0; i < n; i++) this.bashExecution();
			}
			if (this.hasExt && rng.chance(0.25)) this.custom();
			if (rng.chance(0.025)) {
				this.model = pickModel(rng);
				this.append({ type: "model_change", provider: this.model.provider, modelId: this.model.id });
				if (rng.chance(0.5)) {
					this.thinkingLevel = rng.pick(["low", "medium", "high"]);
					this.append({ type: "thinking_level_change", thinkingLevel: this.thinkingLevel });
				}
			}
			if (rng.chance(0.025)) this.label();
			if (this.pathTurns.length >= 3 && rng.chance(0.035)) this.branch();
			if (this.charsSinceCompaction > this.compactionEvery || (this.pathTurns.length >= 4 && rng.chance(0.006))) this.compaction();
			if (this.hasExt && rng.chance(0.08)) this.customMessage();
		}
		if (turn === 0 && this.plan.era === 1) {
			const sys = systemFor(this.ws);
			this.message({ role: "system", content: "", sections: sys.sections, toolsAdded: sys.toolsAdded, timestamp: this.t }, null);
		}
		// user message
		const parentOfUser = this.leaf;
		const userId = this.userMessage(turn);
		this.pathTurns.push({ userId, parentId: parentOfUser });
		// agent loop
		const steps = Math.min(40, Math.round(rng.geometric(0.22, 30) * this.turnScale));
		for (let s = 0; s < steps; s++) {
			// a session that has reached its size wraps up (the user stops the agent or it finishes early)
			if (s >= 1 && this.sink.chars >= this.plan.target && rng.chance(0.8)) break;
			if (rng.chance(0.01)) this.failedAssistant();
			const calls = rng.chance(0.82) ? 1 : rng.range(2, 4);
			const tcs = this.assistant(true, calls);
			for (const tc of tcs) this.toolResult(tc);
		}
		if (rng.chance(0.01)) this.failedAssistant();
		if (rng.chance(0.025)) {
			this.tick(500, 30000);
			this.message(this.assistantShell([], "aborted", { errorMessage: "Request was aborted." }), null);
		} else this.assistant(false, 0);
		if (!this.named && turn >= 0 && rng.chance(turn === 0 ? 0.35 : 0.03)) {
			this.named = true;
			this.tick(50, 3000);
			this.append({ type: "session_info", name: `${rng.pick(TITLE_VERBS)} ${shortProse(rng).split(" ").slice(0, rng.range(2, 5)).join(" ")}` });
		} else if (this.named && rng.chance(0.01)) {
			this.tick(50, 3000);
			this.append({ type: "session_info", name: `${rng.pick(TITLE_VERBS)} ${identCamel(rng)} ${word(rng)}` });
		}
	}

	// --- entries ------------------------------------------------------------------------------

	userMessage(turn: number): string {
		const rng = this.rng;
		const ws = this.ws;
		const r = rng.next();
		let text: string;
		if (turn > 0 && r < 0.2) {
			text = rng.pick([
				"continue",
				"yes, do it",
				"run the tests again",
				"ok, commit this",
				"that didn't work, the error is still there",
				"looks good. now update the docs",
				"why?",
				"try a different approach",
				"can you explain the function you just changed?",
				"revert that last change",
			]);
			if (rng.chance(0.5)) text += ` ${prose(rng, rng.range(20, 200), ws)}`;
		} else if (r < 0.5) {
			text = prose(rng, Math.round(rng.logUniform(60, 2500)), ws);
		} else if (r < 0.68) {
			text = `${prose(rng, rng.range(40, 300), ws)}\n\n\`\`\`\n${logText(rng, ws.lang, Math.round(rng.logUniform(200, 6000)))}\n\`\`\`\n\n${prose(rng, rng.range(20, 200), ws)}`;
		} else if (r < 0.84) {
			text = `${prose(rng, rng.range(40, 400), ws)}\n\n\`\`\`${FENCE[ws.lang]}\n${codeBlock(rng, ws.lang, ws, rng.range(5, 80))}\n\`\`\`\n\n${prose(rng, rng.range(20, 300), ws)}`;
		} else if (r < 0.94) {
			const f = this.pickFile();
			const c = fileContent(ws, f).text;
			text = `<file name="${ws.cwd}/${f.rel}">\n${c.length > 30000 ? c.slice(0, 30000) : c}\n</file>\n\n${prose(rng, rng.range(30, 500), ws)}`;
		} else {
			const skill = rng.pick(SKILLS);
			text = `<skill name="${skill}" location="/home/dev/.pi/agent/skills/${skill}/SKILL.md">\nReferences are relative to /home/dev/.pi/agent/skills/${skill}.\n\n${prose(rng, rng.range(400, 2500), null)}\n</skill>\n\n${prose(rng, rng.range(10, 300), ws)}`;
		}
		this.tick(2, 40);
		const block: Record<string, unknown> = { type: "text", text };
		let content: unknown;
		let holder: Holder;
		const msg: Record<string, unknown> = { role: "user" };
		if (rng.chance(0.06)) {
			msg.content = text;
			holder = { obj: msg, key: "content" };
			content = text;
		} else {
			content = [block];
			holder = { obj: block, key: "text" };
			if (rng.chance(0.04)) (content as unknown[]).push({ type: "image", ...rng.pick(IMAGES) });
			msg.content = content;
		}
		msg.timestamp = this.t;
		this.tick(1, 20);
		this.charsSinceCompaction += text.length;
		return this.message(msg, holder);
	}

	assistantShell(content: unknown[], stopReason: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
		const rng = this.rng;
		const m = this.model;
		let outChars = 0;
		for (const c of content as Record<string, unknown>[]) {
			if (typeof c.text === "string") outChars += c.text.length;
			if (typeof c.thinking === "string") outChars += c.thinking.length;
			if (c.arguments) outChars += 200;
		}
		const output = stopReason === "error" ? 0 : Math.max(8, Math.round(outChars / 3.8) + rng.int(40));
		const cacheRead = stopReason === "error" ? 0 : Math.max(0, this.ctxTokens - rng.int(4000));
		const input = stopReason === "error" ? 0 : rng.range(3, 2500);
		const cacheWrite = stopReason === "error" || m.price[3] === 0 ? 0 : rng.range(0, 6000);
		this.ctxTokens += output + input + cacheWrite;
		const p = m.price;
		const cost = {
			input: (input * p[0]) / 1e6,
			output: (output * p[1]) / 1e6,
			cacheRead: (cacheRead * p[2]) / 1e6,
			cacheWrite: (cacheWrite * p[3]) / 1e6,
			total: 0,
		};
		cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
		const usage: Record<string, unknown> = { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
		const startMs = this.t;
		const msg: Record<string, unknown> = {
			role: "assistant",
			content,
			api: m.api,
			provider: m.provider,
			model: m.id,
			usage,
			stopReason,
			timestamp: startMs,
		};
		if (stopReason !== "error" && stopReason !== "aborted") {
			msg.responseId = m.kind === "anthropic" ? `msg_01${base62(rng, 22)}` : m.kind === "openai" ? `resp_${hex(rng, 48)}` : base62(rng, 27);
		}
		Object.assign(msg, extra);
		const dur = stopReason === "error" ? rng.range(200, 3000) : rng.range(1500, 15000) + output * 12;
		if (this.plan.era === 1) {
			if (stopReason !== "error" && stopReason !== "aborted")
				msg.rawStopReason = m.kind === "anthropic" ? (stopReason === "toolUse" ? "tool_use" : "end_turn") : m.kind === "openai" ? "completed" : "STOP";
			msg.thinkingLevel = this.thinkingLevel;
			msg.durationMs = dur;
		}
		this.t += dur;
		return msg;
	}

	thinkingBlock(): Record<string, unknown> | null {
		const rng = this.rng;
		if (this.thinkingLevel === "off") return null;
		const m = this.model;
		const len = Math.round(rng.logUniform(80, this.thinkingLevel === "xhigh" ? 6000 : 2500));
		if (m.kind === "anthropic") {
			if (rng.chance(0.01)) return { type: "thinking", thinking: "", thinkingSignature: b64(rng, rng.range(400, 2400)), redacted: true };
			const intro = rng.pick(["The user wants", "Let me", "I need to", "Looking at", "So the", "Okay, the"]);
			return { type: "thinking", thinking: `${intro} ${proseAfter(rng, len, this.ws)}`, thinkingSignature: b64(rng, rng.range(300, 1600)) };
		}
		if (m.kind === "openai") {
			const title = `**${rng.pick(TITLE_VERBS)} ${shortProse(rng).split(" ").slice(0, 4).join(" ")}**`;
			const thinking = `${title}\n\n${prose(rng, len, this.ws)}`;
			const sig = JSON.stringify({
				type: "reasoning",
				id: `rs_${hex(rng, 48)}`,
				encrypted_content: `gAAAAA${b64(rng, rng.range(800, 4000))}`,
				summary: [{ type: "summary_text", text: thinking }],
			});
			return { type: "thinking", thinking, thinkingSignature: sig };
		}
		return { type: "thinking", thinking: prose(rng, len, this.ws), thinkingSignature: b64(rng, rng.range(200, 900)) };
	}

	assistant(toolUse: boolean, nCalls: number): { id: string; name: string; args: Record<string, unknown> }[] {
		const rng = this.rng;
		const ws = this.ws;
		const content: Record<string, unknown>[] = [];
		const th = this.thinkingBlock();
		if (th) content.push(th);
		let holder: Holder | null = null;
		if (!toolUse || rng.chance(0.65)) {
			let text: string;
			if (toolUse) {
				const intro = rng.pick(["Let me", "Now let me", "I'll", "First, I'll", "Good."]);
				text = `${intro} ${intro === "Good." ? prose(rng, rng.range(30, 300), ws) : proseAfter(rng, rng.range(30, 300), ws)}`;
			} else {
				const r = rng.next();
				if (r < 0.55) text = prose(rng, Math.round(rng.logUniform(100, 3500)), ws);
				else if (r < 0.8) text = `${prose(rng, rng.range(60, 400), ws)}\n\n${bullets(rng, rng.range(2, 8), ws)}\n\n${prose(rng, rng.range(40, 300), ws)}`;
				else
					text = `${prose(rng, rng.range(60, 500), ws)}\n\n\`\`\`${FENCE[ws.lang]}\n${codeBlock(rng, ws.lang, ws, rng.range(4, 60))}\n\`\`\`\n\n${prose(rng, rng.range(40, 600), ws)}`;
			}
			const block: Record<string, unknown> = { type: "text", text };
			holder = { obj: block, key: "text" };
			content.push(block);
			this.charsSinceCompaction += text.length;
		}
		const calls: { id: string; name: string; args: Record<string, unknown> }[] = [];
		for (let i = 0; i < nCalls; i++) {
			const { name, args } = this.toolCallArgs();
			const id =
				this.model.kind === "anthropic"
					? `toolu_01${base62(rng, 22)}`
					: this.model.kind === "openai"
						? `call_${base62(rng, 24)}|fc_${hex(rng, 48)}`
						: `${name}_${rng.u32()}`;
			const tc: Record<string, unknown> = { type: "toolCall", id, name, arguments: args };
			if (this.model.kind === "google" && i === 0) tc.thoughtSignature = b64(rng, rng.range(200, 700));
			content.push(tc);
			calls.push({ id, name, args });
		}
		this.tick(300, 3000);
		const msg = this.assistantShell(content, toolUse ? "toolUse" : "stop");
		this.message(msg, holder);
		return calls;
	}

	failedAssistant(): void {
		const rng = this.rng;
		this.tick(200, 2000);
		const err = rng.pick([
			'429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization. Please try again later."}}',
			'529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
			"Connection error.",
			"terminated",
			"500 Internal server error",
		]);
		const failedId = this.message(this.assistantShell([], "error", { errorMessage: err }), null);
		if (this.plan.era === 1 && rng.chance(0.6)) {
			this.tick(1000, 8000);
			this.append({ type: "context_edit", targetId: failedId, replacement: null });
		} else this.tick(1000, 8000);
	}

	relOrAbs(rel: string): string {
		return this.rng.chance(0.3) ? `${this.ws.cwd}/${rel}` : rel;
	}

	toolCallArgs(): { name: string; args: Record<string, unknown> } {
		const rng = this.rng;
		const ws = this.ws;
		let r = rng.next();
		let name = "read";
		for (const [n, w] of TOOL_NAMES_WEIGHTS) {
			r -= w;
			if (r < 0) {
				name = n;
				break;
			}
		}
		if ((name === "ci_logs" || name === "web_fetch") && rng.next() > this.bigResultP / 0.03) name = "bash";
		const f = this.pickFile();
		switch (name) {
			case "read": {
				const args: Record<string, unknown> = { path: this.relOrAbs(f.rel) };
				if (rng.chance(0.15)) {
					args.offset = rng.range(1, Math.max(1, f.nLines - 10));
					args.limit = rng.pick([50, 100, 200, 400]);
				}
				this.readFiles.add(args.path as string);
				return { name, args };
			}
			case "edit": {
				const lines = fileContent(ws, f).lines;
				const at = rng.int(Math.max(1, lines.length - 6));
				const oldText = lines.slice(at, at + rng.range(1, 6)).join("\n");
				const newText = codeBlock(rng, ws.lang, ws, rng.range(1, 10));
				const edits = [{ oldText, newText }];
				if (rng.chance(0.2)) {
					const at2 = rng.int(Math.max(1, lines.length - 3));
					edits.push({ oldText: lines.slice(at2, at2 + 2).join("\n"), newText: codeBlock(rng, ws.lang, ws, rng.range(1, 5)) });
				}
				const path = this.relOrAbs(f.rel);
				this.modifiedFiles.add(path);
				return { name, args: { path, edits } };
			}
			case "write": {
				const path = this.relOrAbs(`${f.rel.slice(0, f.rel.lastIndexOf("/") + 1)}${identCamel(rng)}.${LANG_EXT[ws.lang]}`);
				this.modifiedFiles.add(path);
				return { name, args: { path, content: codeBlock(rng, ws.lang, ws, Math.round(rng.logUniform(10, 400))) } };
			}
			case "grep": {
				const args: Record<string, unknown> = { pattern: rng.chance(0.7) ? rng.pick(ws.idents) : `${rng.pick(ws.idents)}|${rng.pick(ws.idents)}` };
				if (rng.chance(0.5)) args.path = f.rel.slice(0, f.rel.indexOf("/") > 0 ? f.rel.indexOf("/") : undefined);
				if (rng.chance(0.3)) args.glob = `*.${LANG_EXT[ws.lang]}`;
				if (rng.chance(0.2)) args.ignoreCase = true;
				return { name, args };
			}
			case "find":
				return { name, args: { pattern: `*${rng.pick(IDENT_PARTS)}*`, path: rng.chance(0.5) ? "." : f.rel.split("/")[0] } };
			case "ls":
				return { name, args: { path: f.rel.slice(0, Math.max(0, f.rel.lastIndexOf("/"))) || "." } };
			case "ci_logs":
				return { name, args: { run_id: rng.range(1e9, 9e9), job: rng.pick(["build", "test", "lint", "e2e"]) } };
			case "web_fetch":
				return { name, args: { url: `https://docs.example.dev/${identSnake(rng).replace(/_/g, "-")}/${identSnake(rng).replace(/_/g, "-")}` } };
			default: {
				const cmds = [
					() =>
						`cd ${ws.cwd} && ${rng.pick(["bun test", "npm test", "pytest -q", "cargo test", "go test ./..."])}${rng.chance(0.5) ? ` ${f.rel}` : ""} 2>&1 | tail -${rng.pick([20, 50, 100])}`,
					() => `rg -n "${rng.pick(ws.idents)}" ${f.rel.split("/")[0]}`,
					() => `git diff ${rng.chance(0.5) ? "--stat" : f.rel}`,
					() => `ls -la ${f.rel.slice(0, Math.max(0, f.rel.lastIndexOf("/")))}`,
					() => `${rng.pick(["npm run build", "tsc --noEmit", "cargo build", "make", "go build ./..."])} 2>&1`,
					() => `git log --oneline -${rng.range(5, 30)}`,
					() => `sed -n '${rng.range(1, 200)},${rng.range(200, 400)}p' ${f.rel}`,
					() => `wc -l $(git ls-files '*.${LANG_EXT[ws.lang]}') | sort -n | tail`,
				];
				const args: Record<string, unknown> = { command: rng.pick(cmds)() };
				if (rng.chance(0.15)) args.timeout = rng.pick([60, 120, 300, 600]);
				return { name: "bash", args };
			}
		}
	}

	toolResult(tc: { id: string; name: string; args: Record<string, unknown> }): void {
		const rng = this.rng;
		const ws = this.ws;
		let text: string;
		let details: unknown;
		let isError = false;
		switch (tc.name) {
			case "read": {
				const f = ws.files.find((x) => tc.args.path === x.rel || tc.args.path === `${ws.cwd}/${x.rel}`);
				const c = f ? fileContent(ws, f) : { text: "", lines: [] as string[] };
				if (rng.chance(0.03)) {
					isError = true;
					const pth = tc.args.path as string;
					text = `ENOENT: no such file or directory, access '${pth.startsWith("/") ? pth : `${ws.cwd}/${pth}`}'`;
				} else if (tc.args.offset !== undefined) {
					const off = (tc.args.offset as number) - 1;
					text = c.lines.slice(off, off + (tc.args.limit as number)).join("\n");
					const next = off + (tc.args.limit as number) + 1;
					if (next <= c.lines.length) text += `\n\n[${c.lines.length - next + 1} more lines in file. Use offset=${next} to continue.]`;
				} else if (c.text.length > 50 * KB || c.lines.length > 2000) {
					let n = 0;
					let bytes = 0;
					while (n < c.lines.length && n < 2000 && bytes + (c.lines[n] as string).length + 1 <= 50 * KB) bytes += (c.lines[n++] as string).length + 1;
					text = `${c.lines.slice(0, n).join("\n")}\n\n[Showing lines 1-${n} of ${c.lines.length} (50.0KB limit). Use offset=${n + 1} to continue.]`;
					details = {
						truncation: {
							content: "",
							truncated: true,
							truncatedBy: "bytes",
							totalLines: c.lines.length,
							totalBytes: c.text.length,
							outputLines: n,
							outputBytes: bytes,
							lastLinePartial: false,
							firstLineExceedsLimit: false,
							maxLines: 2000,
							maxBytes: 51200,
						},
					};
				} else text = c.text;
				break;
			}
			case "edit": {
				const path = tc.args.path as string;
				const edits = tc.args.edits as { oldText: string; newText: string }[];
				if (rng.chance(0.06)) {
					isError = true;
					text = `Could not find the exact text in ${path}. The old text must match exactly including all whitespace and newlines.`;
				} else {
					text = `Successfully replaced ${edits.length} block(s) in ${path}.`;
					const first = rng.range(1, 400);
					const w = String(first + 40).length;
					const dl: string[] = [];
					let ln = first;
					for (const e of edits) {
						dl.push(` ${"".padStart(w, " ")} ...`);
						for (const l of e.oldText.split("\n")) dl.push(`-${String(ln++).padStart(w, " ")} ${l}`);
						ln -= e.oldText.split("\n").length;
						for (const l of e.newText.split("\n")) dl.push(`+${String(ln++).padStart(w, " ")} ${l}`);
						ln += rng.range(5, 40);
					}
					details = { diff: dl.join("\n"), firstChangedLine: first };
				}
				break;
			}
			case "write":
				text = `Successfully wrote to ${tc.args.path}`;
				break;
			case "grep": {
				const n = Math.round(rng.logUniform(1, 120));
				const out: string[] = [];
				const hitFiles = [...Array(rng.range(1, 4))].map(() => this.pickFile());
				for (let i = 0; i < n; i++) {
					const f = rng.pick(hitFiles);
					const lines = fileContent(ws, f).lines;
					const li = rng.int(lines.length);
					out.push(`${f.rel}:${li + 1}: ${(lines[li] as string).trim()}`);
				}
				text = n === 0 ? "No matches found" : out.join("\n");
				break;
			}
			case "find": {
				const out: string[] = [];
				const n = rng.range(0, 25);
				for (let i = 0; i < n; i++) out.push(rng.pick(ws.files).rel);
				text = n === 0 ? "No files found matching pattern" : out.join("\n");
				break;
			}
			case "ls": {
				const out: string[] = [];
				const n = rng.range(1, 30);
				for (let i = 0; i < n; i++) out.push(rng.pick(ws.files).rel.split("/").pop() as string);
				text = out.join("\n");
				break;
			}
			case "ci_logs":
			case "web_fetch": {
				// the occasional huge tool result (hundreds of KB)
				const size = Math.round(rng.logUniform(100 * KB, 900 * KB));
				text = tc.name === "ci_logs" ? logText(rng, ws.lang, size) : prose(rng, size, ws);
				details = { bytes: text.length, source: tc.name === "ci_logs" ? "github-actions" : "http" };
				break;
			}
			default: {
				const cmd = tc.args.command as string;
				const r = rng.next();
				const big = rng.chance(0.04);
				if (cmd.startsWith("git diff") && !cmd.includes("--stat")) {
					const f = this.pickFile();
					text = `diff --git a/${f.rel} b/${f.rel}\nindex ${hex(rng, 7)}..${hex(rng, 7)} 100644\n--- a/${f.rel}\n+++ b/${f.rel}\n@@ -${rng.int(300)},7 +${rng.int(300)},9 @@\n${codeBlock(
						rng,
						ws.lang,
						ws,
						rng.range(5, 60),
					)
						.split("\n")
						.map((l) => `${rng.pick([" ", " ", "+", "-"])}${l}`)
						.join("\n")}`;
				} else if (cmd.startsWith("sed -n") || cmd.startsWith("rg -n")) {
					const f = this.pickFile();
					const lines = fileContent(ws, f).lines;
					const at = rng.int(lines.length);
					text = lines.slice(at, at + rng.range(1, 120)).join("\n");
				} else {
					const size = big ? Math.round(rng.logUniform(10 * KB, 50 * KB)) : Math.round(rng.logUniform(40, 6000));
					text = logText(rng, ws.lang, size);
				}
				if (r < 0.15) {
					isError = true;
					text += `\n\nCommand exited with code ${rng.pick([1, 1, 1, 2, 101, 124, 127])}`;
				}
				if (big && text.length > 40 * KB) {
					const total = rng.range(2100, 12000);
					const path = `/tmp/pi-bash-${hex(rng, 16)}.log`;
					text += `\n\n[Showing lines ${total - 1999}-${total} of ${total} (50.0KB limit). Full output: ${path}]`;
					details = {
						truncation: {
							content: "",
							truncated: true,
							truncatedBy: "bytes",
							totalLines: total,
							totalBytes: total * 80,
							outputLines: 2000,
							outputBytes: 51200,
							lastLinePartial: false,
							firstLineExceedsLimit: false,
							maxLines: 2000,
							maxBytes: 51200,
						},
						fullOutputPath: path,
					};
				}
			}
		}
		this.tick(10, tc.name === "bash" ? 45000 : 400);
		const block: Record<string, unknown> = { type: "text", text };
		const msg: Record<string, unknown> = { role: "toolResult", toolCallId: tc.id, toolName: tc.name, content: [block] };
		if (details !== undefined) msg.details = details;
		msg.isError = isError;
		msg.timestamp = this.t;
		if (this.plan.era === 1) msg.durationMs = rng.range(3, 9000);
		this.charsSinceCompaction += text.length;
		this.ctxTokens += Math.round(text.length / 4);
		this.message(msg, { obj: block, key: "text" });
	}

	bashExecution(): void {
		const rng = this.rng;
		const cmd = rng.pick(BASH_CMDS);
		this.tick(3000, 120000);
		const cancelled = rng.chance(0.03);
		const output = cmd.startsWith("git status")
			? `On branch ${rng.pick(["main", "dev", `feat/${identSnake(rng).replace(/_/g, "-")}`])}\nChanges not staged for commit:\n${[...Array(rng.range(1, 8))].map(() => `\tmodified:   ${this.pickFile().rel}`).join("\n")}\n`
			: `${logText(rng, this.ws.lang, Math.round(rng.logUniform(30, 8000)))}\n`;
		const msg: Record<string, unknown> = { role: "bashExecution", command: cmd, output };
		if (!cancelled) msg.exitCode = rng.chance(0.8) ? 0 : rng.pick([1, 2, 130]);
		msg.cancelled = cancelled;
		msg.truncated = false;
		if (rng.chance(0.1)) msg.excludeFromContext = true;
		msg.timestamp = this.t;
		this.charsSinceCompaction += output.length;
		this.message(msg, { obj: msg, key: "output" });
	}

	custom(): void {
		const rng = this.rng;
		this.tick(5, 500);
		if (this.plan.era === 1 && rng.chance(0.3)) {
			this.append({
				type: "custom",
				customType: "pi.virtual-model-state",
				data: { provider: this.model.provider, modelId: this.model.id, thinkingLevel: this.thinkingLevel },
			});
			return;
		}
		const todos = [...Array(rng.range(1, 8))].map((_, i) => ({ id: i + 1, text: shortProse(rng), done: rng.chance(0.4) }));
		this.append({ type: "custom", customType: rng.pick(["todo-state", "plan-mode", "git-checkpoint"]), data: { todos, updatedAt: this.t } });
	}

	customMessage(): void {
		const rng = this.rng;
		this.tick(5, 500);
		const text = `${rng.pick(["Reminder:", "Plan mode:", "Note from extension:"])} ${prose(rng, rng.range(40, 600), this.ws)}`;
		const fields: Record<string, unknown> = { type: "custom_message", customType: rng.pick(["todo-reminder", "plan-mode-context", "lsp-diagnostics"]) };
		fields.content = rng.chance(0.5) ? text : [{ type: "text", text }];
		fields.display = rng.chance(0.7);
		if (rng.chance(0.5)) fields.details = { source: "extension", count: rng.int(10) };
		this.append(fields);
	}

	label(): void {
		const rng = this.rng;
		this.tick(500, 20000);
		const fields: Record<string, unknown> = { type: "label", targetId: rng.pick(this.allIds) };
		if (rng.chance(0.9)) fields.label = rng.pick(LABELS);
		this.append(fields);
	}

	branch(): void {
		const rng = this.rng;
		const n = this.pathTurns.length;
		const k = rng.range(Math.max(1, n - 6), n - 1);
		const target = this.pathTurns[k] as { userId: string; parentId: string | null };
		const oldLeaf = this.leaf;
		this.leaf = target.parentId;
		this.pathTurns.length = k;
		this.tick(2000, 60000);
		if (rng.chance(0.6)) {
			const fromId = this.plan.era === 1 ? oldLeaf : (this.leaf ?? "root");
			const summary = `${rng.pick(["The branch explored", "Tried", "Abandoned approach:"])} ${prose(rng, rng.range(200, 1500), this.ws)}`;
			const fields: Record<string, unknown> = {
				type: "branch_summary",
				fromId,
				summary,
				details: { readFiles: [...this.readFiles].slice(0, 20), modifiedFiles: [...this.modifiedFiles].slice(0, 20) },
				fromHook: false,
			};
			this.append(fields);
		} else if (rng.chance(0.4)) {
			this.append({ type: "label", targetId: target.userId, label: rng.pick(LABELS) });
		}
	}

	compaction(): void {
		const rng = this.rng;
		const ws = this.ws;
		const n = this.pathTurns.length;
		if (n < 1) return;
		const keep = Math.min(n, rng.range(1, 3));
		const firstKept = (this.pathTurns[n - keep] as { userId: string }).userId;
		this.tick(5000, 60000);
		const summary = [
			"## Goal",
			prose(rng, rng.range(80, 400), ws),
			"",
			"## Constraints & Preferences",
			bullets(rng, rng.range(1, 4), ws),
			"",
			"## Progress",
			"### Done",
			[...Array(rng.range(1, 6))].map(() => `- [x] ${sentence(rng, ws)}`).join("\n"),
			"",
			"### In Progress",
			[...Array(rng.range(0, 3))].map(() => `- [ ] ${sentence(rng, ws)}`).join("\n"),
			"",
			"## Key Decisions",
			[...Array(rng.range(1, 4))].map(() => `- **${identCamel(rng)}**: ${sentence(rng, ws)}`).join("\n"),
			"",
			"## Next Steps",
			[...Array(rng.range(1, 4))].map((_, i) => `${i + 1}. ${sentence(rng, ws)}`).join("\n"),
			"",
			"## Critical Context",
			bullets(rng, rng.range(1, 5), ws),
		].join("\n");
		const fields: Record<string, unknown> = {
			type: "compaction",
			summary,
			firstKeptEntryId: firstKept,
			tokensBefore: this.ctxTokens,
			details: { readFiles: [...this.readFiles], modifiedFiles: [...this.modifiedFiles] },
			fromHook: false,
		};
		if (this.plan.era === 1) {
			const input = this.ctxTokens;
			const output = Math.round(summary.length / 4);
			const p = this.model.price;
			const cost = { input: (input * p[0]) / 1e6, output: (output * p[1]) / 1e6, cacheRead: 0, cacheWrite: 0, total: 0 };
			cost.total = cost.input + cost.output;
			fields.usage = { input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output, cost };
		}
		this.append(fields);
		this.ctxTokens = Math.round(this.ctxTokens * 0.15) + 3000;
		this.charsSinceCompaction = 0;
	}
}

// ---------------------------------------------------------------------------------------------
// UUIDs, file names

function uuidFor(rng: Rng, ms: number, v7: boolean): string {
	const h = hex(rng, 32).split("");
	if (v7) {
		const t = ms.toString(16).padStart(12, "0");
		for (let i = 0; i < 12; i++) h[i] = t[i] as string;
		h[12] = "7";
	} else h[12] = "4";
	h[16] = "89ab"[parseInt(h[16] as string, 16) & 3] as string;
	const s = h.join("");
	return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

interface SessionMeta {
	relPath: string;
	sessionId: string;
	headerIso: string;
}
function sessionMeta(plan: SessionPlan, ws: Workspace): SessionMeta {
	const rng = new Rng(hash32(plan.seed, 0x1d));
	const iso = new Date(plan.startMs).toISOString();
	const sessionId = uuidFor(rng, plan.startMs, plan.era === 1 || rng.chance(0.5));
	const relPath = `sessions/${ws.dirName}/${iso.replace(/[:.]/g, "-")}_${sessionId}.jsonl`;
	return { relPath, sessionId, headerIso: iso };
}

// ---------------------------------------------------------------------------------------------
// Main

function parseSize(s: string): number {
	const m = /^(\d+(?:\.\d+)?)\s*(B|KB|K|KIB|MB|M|MIB|GB|G|GIB)?$/i.exec(s.trim());
	if (!m) throw new Error(`bad --size: ${s}`);
	const n = Number(m[1]);
	const u = (m[2] ?? "B").toUpperCase();
	const mult = u.startsWith("K") ? KB : u.startsWith("M") ? MB : u.startsWith("G") ? 1024 * MB : 1;
	return Math.round(n * mult);
}

function parseArgs(argv: string[]): { out: string; size: number; seed: number; force: boolean } {
	let out = "";
	let size = 200 * MB;
	let seed = 42;
	let force = false;
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i] as string;
		const v = () => {
			const x = argv[++i];
			if (x === undefined) throw new Error(`missing value for ${a}`);
			return x;
		};
		if (a === "--out") out = v();
		else if (a.startsWith("--out=")) out = a.slice(6);
		else if (a === "--size") size = parseSize(v());
		else if (a.startsWith("--size=")) size = parseSize(a.slice(7));
		else if (a === "--seed") seed = Number(v());
		else if (a.startsWith("--seed=")) seed = Number(a.slice(7));
		else if (a === "--force") force = true;
		else if (a === "-h" || a === "--help") {
			console.log("usage: bun bench/corpus.ts --out DIR --size 200MB [--seed 42] [--force]");
			process.exit(0);
		} else throw new Error(`unknown argument: ${a}`);
	}
	if (!out) throw new Error("--out DIR is required");
	if (!Number.isInteger(seed)) throw new Error("--seed must be an integer");
	return { out, size, seed, force };
}

const PLANT_FREQS = [1, 10, 100, 1000, 10000];
const PHRASE = "quantum marmalade pipeline";
const PHRASE_COUNT = 100;

function main(): void {
	const t0 = performance.now();
	const { out, size, seed, force } = parseArgs(process.argv.slice(2));
	const outDir = resolve(out);
	const sessDir = join(outDir, "sessions");
	if (existsSync(sessDir) && readdirSync(sessDir).length > 0) {
		if (!force) throw new Error(`${sessDir} is not empty (use --force to replace it)`);
		rmSync(sessDir, { recursive: true, force: true });
	}
	mkdirSync(sessDir, { recursive: true });

	initBlobs(seed);
	const workspaces = makeWorkspaces(seed);
	const allPlans = planSessions(seed, size, workspaces);

	// ---- pass 1: size and eligible entries of every planned session
	const sized: { plan: SessionPlan; chars: number; eligible: number }[] = [];
	let planned = 0;
	for (const p of allPlans) {
		const sink: Sink = {
			eligibleBase: 0,
			plants: null,
			write: false,
			buf: "",
			fd: -1,
			bytes: 0,
			chars: 0,
			entries: 0,
			eligible: 0,
			locations: [],
			relPath: "",
			sessionId: "",
			stats: null,
		};
		new SessionGen(p, workspaces[p.ws] as Workspace, sink).run();
		const chars = sink.chars + 160; // + header line
		sized.push({ plan: p, chars, eligible: sink.eligible });
		if (process.env.CORPUS_DEBUG) process.stderr.write(`plan ${p.index} target=${p.target} actual=${chars} ratio=${(chars / p.target).toFixed(2)}\n`);
		planned += chars;
	}
	// trim to size: drop sessions from the end (never a forced large one) while the rest still reaches the target
	for (let i = sized.length - 1; i >= 0; i--) {
		const s = sized[i] as { plan: SessionPlan; chars: number };
		if (s.plan.forced || planned - s.chars < size) continue;
		planned -= s.chars;
		sized.splice(i, 1);
	}
	const plans = sized.map((s) => s.plan);
	const metas = plans.map((p) => sessionMeta(p, workspaces[p.ws] as Workspace));
	const eligibleBase: number[] = [];
	let E = 0;
	for (const s of sized) {
		eligibleBase.push(E);
		E += s.eligible;
	}
	const t1 = performance.now();
	process.stderr.write(`pass 1: ${plans.length} sessions, ${E} eligible entries, ${((t1 - t0) / 1000).toFixed(1)}s\n`);

	// ---- choose planted entries
	const want: [string, number][] = PLANT_FREQS.map((f) => [`zqplant${f}x`, f]);
	want.push([PHRASE, PHRASE_COUNT]);
	const notes: string[] = [];
	// at small sizes there are too few entries: cap, rarest strings first, so that planted
	// strings fill at most 60% of the eligible entries (one planted string per entry)
	let budget = Math.floor(E * 0.6);
	for (const w of [...want].sort((x, y) => x[1] - y[1])) {
		if (w[1] > budget) {
			notes.push(`only ${E} eligible entries: ${w[0]} capped at ${budget} (wanted ${w[1]})`);
			w[1] = budget;
		}
		budget -= w[1];
	}
	let totalWant = 0;
	for (const [, n] of want) totalWant += n;
	for (const n of notes) process.stderr.write(`warning: ${n}\n`);
	const prng = new Rng(hash32(seed, 0x91a47));
	const chosen = new Set<number>();
	const order: number[] = [];
	// Floyd's algorithm: totalWant distinct indices in [0, E)
	for (let j = E - totalWant; j < E; j++) {
		const t = prng.int(j + 1);
		const v = chosen.has(t) ? j : t;
		chosen.add(v);
		order.push(v);
	}
	for (let i = order.length - 1; i > 0; i--) {
		const j = prng.int(i + 1);
		const t = order[i] as number;
		order[i] = order[j] as number;
		order[j] = t;
	}
	const plants = new Map<number, string>();
	let oi = 0;
	for (const [tok, n] of want) for (let k = 0; k < n; k++) plants.set(order[oi++] as number, tok);

	// ---- pass 2: write
	let totalBytes = 0;
	let entries = 0;
	const sizes: { path: string; bytes: number }[] = [];
	const locations: Sink["locations"] = [];
	let eligibleCheck = 0;
	const stats: Stats = { entryTypes: {}, common: COMMON_RES.map(() => 0) };
	const dirsMade = new Set<string>();
	for (let i = 0; i < plans.length; i++) {
		const p = plans[i] as SessionPlan;
		const ws = workspaces[p.ws] as Workspace;
		const meta = metas[i] as SessionMeta;
		const dir = join(sessDir, ws.dirName);
		if (!dirsMade.has(dir)) {
			mkdirSync(dir, { recursive: true });
			dirsMade.add(dir);
		}
		const abs = join(outDir, meta.relPath);
		const fd = openSync(abs, "w");
		const sink: Sink = {
			eligibleBase: eligibleBase[i] as number,
			plants,
			write: true,
			buf: "",
			fd,
			bytes: 0,
			chars: 0,
			entries: 0,
			eligible: 0,
			locations,
			relPath: meta.relPath,
			sessionId: meta.sessionId,
			stats,
		};
		sink.buf = `${JSON.stringify({ type: "session", version: 3, id: meta.sessionId, timestamp: meta.headerIso, cwd: ws.cwd })}\n`;
		const gen = new SessionGen(p, ws, sink);
		gen.run();
		flush(sink);
		closeSync(fd);
		const mtime = new Date(gen.t);
		utimesSync(abs, mtime, mtime);
		totalBytes += sink.bytes;
		entries += sink.entries;
		eligibleCheck += sink.eligible;
		sizes.push({ path: meta.relPath, bytes: sink.bytes });
	}
	if (eligibleCheck !== E) throw new Error(`internal error: pass 2 saw ${eligibleCheck} eligible entries, pass 1 ${E}`);
	const t2 = performance.now();

	const planted: Record<string, number> = {};
	const phrases: Record<string, number> = {};
	for (const [tok, n] of want) (tok === PHRASE ? phrases : planted)[tok] = n;
	let largest = sizes[0] as { path: string; bytes: number };
	let small = sizes[0] as { path: string; bytes: number };
	for (const s of sizes) {
		if (s.bytes > largest.bytes) largest = s;
		if (Math.abs(s.bytes - 50 * KB) < Math.abs(small.bytes - 50 * KB)) small = s;
	}
	const buckets: [string, number][] = [
		["<5KB", 5 * KB],
		["5KB-50KB", 50 * KB],
		["50KB-200KB", 200 * KB],
		["200KB-1MB", MB],
		["1MB-5MB", 5 * MB],
		["5MB-15MB", 15 * MB],
		[">=15MB", Number.POSITIVE_INFINITY],
	];
	const dist: Record<string, { sessions: number; bytes: number }> = {};
	for (const [name] of buckets) dist[name] = { sessions: 0, bytes: 0 };
	for (const s of sizes) {
		const b = buckets.find(([, lim]) => s.bytes < lim) as [string, number];
		const d = dist[b[0]] as { sessions: number; bytes: number };
		d.sessions++;
		d.bytes += s.bytes;
	}
	const rareLocations: Record<string, { path: string; entryId: string; sessionId: string }[]> = {};
	for (const l of locations) {
		if ((planted[l.token] ?? phrases[l.token] ?? Infinity) > 100) continue;
		(rareLocations[l.token] ??= []).push({ path: l.path, entryId: l.entryId, sessionId: l.sessionId });
	}
	for (const k in rareLocations) rareLocations[k]!.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.entryId < b.entryId ? -1 : 1));
	const manifest = {
		generator: "pi-events bench/corpus.ts v1",
		seed,
		targetBytes: size,
		totalBytes,
		files: sizes.length,
		sessions: sizes.length,
		entries,
		lines: entries + sizes.length,
		eligibleEntries: E,
		largestSession: largest,
		smallSession: small,
		planted,
		phrases,
		plantNotes: notes,
		plantedIn:
			"one planted string per entry, in the text of user / assistant / toolResult messages or bashExecution output; counts are both occurrences and matching lines",
		plantedLocations: rareLocations,
		workspaces: workspaces.map((w) => w.cwd),
		commonTerms: COMMON_TERMS,
		commonTermShare: Object.fromEntries(COMMON_TERMS.map((w, i) => [w, Number(((stats.common[i] as number) / E).toFixed(3))])),
		commonTermShareOf: "eligible entries (user, assistant text, toolResult, bashExecution) containing the word, case-insensitive",
		entryTypes: Object.fromEntries(Object.entries(stats.entryTypes).sort(([a], [b]) => (a < b ? -1 : 1))),
		sizeDistribution: dist,
	};
	writeFileSync(join(outDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
	process.stderr.write(
		`pass 2: wrote ${sizes.length} files, ${(totalBytes / MB).toFixed(1)} MB, ${entries} entries in ${((t2 - t1) / 1000).toFixed(1)}s; total ${((t2 - t0) / 1000).toFixed(1)}s\n`,
	);
}

main();
