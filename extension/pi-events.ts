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
 * The server also gets pi's session directory (`--sessions-dir`) when pi writes sessions outside
 * its default tree (`pi --session-dir DIR`), so that history is searchable too. A second copy of
 * this extension (installed twice) stays inactive and says so, instead of a tool-name conflict.
 *
 * Only `typebox` is imported at runtime (besides node: modules); the pi imports are types (pi aliases both the
 * `@earendil-works` and `@mariozechner` scopes, and `typebox`, to its bundled copies).
 */
import { type ChildProcess, spawn } from "node:child_process";
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

async function run(name: string, toolCallId: string, params: unknown, signal: AbortSignal | undefined, ctx: ToolContext) {
	const extraDir = extraSessionDirOf(ctx.sessionManager?.getSessionDir?.(), process.env);
	const first = server(extraDir);
	let result: CallResult;
	try {
		result = await first.callTool(name, cleanArgs(params), callerOf(ctx, toolCallId), signal);
	} catch (err) {
		if (!first.refusedSocket) throw err;
		// An older pi-events binary: it serves MCP alone, from now on.
		holder.noSocket = true;
		result = await server(extraDir).callTool(name, cleanArgs(params), callerOf(ctx, toolCallId), signal);
	}
	const { text, structured } = result;
	return { content: [{ type: "text" as const, text }], details: structured ?? {} };
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

// The copy of this extension that registered the tools in this pi process (cleared on shutdown,
// which pi sends before a reload, so a reload is not mistaken for a second copy).
const LOADED_KEY = Symbol.for("pi-events/extension-loaded");
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
