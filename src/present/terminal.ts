/**
 * Text for a terminal (or a model reading tool output) from untrusted history: session text, file
 * names and tool output may carry escape sequences that retitle a window, clear the screen or
 * recolour what follows (`ESC]0;…BEL`, `ESC[2J`, C1 CSI 0x9b). Every C0 control but newline and
 * tab, DEL and every C1 control is replaced by a visible stand-in of the same UTF-16 length (C0
 * by its Control Pictures symbol, ␛ for ESC; DEL by ␡; C1 by U+FFFD), so offsets into the text
 * (snippet highlights) stay valid and no sequence can start. JSON output is not passed through
 * here: it keeps the exact text, escaped (present/json.ts).
 */

const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

function standIn(ch: string): string {
	const code = ch.charCodeAt(0);
	if (code < 0x20) return String.fromCharCode(0x2400 + code);
	if (code === 0x7f) return "\u2421";
	return "\ufffd";
}

/** One string made safe to print. */
export function terminalSafe(text: string): string {
	return text.replace(UNSAFE, standIn);
}

/** Every string inside a value (arrays and plain objects, keys included) made safe to print. */
export function terminalSafeDeep<T>(value: T): T {
	if (typeof value === "string") return terminalSafe(value) as T;
	if (Array.isArray(value)) return value.map((v) => terminalSafeDeep(v)) as T;
	if (value !== null && typeof value === "object") {
		const out: Record<string, unknown> = {};
		for (const [k, v] of Object.entries(value)) out[terminalSafe(k)] = terminalSafeDeep(v);
		return out as T;
	}
	return value;
}
