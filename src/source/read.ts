/**
 * Filesystem side of the reader: stream the durable lines of a session file from a byte offset
 * in bounded chunks, fingerprint the indexed prefix, and re-read one line at a locator. Never
 * writes. Memory stays bounded: an oversized line is measured and skipped, never buffered whole.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { hashBytes } from "./hash.ts";
import { type FramedLine, frameLines } from "./jsonl.ts";
import { MAX_LINE_BYTES } from "./session-parser.ts";

const CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * The read buffer of the last file, reused by the next (each thread has its own). A fresh buffer
 * per file was fresh memory for every byte read: a cold index's worker took about 130,000 page
 * faults (of 730,000 in all) in the kernel's copy into new read buffers. Lines handed to
 * `onLines` are views into it, consumed before the next read (jsonl.ts: copy before keeping).
 */
let spareBuffer: Buffer | null = null;

/** A read buffer of `bytes`: the spare one when it is large enough. Never from Buffer's shared pool, since it may be kept. */
function readBuffer(bytes: number): Buffer {
	const spare = spareBuffer;
	spareBuffer = null;
	return spare !== null && spare.length >= bytes ? spare.subarray(0, bytes) : Buffer.allocUnsafeSlow(bytes);
}

/** Keep a read buffer (all of its memory) for the next file, unless it grew past the chunk size for a long line. */
function keepBuffer(buf: Buffer): void {
	if (buf.byteOffset !== 0 || buf.buffer.byteLength > CHUNK_BYTES) return;
	if (spareBuffer === null || spareBuffer.length < buf.buffer.byteLength) spareBuffer = Buffer.from(buf.buffer);
}

/**
 * Non-blocking, never a controlling terminal: opening a FIFO (or a device) that was swapped in for
 * a session file after discovery returns at once instead of waiting forever for a writer.
 */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0);

/**
 * Open a session file for reading without ever blocking, and check what was actually opened: a
 * path checked earlier may have been replaced since (discovery stats, then we open). Anything but
 * a regular file is closed again and refused with code EFTYPE.
 */
export function openRegularFile(path: string): number {
	const fd = openSync(path, OPEN_FLAGS);
	let regular = false;
	try {
		regular = fstatSync(fd).isFile();
	} finally {
		if (!regular) closeSync(fd);
	}
	if (!regular) throw Object.assign(new Error(`${path} is not a regular file`), { code: "EFTYPE" });
	return fd;
}
/** Size of the head and tail windows whose hashes fingerprint the indexed prefix. */
const WINDOW_BYTES = 64 * 1024;

export interface FileStat {
	dev: number;
	ino: number;
	size: number;
	mtimeMs: number;
}

export interface DurableRead {
	/** Offset just past the last LF read (the durable end). */
	end: number;
	/** Physical line number of the next line. */
	nextLine: number;
	stat: FileStat;
}

/**
 * Read complete lines from `start` up to the size observed when the file was opened, handing
 * them to `onLines` chunk by chunk. Bytes after the last LF (a torn tail) are not returned.
 */
export function readDurableLines(path: string, start: number, firstLine: number, onLines: (lines: FramedLine[]) => void): DurableRead {
	const fd = openRegularFile(path);
	try {
		const st = fstatSync(fd);
		const stat: FileStat = { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
		const limit = st.size;
		let buf = readBuffer(Math.min(CHUNK_BYTES, Math.max(limit - start, 1)));
		let filled = 0; // bytes of buf holding data not yet framed
		let bufOffset = start; // file offset of buf[0]
		let readPos = start;
		let line = firstLine;
		let skipping: { offset: number; length: number } | null = null;
		while (readPos < limit) {
			if (filled === buf.length) {
				if (buf.length < MAX_LINE_BYTES + 1) {
					const bigger = Buffer.allocUnsafeSlow(Math.min(buf.length * 2, MAX_LINE_BYTES + 1));
					buf.copy(bigger, 0, 0, filled);
					buf = bigger;
				} else {
					// No LF within the maximum line size: measure the rest of this line without keeping it.
					skipping = { offset: bufOffset, length: filled };
					filled = 0;
				}
			}
			const n = readSync(fd, buf, filled, Math.min(buf.length - filled, limit - readPos), readPos);
			if (n <= 0) break;
			readPos += n;
			if (skipping) {
				const nl = buf.subarray(0, n).indexOf(0x0a);
				if (nl < 0) {
					skipping.length += n;
					bufOffset += n;
					continue;
				}
				skipping.length += nl;
				onLines([{ offset: skipping.offset, length: skipping.length, line, bytes: new Uint8Array(0) }]);
				line++;
				skipping = null;
				buf.copy(buf, 0, nl + 1, n);
				bufOffset = readPos - (n - nl - 1);
				filled = n - nl - 1;
			} else {
				filled += n;
			}
			const { lines, consumed } = frameLines(buf.subarray(0, filled), bufOffset, line);
			if (lines.length > 0) {
				onLines(lines);
				line += lines.length;
				buf.copy(buf, 0, consumed, filled);
				filled -= consumed;
				bufOffset += consumed;
			}
		}
		// An unfinished oversized line stays a torn tail like any other.
		const end = skipping ? skipping.offset : bufOffset;
		keepBuffer(buf);
		return { end, nextLine: line, stat };
	} finally {
		closeSync(fd);
	}
}

interface PrefixFingerprint {
	head: string;
	tail: string;
}

/**
 * Hashes of the first and last WINDOW_BYTES of the prefix [0, end). Together with size and
 * inode they detect pi's whole-file rewrites (migration), oh-my-pi's in-place title slot
 * rewrite (bytes 0-255) and truncation, without rereading a 50 MB session on every append.
 */
export function fingerprintPrefix(path: string, end: number): PrefixFingerprint {
	const fd = openRegularFile(path);
	try {
		return fingerprintFd(fd, end);
	} finally {
		closeSync(fd);
	}
}

function fingerprintFd(fd: number, end: number): PrefixFingerprint {
	const headLen = Math.min(WINDOW_BYTES, end);
	const head = Buffer.allocUnsafe(headLen);
	const gotHead = headLen > 0 ? readSync(fd, head, 0, headLen, 0) : 0;
	const tailStart = Math.max(0, end - WINDOW_BYTES);
	const tailLen = end - tailStart;
	const tail = Buffer.allocUnsafe(tailLen);
	const gotTail = tailLen > 0 ? readSync(fd, tail, 0, tailLen, tailStart) : 0;
	return { head: hashBytes(head.subarray(0, gotHead)), tail: hashBytes(tail.subarray(0, gotTail)) };
}

/** Re-read the bytes of one line at its locator (exact reads go back to the source). */
export function readLineAt(path: string, offset: number, length: number): Uint8Array {
	const fd = openRegularFile(path);
	try {
		return readAt(fd, offset, length);
	} finally {
		closeSync(fd);
	}
}

function readAt(fd: number, offset: number, length: number): Uint8Array {
	const buf = Buffer.allocUnsafe(length);
	const got = length > 0 ? readSync(fd, buf, 0, length, offset) : 0;
	return buf.subarray(0, got);
}

/**
 * Session files kept open for the reads of one answer (a search reads up to about 30 lines, often
 * several from one session): each file is opened and checked once, not once per line. Close it
 * when the answer is done.
 */
export class SourceFiles {
	private readonly open = new Map<string, number>();

	readLineAt(path: string, offset: number, length: number): Uint8Array {
		let fd = this.open.get(path);
		if (fd === undefined) {
			fd = openRegularFile(path);
			this.open.set(path, fd);
		}
		return readAt(fd, offset, length);
	}

	close(): void {
		for (const fd of this.open.values()) closeSync(fd);
		this.open.clear();
	}
}

/** The first `bytes` bytes of a file (fewer when it is shorter). */
export function readHead(path: string, bytes: number): Uint8Array {
	const fd = openRegularFile(path);
	try {
		const buf = Buffer.allocUnsafe(bytes);
		const got = readSync(fd, buf, 0, bytes, 0);
		return buf.subarray(0, got);
	} finally {
		closeSync(fd);
	}
}
