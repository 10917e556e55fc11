/** The tree states of an event in words for people (docs/cli.md "Tree states"); JSON and filters keep the values. */
import type { Hit } from "../query/search/search.ts";

/**
 * A hit's tree states in words (the JSON keeps the values `--branch` and `--selection` take): only
 * what sets it apart from a plain message of the conversation that led to the latest entry.
 */
export function stateWords(h: Pick<Hit, "branchState" | "selectionState">): string[] {
	const words: string[] = [];
	if (h.branchState === "alternate") words.push("on an abandoned branch");
	else if (h.branchState === "unknown") words.push("branch unknown: its ancestry is broken");
	// An entry that is never a model message (a session name, a label) says nothing more here than its
	// kind does; one off the latest path is out of the model's context by that alone.
	const selection = h.branchState === "alternate" && h.selectionState === "not-selected" ? "direct" : h.selectionState;
	if (selection !== "direct" && selection !== "not-applicable") words.push(SELECTION_WORDS[selection]);
	return words;
}

/** A selection state as a newcomer reads it (docs/cli.md "Tree states"). */
export const SELECTION_WORDS: Record<Exclude<Hit["selectionState"], "direct" | "not-applicable">, string> = {
	summarized: "compacted: the model saw a summary of it",
	"not-selected": "left out of the model's context",
	unknown: "model context unknown",
};
