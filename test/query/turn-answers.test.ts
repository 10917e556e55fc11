/**
 * Ranking that answers, the pure part (src/query/turn-answers.ts): a turn's evidence, its answer
 * (the explanation, not a status line after it), its outcome, and where the answer ranks.
 */
import { describe, expect, test } from "bun:test";
import {
	ANSWER_SHARE,
	type AnswerCandidate,
	answerOf,
	answerRelevance,
	answerWithFollowUps,
	EVIDENCE_SHARE,
	FOLLOW_UP_MARGIN,
	isStatusLine,
	outcomeOf,
	SINGLE_EVIDENCE_SHARE,
	STATUS_LINE_CHARS,
	type TurnMember,
	turnEvidence,
} from "../../src/query/turn-answers.ts";

const text = (eventKey: number, seq: number, length: number, extra: Partial<AnswerCandidate> = {}): AnswerCandidate => ({
	eventKey,
	fragKey: eventKey * 10,
	seq,
	length,
	changesFiles: false,
	selected: true,
	...extra,
});
const member = (eventKey: number, turnSeq: number | null, kind: TurnMember["kind"], relevance: number, sessionKey = 1): TurnMember => ({
	eventKey,
	sessionKey,
	turnSeq,
	kind,
	relevance,
});

describe("a turn's answer and outcome", () => {
	test("the explanation, not the status line after it; the outcome is the last text", () => {
		const texts = [text(1, 2, 60), text(2, 5, 480), text(3, 8, 17)];
		expect(answerOf(texts)?.eventKey).toBe(2);
		expect(outcomeOf(texts)?.eventKey).toBe(3);
	});

	test("the text that goes with a change to a file outweighs a longer one; a long paste counts only up to the cap", () => {
		expect(answerOf([text(1, 2, 900), text(2, 5, 500, { changesFiles: true })])?.eventKey).toBe(2);
		expect(answerOf([text(1, 2, 1600), text(2, 5, 90_000)])?.eventKey).toBe(2);
		expect(answerOf([text(1, 2, 90_000), text(2, 5, 1600)])?.eventKey).toBe(2);
	});

	test("on the branch toward the leaf when the turn has one; else among all", () => {
		const texts = [text(1, 2, 300), text(2, 5, 900, { selected: false }), text(3, 8, 20, { selected: false })];
		expect(answerOf(texts)?.eventKey).toBe(1);
		expect(outcomeOf(texts)?.eventKey).toBe(1);
		const abandoned = texts.map((t) => ({ ...t, selected: false }));
		expect(answerOf(abandoned)?.eventKey).toBe(2);
		expect(outcomeOf(abandoned)?.eventKey).toBe(3);
		expect(answerOf([])).toBeNull();
	});
});

describe("evidence and the answer's place", () => {
	test("a turn's evidence: its best event, plus a share of each other; events before a first prompt have none", () => {
		const turns = turnEvidence([
			member(1, 10, "user.text", 20),
			member(2, 10, "tool.result", 8),
			member(3, 30, "tool.result", 12),
			member(4, null, "custom.message", 50),
		]);
		expect([...turns.keys()].sort()).toEqual(["1:10", "1:30"]);
		expect(turns.get("1:10")!.evidence).toBeCloseTo(20 + EVIDENCE_SHARE * 8);
		expect(turns.get("1:10")!.members.map((m) => m.eventKey)).toEqual([1, 2]);
	});

	test("above the question when more than the question matched; just below it when it alone did; just below a log or call", () => {
		const asked = { evidence: 30, members: [member(1, 10, "user.text", 20), member(2, 10, "session.name", 20)] };
		expect(answerRelevance(asked)).toBeCloseTo(ANSWER_SHARE * 30);
		expect(answerRelevance(asked)).toBeGreaterThan(20);
		const alone = { evidence: 20, members: [member(1, 10, "user.text", 20)] };
		expect(answerRelevance(alone)).toBeCloseTo(SINGLE_EVIDENCE_SHARE * 20);
		expect(answerRelevance(alone)).toBeLessThan(20);
		const log = { evidence: 40, members: [member(1, 10, "tool.result", 20), member(2, 10, "user.text", 20)] };
		expect(answerRelevance(log)).toBeLessThan(20);
		expect(answerRelevance(log)).toBeGreaterThan(19.9);
	});

	test("a turn that ends in a status line: its answer ranks above the question that alone matched, and above a log", () => {
		const alone = { evidence: 20, members: [member(1, 10, "user.text", 20)] };
		expect(answerRelevance(alone, true)).toBeCloseTo(ANSWER_SHARE * 20);
		const log = { evidence: 40, members: [member(1, 10, "tool.result", 20), member(2, 10, "user.text", 20)] };
		expect(answerRelevance(log, true)).toBeGreaterThan(20);
	});
});

describe("a status line", () => {
	test("a short last text after a longer answer; not the answer itself, not a summary as long as its answer", () => {
		const answer = text(1, 2, 480);
		expect(isStatusLine(text(2, 5, 17), answer)).toBe(true);
		expect(isStatusLine(answer, answer)).toBe(false);
		expect(isStatusLine(text(2, 5, STATUS_LINE_CHARS), text(1, 2, 4000))).toBe(false);
		// Short, but as long as the answer: the outcome says as much.
		expect(isStatusLine(text(2, 5, 90), text(1, 2, 150))).toBe(false);
		expect(isStatusLine(null, answer)).toBe(false);
		expect(isStatusLine(text(2, 5, 17), null)).toBe(false);
	});
});

describe("an answer in a follow-up turn", () => {
	test("only when it says FOLLOW_UP_MARGIN times as much as the turn's own answer", () => {
		const own = [text(1, 2, 200), text(2, 5, 12)];
		expect(answerWithFollowUps(own, [text(3, 9, 200 * FOLLOW_UP_MARGIN)])?.eventKey).toBe(3);
		// The next request of a conversation of short prompts, answered at the same length: not this turn's answer.
		expect(answerWithFollowUps(own, [text(3, 9, 220)])?.eventKey).toBe(1);
		expect(answerWithFollowUps([], [text(3, 9, 50)])?.eventKey).toBe(3);
		expect(answerWithFollowUps(own, [])?.eventKey).toBe(1);
	});
});
