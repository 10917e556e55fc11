/**
 * Helpers shared by the hostile suites: a CLI child with a hard timeout and its peak RSS, a
 * chunked writer for very large session lines, and JSONL builders.
 */
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type AgentLayout, isolatedEnv, MAIN } from "../helpers/temp.ts";

export const LONG = process.env.PI_EVENTS_HOSTILE_LONG === "1";

export interface ChildResult {
	exitCode: number | null;
	signalCode: string | null;
	stdout: string;
	stderr: string;
	/** Peak resident set size of the child, in bytes. */
	maxRSS: number;
	ms: number;
	timedOut: boolean;
	json<T = any>(): T;
}

/**
 * Run `bun src/main.ts ...args` (or the compiled binary `opts.bin`) in the layout's isolated environment (never the real ~/.pi),
 * killed after `timeoutMs`. Returns its output, exit status and peak RSS.
 */
export async function runChild(
	layout: AgentLayout,
	args: string[],
	opts: { timeoutMs?: number; env?: Record<string, string>; cwd?: string; stdin?: string | Uint8Array; bin?: string } = {},
): Promise<ChildResult> {
	const env = isolatedEnv(layout, opts.env);
	if (!env.HOME?.startsWith(tmpdir()) || !env.PI_CODING_AGENT_DIR?.startsWith(tmpdir()) || !env.XDG_CACHE_HOME?.startsWith(tmpdir())) {
		throw new Error("refusing to run the CLI outside a temp HOME / agent dir");
	}
	// GNU time reports the child's own peak RSS (wait4); Bun's resourceUsage() is the maximum over
	// every child this test process ever waited for (the binary build included), so only a fallback.
	const rssFile = existsSync(GNU_TIME) ? join(mkdtempSync(join(tmpdir(), "pi-events-rss-")), "rss") : null;
	const command = opts.bin ? [opts.bin, ...args] : [process.execPath, MAIN, ...args];
	const started = performance.now();
	const proc = Bun.spawn(rssFile ? [GNU_TIME, "-f", "%M", "-o", rssFile, ...command] : command, {
		cwd: opts.cwd ?? layout.root,
		env,
		stdin: opts.stdin === undefined ? "ignore" : "pipe",
		stdout: "pipe",
		stderr: "pipe",
	});
	if (opts.stdin !== undefined) {
		const sink = proc.stdin as import("bun").FileSink;
		sink.write(opts.stdin);
		await sink.end();
	}
	let timedOut = false;
	const timer = setTimeout(() => {
		timedOut = true;
		proc.kill("SIGKILL");
	}, opts.timeoutMs ?? 60_000);
	const [stdout, stderr] = await Promise.all([new Response(proc.stdout as ReadableStream).text(), new Response(proc.stderr as ReadableStream).text()]);
	await proc.exited;
	clearTimeout(timer);
	const ms = performance.now() - started;
	return {
		exitCode: proc.exitCode,
		signalCode: proc.signalCode === null ? null : String(proc.signalCode),
		stdout,
		stderr,
		maxRSS: peakRssOf(rssFile) ?? proc.resourceUsage()?.maxRSS ?? 0,
		ms,
		timedOut,
		json<T>() {
			try {
				return JSON.parse(stdout) as T;
			} catch {
				throw new Error(`stdout is not JSON (exit ${proc.exitCode}):\n${stdout.slice(0, 2000)}\nstderr:\n${stderr.slice(0, 2000)}`);
			}
		},
	};
}

const GNU_TIME = "/usr/bin/time";

function peakRssOf(file: string | null): number | null {
	if (!file) return null;
	try {
		const kb = Number(readFileSync(file, "utf8").trim().split("\n").pop());
		rmSync(dirname(file), { recursive: true, force: true });
		return Number.isFinite(kb) && kb > 0 ? kb * 1024 : null;
	} catch {
		return null;
	}
}

export const MB = 1024 * 1024;

export function mb(bytes: number): string {
	return `${(bytes / MB).toFixed(1)} MB`;
}

/** Streams text to a file in chunks (never holds a whole 200 MB line in memory). */
export class ChunkedWriter {
	private readonly fd: number;
	bytes = 0;
	constructor(path: string) {
		mkdirSync(dirname(path), { recursive: true });
		this.fd = openSync(path, "w");
	}
	write(data: string | Uint8Array): this {
		const buf = typeof data === "string" ? Buffer.from(data) : data;
		let done = 0;
		while (done < buf.length) done += writeSync(this.fd, buf, done, buf.length - done);
		this.bytes += buf.length;
		return this;
	}
	line(value: unknown): this {
		return this.write(`${JSON.stringify(value)}\n`);
	}
	/** `count` bytes of `unit` repeated (written in ~4 MB chunks). */
	repeat(unit: string, count: number): this {
		const chunkUnits = Math.max(1, Math.floor((4 * MB) / unit.length));
		const chunk = Buffer.from(unit.repeat(chunkUnits));
		let left = count;
		while (left >= chunk.length) {
			this.write(chunk);
			left -= chunk.length;
		}
		if (left > 0) this.write(chunk.subarray(0, left));
		return this;
	}
	close(): void {
		closeSync(this.fd);
	}
}

export function header(id: string, cwd: string | undefined = "/work/demo/app", extra: Record<string, unknown> = {}): Record<string, unknown> {
	return { type: "session", version: 3, id, timestamp: "2026-10-01T10:00:00.000Z", ...(cwd === undefined ? {} : { cwd }), ...extra };
}

export function user(id: string, parentId: string | null, text: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
	return {
		type: "message",
		id,
		parentId,
		timestamp: "2026-10-01T10:00:05.000Z",
		message: { role: "user", content: typeof text === "string" ? [{ type: "text", text }] : text },
		...extra,
	};
}

export function jsonl(records: unknown[]): string {
	return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}
