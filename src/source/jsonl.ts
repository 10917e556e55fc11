/**
 * Pure LF-only JSONL framing over bytes. Never touches the filesystem; callers supply bytes.
 *
 * Only LF (0x0A) ends a record: U+2028/U+2029 are legal inside JSON strings and must not split
 * (Node readline would). A trailing CR is stripped when decoding. Bytes after the last LF are a
 * torn tail: not durable yet, so they are never returned as a record.
 */

export interface FramedLine {
	/** Byte offset of the line's first byte in the file. */
	offset: number;
	/** Byte length without the LF (a trailing CR, if any, is included). */
	length: number;
	/** 1-based physical line number. */
	line: number;
	/** The line bytes (a view into the caller's buffer; copy before keeping). */
	bytes: Uint8Array;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Split `buf` (which starts at file offset `baseOffset`, physical line `firstLine`) into complete
 * lines. Returns the lines and `consumed`, the number of bytes up to and including the last LF.
 */
export function frameLines(buf: Uint8Array, baseOffset: number, firstLine: number): { lines: FramedLine[]; consumed: number } {
	const lines: FramedLine[] = [];
	let start = 0;
	let line = firstLine;
	for (;;) {
		const nl = buf.indexOf(LF, start);
		if (nl < 0) break;
		lines.push({ offset: baseOffset + start, length: nl - start, line, bytes: buf.subarray(start, nl) });
		line++;
		start = nl + 1;
	}
	return { lines, consumed: start };
}

const decoder = new TextDecoder("utf-8", { fatal: false });

/** Decode one line as UTF-8 (invalid sequences become U+FFFD), stripping one trailing CR. */
export function decodeLine(bytes: Uint8Array): string {
	const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
	return decoder.decode(bytes.subarray(0, end));
}

/** True when the line holds only spaces, tabs or a CR: such lines are skipped without a diagnostic. */
export function isBlankLine(bytes: Uint8Array): boolean {
	for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== CR) return false;
	return true;
}
