/** Debug: the first hits of answer cases, with the expected marked. `bun test/eval/answers-debug.ts ID...` */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Gate } from "../../src/gate/gate.ts";
import { search } from "../../src/query/search/search.ts";
import { ANSWERS_SESSIONS, CASES_FILE, indexAnswers, loadCases } from "./answers-score.ts";

const dir = mkdtempSync(join(tmpdir(), "answers-debug-"));
try {
	const args = process.argv.slice(2);
	const opt = (name: string, fallback: string) => (args.includes(`--${name}`) ? args.splice(args.indexOf(`--${name}`), 2)[1]! : fallback);
	const sessionsDir = opt("sessions", ANSWERS_SESSIONS);
	const casesFile = opt("cases", CASES_FILE);
	const db = indexAnswers(dir, sessionsDir);
	const cases = loadCases(casesFile);
	for (const id of args) {
		const c = cases.find((x) => x.id === id)!;
		console.log(`\n== ${c.id} [${c.kind}] ${JSON.stringify(c.query)}  expected ${c.expected.map((e) => `${e.sessionId.slice(0, 8)}:${e.entryId}`).join(" ")}`);
		const hits = search(new Gate(db, { roots: [c.root], current: null }), { query: c.query, filters: {}, limit: 8 }).hits;
		for (const [i, h] of hits.entries()) {
			const exp = c.expected.some((e) => e.sessionId === h.sessionId && (e.entryId === h.entryId || e.entryId === h.turn?.outcome?.entryId)) ? "**" : "  ";
			const hh = h as unknown as { relevance?: number; match?: string; snippet?: string; sessionName?: string };
			console.log(
				`${exp}${i + 1}. ${h.sessionId.slice(0, 8)}:${h.entryId} ${h.semanticKind}${h.toolName ? ` ${h.toolName}` : ""} ${hh.match ?? ""} score=${h.score.toFixed(3)} [${hh.sessionName ?? ""}] ${JSON.stringify((hh.snippet ?? "").slice(0, 110))}`,
			);
			if (h.turn?.outcome) console.log(`      → ${h.turn.outcome.entryId} ${JSON.stringify((h.turn.outcome.preview ?? "").slice(0, 100))}`);
		}
	}
	db.close();
} finally {
	rmSync(dir, { recursive: true, force: true });
}
