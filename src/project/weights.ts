/**
 * Ranking weights fixed at index time (pure): BM25 of a fragment is multiplied by the weight of
 * its semantic kind, and by a boost when its event failed. Storing the product per fragment keeps
 * the ranking query free of joins and CASE expressions.
 */
import type { SemanticKind } from "../model.ts";

/**
 * What a person typed and the commands and paths an agent used are the strongest known-item
 * evidence; summaries restate other events and tool/bash output is long and noisy, so they are
 * damped rather than excluded. Tuned on the retrieval evaluation (fixtures/eval).
 */
export const KIND_WEIGHTS: Record<SemanticKind, number> = {
	"session.name": 1.2,
	"user.text": 1.3,
	"bash.command": 1.2,
	"tool.call": 1.1,
	"assistant.text": 1.0,
	"custom.message": 0.8,
	"summary.compaction": 0.7,
	"summary.branch": 0.7,
	"tool.result": 0.9,
	"bash.output": 0.9,
};

/** People search for what went wrong far more often than for the same words in a success. */
export const ERROR_BOOST = 1.2;

export function fragmentWeight(kind: SemanticKind, eventFailed: boolean | null): number {
	return KIND_WEIGHTS[kind] * (eventFailed === true ? ERROR_BOOST : 1);
}
