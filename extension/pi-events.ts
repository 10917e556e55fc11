/**
 * pi-events extension for the pi coding agent (pi 0.73 and 1.x).
 *
 * Registers `event_search`, `event_read`, `event_trace` and `event_sessions`, which let the model search the
 * workspace's earlier pi sessions. The work is done by ONE `pi-events serve --stdio` child per pi
 * process (an MCP server speaking newline-delimited JSON-RPC), started lazily on the first call,
 * respawned on the next call if it dies, synced after every turn and killed on session shutdown.
 *
 * Install: the npm package `pi-events` (this file plus the binary in @pi-events/<os>-<arch>), this
 * repository or the extension/ folder as a pi package, or this file alone in
 * `~/.pi/agent/extensions/`. Configuration (environment):
 *   PI_EVENTS_BIN         the pi-events binary (default: the installed platform package
 *                         @pi-events/<os>-<arch>[-musl] next to this file, else `pi-events` on PATH)
 *   PI_EVENTS_ARGS        extra `serve` arguments, e.g. `--index /x/index.db --sessions-dir /y`
 *                         (whitespace-separated, or a JSON array of strings)
 *   PI_EVENTS_TIMEOUT_MS  per-call timeout (default 30000)
 *
 * The caller's context (cwd, session id and file, tool call id) travels in the request
 * `_meta["pi-events/caller"]`, never in tool arguments: the server scopes every call to the
 * caller's workspace and hides the calling session (except, when it is named explicitly, the
 * part before this tool call).
 *
 * For the person at the keyboard: the tool rows render in pi's style (one line each, the hits or the
 * read/trace view on pi's expand key; the model's content is untouched), `/events QUERY` searches
 * as it is typed through the same server and puts a hit's reference or text into the editor, and
 * `/events status` says the root, the index and why the tools may be inactive. No model is called.
 *
 * The server also gets pi's session directory (`--sessions-dir`) when pi writes sessions outside
 * its default tree (`pi --session-dir DIR`), so that history is searchable too. A second copy of
 * this extension (installed twice) stays inactive and says so, instead of a tool-name conflict.
 *
 * Only `typebox` is imported at runtime (besides node: modules); the pi imports are types (pi aliases both the
 * `@earendil-works` and `@mariozechner` scopes, and `typebox`, to its bundled copies).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, relative, resolve, isAbsolute } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

// ---------------------------------------------------------------------------------------------
// Parameter schemas (mirror src/server/tools.ts; test/server/mcp.test.ts checks they agree)
// ---------------------------------------------------------------------------------------------

const SEMANTIC_KINDS = [
	"user.text",
	"assistant.text",
	"tool.call",
	"tool.result",
	"bash.command",
	"bash.output",
	"summary.compaction",
	"summary.branch",
	"custom.message",
	"session.name",
] as const;
const BRANCH_STATES = ["selected", "alternate", "unknown"] as const;
const SELECTION_STATES = ["direct", "summarized", "not-selected", "not-applicable", "unknown"] as const;
const TOOL_MAX_LIMIT = 50;
const MAX_WINDOW = 20_000;
const MAX_NEIGHBOURS = 20;

/** A plain `{type:"string", enum}` schema (like pi-ai's StringEnum; providers dislike anyOf/const). */
function stringEnum<T extends readonly string[]>(values: T, description?: string) {
	return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...(description ? { description } : {}) });
}

const idString = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });
const stringList = (description: string) => Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 20, description }));

export const SearchParams = Type.Object(
	{
		query: Type.Optional(
			Type.String({
				maxLength: 2000,
				description:
					'Words and "quoted phrases" that must all appear. Code-shaped text works as typed: file paths, error codes, identifiers, commands with flags. No operators: AND/OR/NOT/*/: are plain text. May be empty (or left out) when a filter narrows the search (kinds, roles, tools, isError, branchStates, selectionStates, files, sessionId, since, until, eventTypes): then the newest matching events come first.',
			}),
		),
		limit: Type.Optional(Type.Integer({ minimum: 1, maximum: TOOL_MAX_LIMIT, description: "Maximum hits (default 10)" })),
		sessionId: Type.Optional(
			idString("Only this session. May be the current session: then only events before this tool call. A unique prefix of at least 8 characters also works."),
		),
		cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: "Only sessions started in this directory or below (within your workspace)" })),
		eventTypes: stringList("Entry types: message, compaction, branch_summary, custom_message, session_info, label, model_change, ..."),
		kinds: Type.Optional(Type.Array(stringEnum(SEMANTIC_KINDS), { description: "Semantic kinds of the matching text" })),
		roles: stringList("Message roles: user, assistant, toolResult, bashExecution, custom"),
		tools: stringList("Tool names: bash, read, edit, write, grep, ..."),
		since: Type.Optional(Type.String({ maxLength: 40, description: "Events at or after: ISO date/time, or relative like 30m, 12h, 7d, 2w" })),
		until: Type.Optional(Type.String({ maxLength: 40, description: "Events before: same forms as since" })),
		isError: Type.Optional(Type.Boolean({ description: "true: only failures (tool errors, non-zero exits, errored replies); false: only the rest" })),
		branchStates: Type.Optional(
			Type.Array(stringEnum(BRANCH_STATES), {
				description: "selected: on the conversation path that led to the latest entry; alternate: abandoned branches",
			}),
		),
		selectionStates: Type.Optional(
			Type.Array(stringEnum(SELECTION_STATES), {
				description: "direct: in the model context; summarized: replaced by a compaction summary; not-selected: off-path or removed",
			}),
		),
		files: stringList(
			"Only events that touched one of these paths or a path under them (read/edit/write calls, summary details); relative paths are relative to your workspace root",
		),
		sort: Type.Optional(stringEnum(["relevance", "newest", "oldest"] as const, "Hit order: relevance (default), newest or oldest first")),
		groupBy: Type.Optional(stringEnum(["session"] as const, "session: one hit per session (its best event; otherMatchingEvents counts the rest)")),
		exact: Type.Optional(Type.Boolean({ description: "Match words only as typed: no other word forms (crash does not find crashed); off by default" })),
		includeDerived: Type.Optional(
			Type.Boolean({
				description:
					"Also search pi-events' own echoes (earlier event_search/event_read/event_trace calls and results, `pi-events` shell runs); off by default",
			}),
		),
	},
	{ additionalProperties: false },
);

export const ReadParams = Type.Object(
	{
		sessionId: idString("Session id from a search hit. A unique prefix of at least 8 characters also works."),
		entryId: idString("Entry id from a search hit"),
		fragmentId: Type.Optional(idString("Fragment to read a window of, e.g. the hit's fragmentId (tool.result#0)")),
		offset: Type.Optional(Type.Integer({ minimum: 0, description: "Window start in characters (default 0)" })),
		length: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_WINDOW, description: "Window length in characters (default 4000)" })),
		order: Type.Optional(
			stringEnum(
				["append", "branch"] as const,
				"Neighbour order: append = file order; branch = the conversation path (parents before, selected children after)",
			),
		),
		before: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_NEIGHBOURS, description: "Neighbours before (default 0)" })),
		after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_NEIGHBOURS, description: "Neighbours after (default 0)" })),
		only: Type.Optional(
			stringEnum(
				["conversation"] as const,
				"conversation: count neighbours among user and assistant text, session names and summaries only (skip tool calls, results, model changes)",
			),
		),
		view: Type.Optional(
			stringEnum(
				["event", "turn"] as const,
				"turn: the whole turn holding the entry (its prompt to the next prompt, on its branch) as one transcript: texts in full, one line per tool call; event (default): this event only",
			),
		),
		maxBytes: Type.Optional(Type.Integer({ minimum: 2048, maximum: 100_000, description: "view turn: the transcript's budget in bytes (default 8192)" })),
		turns: Type.Optional(Type.Integer({ minimum: 0, maximum: 10, description: "view turn: also the next N turns of the same branch (default 0)" })),
	},
	{ additionalProperties: false },
);

export const SessionsParams = Type.Object(
	{
		since: Type.Optional(Type.String({ maxLength: 40, description: "Sessions active at or after: ISO date/time, or relative like 30m, 12h, 7d, 2w" })),
		until: Type.Optional(Type.String({ maxLength: 40, description: "Sessions begun before: same forms as since" })),
		limit: Type.Optional(Type.Integer({ minimum: 1, maximum: TOOL_MAX_LIMIT, description: "Maximum sessions (default 20)" })),
	},
	{ additionalProperties: false },
);

export const TraceParams = Type.Object(
	{
		sessionId: idString("Session id from a search hit. A unique prefix of at least 8 characters also works."),
		entryId: idString("Entry id from a search hit"),
	},
	{ additionalProperties: false },
);

// ---------------------------------------------------------------------------------------------
// MCP stdio client (legacy handshake, LF-framed JSON-RPC)
// ---------------------------------------------------------------------------------------------

const PROTOCOL_VERSION = "2025-11-25";
const CALLER_META = "pi-events/caller";
const SYNC_NOTIFICATION = "notifications/pi-events/sync";
const DEFAULT_TIMEOUT_MS = 30_000;
/** A server line longer than this is a broken server, not a result: the child is killed. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
const STDERR_TAIL_BYTES = 4096;
const EXTENSION_VERSION = "0.1.0";

export interface Caller {
	cwd: string;
	sessionId?: string;
	sessionFile?: string;
	toolCallId?: string;
}

export interface CallResult {
	text: string;
	structured: Record<string, unknown> | undefined;
}

interface Pending {
	resolve: (value: unknown) => void;
	reject: (err: Error) => void;
}

class RpcError extends Error {
	constructor(
		message: string,
		readonly code: number,
	) {
		super(message);
	}
}

export interface ServerCommand {
	bin: string;
	args: string[];
	/** Where the binary came from, for the error when it cannot run. */
	from: "PI_EVENTS_BIN" | "package" | "PATH";
}

/** This machine's platform packages, preferred first: @pi-events/<os>-<arch>[-musl]. */
function platformTargets(): string[] {
	const arch = process.arch === "x64" || process.arch === "arm64" ? process.arch : null;
	if (!arch) return [];
	if (process.platform === "darwin") return [`darwin-${arch}`];
	if (process.platform !== "linux") return [];
	// glibc's loader present: the glibc build first; otherwise (Alpine) the musl one.
	const glibc = existsSync("/lib64/ld-linux-x86-64.so.2") || existsSync("/lib/ld-linux-aarch64.so.1");
	return glibc ? [`linux-${arch}`, `linux-${arch}-musl`] : [`linux-${arch}-musl`, `linux-${arch}`];
}

/** The binary of the installed platform package, looked up like Node resolves packages: from `fromDir` up. */
export function packagedBinary(fromDir: string): string | null {
	const targets = platformTargets();
	for (let dir = fromDir; ; dir = dirname(dir)) {
		for (const target of targets) {
			const bin = join(dir, "node_modules", "@pi-events", target, "bin", "pi-events");
			try {
				accessSync(bin, constants.X_OK);
				return bin;
			} catch {
				// not here
			}
		}
		if (dirname(dir) === dir) return null;
	}
}

/** The directory of this file (where the package lookup starts), or null when unknown. */
function extensionDir(): string | null {
	try {
		return dirname(fileURLToPath(import.meta.url));
	} catch {
		return null;
	}
}

/**
 * The binary ($PI_EVENTS_BIN, the installed platform package, then PATH) and its arguments. The
 * server also listens for the command line (`--socket`): `pi-events search` run by pi's bash tool
 * or in a terminal is then answered by this resident process, without paying a new process's first
 * query. Not with PI_EVENTS_SERVER=off, nor when `socket` is false (a binary that predates the flag).
 */
export function serverCommand(env: NodeJS.ProcessEnv, extraSessionDir: string | null, fromDir: string | null = extensionDir(), socket = true): ServerCommand {
	const given = env.PI_EVENTS_BIN?.trim();
	const packaged = given ? null : fromDir ? packagedBinary(fromDir) : null;
	const raw = env.PI_EVENTS_ARGS?.trim() ?? "";
	let extra: string[] = [];
	if (raw.startsWith("[")) {
		try {
			const parsed = JSON.parse(raw) as unknown;
			if (Array.isArray(parsed)) extra = parsed.map(String);
		} catch {
			throw new Error("PI_EVENTS_ARGS looks like a JSON array but does not parse");
		}
	} else if (raw) {
		extra = raw.split(/\s+/);
	}
	const sessionArgs = extraSessionDir ? ["--sessions-dir", extraSessionDir] : [];
	return {
		bin: given || packaged || "pi-events",
		args: ["serve", "--stdio", ...(socket && env.PI_EVENTS_SERVER?.trim() !== "off" ? ["--socket"] : []), ...sessionArgs, ...extra],
		from: given ? "PI_EVENTS_BIN" : packaged ? "package" : "PATH",
	};
}

/** pi's agent dir, as pi resolves it ($PI_CODING_AGENT_DIR, else ~/.pi/agent). */
function agentDirOf(env: NodeJS.ProcessEnv): string {
	const dir = env.PI_CODING_AGENT_DIR?.trim();
	if (!dir) return join(homedir(), ".pi", "agent");
	if (dir === "~") return homedir();
	return resolve(dir.startsWith("~/") ? join(homedir(), dir.slice(2)) : dir);
}

/**
 * pi's session directory when it is not under pi's default tree (`pi --session-dir DIR`): the
 * server indexes the default tree anyway and needs to be told about any other.
 */
export function extraSessionDirOf(sessionDir: string | undefined, env: NodeJS.ProcessEnv): string | null {
	if (!sessionDir) return null;
	const dir = resolve(sessionDir);
	const rel = relative(join(agentDirOf(env), "sessions"), dir);
	const inside = rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
	return inside ? null : dir;
}

function formatMs(ms: number): string {
	return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

function timeoutOf(env: NodeJS.ProcessEnv): number {
	const n = Number(env.PI_EVENTS_TIMEOUT_MS);
	return Number.isFinite(n) && n > 0 ? n : DEFAULT_TIMEOUT_MS;
}

/** One running `pi-events serve --stdio` child. Dead once `closed` is set; make a new one then. */
export class ServerProcess {
	private readonly child: ChildProcess;
	private readonly pending = new Map<number, Pending>();
	private nextId = 1;
	private chunks: Buffer[] = [];
	private chunkBytes = 0;
	private stderrTail = "";
	private readonly ready: Promise<void>;
	closed: Error | null = null;
	initialized = false;
	/** It exited refusing `--socket` before its handshake: start the next one without it. */
	refusedSocket = false;

	constructor(
		readonly command: ServerCommand,
		private readonly timeoutMs: number,
	) {
		// Piped stdio, never inherited: pi's json/rpc modes own fd 1.
		this.child = spawn(command.bin, command.args, { stdio: ["pipe", "pipe", "pipe"], env: process.env, windowsHide: true });
		// An idle server must not keep pi alive; pending calls hold their own (ref'd) timers.
		this.child.unref();
		for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) {
			(stream as unknown as { unref?: () => void } | null)?.unref?.();
		}
		this.child.on("error", (err: NodeJS.ErrnoException) => {
			const hint =
				err.code === "ENOENT"
					? `pi-events binary not found (${command.bin}, from ${command.from}): install the pi-events package (its platform package brings the binary), put pi-events on PATH, or set PI_EVENTS_BIN`
					: `could not run ${command.bin}: ${err.message}`;
			this.close(new Error(hint));
		});
		// "close" (not "exit"): every answer already written to stdout has been read by then.
		this.child.on("close", (code, signal) => {
			const tail = this.stderrTail.trim();
			// A binary older than the flag stops at once with a usage error naming it.
			this.refusedSocket = !this.initialized && code === 2 && command.args.includes("--socket") && tail.includes("--socket");
			this.close(
				new Error(`pi-events server exited (${signal ? `signal ${signal}` : `code ${code}`})${tail ? `: ${tail.split("\n").slice(-3).join(" | ")}` : ""}`),
			);
		});
		this.child.stdin?.on("error", () => {
			// EPIPE after the child died; the close handler reports it.
		});
		this.child.stdout?.on("data", (chunk: Buffer) => this.onData(chunk));
		this.child.stderr?.on("data", (chunk: Buffer) => {
			this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL_BYTES);
		});
		this.ready = this.handshake();
		this.ready.catch((err: Error) => {
			// A server that cannot complete the handshake is useless: stop it so the next call respawns.
			this.close(err);
		});
	}

	private async handshake(): Promise<void> {
		const result = (await this.request(
			"initialize",
			{ protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "pi-events-extension", version: EXTENSION_VERSION } },
			undefined,
		)) as { protocolVersion?: unknown };
		if (typeof result?.protocolVersion !== "string") throw new Error("pi-events server sent an invalid initialize result");
		this.notify("notifications/initialized", {});
		this.initialized = true;
	}

	/** Call one tool; resolves with the text and structured content, rejects with a readable Error. */
	async callTool(name: string, args: Record<string, unknown>, caller: Caller, signal: AbortSignal | undefined): Promise<CallResult> {
		await this.ready;
		const result = (await this.request("tools/call", { name, arguments: args, _meta: { [CALLER_META]: caller } }, signal)) as {
			content?: { type?: string; text?: string }[];
			structuredContent?: Record<string, unknown>;
			isError?: boolean;
		};
		const text = (result?.content ?? [])
			.filter((c) => c?.type === "text" && typeof c.text === "string")
			.map((c) => c.text as string)
			.join("\n");
		if (result?.isError) throw new Error(text || `${name} failed`);
		return { text, structured: result?.structuredContent };
	}

	/** Ask the server to sync its index now (fire and forget). */
	sync(): void {
		if (this.initialized && !this.closed) this.notify(SYNC_NOTIFICATION, {});
	}

	kill(): void {
		this.close(new Error("pi-events server stopped"));
	}

	/** The child's process id (for diagnostics and tests). */
	get pid(): number | undefined {
		return this.child.pid;
	}

	private request(method: string, params: Record<string, unknown>, signal: AbortSignal | undefined): Promise<unknown> {
		if (this.closed) return Promise.reject(this.closed);
		if (signal?.aborted) return Promise.reject(new Error(`${method} aborted`));
		const id = this.nextId++;
		return new Promise<unknown>((resolve, reject) => {
			let timer: ReturnType<typeof setTimeout> | undefined;
			const onAbort = () => {
				finish();
				this.notify("notifications/cancelled", { requestId: id, reason: "aborted by pi" });
				reject(new Error(`pi-events ${method} aborted`));
			};
			const finish = () => {
				this.pending.delete(id);
				if (timer) clearTimeout(timer);
				signal?.removeEventListener("abort", onAbort);
			};
			this.pending.set(id, {
				resolve: (value) => {
					finish();
					resolve(value);
				},
				reject: (err) => {
					finish();
					reject(err);
				},
			});
			timer = setTimeout(() => {
				finish();
				const err = new Error(`pi-events ${method} timed out after ${formatMs(this.timeoutMs)}; the server was restarted, try again`);
				reject(err);
				// The server answers one frame at a time: one that is silent this long is wedged, and
				// every call queued behind it would time out too. The next call starts a fresh one.
				this.close(err);
			}, this.timeoutMs);
			signal?.addEventListener("abort", onAbort, { once: true });
			this.send({ jsonrpc: "2.0", id, method, params });
		});
	}

	private notify(method: string, params: Record<string, unknown>): void {
		this.send({ jsonrpc: "2.0", method, params });
	}

	private send(message: unknown): void {
		if (this.closed) return;
		const stdin = this.child.stdin;
		if (!stdin || stdin.destroyed || !stdin.writable) return;
		// JSON.stringify never emits a raw LF, so one message is one line.
		stdin.write(`${JSON.stringify(message)}\n`);
	}

	/** Split stdout on LF only (not readline: U+2028/CR are not separators in JSON-RPC over stdio). */
	private onData(chunk: Buffer): void {
		let start = 0;
		for (;;) {
			const nl = chunk.indexOf(0x0a, start);
			if (nl < 0) break;
			const part = chunk.subarray(start, nl);
			const line = this.chunks.length === 0 ? part : Buffer.concat([...this.chunks, part]);
			this.chunks = [];
			this.chunkBytes = 0;
			this.onLine(line.toString("utf8"));
			start = nl + 1;
		}
		if (start < chunk.length) {
			this.chunks.push(chunk.subarray(start));
			this.chunkBytes += chunk.length - start;
			if (this.chunkBytes > MAX_LINE_BYTES) this.close(new Error("pi-events server sent an oversized frame"));
		}
	}

	private onLine(line: string): void {
		if (line.trim() === "") return;
		let message: { id?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
		try {
			message = JSON.parse(line);
		} catch {
			return; // Not a protocol frame; the server logs to stderr, so this should not happen.
		}
		if (typeof message !== "object" || message === null || typeof message.id !== "number") return;
		const pending = this.pending.get(message.id);
		if (!pending) return; // Late answer to a cancelled or timed-out call.
		if (message.error) {
			const code = typeof message.error.code === "number" ? message.error.code : -32603;
			const text = typeof message.error.message === "string" ? message.error.message : "unknown error";
			pending.reject(new RpcError(`pi-events: ${text} (JSON-RPC ${code})`, code));
		} else {
			pending.resolve(message.result);
		}
	}

	private close(reason: Error): void {
		if (this.closed) return;
		this.closed = reason;
		for (const p of [...this.pending.values()]) p.reject(reason);
		this.pending.clear();
		try {
			this.child.stdin?.end();
		} catch {
			// already gone
		}
		if (this.child.exitCode === null && this.child.signalCode === null) {
			try {
				this.child.kill("SIGTERM");
			} catch {
				// already gone
			}
		}
	}
}

// One server per pi process, shared across extension reloads.
const GLOBAL_KEY = Symbol.for("pi-events/extension-server");
type Holder = { server: ServerProcess | null; noSocket?: boolean };
const holder: Holder = ((globalThis as Record<symbol, unknown>)[GLOBAL_KEY] as Holder | undefined) ?? { server: null };
(globalThis as Record<symbol, unknown>)[GLOBAL_KEY] = holder;
let exitHookInstalled = false;

/** The running server, started (or restarted, when pi's session directory changed) as needed. */
function server(extraSessionDir: string | null): ServerProcess {
	const command = serverCommand(process.env, extraSessionDir, undefined, holder.noSocket !== true);
	if (holder.server && !holder.server.closed && holder.server.command.args.join("\0") !== command.args.join("\0")) stopServer();
	if (!holder.server || holder.server.closed) {
		holder.server = new ServerProcess(command, timeoutOf(process.env));
		if (!exitHookInstalled) {
			exitHookInstalled = true;
			process.once("exit", () => holder.server?.kill());
		}
	}
	return holder.server;
}

function stopServer(): void {
	holder.server?.kill();
	holder.server = null;
}

// ---------------------------------------------------------------------------------------------
// The extension
// ---------------------------------------------------------------------------------------------

type ToolContext = {
	cwd: string;
	sessionManager: { getSessionId(): string; getSessionFile(): string | undefined; getSessionDir?(): string };
};

function callerOf(ctx: ToolContext, toolCallId: string): Caller {
	const caller: Caller = { cwd: ctx.cwd };
	const sessionId = ctx.sessionManager?.getSessionId?.();
	const sessionFile = ctx.sessionManager?.getSessionFile?.();
	if (sessionId) caller.sessionId = sessionId;
	if (sessionFile) caller.sessionFile = sessionFile;
	if (toolCallId) caller.toolCallId = toolCallId;
	return caller;
}

/** Drop undefined values (pi may pass optional parameters as undefined). */
function cleanArgs(params: unknown): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [k, v] of Object.entries((params ?? {}) as Record<string, unknown>)) if (v !== undefined) out[k] = v;
	return out;
}

/** One tool call through the running server (the model's tools and the person's `/events` alike). */
async function callServer(name: string, toolCallId: string, params: unknown, signal: AbortSignal | undefined, ctx: ToolContext): Promise<CallResult> {
	const extraDir = extraSessionDirOf(ctx.sessionManager?.getSessionDir?.(), process.env);
	const first = server(extraDir);
	try {
		return await first.callTool(name, cleanArgs(params), callerOf(ctx, toolCallId), signal);
	} catch (err) {
		if (!first.refusedSocket) throw err;
		// An older pi-events binary: it serves MCP alone, from now on.
		holder.noSocket = true;
		return await server(extraDir).callTool(name, cleanArgs(params), callerOf(ctx, toolCallId), signal);
	}
}

async function run(name: string, toolCallId: string, params: unknown, signal: AbortSignal | undefined, ctx: ToolContext) {
	const { text, structured } = await callServer(name, toolCallId, params, signal, ctx);
	return { content: [{ type: "text" as const, text }], details: structured ?? {} };
}

// ---------------------------------------------------------------------------------------------
// What the person sees: tool rows, `/events`, `/events status`
// ---------------------------------------------------------------------------------------------
// No pi-tui import: 0.73 aliases only `@mariozechner/pi-tui` and the npm package declares no such
// peer. A component is any `{ render(width): string[]; invalidate(): void }`; every line it returns
// must fit `width`, so lines are cut here with a width that never undercounts (see cellWidth).

/** The part of pi's Theme used here (the same in 0.73 and 1.x). */
type Theme = { fg(color: string, text: string): string; bold(text: string): string };
type Component = { render(width: number): string[]; invalidate(): void; handleInput?(data: string): void };
type KeyMatcher = { matches(data: string, keybinding: string): boolean };
type RenderContext = { isError?: boolean; expanded?: boolean; keyText?: (keybinding: "app.tools.expand") => string };

const ESCAPE = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/y;

/** Terminal cells of one code point, never less than pi-tui counts (a wider guess only cuts earlier). */
function cellWidth(cp: number): number {
	if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
	if (cp < 0x1100) return 1;
	// Punctuation, arrows, maths, box drawing and shapes used in the rows below: one cell.
	if ((cp >= 0x2000 && cp <= 0x22ff) || (cp >= 0x2500 && cp <= 0x25ff)) return 1;
	return 2;
}

/** Visible text without control characters (a preview may hold tabs, CRs or escapes). */
export function plain(text: string): string {
	return text.replace(/\t/g, "  ").replace(/[\x00-\x1f\x7f-\x9f]/g, " ");
}

/** `line` cut to `width` cells (styling kept, `…` where it was cut). */
export function fitWidth(line: string, width: number): string {
	if (width <= 0) return "";
	let cells = 0;
	let out = "";
	let i = 0;
	const cutAt = width - 1;
	let cut: string | null = null;
	while (i < line.length) {
		ESCAPE.lastIndex = i;
		const esc = ESCAPE.exec(line);
		if (esc) {
			out += esc[0];
			i += esc[0].length;
			continue;
		}
		const cp = line.codePointAt(i)!;
		const ch = String.fromCodePoint(cp);
		const w = cellWidth(cp);
		if (cut === null && cells + w > cutAt) cut = out;
		if (cells + w > width) return `${cut ?? out}\x1b[0m…`;
		cells += w;
		out += ch;
		i += ch.length;
	}
	return out;
}

/** A block of styled lines, each cut to the width it is rendered at. */
class Lines implements Component {
	constructor(private text: string) {}
	setText(text: string): void {
		this.text = text;
	}
	render(width: number): string[] {
		return this.text.split("\n").map((line) => fitWidth(line, width));
	}
	invalidate(): void {}
}

type Hit = {
	sessionId: string;
	entryId: string;
	fragmentId?: string;
	semanticKind?: string;
	toolName?: string | null;
	timestamp?: string | null;
	cwd?: string;
	snippet?: string;
	isError?: boolean | null;
	turn?: { prompt?: { entryId: string; preview: string } | null; outcome?: { entryId: string; preview: string } | null } | null;
};
type Freshness = { synced?: boolean; syncMs?: number; pendingFiles?: number; problems?: unknown[] };
type SessionRow = {
	sessionId: string;
	name?: string | null;
	cwd?: string;
	lastTimestamp?: string | null;
	entryCount?: number;
	firstUserMessage?: string | null;
};

const short = (id: string | undefined) => (id ?? "?").slice(0, 8);
/** `2026-11-10T09:00:26.646Z` → `2026-11-10 09:00` (UTC, as recorded). */
const when = (iso: string | null | undefined) => (iso ? iso.slice(0, 16).replace("T", " ") : "?");
const oneLine = (text: string | null | undefined) =>
	plain(text ?? "")
		.replace(/ {2,}/g, " ")
		.trim();
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function freshnessText(f: Freshness | undefined): string {
	if (!f) return "";
	if (f.synced === false) return `not synced${f.pendingFiles ? ` (${plural(f.pendingFiles, "file")} pending)` : ""}`;
	return typeof f.syncMs === "number" ? `synced ${formatMs(Math.round(f.syncMs))}` : "synced";
}

/** The filters of a search call in short form: `kind tool.result · since 7d · error`. */
export function filterSummary(args: Record<string, unknown>): string {
	const parts: string[] = [];
	for (const [key, value] of Object.entries(args)) {
		if (key === "query" || value === undefined) continue;
		const flag = flagOf(key);
		if (value === true) parts.push(flag);
		else if (value === false) parts.push(`no-${flag}`);
		else parts.push(`${flag} ${Array.isArray(value) ? value.join(",") : String(value)}`);
	}
	return parts.join(" · ");
}

function callLine(name: string, args: Record<string, unknown>, theme: Theme): string {
	const title = theme.fg("toolTitle", theme.bold(name));
	const a = args ?? {};
	let subject = "";
	if (name === "event_search") subject = typeof a.query === "string" && a.query ? theme.fg("accent", `"${oneLine(a.query)}"`) : "";
	else if (name === "event_read" || name === "event_trace") {
		subject = theme.fg("accent", `${short(a.sessionId as string)}/${a.entryId ?? "?"}`);
		const rest = { ...a };
		delete rest.sessionId;
		delete rest.entryId;
		const filters = filterSummary(rest);
		return `${title} ${subject}${filters ? theme.fg("muted", ` · ${filters}`) : ""}`;
	}
	const filters = filterSummary(a);
	return [title, subject, filters ? theme.fg("muted", filters) : ""].filter(Boolean).join(" ");
}

function expandHint(context: RenderContext, theme: Theme): string {
	const key = typeof context?.keyText === "function" ? context.keyText("app.tools.expand") : "";
	return theme.fg("dim", ` (${key || "ctrl+o"} to expand)`);
}

/** The hit rows of a search (selector and expanded tool row): head line, snippet, answer line. */
function hitLines(hit: Hit, theme: Theme, index?: number): string[] {
	const kind = hit.semanticKind ?? "event";
	const tool = hit.toolName ? ` ${hit.toolName}` : "";
	const head = `${index === undefined ? "" : `${index + 1}. `}${theme.fg(hit.isError ? "error" : "accent", `${kind}${tool}`)} ${theme.fg("muted", `${when(hit.timestamp)} · ${short(hit.sessionId)}/${hit.entryId}`)}`;
	const lines = [head, `   ${theme.fg("toolOutput", oneLine(hit.snippet))}`];
	const outcome = hit.turn?.outcome?.preview;
	if (outcome) lines.push(`   ${theme.fg("success", `→ ${oneLine(outcome)}`)}`);
	return lines;
}

function searchSummary(details: Record<string, unknown>, theme: Theme, firstLine: string): string {
	const hits = (details.hits as Hit[] | undefined) ?? [];
	const fresh = freshnessText(details.freshness as Freshness | undefined);
	if (hits.length === 0) return theme.fg("muted", [oneLine(firstLine) || "No hits", fresh].filter(Boolean).join(" · "));
	const sessions = new Set(hits.map((h) => h.sessionId)).size;
	const top = hits[0]!;
	return `${theme.fg("success", `${plural(hits.length, "hit")} in ${plural(sessions, "session")}`)}${theme.fg("muted", ` · top ${top.semanticKind ?? "event"} ${when(top.timestamp)}${fresh ? ` · ${fresh}` : ""}`)}`;
}

function resultSummary(name: string, details: Record<string, unknown>, theme: Theme, text: string): string {
	const firstLine = text.split("\n", 1)[0] ?? "";
	if (name === "event_search") return searchSummary(details, theme, firstLine);
	if (name === "event_sessions") {
		const sessions = (details.sessions as SessionRow[] | undefined) ?? [];
		const total = typeof details.total === "number" ? details.total : sessions.length;
		const latest = sessions[0];
		const fresh = freshnessText(details.freshness as Freshness | undefined);
		return `${theme.fg("success", `${sessions.length} of ${plural(total, "session")}`)}${theme.fg("muted", `${latest ? ` · latest ${when(latest.lastTimestamp)} "${oneLine(latest.name ?? latest.firstUserMessage).slice(0, 60)}"` : ""}${fresh ? ` · ${fresh}` : ""}`)}`;
	}
	if (details.view === "turn") {
		const turns = Array.isArray(details.turns) ? details.turns.length : 1;
		const bytes = typeof details.bytes === "number" ? `${details.bytes} of ${details.maxBytes ?? "?"} bytes` : "";
		return `${theme.fg("success", `turn transcript${turns > 1 ? ` (${turns} turns)` : ""}`)}${theme.fg("muted", `${bytes ? ` · ${bytes}` : ""}${details.cutoff ? " · cut at this call" : ""}`)}`;
	}
	const event = (details.event ?? details.target) as
		| { eventType?: string; role?: string | null; toolName?: string | null; timestamp?: string; preview?: string }
		| undefined;
	if (!event) return theme.fg("muted", oneLine(firstLine));
	const what = [event.eventType, event.role ?? event.toolName].filter(Boolean).join("/");
	if (name === "event_trace") {
		const parent = details.parent as { eventType?: string; role?: string | null } | null | undefined;
		const children = typeof details.childrenTotal === "number" ? details.childrenTotal : 0;
		const siblings = typeof details.siblingsTotal === "number" ? details.siblingsTotal : 0;
		return `${theme.fg("success", what)}${theme.fg("muted", ` ${when(event.timestamp)} · parent ${parent ? [parent.eventType, parent.role].filter(Boolean).join("/") : "none"} · ${plural(children, "child").replace("childs", "children")} · ${plural(siblings, "sibling")}`)}`;
	}
	const content = (details.content as { chars?: number }[] | undefined) ?? [];
	const chars = content.reduce((n, c) => n + (c.chars ?? 0), 0);
	return `${theme.fg("success", what)}${theme.fg("muted", ` ${when(event.timestamp)} · ${plural(chars, "char")} · ${oneLine(event.preview).slice(0, 80)}`)}`;
}

/** `renderCall` / `renderResult` for one tool: pi's compact row, expanding on demand. */
export function toolRenderers(name: string) {
	return {
		renderCall(args: Record<string, unknown>, theme: Theme, context?: { lastComponent?: unknown }) {
			const component = context?.lastComponent instanceof Lines ? context.lastComponent : new Lines("");
			component.setText(callLine(name, args, theme));
			return component;
		},
		renderResult(
			result: { content?: { type?: string; text?: string }[]; details?: unknown },
			options: { expanded: boolean; isPartial: boolean },
			theme: Theme,
			context?: RenderContext,
		) {
			const text = (result.content ?? [])
				.filter((c) => c?.type === "text")
				.map((c) => c.text ?? "")
				.join("\n");
			if (options.isPartial) return new Lines(theme.fg("warning", "searching…"));
			if (context?.isError) {
				const [first = "failed", ...rest] = text.split("\n");
				const body = options.expanded ? rest.map((l) => theme.fg("error", plain(l))) : [];
				return new Lines([theme.fg("error", `✗ ${plain(first)}`), ...body].join("\n"));
			}
			const details = (result.details ?? {}) as Record<string, unknown>;
			const summary = resultSummary(name, details, theme, text);
			if (!options.expanded) return new Lines(`${summary}${expandHint(context ?? {}, theme)}`);
			const lines = [summary];
			if (name === "event_search") {
				for (const [i, hit] of ((details.hits as Hit[] | undefined) ?? []).entries()) lines.push(...hitLines(hit, theme, i));
			} else if (name === "event_sessions") {
				for (const s of (details.sessions as SessionRow[] | undefined) ?? []) {
					lines.push(
						`${theme.fg("accent", short(s.sessionId))} ${theme.fg("muted", `${when(s.lastTimestamp)} · ${plural(s.entryCount ?? 0, "entry").replace("entrys", "entries")}`)} ${theme.fg("toolOutput", oneLine(s.name ?? s.firstUserMessage))}`,
					);
				}
			} else for (const line of text.split("\n")) lines.push(theme.fg("toolOutput", plain(line)));
			return new Lines(lines.join("\n"));
		},
	};
}

// --- `/events`: the person's search ------------------------------------------------------------

/** Search parameters under their command-line names where those differ (`pi-events search --kind`). */
const FLAG_NAMES: Record<string, string> = {
	kinds: "kind",
	eventTypes: "type",
	roles: "role",
	tools: "tool",
	files: "file",
	isError: "error",
	branchStates: "branch",
	selectionStates: "selection",
	groupBy: "group",
	sessionId: "session",
	includeDerived: "include-derived",
};

function flagOf(key: string): string {
	return FLAG_NAMES[key] ?? key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

type SchemaNode = { type?: string; enum?: string[]; items?: SchemaNode; description?: string };

/** The `/events` filters, derived from event_search's input schema: flag → parameter. */
export function searchFlags(): { flag: string; key: string; schema: SchemaNode }[] {
	const properties = (SearchParams as unknown as { properties: Record<string, SchemaNode> }).properties;
	return Object.entries(properties)
		.filter(([key]) => key !== "query")
		.map(([key, schema]) => ({ flag: flagOf(key), key, schema }));
}

/** `/events` arguments → event_search arguments: `--kind a,b --error words "a phrase"`. */
export function parseEventsArgs(input: string): { args: Record<string, unknown>; error?: string } {
	const flags = new Map(searchFlags().map((f) => [f.flag, f]));
	const tokens = input.match(/"[^"]*"?|\S+/g) ?? [];
	const words: string[] = [];
	const args: Record<string, unknown> = {};
	for (let i = 0; i < tokens.length; i++) {
		const token = tokens[i]!;
		if (!token.startsWith("--") || token.length === 2) {
			words.push(token);
			continue;
		}
		const [rawName, inline] = token.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
		const negated = rawName.startsWith("no-") && flags.get(rawName.slice(3))?.schema.type === "boolean";
		const spec = flags.get(negated ? rawName.slice(3) : rawName);
		if (!spec) return { args, error: `unknown filter --${rawName}` };
		if (spec.schema.type === "boolean") {
			args[spec.key] = !negated;
			continue;
		}
		const value = inline ?? tokens[++i];
		if (value === undefined) return { args, error: `--${rawName} needs a value` };
		if (spec.schema.type === "array") args[spec.key] = [...((args[spec.key] as string[]) ?? []), ...value.split(",").filter(Boolean)];
		else if (spec.schema.type === "integer") args[spec.key] = Number(value);
		else args[spec.key] = value;
	}
	const query = words.join(" ").trim();
	if (query) args.query = query;
	return { args };
}

/** Completions for `/events …`: `status`, then the filters and their enum values. */
export function eventsCompletions(prefix: string): { value: string; label: string; description?: string }[] | null {
	const tokens = prefix.split(/\s+/);
	const last = tokens.at(-1) ?? "";
	const before = tokens.slice(0, -1).join(" ");
	const lead = before ? `${before} ` : "";
	const previous = tokens.at(-2) ?? "";
	const spec = searchFlags().find((f) => `--${f.flag}` === previous);
	const values = spec?.schema.enum ?? spec?.schema.items?.enum;
	if (values) {
		const items = values.filter((v) => v.startsWith(last)).map((v) => ({ value: `${lead}${v} `, label: v }));
		return items.length > 0 ? items : null;
	}
	const items: { value: string; label: string; description?: string }[] = [];
	if (tokens.length === 1 && "status".startsWith(last)) items.push({ value: "status", label: "status", description: "root, index and freshness" });
	if (last.startsWith("-") || last === "") {
		for (const f of searchFlags()) {
			const name = `--${f.flag}`;
			if (name.startsWith(last)) items.push({ value: `${lead}${name} `, label: name, description: f.schema.description?.split(/[.;:]/)[0] });
		}
	}
	return items.length > 0 ? items : null;
}

type CommandContext = ToolContext & {
	hasUI?: boolean;
	ui: {
		notify(message: string, type?: "info" | "warning" | "error"): void;
		custom<T>(factory: (tui: { requestRender(): void }, theme: Theme, keybindings: KeyMatcher, done: (result: T) => void) => Component): Promise<T>;
		setEditorText(text: string): void;
		getEditorText?(): string;
	};
};

type Row = { hit: Hit } | { session: SessionRow };
const LIST_ROWS = 8;
const PAGE_ROWS = 18;
const DEBOUNCE_MS = 60;

/** The reference a person hands to the model: a command that reads the event. */
export const referenceOf = (sessionId: string, entryId: string) => `pi-events read ${sessionId} ${entryId}`;

/** event_read's turn transcript when the server offers it (`view: "turn"`), else the event view. */
function readArgs(hit: Hit): Record<string, unknown> {
	const view = (ReadParams as unknown as { properties: Record<string, SchemaNode> }).properties.view;
	const turn = view && (view.enum ?? []).includes("turn");
	return { sessionId: hit.sessionId, entryId: hit.entryId, ...(turn ? { view: "turn" } : {}) };
}

/** The `/events` screen: a query line searched as it is typed, the hits, and a scrollable event view. */
class EventsScreen implements Component {
	private query: string;
	private rows: Row[] = [];
	private selected = 0;
	private status = "";
	private statusIsError = false;
	private seq = 0;
	private timer: ReturnType<typeof setTimeout> | undefined;
	private view: { title: string; lines: string[]; scroll: number; hit: Hit } | null = null;

	constructor(
		initial: string,
		private readonly call: (name: string, args: Record<string, unknown>) => Promise<CallResult>,
		private readonly tui: { requestRender(): void },
		private readonly theme: Theme,
		private readonly keys: KeyMatcher,
		private readonly done: (insert: string | null) => void,
	) {
		this.query = initial;
		this.refresh();
	}

	/** Run the current query now (no query: the workspace's recent sessions). */
	private refresh(): void {
		const seq = ++this.seq;
		const parsed = parseEventsArgs(this.query);
		if (parsed.error) {
			this.show(seq, [], parsed.error, true);
			return;
		}
		const empty = Object.keys(parsed.args).length === 0;
		const started = performance.now();
		const request = empty ? this.call("event_sessions", { limit: 20 }) : this.call("event_search", { limit: 20, ...parsed.args });
		request.then(
			(result) => {
				const ms = formatMs(Math.round(performance.now() - started));
				const s = result.structured ?? {};
				if (empty) {
					const sessions = (s.sessions as SessionRow[] | undefined) ?? [];
					this.show(
						seq,
						sessions.map((session) => ({ session })),
						`${plural(sessions.length, "recent session")} · ${ms} · type to search`,
						false,
					);
				} else {
					const hits = (s.hits as Hit[] | undefined) ?? [];
					const sessions = new Set(hits.map((h) => h.sessionId)).size;
					const head = hits.length === 0 ? oneLine(result.text.split("\n", 1)[0]) : `${plural(hits.length, "hit")} in ${plural(sessions, "session")}`;
					this.show(
						seq,
						hits.map((hit) => ({ hit })),
						`${head} · ${ms}`,
						false,
					);
				}
			},
			(err: Error) => this.show(seq, [], err.message, true),
		);
	}

	private show(seq: number, rows: Row[], status: string, isError: boolean): void {
		if (seq !== this.seq) return; // a later keystroke's answer wins
		this.rows = rows;
		this.selected = Math.min(this.selected, Math.max(0, rows.length - 1));
		this.status = status;
		this.statusIsError = isError;
		this.tui.requestRender();
	}

	private typed(): void {
		if (this.timer) clearTimeout(this.timer);
		this.timer = setTimeout(() => this.refresh(), DEBOUNCE_MS);
		this.tui.requestRender();
	}

	private open(row: Row): void {
		if ("session" in row) {
			this.query = `--session ${row.session.sessionId} --sort oldest `;
			this.selected = 0;
			this.refresh();
			return;
		}
		const hit = row.hit;
		const seq = ++this.seq;
		this.call("event_read", readArgs(hit)).then(
			(result) => {
				if (seq !== this.seq) return;
				this.view = {
					title: `${hit.semanticKind ?? "event"} ${when(hit.timestamp)} · ${short(hit.sessionId)}/${hit.entryId}`,
					lines: result.text.split("\n").map(plain),
					scroll: 0,
					hit,
				};
				this.tui.requestRender();
			},
			(err: Error) => this.show(seq, this.rows, err.message, true),
		);
	}

	handleInput(data: string): void {
		const k = this.keys;
		if (this.view) {
			const view = this.view;
			if (k.matches(data, "tui.select.cancel") || k.matches(data, "tui.editor.deleteCharBackward")) this.view = null;
			else if (k.matches(data, "tui.select.up")) view.scroll = Math.max(0, view.scroll - 1);
			else if (k.matches(data, "tui.select.down")) view.scroll = Math.min(Math.max(0, view.lines.length - PAGE_ROWS), view.scroll + 1);
			else if (k.matches(data, "tui.select.pageUp")) view.scroll = Math.max(0, view.scroll - PAGE_ROWS);
			else if (k.matches(data, "tui.select.pageDown")) view.scroll = Math.min(Math.max(0, view.lines.length - PAGE_ROWS), view.scroll + PAGE_ROWS);
			else if (data === "r" || k.matches(data, "tui.input.tab")) {
				this.finish(referenceOf(view.hit.sessionId, view.hit.entryId));
				return;
			} else if (data === "t") {
				this.insertText(view.hit);
				return;
			}
			this.tui.requestRender();
			return;
		}
		const row = this.rows[this.selected];
		if (k.matches(data, "tui.select.cancel")) {
			this.finish(null);
			return;
		}
		if (k.matches(data, "tui.select.up")) this.selected = Math.max(0, this.selected - 1);
		else if (k.matches(data, "tui.select.down")) this.selected = Math.min(Math.max(0, this.rows.length - 1), this.selected + 1);
		else if (k.matches(data, "tui.select.confirm")) {
			if (row) this.open(row);
		} else if (k.matches(data, "tui.input.tab")) {
			if (row) {
				this.finish("hit" in row ? referenceOf(row.hit.sessionId, row.hit.entryId) : `pi-events search --session ${row.session.sessionId}`);
				return;
			}
		} else if (k.matches(data, "tui.editor.deleteCharBackward")) {
			this.query = this.query.slice(0, -1);
			this.typed();
			return;
		} else if (data.length >= 1 && !data.startsWith("\x1b") && !/[\x00-\x1f\x7f]/.test(data)) {
			this.query += data;
			this.typed();
			return;
		}
		this.tui.requestRender();
	}

	/** The event's own text (the event view's parts), even when the turn transcript is shown. */
	private insertText(hit: Hit): void {
		const seq = ++this.seq;
		this.call("event_read", { sessionId: hit.sessionId, entryId: hit.entryId }).then(
			(result) => {
				if (seq !== this.seq) return;
				const parts = ((result.structured?.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? "");
				this.finish(parts.join("\n") || result.text);
			},
			(err: Error) => this.show(seq, this.rows, err.message, true),
		);
	}

	private finish(insert: string | null): void {
		if (this.timer) clearTimeout(this.timer);
		this.seq++;
		this.done(insert);
	}

	render(width: number): string[] {
		const t = this.theme;
		const rule = t.fg("border", "─".repeat(Math.max(0, width)));
		const out: string[] = [rule];
		if (this.view) {
			const v = this.view;
			out.push(`${t.fg("accent", t.bold("pi-events"))} ${t.fg("muted", v.title)}`);
			for (const line of v.lines.slice(v.scroll, v.scroll + PAGE_ROWS)) out.push(t.fg("toolOutput", line));
			const more = v.lines.length > PAGE_ROWS ? ` · lines ${v.scroll + 1}-${Math.min(v.lines.length, v.scroll + PAGE_ROWS)} of ${v.lines.length}` : "";
			out.push(t.fg("dim", `↑↓ scroll · r insert reference · t insert text · esc back${more}`));
		} else {
			out.push(`${t.fg("accent", t.bold("pi-events"))} ${t.fg("muted", "search this workspace (this session excluded)")}`);
			out.push(`${t.fg("accent", ">")} ${this.query}${t.fg("accent", "▏")}`);
			out.push(t.fg(this.statusIsError ? "error" : "muted", this.status || "searching…"));
			const first = Math.max(0, Math.min(this.selected - LIST_ROWS + 1, this.rows.length - LIST_ROWS));
			this.rows.slice(first, first + LIST_ROWS).forEach((row, i) => {
				const mark = first + i === this.selected ? t.fg("accent", "▶ ") : "  ";
				const lines =
					"hit" in row
						? hitLines(row.hit, t)
						: [
								`${t.fg("accent", short(row.session.sessionId))} ${t.fg("muted", `${when(row.session.lastTimestamp)} · ${plural(row.session.entryCount ?? 0, "entry").replace("entrys", "entries")}`)}`,
								`   ${t.fg("toolOutput", oneLine(row.session.name ?? row.session.firstUserMessage))}`,
							];
				for (const [j, line] of lines.entries()) out.push(`${j === 0 ? mark : "  "}${line}`);
			});
			out.push(t.fg("dim", "type to search · ↑↓ select · enter open · tab insert reference · esc close"));
		}
		out.push(rule);
		return out.map((line) => fitWidth(line, width));
	}

	invalidate(): void {}
}

// --- `/events status` --------------------------------------------------------------------------

/** The tools' root as the server derives it: the Git worktree root of the cwd, else the cwd. */
function rootOf(cwd: string): { root: string; how: string } {
	for (let dir = resolve(cwd); ; dir = dirname(dir)) {
		if (existsSync(join(dir, ".git"))) return { root: dir, how: "Git worktree root of the cwd" };
		if (dirname(dir) === dir) return { root: resolve(cwd), how: "the cwd; not in a Git worktree" };
	}
}

/** `pi-events status --json` with the server's index and session-directory arguments. */
function indexStatus(command: ServerCommand): Promise<Record<string, unknown>> {
	const passOn: string[] = [];
	const args = command.args;
	for (let i = 0; i < args.length; i++) {
		const a = args[i]!;
		if (a === "--index" || a === "--sessions-dir") passOn.push(a, args[++i] ?? "");
		else if (a.startsWith("--index=") || a.startsWith("--sessions-dir=")) passOn.push(a);
	}
	return new Promise((resolvePromise, reject) => {
		execFile(command.bin, ["status", "--json", ...passOn], { timeout: 10_000, windowsHide: true }, (err, stdout, stderr) => {
			if (err) return reject(new Error(oneLine(stderr) || err.message));
			try {
				resolvePromise(JSON.parse(stdout) as Record<string, unknown>);
			} catch {
				reject(new Error("pi-events status printed no JSON"));
			}
		});
	});
}

/** The lines of `/events status`: what the tools can see, how fresh it is, and why they may be inactive. */
export async function statusLines(
	ctx: ToolContext,
	self: string,
	theme: Theme,
	call: (name: string, args: Record<string, unknown>) => Promise<CallResult>,
): Promise<string[]> {
	const label = (name: string) => theme.fg("muted", name.padEnd(11));
	const lines: string[] = [theme.fg("accent", theme.bold("pi-events status"))];
	const duplicates = ((globals[DUPLICATES_KEY] as string[] | undefined) ?? []).filter((p) => p !== self);
	lines.push(`${label("extension")}${theme.fg("success", "active")} ${theme.fg("dim", self)}`);
	for (const copy of duplicates) lines.push(`${label("")}${theme.fg("warning", `inactive copy (installed twice): ${copy}; remove one`)}`);
	const { root, how } = rootOf(ctx.cwd);
	lines.push(`${label("root")}${root} ${theme.fg("dim", `(${how})`)}`);
	const command = serverCommand(process.env, extraSessionDirOf(ctx.sessionManager?.getSessionDir?.(), process.env), undefined, holder.noSocket !== true);
	lines.push(
		`${label("server")}${command.bin} ${theme.fg("dim", `(from ${command.from}${holder.server && !holder.server.closed ? `, running, pid ${holder.server.pid}` : ""})`)}`,
	);
	// The tools' call first: it syncs, so the index's figures that follow include what it added.
	const [tools] = await Promise.allSettled([call("event_sessions", { limit: 1 })]);
	const [index] = await Promise.allSettled([indexStatus(command)]);
	if (index.status === "fulfilled") {
		const s = index.value;
		const last = s.lastSync as { at?: number; durationMs?: number } | null | undefined;
		const lastText = last?.at ? `last sync ${when(new Date(last.at).toISOString())} UTC (${formatMs(last.durationMs ?? 0)})` : "never synced";
		lines.push(`${label("index")}${String(s.index)} ${theme.fg("dim", `· ${plural(Number(s.sessions ?? 0), "session")} · ${lastText}`)}`);
	} else lines.push(`${label("index")}${theme.fg("error", `unknown: ${index.reason instanceof Error ? index.reason.message : String(index.reason)}`)}`);
	if (tools.status === "fulfilled") {
		const s = tools.value.structured ?? {};
		const f = s.freshness as Freshness | undefined;
		const problems = (f?.problems ?? []).length;
		lines.push(
			`${label("freshness")}${theme.fg(f?.synced === false ? "warning" : "success", freshnessText(f) || "unknown")} ${theme.fg("dim", `· ${plural(Number(s.total ?? 0), "other session")} in this workspace · ${problems === 0 ? "no problems" : plural(problems, "problem")}`)}`,
		);
		lines.push(`${label("tools")}${theme.fg("success", "available")} ${theme.fg("dim", "event_search, event_read, event_trace, event_sessions")}`);
	} else {
		const message = tools.reason instanceof Error ? tools.reason.message : String(tools.reason);
		lines.push(`${label("tools")}${theme.fg("error", `inactive: ${oneLine(message)}`)}`);
	}
	return lines;
}

/** Why the server cannot start, found without starting it (an executable on the path or PATH), or null. */
export function binaryProblem(command: ServerCommand, env: NodeJS.ProcessEnv): string | null {
	const runnable = (path: string) => {
		try {
			accessSync(path, constants.X_OK);
			return true;
		} catch {
			return false;
		}
	};
	const found = command.bin.includes("/") ? runnable(command.bin) : (env.PATH ?? "").split(":").some((dir) => dir !== "" && runnable(join(dir, command.bin)));
	return found ? null : `pi-events: the event_* tools are inactive: binary not found (${command.bin}, from ${command.from}). /events status for details.`;
}

const WARNED_KEY = Symbol.for("pi-events/extension-warned");

/** A theme that marks its styling (`\x00color\x01text\x02`, `\x03text\x04`), for applyMarkers later. */
const MARKER_THEME: Theme = { fg: (color, text) => `\x00${color}\x01${text}\x02`, bold: (text) => `\x03${text}\x04` };

/** MARKER_THEME's marks replaced by `theme`'s styling. */
function applyMarkers(line: string, theme: Theme): string {
	return line
		.replace(/\x03([^\x03\x04]*)\x04/g, (_m, text: string) => theme.bold(text))
		.replace(/\x00(\w+)\x01([^\x00\x02]*)\x02/g, (_m, color: string, text: string) => theme.fg(color, text));
}

/** A closing panel of lines (`/events status`). */
class Panel implements Component {
	constructor(
		private readonly lines: string[],
		private readonly theme: Theme,
		private readonly keys: KeyMatcher,
		private readonly done: (v: null) => void,
	) {}
	handleInput(data: string): void {
		if (this.keys.matches(data, "tui.select.cancel") || data === "q") this.done(null);
	}
	render(width: number): string[] {
		const rule = this.theme.fg("border", "─".repeat(Math.max(0, width)));
		return [rule, ...this.lines, this.theme.fg("dim", "esc close"), rule].map((line) => fitWidth(line, width));
	}
	invalidate(): void {}
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

// The copy of this extension that registered the tools in this pi process (cleared on shutdown,
// which pi sends before a reload, so a reload is not mistaken for a second copy).
const LOADED_KEY = Symbol.for("pi-events/extension-loaded");
// Paths of the copies that stayed inactive, for `/events status`.
const DUPLICATES_KEY = Symbol.for("pi-events/extension-duplicates");
type Loaded = { path: string };
const globals = globalThis as Record<symbol, unknown>;

export function duplicateMessage(first: string, second: string): string {
	return `pi-events: the extension is installed twice; the copy at ${second} stays inactive and the one at ${first} provides the event_* tools. Remove one (pi remove, or delete the file from ~/.pi/agent/extensions/).`;
}

export default function piEvents(pi: ExtensionAPI): void {
	const self = (() => {
		try {
			return fileURLToPath(import.meta.url);
		} catch {
			return "pi-events.ts";
		}
	})();
	const loaded = globals[LOADED_KEY] as Loaded | undefined;
	if (loaded && loaded.path !== self) {
		// Registering the same tools again would make pi refuse to start (a tool conflict).
		const message = duplicateMessage(loaded.path, self);
		const duplicates = (globals[DUPLICATES_KEY] as string[] | undefined) ?? [];
		if (!duplicates.includes(self)) globals[DUPLICATES_KEY] = [...duplicates, self];
		pi.on("session_start", async (_event, ctx) => {
			if (ctx.hasUI) ctx.ui.notify(message, "warning");
			else process.stderr.write(`${message}\n`);
		});
		return;
	}
	globals[LOADED_KEY] = { path: self } satisfies Loaded;
	// A reload replaces the extension; a server left by the previous instance is stopped.
	stopServer();

	pi.registerTool({
		name: "event_search",
		label: "Search session history",
		description:
			'Search what happened in earlier pi sessions of this workspace: past requests, answers, tool calls and their output, shell commands, errors, compaction and branch summaries. Use it before redoing work or when the user refers to something done before ("the migration we wrote last week", "that ECONNREFUSED error"). Returns ranked event hits with a short snippet and ids; follow up with event_read for the exact content or event_trace for the conversation around it. The current session is excluded unless you pass its sessionId (then only events before this call). Read-only.',
		promptSnippet: "Search earlier pi sessions of this workspace (requests, answers, tool calls, output, errors)",
		promptGuidelines: [
			'Use event_search when the user refers to earlier work, a past error or decision, or something "we did before", and before redoing an investigation that may already have been done in an earlier session.',
			"Search with distinctive words as they would have appeared: error messages, file paths, identifiers, commands. Narrow with filters (since, tools, isError, cwd) rather than long queries.",
			"event_search returns snippets only: call event_read with a hit's sessionId, entryId and fragmentId before relying on exact content; use event_trace to see what led to or followed an event.",
		],
		parameters: SearchParams,
		annotations: READ_ONLY,
		async execute(toolCallId, params, signal, _onUpdate, ctx) {
			return run("event_search", toolCallId, params, signal, ctx);
		},
		...toolRenderers("event_search"),
	});

	pi.registerTool({
		name: "event_read",
		label: "Read session event",
		description:
			"Read one event from pi session history exactly as recorded, re-read from its session file: metadata, text of each part (first 2,000 characters; pass fragmentId with offset/length for a window into long output), what was omitted (thinking, images), and optionally neighbours in append order (file order) or branch order (the conversation path). Use the ids from an event_search hit. Read-only.",
		promptSnippet: "Read one event from earlier pi sessions exactly (ids from event_search)",
		promptGuidelines: [
			"Use event_read with the sessionId and entryId of an event_search hit to quote or reuse exact earlier content; for long output page with fragmentId, offset and length instead of guessing.",
		],
		parameters: ReadParams,
		annotations: READ_ONLY,
		async execute(toolCallId, params, signal, _onUpdate, ctx) {
			return run("event_read", toolCallId, params, signal, ctx);
		},
		...toolRenderers("event_read"),
	});

	pi.registerTool({
		name: "event_trace",
		label: "Trace session event",
		description:
			"Show where an event sits in its session tree: parent, children, siblings (other branches from the same point), the next node toward the latest entry, and typed relationships (tool call ↔ result, compaction boundary, branch summary source, labels, files read or changed, fork copies in related sessions), each labelled recorded or derived. Nodes carry short previews only; use event_read on an id to see content. Read-only.",
		promptSnippet: "Show an earlier event's place in its session (parent, children, branches, tool call/result)",
		promptGuidelines: [
			"Use event_trace on an event_search hit to find the request that led to it, its tool call or result, or whether it sits on an abandoned branch.",
		],
		parameters: TraceParams,
		annotations: READ_ONLY,
		async execute(toolCallId, params, signal, _onUpdate, ctx) {
			return run("event_trace", toolCallId, params, signal, ctx);
		},
		...toolRenderers("event_trace"),
	});

	pi.registerTool({
		name: "event_sessions",
		label: "List sessions",
		description:
			'List the earlier pi sessions of this workspace, most recently active first: id, name, cwd, first and last time, number of entries, and the first thing the user asked. Use it to answer "what did we do last?" or to pick a session to search (event_search with sessionId) or read. The current session is not listed. Read-only.',
		promptSnippet: "List earlier pi sessions of this workspace, most recent first",
		promptGuidelines: [
			"Use event_sessions when the user asks what was done recently or in an earlier session, then event_search with its sessionId to look inside one.",
		],
		parameters: SessionsParams,
		annotations: READ_ONLY,
		async execute(toolCallId, params, signal, _onUpdate, ctx) {
			return run("event_sessions", toolCallId, params, signal, ctx);
		},
		...toolRenderers("event_sessions"),
	});

	pi.registerCommand("events", {
		description: "Search this workspace's earlier pi sessions (no model call); /events status for the root and index",
		getArgumentCompletions: eventsCompletions,
		handler: async (rawArgs, ctx) => {
			const context = ctx as unknown as CommandContext;
			const call = (name: string, args: Record<string, unknown>) => callServer(name, "", args, undefined, context);
			const args = (rawArgs ?? "").trim();
			if (!context.hasUI) {
				process.stderr.write("pi-events: /events needs pi's interactive mode; use `pi-events search` in a shell\n");
				return;
			}
			if (args === "status") {
				// The lines are gathered before pi hands over its theme: styled with markers, coloured in the panel.
				const lines = await statusLines(context, self, MARKER_THEME, call);
				await context.ui.custom<null>(
					(_tui, theme, keys, done) =>
						new Panel(
							lines.map((l) => applyMarkers(l, theme)),
							theme,
							keys,
							done,
						),
				);
				return;
			}
			const insert = await context.ui.custom<string | null>((tui, theme, keys, done) => new EventsScreen(args, call, tui, theme, keys, done));
			if (insert === null || insert === undefined) return;
			const current = context.ui.getEditorText?.() ?? "";
			context.ui.setEditorText(current.trim() === "" ? insert : `${current.replace(/\s*$/, "")} ${insert}`);
		},
	});

	// One line at the first session start, only when the tools cannot work (nothing is started for it).
	pi.on("session_start", async (_event, ctx) => {
		if (globals[WARNED_KEY] || !ctx.hasUI) return;
		const command = serverCommand(process.env, extraSessionDirOf(ctx.sessionManager?.getSessionDir?.(), process.env), undefined, holder.noSocket !== true);
		const problem = binaryProblem(command, process.env);
		if (problem === null) return;
		globals[WARNED_KEY] = true;
		ctx.ui.notify(problem, "warning");
	});

	// The session file has new entries after each turn: let the server index them now.
	pi.on("turn_end", async () => {
		holder.server?.sync();
	});
	pi.on("agent_end", async () => {
		holder.server?.sync();
	});
	pi.on("session_shutdown", async () => {
		stopServer();
		if ((globals[LOADED_KEY] as Loaded | undefined)?.path === self) delete globals[LOADED_KEY];
	});
}
