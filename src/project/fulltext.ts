/**
 * The full-text columns of one fragment besides its body: `aux` (the tool name and custom type,
 * camelCase parts, CJK characters) and `forms` (word forms). Pure, so a cold index can compute
 * them off the writer's thread (sync/prepare.ts).
 */
import type { SemanticKind } from "../model.ts";
import type { WordForms } from "./stem.ts";
import { auxTokens } from "./text.ts";

/**
 * Kinds whose word forms are indexed: what people and the assistant wrote, and the arguments the
 * agent typed. Tool and shell output (most of the indexed bytes) match as written: stemming every
 * word of it took a quarter of a cold index (measured on a bench subset), and
 * what a person looks for by another form of a word is what was said or done, not the log line.
 */
const FORMS_KINDS: ReadonlySet<SemanticKind> = new Set([
	"user.text",
	"assistant.text",
	"session.name",
	"summary.compaction",
	"summary.branch",
	"custom.message",
	"bash.command",
	"tool.call",
]);

export interface FullTextColumns {
	aux: string;
	forms: string;
}

export function fullTextColumns(
	wordForms: WordForms,
	event: { toolName: string | null; customType: string | null },
	fragment: { kind: SemanticKind; indexText: string },
): FullTextColumns {
	// The aux column carries the tool name and custom type too, so they match as words.
	const extra = [event.toolName, event.customType].filter(Boolean).join(" ");
	const aux = auxTokens(fragment.indexText);
	return {
		aux: extra ? `${extra}\n${aux}` : aux,
		forms: FORMS_KINDS.has(fragment.kind) ? wordForms.formsText(fragment.indexText, aux) : "",
	};
}
