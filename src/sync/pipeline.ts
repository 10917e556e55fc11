/**
 * A cold index on two cores: a worker reads, parses and projects new session files (prepare.ts)
 * while this thread, the only SQLite writer, writes the ones before. The writer stays synchronous:
 * it blocks on the worker's port (Atomics.wait + receiveMessageOnPort). The worker stays at most
 * MAX_IN_FLIGHT bytes of source ahead (plus one 4 MB read chunk), which bounds the queue's memory.
 * If the worker cannot start or stops making progress, the files are indexed on this thread.
 */
import type { MessagePort, Worker } from "node:worker_threads";
import type { PreparedPart } from "./prepare.ts";
import { SLOT_COUNT, SLOT_IN_FLIGHT, SLOT_POSTED, SLOT_STOP } from "./pipeline-slots.ts";

/** Below this many bytes of new files, starting a worker costs more than it saves. */
export const PIPELINE_MIN_BYTES = 64 * 1024 * 1024;
/**
 * The writer stops taking parts while it commits a batch (FTS5 writes out and merges its postings:
 * hundreds of milliseconds in a 2-second batch); the worker fills this meanwhile, and the writer
 * finds parts waiting when it comes back. At 4 MB the writer then waited for the worker 2.1–2.4 s
 * of a 1 GB cold index, at 12 MB 0.1–0.2 s.
 */
const MAX_IN_FLIGHT = 12 * 1024 * 1024;
/** A worker that posts nothing for this long is taken for dead: the rest is indexed here. */
const SILENCE_MS = 20_000;

declare const PI_EVENTS_BUILD_TARGET: string | undefined;
/**
 * The compiled binary holds the worker as a second entrypoint (build.ts), addressed relative to
 * the common root of the entrypoints (src/); from source it is the file beside this one.
 */
const WORKER_SCRIPT = typeof PI_EVENTS_BUILD_TARGET === "string" ? "./sync/prepare-worker.ts" : new URL("./prepare-worker.ts", import.meta.url);

/**
 * node:worker_threads, loaded when a pipeline starts: loading it costs about 7 ms, more than a
 * whole search, and most processes never start a worker.
 */
function workerThreads(): typeof import("node:worker_threads") {
	return require("node:worker_threads") as typeof import("node:worker_threads");
}

export class PreparePipeline {
	private readonly worker: Worker;
	private readonly port: MessagePort;
	private readonly slots: Int32Array;
	private dead = false;
	private announced = false;
	/** A part received ahead of the file it belongs to (never happens while in step). */
	private pending: PreparedPart | null = null;
	/**
	 * The file whose last part (its end, or its failure) was handed out: nothing of it is left to
	 * skip. Waiting for more of it waited out SILENCE_MS when it was the worker's last file (a new
	 * file without a session header, read to its end and then indexed here).
	 */
	private finished: string | null = null;

	private constructor(
		paths: string[],
		private readonly debug?: (line: string) => void,
	) {
		const { MessageChannel, Worker } = workerThreads();
		const channel = new MessageChannel();
		this.port = channel.port1;
		this.slots = new Int32Array(new SharedArrayBuffer(SLOT_COUNT * 4));
		this.worker = new Worker(WORKER_SCRIPT, {
			workerData: { paths, port: channel.port2, slots: this.slots, maxInFlight: MAX_IN_FLIGHT },
			transferList: [channel.port2],
		});
		this.worker.unref();
	}

	/** A pipeline over `paths` (prepared in this order), or null when no worker can start. */
	static start(paths: string[], debug?: (line: string) => void): PreparePipeline | null {
		try {
			return new PreparePipeline(paths, debug);
		} catch (err) {
			debug?.(`cannot start the prepare worker: ${err instanceof Error ? err.message : String(err)}`);
			return null;
		}
	}

	/** The next part of `path`; null: the pipeline is out of use, index the file on this thread. */
	next(path: string): PreparedPart | null {
		const part = this.pending ?? this.receive();
		this.pending = null;
		if (part === null) return null;
		if (part.path === path) {
			if (part.kind !== "events") this.finished = path;
			return part;
		}
		this.debug?.(`the prepare worker is out of step (${part.path} for ${path}): indexing the rest on the main thread`);
		this.close(); // out of step: never use a part prepared for another path
		return null;
	}

	/** Drop what is left of `path` (its file was indexed another way). */
	skip(path: string): void {
		if (this.finished === path) return;
		for (;;) {
			const part = this.pending ?? this.receive();
			this.pending = null;
			if (part === null) return;
			if (part.path !== path) {
				this.pending = part;
				return;
			}
			if (part.kind !== "events") return;
		}
	}

	private receive(): PreparedPart | null {
		if (this.dead) return null;
		const since = performance.now();
		for (;;) {
			const received = workerThreads().receiveMessageOnPort(this.port);
			if (received) {
				const part = received.message as PreparedPart;
				if (!this.announced) {
					this.announced = true;
					this.debug?.("the prepare worker is running");
				}
				Atomics.sub(this.slots, SLOT_IN_FLIGHT, part.bytes);
				Atomics.notify(this.slots, SLOT_IN_FLIGHT);
				return part;
			}
			if (performance.now() - since > SILENCE_MS) {
				this.debug?.(`the prepare worker posted nothing for ${SILENCE_MS} ms: indexing the rest on the main thread`);
				this.close();
				return null;
			}
			Atomics.wait(this.slots, SLOT_POSTED, Atomics.load(this.slots, SLOT_POSTED), 50);
		}
	}

	close(): void {
		if (this.dead) return;
		this.dead = true;
		Atomics.store(this.slots, SLOT_STOP, 1);
		Atomics.notify(this.slots, SLOT_IN_FLIGHT);
		this.port.close();
		void this.worker.terminate();
	}
}
