/**
 * Pure turn logic: which entries form the turn that holds an entry, and that turn as transcript
 * lines. One definition, shared by exact reads (`read --turn`, query/turn-read.ts) and anything
 * that derives turn data at index time.
 *
 * A turn is a user prompt and everything after it on the same branch, up to the next user prompt.
 * "After" is tree order (parentId), never append order. Going up is unambiguous; going down follows
 * the branch rules of core-concepts.md: from an entry on the root-to-materialized-leaf path, the
 * child on that path; elsewhere, a child only while it is the only one; at an unresolved fork the
 * walk stops and reports every candidate child. Entries before a session's first prompt (model and
 * thinking-level changes, a system prompt) form a turn without a prompt. Cycle-safe and bounded.
 */

/** What the turn walk needs of an entry. */
export interface TurnNode {
	entryId: string;
	parentId: string | null;
	eventType: string;
	role: string | null;
	/** On the root-to-materialized-leaf path (branchState "selected"). */
	selected: boolean;
}

/**
 * The session's tree as the walk sees it. `children` are in append order and include only entries
 * the caller may see (an exact read passes the gate's visible session; the index passes every entry).
 */
export interface TurnTree<N extends TurnNode> {
	node(entryId: string): N | null;
	children(entryId: string): N[];
}

/** Why a turn ends where it does. */
export type TurnEnd =
	/** The next entry on the branch is a user prompt: the next turn (`next`) starts there. */
	| "next-prompt"
	/** No further entry on this branch (the materialized leaf, an abandoned branch's end, or the caller's cutoff). */
	| "end"
	/** An entry off the materialized path has several children: `candidates` lists them all. */
	| "fork"
	/** The walk reached `maxEntries`: the turn continues after the last entry. */
	| "limit";

export interface TurnSpan<N extends TurnNode> {
	/** The user prompt that starts the turn; null for the entries before a session's first prompt. */
	prompt: N | null;
	/** The turn's entries in tree order, the prompt (when there is one) first. */
	entries: N[];
	end: TurnEnd;
	/** With end "next-prompt": the prompt that starts the next turn on this branch. */
	next: N | null;
	/** With end "fork": every child of the last entry (no branch is chosen). */
	candidates: N[];
	/** Other branches leaving this turn: children of its entries that the walk did not take (abandoned or alternative branches). */
	alternatives: { from: string; node: N }[];
}

/** Most entries a turn walk steps through, up and down together, unless the caller sets another bound. */
export const MAX_TURN_ENTRIES = 2000;

/** A user message starts a turn (tool results, bash runs and extension messages never do). */
export function startsTurn(node: Pick<TurnNode, "eventType" | "role">): boolean {
	return node.eventType === "message" && node.role === "user";
}

/** A tree over a whole session's nodes (in append order), for index-time use. */
export function treeOf<N extends TurnNode>(nodes: readonly N[]): TurnTree<N> {
	const byId = new Map<string, N>();
	const children = new Map<string, N[]>();
	for (const n of nodes) {
		byId.set(n.entryId, n);
		if (n.parentId === null) continue;
		const list = children.get(n.parentId);
		if (list) list.push(n);
		else children.set(n.parentId, [n]);
	}
	return { node: (id) => byId.get(id) ?? null, children: (id) => children.get(id) ?? [] };
}

/**
 * The prompt of the turn holding `entryId`: the entry itself when it is a prompt, else its nearest
 * ancestor that is one. Null when no ancestor is (the entries before the first prompt) or the
 * entry is unknown. Entries on an abandoned branch belong to the prompt their branch grew from.
 */
export function promptOf<N extends TurnNode>(tree: TurnTree<N>, entryId: string, maxEntries = MAX_TURN_ENTRIES): N | null {
	const start = tree.node(entryId);
	if (!start) return null;
	return ancestry(tree, start, maxEntries).prompt;
}

/** From `start` up to its prompt (or its root): the path, root-most first. */
function ancestry<N extends TurnNode>(tree: TurnTree<N>, start: N, max: number): { prompt: N | null; path: N[] } {
	const path: N[] = [start];
	const seen = new Set([start.entryId]);
	let cursor = start;
	while (!startsTurn(cursor) && cursor.parentId !== null && path.length < max) {
		const parent = tree.node(cursor.parentId);
		if (!parent || seen.has(parent.entryId)) break;
		seen.add(parent.entryId);
		path.push(parent);
		cursor = parent;
	}
	path.reverse();
	return { prompt: startsTurn(path[0]!) ? path[0]! : null, path };
}

/**
 * The turn that holds `entryId`: up from it to its prompt, then on from it along the branch
 * until the next prompt, the branch's end, an unresolved fork or `maxEntries`. Null when the
 * entry is not in the tree.
 */
export function turnAt<N extends TurnNode>(tree: TurnTree<N>, entryId: string, maxEntries = MAX_TURN_ENTRIES): TurnSpan<N> | null {
	const start = tree.node(entryId);
	if (!start) return null;
	const { prompt, path } = ancestry(tree, start, maxEntries);
	return walkOn(tree, prompt, path, maxEntries);
}

/** The turn that `prompt` starts (the next turn after a span that ended at "next-prompt"). */
export function turnFrom<N extends TurnNode>(tree: TurnTree<N>, prompt: N, maxEntries = MAX_TURN_ENTRIES): TurnSpan<N> {
	return walkOn(tree, startsTurn(prompt) ? prompt : null, [prompt], maxEntries);
}

/** Continue `path` (root-most first, ending at the walk's start) down the branch. */
function walkOn<N extends TurnNode>(tree: TurnTree<N>, prompt: N | null, path: N[], max: number): TurnSpan<N> {
	const entries = [...path];
	const seen = new Set(entries.map((e) => e.entryId));
	const span: TurnSpan<N> = { prompt, entries, end: "end", next: null, candidates: [], alternatives: [] };
	let cursor = entries[entries.length - 1]!;
	for (;;) {
		const children = tree.children(cursor.entryId).filter((c) => !seen.has(c.entryId));
		let next: N | undefined;
		if (cursor.selected) next = children.find((c) => c.selected);
		else if (children.length === 1) next = children[0];
		else if (children.length > 1) {
			span.end = "fork";
			span.candidates = children;
			break;
		}
		if (!next) break;
		if (startsTurn(next)) {
			span.end = "next-prompt";
			span.next = next;
			break;
		}
		if (entries.length >= max) {
			span.end = "limit";
			break;
		}
		seen.add(next.entryId);
		entries.push(next);
		cursor = next;
	}
	span.alternatives = alternativesOf(tree, span);
	return span;
}

/** Children of the turn's entries that lie on no path the turn took (other branches). */
function alternativesOf<N extends TurnNode>(tree: TurnTree<N>, span: TurnSpan<N>): { from: string; node: N }[] {
	const taken = new Set(span.entries.map((e) => e.entryId));
	if (span.next) taken.add(span.next.entryId);
	for (const c of span.candidates) taken.add(c.entryId);
	const out: { from: string; node: N }[] = [];
	// The last entry's children are the next prompt, the fork's candidates, or nothing beyond the limit.
	const last = span.entries.length - 1;
	span.entries.forEach((e, i) => {
		if (i === last && span.end === "limit") return;
		for (const c of tree.children(e.entryId)) if (!taken.has(c.entryId)) out.push({ from: e.entryId, node: c });
	});
	return out;
}

/** What deciding turns needs of an entry. */
export type TurnShape = Pick<TurnNode, "entryId" | "parentId" | "eventType" | "role">;

/**
 * For every node of a session (in append order), the position in `nodes` of the prompt of its
 * turn (promptOf's answer for every entry at once, in linear time): the node itself when it is a
 * prompt, else its parent's. Null before a session's first prompt, for an entry whose parent
 * chain loops or reaches an unknown id without a prompt, and on a chain longer than `maxEntries`.
 * This is what the index stores per event (the prompt's append position): an entry's ancestors
 * never change as a session grows, so the value is append-stable.
 */
export function turnPromptPositions(nodes: readonly TurnShape[], maxEntries = MAX_TURN_ENTRIES): (number | null)[] {
	const indexById = new Map<string, number>();
	for (const [i, n] of nodes.entries()) indexById.set(n.entryId, i);
	const UNKNOWN = -2;
	const NONE = -1;
	const result: number[] = new Array(nodes.length).fill(UNKNOWN);
	/** Distance from the prompt (or the chain's top), so that the bound holds as promptOf's does. */
	const depth: number[] = new Array(nodes.length).fill(0);
	for (let i = 0; i < nodes.length; i++) {
		if (result[i] !== UNKNOWN) continue;
		// Up to a node whose answer is known, a prompt, or the chain's top; then back down.
		const chain: number[] = [];
		const onChain = new Set<number>();
		let cursor: number | undefined = i;
		let answer = NONE;
		let base = 0;
		while (cursor !== undefined) {
			if (result[cursor] !== UNKNOWN) {
				answer = result[cursor]!;
				base = depth[cursor]! + 1;
				break;
			}
			if (onChain.has(cursor)) {
				// A loop: nothing on it has a prompt (promptOf stops at the repeat with none).
				answer = NONE;
				break;
			}
			chain.push(cursor);
			onChain.add(cursor);
			const node: TurnShape = nodes[cursor]!;
			if (startsTurn(node)) {
				answer = cursor;
				break;
			}
			cursor = node.parentId === null ? undefined : indexById.get(node.parentId);
		}
		for (let k = chain.length - 1; k >= 0; k--) {
			const at = chain[k]!;
			const d = startsTurn(nodes[at]!) ? 0 : base + (chain.length - 1 - k);
			depth[at] = d;
			result[at] = answer !== NONE && d < maxEntries ? answer : NONE;
		}
	}
	return result.map((r) => (r >= 0 ? r : null));
}
