/** Pure text rendering of an exact read for people. */
import type { ReadResult } from "../query/read.ts";
import type { EventView } from "../query/views.ts";
import { terminalSafeDeep } from "./terminal.ts";
import { SELECTION_WORDS } from "./states.ts";

/** What a selection state other than `direct` means, beside its value (which `--selection` takes). */
const SELECTION_GLOSS: Record<string, string> = { ...SELECTION_WORDS, "not-applicable": "never a model message: a name, label or setting" };

export function nodeLine(v: EventView): string {
	const kind = v.role ? `${v.eventType}/${v.role}` : v.eventType;
	const tool = v.toolName ? ` ${v.toolName}` : "";
	const mark = v.branchState === "selected" ? "*" : v.branchState === "unknown" ? "?" : " ";
	const preview = v.preview ? `  "${v.preview.length > 72 ? `${v.preview.slice(0, 71)}…` : v.preview}"` : "";
	return `${mark} ${v.entryId}  ${kind}${tool}${preview}`;
}

export function renderRead(unsafe: ReadResult): string {
	const r = terminalSafeDeep(unsafe);
	const e = r.event;
	const out: string[] = [];
	out.push(`session ${r.session.sessionId}${r.session.name ? ` "${r.session.name}"` : ""}  ${r.session.cwd ?? "?"}`);
	out.push(
		`event   ${e.entryId}${e.idDerived ? " (derived id)" : ""}  ${e.eventType}${e.role ? `/${e.role}` : ""}${e.toolName ? ` ${e.toolName}` : ""}  ${e.timestamp ?? "no time"}`,
	);
	out.push(
		`state   branch ${e.branchState}, context ${e.contextRole}, selection ${e.selectionState}${SELECTION_GLOSS[e.selectionState] ? ` (${SELECTION_GLOSS[e.selectionState]})` : ""}${e.isError ? ", error" : ""}${e.exitCode !== null ? `, exit ${e.exitCode}` : ""}`,
	);
	out.push(`source  ${e.locator.file}:${e.locator.line} (bytes ${e.locator.byteOffset}+${e.locator.byteLength})`);
	if (e.parentId) out.push(`parent  ${e.parentId}`);
	if (e.files.length) out.push(`files   ${e.files.map((f) => `${f.op} ${f.path}`).join(", ")}`);
	if (r.omitted.length) out.push(`omitted ${r.omitted.join(", ")}`);
	if (r.window) {
		const w = r.window;
		out.push("", `--- ${w.fragmentId} [${w.offset}, ${w.offset + w.length}) of ${w.totalChars} chars${w.hasMore ? " (more: raise --offset)" : ""}`, w.text);
	} else {
		for (const part of r.content) {
			out.push(
				"",
				`--- ${part.fragmentId} (${part.chars} chars${part.truncated ? `, first ${part.text.length} shown; use --fragment ${part.fragmentId} --offset N` : ""})`,
				part.text,
			);
		}
	}
	const n = r.neighbours;
	if (n.before.length || n.after.length || n.alternatives.length) {
		out.push("", `--- neighbours (${n.order} order${n.only ? `, ${n.only} only` : ""})`);
		for (const v of n.before) out.push(`  before ${nodeLine(v)}`);
		out.push(`  target ${nodeLine(e)}`);
		for (const v of n.after) out.push(`  after  ${nodeLine(v)}`);
		for (const v of n.alternatives) out.push(`  ${n.stoppedAt === "fork" ? "fork?  " : "alt    "}${nodeLine(v)}`);
		if (n.alternativesTotal > n.alternatives.length) out.push(`  (${n.alternativesTotal - n.alternatives.length} more alternatives not listed)`);
		if (n.stoppedAt === "fork") out.push("  (stopped at a fork: pick a candidate and read it)");
	}
	return `${out.join("\n")}\n`;
}
