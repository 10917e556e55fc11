/**
 * Test harness for the MCP server: the compiled `pi-events` binary (built once per test file, or
 * $PI_EVENTS_BIN when it points at one), and a raw LF-framed JSON-RPC client over a spawned
 * `pi-events serve --stdio`, for frames the official SDK cannot send (modern era, garbage,
 * oversized frames, bursts).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, ROOT } from "../helpers/temp.ts";

/** Build (or reuse) the compiled binary; returns its absolute path. */
export function compiledBinary(): string {
	const given = process.env.PI_EVENTS_BIN;
	if (given && existsSync(given)) return given;
	const out = join(makeTempDir("pi-events-bin-"), "pi-events");
	// The same build as the shipped binary (build.ts), into a temp dir.
	const proc = Bun.spawnSync([process.execPath, join(ROOT, "build.ts"), out], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
	if (proc.exitCode !== 0 || !existsSync(out)) {
		throw new Error(`bun build --compile failed (${proc.exitCode}):\n${proc.stdout.toString()}\n${proc.stderr.toString()}`);
	}
	return out;
}

export type Frame = { jsonrpc: "2.0"; id?: string | number | null; result?: any; error?: { code: number; message: string; data?: unknown } };

/** A `serve --stdio` child driven with hand-written frames. */
export class RawServer {
	readonly proc: ReturnType<typeof Bun.spawn>;
	private buffer = new Uint8Array(0);
	private readonly frames: Frame[] = [];
	private waiters: (() => void)[] = [];
	private nextId = 1000;
	stderr = "";
	stdoutNonJson: string[] = [];
	/** Set once the server's stdout has ended. */
	closed = false;

	/** `options.command` replaces `bin serve --stdio args` (e.g. `bun src/main.ts serve ...`). */
	constructor(bin: string, env: Record<string, string>, args: string[] = [], options: { command?: string[]; cwd?: string } = {}) {
		const proc = Bun.spawn(options.command ?? [bin, "serve", "--stdio", ...args], { env, cwd: options.cwd, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
		this.proc = proc;
		void this.pump();
		void (async () => {
			for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) this.stderr += new TextDecoder().decode(chunk);
		})();
	}

	private async pump(): Promise<void> {
		for await (const chunk of this.proc.stdout as ReadableStream<Uint8Array>) {
			const merged = new Uint8Array(this.buffer.length + chunk.length);
			merged.set(this.buffer);
			merged.set(chunk, this.buffer.length);
			let start = 0;
			for (;;) {
				const nl = merged.indexOf(0x0a, start);
				if (nl < 0) break;
				const text = new TextDecoder().decode(merged.subarray(start, nl));
				start = nl + 1;
				try {
					this.frames.push(JSON.parse(text) as Frame);
				} catch {
					this.stdoutNonJson.push(text);
				}
			}
			this.buffer = merged.slice(start);
			for (const w of this.waiters.splice(0)) w();
		}
		this.closed = true;
		for (const w of this.waiters.splice(0)) w();
	}

	/** Write raw bytes/text to the server's stdin. */
	write(data: string | Uint8Array): void {
		const stdin = this.proc.stdin as import("bun").FileSink;
		stdin.write(data);
		stdin.flush();
	}

	send(message: unknown): void {
		this.write(`${JSON.stringify(message)}\n`);
	}

	/** Wait for (and remove) the first frame matching `pred`. */
	async take(pred: (f: Frame) => boolean, timeoutMs = 10_000): Promise<Frame> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const i = this.frames.findIndex(pred);
			if (i >= 0) return this.frames.splice(i, 1)[0]!;
			const left = deadline - Date.now();
			if (left <= 0 || this.closed) throw new Error(`no matching frame within ${timeoutMs} ms (closed: ${this.closed}); stderr:\n${this.stderr}`);
			await new Promise<void>((resolve) => {
				const t = setTimeout(resolve, left);
				this.waiters.push(() => {
					clearTimeout(t);
					resolve();
				});
			});
		}
	}

	/** Send a request and wait for its response. */
	async request(method: string, params?: Record<string, unknown>, id: string | number = this.nextId++, timeoutMs = 10_000): Promise<Frame> {
		this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
		return this.take((f) => f.id === id, timeoutMs);
	}

	/** Frames received and not yet taken. */
	unclaimed(): Frame[] {
		return [...this.frames];
	}

	async initialize(): Promise<Frame> {
		const res = await this.request("initialize", {
			protocolVersion: "2025-11-25",
			capabilities: {},
			clientInfo: { name: "raw-test", version: "0.0.0" },
		});
		this.send({ jsonrpc: "2.0", method: "notifications/initialized" });
		return res;
	}

	closeStdin(): void {
		(this.proc.stdin as import("bun").FileSink).end();
	}

	kill(): void {
		try {
			this.proc.kill();
		} catch {
			// already exited
		}
	}
}

export const MODERN = "2026-07-28";

/** `_meta` of a modern-era (2026-07-28) request, optionally with the pi-events caller. */
export function modernMeta(caller?: Record<string, unknown>): Record<string, unknown> {
	return {
		"io.modelcontextprotocol/protocolVersion": MODERN,
		"io.modelcontextprotocol/clientCapabilities": {},
		"io.modelcontextprotocol/clientInfo": { name: "raw-test", version: "0.0.0" },
		...(caller ? { "pi-events/caller": caller } : {}),
	};
}
