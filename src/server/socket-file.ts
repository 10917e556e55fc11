/**
 * The resident server's socket file beside the index: bound at a fresh name and linked into place
 * (so no server removes or takes another's), a stale one left by a dead server cleared, and removed
 * only while it is this server's.
 */
import { randomUUID } from "node:crypto";
import { lstatSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { PiEventsError } from "../errors.ts";

/** Which file is at `path` now (device and inode), or "" when none. */
export function fileIdentity(path: string, stat: (path: string) => { dev: number; ino: number } = statSync): string {
	try {
		const st = stat(path);
		return `${st.dev}:${st.ino}`;
	} catch {
		return "";
	}
}

/**
 * A socket file left by a server that stopped without removing it is removed; one where a server
 * still answers is refused (one server per index); anything that is not a socket is never touched.
 */
export async function clearStaleSocket(path: string): Promise<void> {
	let isSocket: boolean;
	try {
		isSocket = lstatSync(path).isSocket();
	} catch {
		return;
	}
	if (!isSocket) throw new PiEventsError("E_USAGE", `cannot listen at ${path}: it exists and is not a socket`);
	if (await answers(path)) throw new PiEventsError("E_USAGE", `a pi-events server already listens at ${path}`);
	removeSocket(path);
}

/**
 * A listener bound at a fresh name beside `socketPath`, no longer than its name (a socket path has
 * a length limit), for the caller to link into place. Never bound at `socketPath` itself: Bun's
 * `stop` removes the path it bound, and by then it may name the socket of a server that replaced
 * this one (one started after this one stopped answering, its socket removed by hand); only the
 * fresh name, long gone, is removed that way.
 */
export function listenAtFreshName<T>(socketPath: string, handlers: Parameters<typeof Bun.listen<T>>[0]["socket"]): [ReturnType<typeof Bun.listen<T>>, string] {
	const length = Math.min(basename(socketPath).length - 1, 24);
	for (let attempt = 1; ; attempt++) {
		const path = join(dirname(socketPath), `.${randomUUID().replace(/-/g, "").slice(0, length)}`);
		try {
			return [Bun.listen<T>({ unix: path, socket: handlers }), path];
		} catch (err) {
			// A name that happens to be taken: another.
			if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt >= 5) throw err;
		}
	}
}

/** Whether a server accepts connections at `path`. */
export function answers(path: string): Promise<boolean> {
	return new Promise((resolve) => {
		Bun.connect({
			unix: path,
			socket: {
				open(s) {
					s.end();
					resolve(true);
				},
				data() {},
				connectError() {
					resolve(false);
				},
				error() {
					resolve(false);
				},
			},
		}).catch(() => resolve(false));
	});
}

export function removeSocket(path: string): void {
	try {
		if (lstatSync(path).isSocket()) unlinkSync(path);
	} catch {
		// Already gone.
	}
}
