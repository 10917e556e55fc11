/**
 * Pure renderers for people: search hits, freshness lines. Colour is a parameter, decided by the
 * shell (TTY and NO_COLOR), never detected here.
 */
import type { Freshness } from "../freshness.ts";
import type { Hit, SearchCoverage } from "../query/search.ts";
import { MARK_CLOSE, MARK_OPEN } from "./snippet.ts";

export interface Style {
	color: boolean;
}

const ansi = (code: string, s: string, style: Style) => (style.color ? `\x1b[${code}m${s}\x1b[0m` : s);

export function highlight(snippet: string, style: Style): string {
	if (!style.color) return snippet;
	return snippet.replaceAll(MARK_OPEN, "\x1b[1;33m").replaceAll(MARK_CLOSE, "\x1b[0m");
}

export function renderHits(hits: Hit[], style: Style): string {
	const out: string[] = [];
	hits.forEach((h, i) => {
		const when = h.timestamp ? h.timestamp.replace("T", " ").slice(0, 16) : "no time";
		const flags = [h.isError ? "error" : null, h.branchState !== "selected" ? h.branchState : null, h.selectionState !== "direct" ? h.selectionState : null]
			.filter(Boolean)
			.join(", ");
		const who = h.toolName ? `${h.semanticKind} ${h.toolName}` : h.semanticKind;
		const name = h.sessionName ? `"${h.sessionName}" ` : "";
		out.push(`${ansi("1", `${i + 1}.`, style)} ${when}  ${ansi("36", who, style)}${flags ? `  [${flags}]` : ""}  ${name}${ansi("2", h.cwd ?? "?", style)}`);
		out.push(`   ${highlight(h.snippet, style)}`);
		out.push(`   ${ansi("2", `${h.sessionId} ${h.entryId}  (${h.fragmentId}, ${h.sessionFile}:${h.line})`, style)}`);
	});
	return out.length > 0 ? `${out.join("\n")}\n` : "";
}

export function freshnessLine(f: Freshness, coverage?: SearchCoverage): string {
	const parts: string[] = [];
	if (f.synced) parts.push(`synced in ${f.syncMs} ms`);
	else parts.push(`not synced (last sync ${f.lastSyncAt ?? "never"})`);
	if (f.pendingFiles > 0) parts.push(`${f.pendingFiles} changed session files not indexed yet (run pi-events index)`);
	if (f.missingFiles > 0) parts.push(`${f.missingFiles} indexed files gone`);
	if (f.newDiagnostics > 0) parts.push(`${f.newDiagnostics} new diagnostics`);
	if (coverage?.mode === "recent") {
		parts.push("very common terms (more than 4,000 matches): showing the best of the newest 1,000; add terms or filters to rank them all");
	}
	if (coverage && coverage.ignoredTerms.length > 0) parts.push(`ignored: ${coverage.ignoredTerms.map((t) => JSON.stringify(t)).join(" ")}`);
	for (const p of f.problems) parts.push(p);
	return parts.join("; ");
}
