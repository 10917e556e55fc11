/**
 * Pure text rendering of a turn transcript (`read --turn`, `event_read` view "turn"): a header,
 * the lines with their ids, and every omission with how to get it back. `how` names the surface's
 * own ways (the CLI's commands, the tool's arguments).
 */
import { groupThousands } from "../project/text.ts";
import type { ShownLine } from "../query/turn-budget.ts";
import type { BranchView, TurnReadResult, TurnView } from "../query/turn-read.ts";
import { terminalSafeDeep } from "./terminal.ts";

export interface TurnHow {
	/** How to read one entry exactly. */
	read(entryId: string): string;
	/** How to read the turn an entry starts. */
	turn(entryId: string): string;
	/** How to read on in branch order from an entry (past a turn too long to walk at once). */
	after(entryId: string): string;
	/** How to add further turns (the CLI's `--turns N`, the tool's `turns: N`). */
	moreTurns: string;
}

/** Most ids listed in one omission note. */
const LISTED_IDS = 6;

export function renderTurn(unsafe: TurnReadResult, how: TurnHow): string {
	const r = terminalSafeDeep(unsafe);
	const out: string[] = [];
	out.push(`session ${r.session.sessionId}${r.session.name ? ` "${r.session.name}"` : ""}  ${r.session.cwd ?? "?"}`);
	if (r.cutoff) out.push("(the calling session: only what came before this call is shown)");
	r.turns.forEach((t, i) => {
		const which = r.turns.length > 1 ? `turn ${i + 1} of ${r.turns.length}` : "turn";
		out.push(
			"",
			`=== ${which}: ${t.prompt ? `prompt ${t.prompt}` : "before the first prompt"}, ${t.entryCount} entries${i === 0 ? ` (holds ${r.target})` : ""}`,
		);
		renderLines(out, t, how);
		renderEnd(out, t, how);
	});
	if (r.turnsLeftOut.length > 0) {
		out.push(
			"",
			`[${r.turnsLeftOut.length} further turn${r.turnsLeftOut.length === 1 ? "" : "s"} left out for the budget: ${r.turnsLeftOut.map(how.turn).join("; ")}]`,
		);
	}
	const results = r.turns.flatMap((t) => t.lines).find((l) => l.kind === "tool" && l.resultId !== null);
	const notes = [`budget ${groupThousands(r.bytes)} of ${groupThousands(r.maxBytes)} bytes`];
	if (results?.kind === "tool") notes.push(`tool output is not shown: ${how.read(results.resultId!)} (any result id)`);
	out.push("", `(${notes.join("; ")})`);
	return `${out.join("\n")}\n`;
}

function renderLines(out: string[], t: TurnView, how: TurnHow): void {
	const lastIndex = t.lines.length - 1;
	t.lines.forEach((line, i) => {
		// Left-out lines lie between what is shown and the outcome (always the last line kept).
		if (t.leftOut && i === lastIndex && i > 0) out.push(leftOutNote(t.leftOut, how));
		out.push(lineText(line, how));
	});
	if (t.leftOut && lastIndex < 1) out.push(leftOutNote(t.leftOut, how));
}

function leftOutNote(leftOut: NonNullable<TurnView["leftOut"]>, how: TurnHow): string {
	const ids = leftOut.entryIds.slice(0, LISTED_IDS).join(" ") + (leftOut.entryIds.length > LISTED_IDS ? " …" : "");
	return `[… ${leftOut.lines} line${leftOut.lines === 1 ? "" : "s"} left out for the budget, from entries ${ids}: ${how.read(leftOut.entryIds[0]!)}, or raise the budget]`;
}

function lineText(line: ShownLine, how: TurnHow): string {
	switch (line.kind) {
		case "tool": {
			const result = line.resultId === null ? "no result" : `${line.resultId} ${line.isError ? "ERROR" : line.isError === false ? "ok" : "done"}`;
			return `[${line.entryId}] tool ${line.tool}${line.args ? ` ${line.args}` : ""}  -> ${result}`;
		}
		case "result":
			return `[${line.entryId}] result${line.tool ? ` of ${line.tool}` : ""}${line.callId ? ` (call ${line.callId})` : ""}  ${line.isError ? "ERROR" : "ok"}`;
		case "bash":
			return `[${line.entryId}] bash $ ${line.command}  -> ${line.exitCode === null ? (line.isError ? "failed" : "no exit code") : `exit ${line.exitCode}`}`;
		default: {
			const label = line.kind === "name" ? "session name" : line.kind === "custom" ? "extension message" : line.kind;
			const cut = line.truncated ? `\n[… ${groupThousands(line.totalChars - line.text.length)} more characters: ${how.read(line.entryId)}]` : "";
			return `[${line.entryId}] ${label}:\n${line.text}${cut}`;
		}
	}
}

function renderEnd(out: string[], t: TurnView, how: TurnHow): void {
	const branches = (list: BranchView[], total: number) =>
		list
			.map((b) => `  ${b.entryId} ${b.role ?? b.eventType} (after ${b.from})${b.preview ? ` "${short(b.preview)}"` : ""}`)
			.concat(total > list.length ? [`  (${total - list.length} more)`] : []);
	switch (t.end) {
		case "next-prompt":
			out.push(`--- the next turn starts at ${t.next}: ${how.moreTurns} or ${how.turn(t.next!)}`);
			break;
		case "fork":
			out.push("--- stopped at a fork (no branch is chosen): read a candidate's turn", ...branches(t.candidates, t.candidatesTotal));
			break;
		case "limit":
			out.push(`--- the turn goes on after ${t.last} (${t.entryCount} entries walked): read on in branch order, ${how.after(t.last)}`);
			break;
		default:
			out.push("--- end of this branch");
	}
	if (t.alternativesTotal > 0) out.push("other branches leave this turn:", ...branches(t.alternatives, t.alternativesTotal));
	if (t.control.length > 0) {
		const listed = t.control.slice(0, LISTED_IDS).map((c) => `${c.entryId} ${c.eventType}`);
		out.push(
			`not shown: ${t.control.length} control entr${t.control.length === 1 ? "y" : "ies"} (${listed.join(", ")}${t.control.length > LISTED_IDS ? ", …" : ""})`,
		);
	}
}

const short = (s: string) => (s.length > 72 ? `${s.slice(0, 71)}…` : s);
