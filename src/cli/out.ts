/**
 * Output of the command-line shell, written straight to file descriptors 1 and 2. Creating
 * `process.stdout` or `process.stderr` loads Node's stream modules: about 9 ms of a process whose
 * whole search takes 20 (measured with bun 1.4.4: the first `process.stdout.write` 9–15 ms,
 * `writeSync(1, …)` 0.15 ms). A command writes each text whole and synchronously; `serve` keeps
 * the streams (one process, many frames).
 */
import { fstatSync, statSync, writeSync } from "node:fs";

/** Where a command's output goes instead of this process's descriptors (cli/invocation.ts). */
export interface OutputTarget {
	write(fd: 1 | 2, text: string): void;
	isTerminal(fd: 1 | 2): boolean;
}

let redirected: OutputTarget | null = null;

/** Send output to `target` until the returned function is called. */
export function redirectOutput(target: OutputTarget): () => void {
	const before = redirected;
	redirected = target;
	return () => {
		redirected = before;
	};
}

/** Data: results, JSON, usage. */
export function writeOut(text: string): void {
	if (redirected) redirected.write(1, text);
	else writeAll(1, text);
}

/** Diagnostics. */
export function writeErr(text: string): void {
	if (redirected) redirected.write(2, text);
	else writeAll(2, text);
}

function writeAll(fd: number, text: string): void {
	const bytes = Buffer.from(text, "utf8");
	let offset = 0;
	while (offset < bytes.length) {
		try {
			offset += writeSync(fd, bytes, offset);
		} catch (err) {
			const code = (err as NodeJS.ErrnoException).code;
			// A non-blocking pipe that is full: wait for the reader.
			if (code === "EAGAIN") Bun.sleepSync(1);
			// The reader went away (`pi-events search … | head -1`): nothing more to say.
			else if (code === "EPIPE") return;
			else throw err;
		}
	}
}

/**
 * Whether the descriptor is a terminal (colours, progress): a character device other than
 * /dev/null. Asking `process.stdout.isTTY` would create the stream.
 */
export function isTerminal(fd: 1 | 2): boolean {
	if (redirected) return redirected.isTerminal(fd);
	try {
		const st = fstatSync(fd);
		return st.isCharacterDevice() && st.rdev !== statSync("/dev/null").rdev;
	} catch {
		return false;
	}
}
