/** Pure text rendering of a trace: a small ASCII picture of the local tree, then relationships. */
import type { TraceResult } from "../query/trace.ts";
import { nodeLine } from "./render-read.ts";
import type { Style } from "./render.ts";
import { terminalSafeDeep } from "./terminal.ts";

export function renderTrace(unsafe: TraceResult, style: Style): string {
	const t = terminalSafeDeep(unsafe);
	const bold = (s: string) => (style.color ? `\x1b[1m${s}\x1b[0m` : s);
	const out: string[] = [];
	out.push(
		`session ${t.session.sessionId}${t.session.name ? ` "${t.session.name}"` : ""}  ${t.session.cwd ?? "?"}  (materialized leaf ${t.session.leafEntryId ?? "none"})`,
	);
	out.push("");
	let indent = "";
	if (t.parent) {
		out.push(`${nodeLine(t.parent)}   (parent)`);
		indent = "  ";
	}
	const level = [...t.siblings.map((s) => ({ node: s, target: false })), { node: t.target, target: true }].sort((a, b) => a.node.seq - b.node.seq);
	level.forEach((item, i) => {
		const last = i === level.length - 1;
		const branch = t.parent ? (last ? "└─ " : "├─ ") : "";
		if (item.target) {
			out.push(`${indent}${branch}${bold(nodeLine(item.node))}   ◀ target`);
			const childIndent = `${indent}${t.parent ? (last ? "   " : "│  ") : ""}`;
			t.children.forEach((c, j) => {
				out.push(`${childIndent}${j === t.children.length - 1 ? "└─ " : "├─ "}${nodeLine(c)}`);
			});
		} else {
			out.push(`${indent}${branch}${nodeLine(item.node)}   (sibling)`);
		}
	});
	if (t.childrenTotal > t.children.length) out.push(`   (${t.childrenTotal - t.children.length} more children not listed)`);
	if (t.siblingsTotal > t.siblings.length) out.push(`   (${t.siblingsTotal - t.siblings.length} more siblings not listed)`);
	out.push("", `(* = on the selected path to the materialized leaf, ? = unknown)`);
	out.push(t.towardLeaf ? `toward the leaf: ${t.towardLeaf.entryId}` : "toward the leaf: this is the materialized leaf or off-tree");
	const rels = t.relations.filter((r) => !["parent", "child", "sibling"].includes(r.relation));
	if (rels.length) {
		out.push("", "relationships:");
		for (const r of rels) {
			const what = r.node
				? `${r.node.sessionId === t.session.sessionId ? "" : `${r.node.sessionId} `}${r.node.entryId} (${r.node.eventType}${r.node.role ? `/${r.node.role}` : ""})`
				: (r.path ?? (r.session ? `session ${r.session.sessionId} ${r.session.cwd ?? ""}` : (r.note ?? "")));
			out.push(`  ${r.direction === "out" ? "→" : "←"} ${r.relation} [${r.label}] ${what}${r.note && r.node ? ` (${r.note})` : ""}`);
		}
	}
	return `${out.join("\n")}\n`;
}
