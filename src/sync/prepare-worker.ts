/**
 * The worker of a pipelined cold index (pipeline.ts): prepares the files it was given, in order,
 * posting each part and waiting while the writer is more than the bound behind.
 */
import { type MessagePort, workerData } from "node:worker_threads";
import { WordForms } from "../project/stem.ts";
import { type PreparedPart, prepareFile } from "./prepare.ts";
import { SLOT_IN_FLIGHT, SLOT_POSTED, SLOT_STOP } from "./pipeline-slots.ts";
import { compileForLongWork } from "../jit.ts";

const { paths, port, slots, maxInFlight } = workerData as { paths: string[]; port: MessagePort; slots: Int32Array; maxInFlight: number };
const stopped = () => Atomics.load(slots, SLOT_STOP) !== 0;

function send(part: PreparedPart): void {
	let collected = false;
	for (;;) {
		if (stopped()) throw new Stopped();
		const inFlight = Atomics.load(slots, SLOT_IN_FLIGHT);
		if (inFlight < maxInFlight) break;
		// The writer is behind: collect the parts already posted while waiting for it (peak RSS).
		if (!collected) {
			Bun.gc(false);
			collected = true;
		}
		Atomics.wait(slots, SLOT_IN_FLIGHT, inFlight, 100);
	}
	Atomics.add(slots, SLOT_IN_FLIGHT, part.bytes);
	port.postMessage(part);
	Atomics.add(slots, SLOT_POSTED, 1);
	Atomics.notify(slots, SLOT_POSTED);
}

class Stopped extends Error {}

/**
 * A full collection after every so many bytes of source. The worker has time to spare (the writer
 * is the slower thread), so collecting often costs the cold index nothing and keeps its heap, and
 * the process's peak RSS, small: 1 GB cold index, every 32 MB → 8 MB: peak RSS 275 → 246 MB.
 */
const COLLECT_EVERY_BYTES = 8 * 1024 * 1024;

// A worker starts only for a large batch of new files (pipeline.ts): compile from the start.
compileForLongWork();
const wordForms = new WordForms();
try {
	let sinceCollect = 0;
	for (const path of paths) {
		prepareFile(
			path,
			(part) => {
				sinceCollect += part.bytes;
				send(part);
				// This thread's garbage (read buffers, parsed lines) is not collected often enough by
				// itself. Within a file too: collected only between files, a 52 MB session's garbage
				// piled up until its end (peak RSS of a 1 GB cold index 282–302 → 225–230 MB).
				if (sinceCollect >= COLLECT_EVERY_BYTES) {
					Bun.gc(true);
					sinceCollect = 0;
				}
			},
			wordForms,
		);
	}
} catch (err) {
	if (!(err instanceof Stopped)) throw err;
}
port.close();
