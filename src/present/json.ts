/**
 * JSON for stdout and MCP frames that every consumer accepts: well-formed UTF-8 only. Session text
 * may hold lone UTF-16 surrogates (a `\ud800` escape in a JSONL line parses into one); JSON.stringify
 * writes them as `\udXXX` escapes, which jq and strict parsers reject, so each becomes U+FFFD.
 * Raw DEL and C1 controls (valid in JSON, but a C1 CSI reaches a terminal that `cat`s the output)
 * are written as `\u00XX` escapes: the exact text, escaped.
 */

/** A `\uD800`–`\uDFFF` escape preceded by an even number of backslashes (a real escape, not `\\u…` text). */
const LONE_SURROGATE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g;
const RAW_C1 = /[\u007f-\u009f]/g;

export function toJson(value: unknown, indent?: number): string {
	return JSON.stringify(value, null, indent)
		.replace(LONE_SURROGATE_ESCAPE, "$1\\ufffd")
		.replace(RAW_C1, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
