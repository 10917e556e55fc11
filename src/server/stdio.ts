/**
 * `pi-events serve --stdio`: newline-delimited JSON-RPC 2.0 (MCP) on stdin/stdout. Stdout
 * carries protocol frames only; logs go to stderr. Both protocol eras are served: the legacy
 * `initialize` handshake (2024-11-05 … 2025-11-25) and the stateless 2026-07-28 revision.
 * Malformed, oversized or concurrent frames never crash or wedge the loop; it exits on EOF.
 */
import type { Database } from "bun:sqlite";
import { resolve } from "node:path";
import type { Scope } from "../auth/scope.ts";
import { statSync } from "node:fs";
import { canonicalPath, type Settings } from "../config.ts";
import { resolveCaller } from "../gate/caller.ts";
import { indexedSize } from "../store/status.ts";
import { errorCode, isPiEventsError, publicMessage } from "../errors.ts";
import { forScope, observe, type RawFreshness } from "../sync/freshness.ts";
import { MergeInSlices } from "../sync/merge.ts";
import { decodeLine, frameLines } from "../source/jsonl.ts";
import { toJsonSchema } from "./json-schema.ts";
import { findTool, fitToolOutput, parseArgs, serverInstructions, TOOLS } from "./tools.ts";
import { toJson } from "../present/json.ts";
import { terminalSafe } from "../present/terminal.ts";

const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const MODERN_VERSIONS = ["2026-07-28"];
const META_VERSION = "io.modelcontextprotocol/protocolVersion";
const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
/** The namespaced `_meta` key through which a trusted client (the pi extension) passes the caller. */
export const CALLER_META = "pi-events/caller";
/** Notification method that asks the server to sync now. */
export const SYNC_NOTIFICATION = "notifications/pi-events/sync";
/** Frames larger than this are discarded unread (and answered with a parse error). */
const MAX_FRAME_BYTES = 1024 * 1024;
/** Minimum interval between the syncs that precede tool calls. */
const SYNC_INTERVAL_MS = 1500;
/** Time budget of the sync that precedes a tool call. */
const CALL_SYNC_BUDGET_MS = 2000;
/**
 * A backlog (session files a budgeted sync left pending: the first start over a long history, a
 * burst of new sessions) is indexed between calls, in syncs of this budget: a call that comes
 * meanwhile waits at most one of them, and the next calls find the index complete sooner than one
 * budgeted sync per call and per turn would make it.
 */
const BACKFILL_SLICE_MS = 2000;
/** The pause between two slices of a backlog: requests that came meanwhile are answered first. */
const BACKFILL_PAUSE_MS = 50;
/** After a slice that made no progress (another process writing the index, say): try again this much later. */
const BACKFILL_RETRY_MS = 5000;

interface ServerOptions {
	db: Database;
	settings: Settings;
	version: string;
	/** Launch options for generic MCP clients: --root, cwd, PI_SESSION_ID/PI_SESSION_FILE. */
	launch: { root: string | null; cwd: string; sessionId: string | null; sessionFile: string | null };
	write: (frame: string) => void;
	log: (line: string) => void;
	/** Sync budgets (ms): before a call, and of each slice of a backlog (tests set small ones). */
	syncBudgets?: { callMs: number; backfillMs: number };
	/** The budget of each slice of merging the full-text index (tests set small ones). */
	mergeSliceMs?: number;
}

type Id = string | number;
interface Request {
	jsonrpc?: unknown;
	id?: unknown;
	method?: unknown;
	params?: unknown;
}

/** Generated from the tool table, so a new tool cannot be left out. */
const INSTRUCTIONS = serverInstructions();

export class StdioServer {
	private initialized = false;
	private lastSync = 0;
	private lastFreshness: RawFreshness | null = null;
	/** The next slice of a backlog, when one is planned. */
	private backfillTimer: ReturnType<typeof setTimeout> | null = null;
	/** Merging the full-text index between requests when a sync marked it (sync/merge.ts). */
	private readonly merging: MergeInSlices;
	private closed = false;

	constructor(private readonly opts: ServerOptions) {
		this.merging = new MergeInSlices(() => opts.db, opts.log, opts.mergeSliceMs);
	}

	/** No more syncs: the caller closes the index next. */
	close(): void {
		this.closed = true;
		if (this.backfillTimer !== null) clearTimeout(this.backfillTimer);
		this.backfillTimer = null;
		this.merging.stop();
	}

	/** Handle one raw frame (without its LF); returns nothing, writes a response if one is due. */
	handleFrame(text: string): void {
		if (text.trim() === "") return;
		let message: unknown;
		try {
			message = JSON.parse(text);
		} catch {
			this.error(null, -32700, "Parse error: the frame is not valid JSON");
			return;
		}
		if (typeof message !== "object" || message === null || Array.isArray(message)) {
			this.error(null, -32600, "Invalid request: expected one JSON-RPC object per line (batches are not supported)");
			return;
		}
		const req = message as Request;
		const id = validId(req.id) ? req.id : null;
		if (typeof req.method !== "string") {
			// A response from the client, or garbage: never answered.
			if (req.id !== undefined && req.method === undefined) return;
			this.error(id, -32600, "Invalid request: method must be a string");
			return;
		}
		if (req.id === undefined) {
			// Notifications need no answer. The pi extension sends SYNC_NOTIFICATION after each turn.
			if (req.method === SYNC_NOTIFICATION) this.syncNow();
			return;
		}
		if (id === null) {
			this.error(null, -32600, "Invalid request: id must be a string or an integer");
			return;
		}
		try {
			this.dispatch(id, req.method, isObject(req.params) ? req.params : {});
		} catch (err) {
			this.opts.log(`pi-events serve: ${req.method} failed: ${err instanceof Error ? err.stack : String(err)}`);
			this.error(id, -32603, "Internal error");
		}
	}

	private dispatch(id: Id, method: string, params: Record<string, unknown>): void {
		const meta = isObject(params._meta) ? params._meta : {};
		const modernVersion = meta[META_VERSION];
		const modern = modernVersion !== undefined;
		if (modern && (typeof modernVersion !== "string" || !MODERN_VERSIONS.includes(modernVersion))) {
			this.error(id, -32022, "Unsupported protocol version", {
				supported: MODERN_VERSIONS,
				requested: typeof modernVersion === "string" ? modernVersion.slice(0, 64) : null,
			});
			return;
		}
		if (method === "initialize") {
			const requested = params.protocolVersion;
			const version = typeof requested === "string" && LEGACY_VERSIONS.includes(requested) ? requested : LEGACY_VERSIONS[0];
			this.initialized = true;
			this.result(id, {
				protocolVersion: version,
				capabilities: { tools: { listChanged: false } },
				serverInfo: { name: "pi-events", version: this.opts.version },
				instructions: INSTRUCTIONS,
			});
			return;
		}
		if (method === "server/discover") {
			this.result(id, {
				resultType: "complete",
				supportedVersions: MODERN_VERSIONS,
				capabilities: { tools: {} },
				instructions: INSTRUCTIONS,
				ttlMs: 60_000,
				cacheScope: "private",
				_meta: { [META_SERVER_INFO]: { name: "pi-events", version: this.opts.version } },
			});
			return;
		}
		if (method === "ping") {
			this.result(id, modern ? this.modern({}) : {});
			return;
		}
		if (method !== "tools/list" && method !== "tools/call") {
			this.error(id, -32601, `Method not found: ${method}`);
			return;
		}
		if (!modern && !this.initialized) {
			this.error(id, -32602, `send initialize first, or pass _meta["${META_VERSION}"] = "${MODERN_VERSIONS[0]}"`);
			return;
		}
		if (method === "tools/list") {
			const tools = TOOLS.map((t) => ({
				name: t.name,
				title: t.title,
				description: t.description,
				inputSchema: toJsonSchema(t.input),
				outputSchema: toJsonSchema(t.output),
				annotations: { title: t.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
			}));
			this.result(id, modern ? this.modern({ tools, ttlMs: 60_000, cacheScope: "private" }) : { tools });
			return;
		}
		const name = params.name;
		const tool = typeof name === "string" ? findTool(name) : undefined;
		if (!tool) {
			this.error(id, -32602, `Unknown tool: ${typeof name === "string" ? name : "(missing name)"}`);
			return;
		}
		const result = this.callTool(tool, params.arguments, meta);
		this.result(id, modern ? this.modern(result) : result);
	}

	private callTool(tool: NonNullable<ReturnType<typeof findTool>>, args: unknown, meta: Record<string, unknown>): Record<string, unknown> {
		try {
			const parsed = parseArgs(tool, args);
			const caller = callerFrom(meta, this.opts.launch);
			const scope = this.scopeFor(caller);
			const ctx = {
				db: this.opts.db,
				scope,
				cwd: caller.cwd,
				refresh: () => forScope(this.opts.db, this.refresh(caller.sessionFile), this.opts.settings.sourceDirs, scope),
				now: Date.now(),
			};
			const out = tool.run(parsed as never, ctx);
			return { content: [{ type: "text", text: fitToolOutput(out.text) }], structuredContent: out.structured, isError: false };
		} catch (err) {
			if (!isPiEventsError(err)) this.opts.log(`pi-events serve: ${tool.name} failed: ${err instanceof Error ? err.stack : String(err)}`);
			const message = isPiEventsError(err) ? err.message : publicMessage(err);
			return { content: [{ type: "text", text: `${tool.name} failed: ${terminalSafe(message)} [${errorCode(err)}]` }], isError: true };
		}
	}

	private scopeFor(caller: Caller): Scope {
		return resolveCaller({ ...caller, root: this.opts.launch.root, configRoot: this.opts.settings.configRoot });
	}

	/**
	 * Sync before a call, at most every SYNC_INTERVAL_MS, unless the caller's own session file grew
	 * since it was indexed: then the invoking entry must be indexed now, or its cutoff would hide
	 * the whole current session.
	 */
	private refresh(callerFile: string | null = null, onStale: "full" | "slice" = "slice"): RawFreshness {
		const now = performance.now();
		const callerGrew = callerFile !== null && this.grewSinceIndexed(callerFile);
		if (!callerGrew && this.lastFreshness && now - this.lastSync < SYNC_INTERVAL_MS) {
			// This call does not sync: it answers from the sync of a moment ago. That sync's time and
			// the diagnostics it found are not this call's (a 3.5 ms call said "synced in 100.3 ms").
			const syncAgeMs = Math.round((now - this.lastSync) * 10) / 10;
			return { ...this.lastFreshness, syncMs: 0, syncAgeMs, newDiagnostics: 0, diagnosticsByFile: new Map() };
		}
		return this.sync(this.opts.syncBudgets?.callMs ?? CALL_SYNC_BUDGET_MS, callerFile, onStale);
	}

	private sync(budgetMs: number, callerFile: string | null, onStale: "full" | "slice"): RawFreshness {
		const before = this.lastFreshness;
		const fresh = observe(this.opts.db, this.opts.settings, { sync: true, budgetMs, debug: this.opts.log, callerFile, onStale });
		this.lastFreshness = fresh;
		this.lastSync = performance.now();
		this.planBackfill(fresh, before);
		if (fresh.pendingFiles === 0) this.merging.plan();
		return fresh;
	}

	/**
	 * After a sync that left files pending, the next slice of the backlog: soon when this sync made
	 * progress, later when it could not (another process holds the index; files it cannot read are
	 * problems, never pending).
	 */
	private planBackfill(fresh: RawFreshness, before: RawFreshness | null): void {
		if (this.closed || this.backfillTimer !== null || fresh.pendingFiles === 0) return;
		const progressed = fresh.synced && (before === null || before.pendingFiles === 0 || fresh.pendingFiles < before.pendingFiles);
		this.backfillTimer = setTimeout(
			() => {
				this.backfillTimer = null;
				if (this.closed) return;
				try {
					this.sync(this.opts.syncBudgets?.backfillMs ?? BACKFILL_SLICE_MS, null, "slice");
				} catch (err) {
					this.opts.log(`pi-events serve: sync failed: ${publicMessage(err)}`);
				}
			},
			progressed ? BACKFILL_PAUSE_MS : BACKFILL_RETRY_MS,
		);
		// Never what keeps the process alive: stdin (or the command socket) does.
		this.backfillTimer.unref?.();
	}

	private grewSinceIndexed(path: string): boolean {
		let size: number;
		try {
			size = statSync(path).size;
		} catch {
			return false;
		}
		const indexed = indexedSize(this.opts.db, path);
		return indexed === null || indexed !== size;
	}

	/**
	 * A sync now (the extension asks for this after a turn ends). Nobody waits for it, so it is
	 * where a stale full check runs (sync/check.ts): while pi runs with the extension, an append to
	 * a long-idle session is seen within the full-check interval, plus one turn.
	 */
	syncNow(): void {
		this.lastFreshness = null;
		try {
			this.refresh(null, "full");
		} catch (err) {
			this.opts.log(`pi-events serve: sync failed: ${publicMessage(err)}`);
		}
	}

	private modern(result: Record<string, unknown>): Record<string, unknown> {
		return { ...result, resultType: "complete", _meta: { [META_SERVER_INFO]: { name: "pi-events", version: this.opts.version } } };
	}

	private result(id: Id, result: unknown): void {
		this.opts.write(toJson({ jsonrpc: "2.0", id, result }));
	}

	private error(id: Id | null, code: number, message: string, data?: unknown): void {
		this.opts.write(toJson({ jsonrpc: "2.0", id, error: { code, message, ...(data === undefined ? {} : { data }) } }));
	}
}

interface Caller {
	cwd: string;
	sessionId: string | null;
	sessionFile: string | null;
	toolCallId: string | null;
}

/** The trusted caller: `_meta["pi-events/caller"]` from the extension, else the launch options. */
function callerFrom(meta: Record<string, unknown>, launch: ServerOptions["launch"]): Caller {
	const c = isObject(meta[CALLER_META]) ? meta[CALLER_META] : {};
	const str = (value: unknown) => (typeof value === "string" && value.length > 0 && value.length < 4096 ? value : null);
	const cwd = str(c.cwd);
	const sessionId = str(c.sessionId);
	const sessionFile = str(c.sessionFile);
	const fromMeta = cwd !== null || sessionId !== null || sessionFile !== null;
	return {
		cwd: cwd?.startsWith("/") ? resolve(cwd) : launch.cwd,
		sessionId: fromMeta ? sessionId : launch.sessionId,
		sessionFile: fromMeta ? (sessionFile ? canonicalPath(sessionFile) : null) : launch.sessionFile,
		toolCallId: str(c.toolCallId),
	};
}

function validId(id: unknown): id is Id {
	return typeof id === "string" || (typeof id === "number" && Number.isInteger(id));
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Run the loop over a byte stream. Frames are split on LF only; a frame over MAX_FRAME_BYTES is
 * skipped to its LF without being buffered, and answered with a parse error.
 */
export async function serveStream(server: StdioServer, input: AsyncIterable<Uint8Array>, onOversize: () => void): Promise<void> {
	let pending = new Uint8Array(0);
	let skipping = false;
	for await (const chunk of input) {
		let buf: Uint8Array;
		if (skipping) {
			const nl = chunk.indexOf(0x0a);
			if (nl < 0) continue;
			skipping = false;
			onOversize();
			buf = chunk.subarray(nl + 1);
		} else if (pending.length > 0) {
			buf = new Uint8Array(pending.length + chunk.length);
			buf.set(pending);
			buf.set(chunk, pending.length);
		} else {
			buf = chunk;
		}
		const { lines, consumed } = frameLines(buf, 0, 1);
		for (const line of lines) {
			if (line.length > MAX_FRAME_BYTES) onOversize();
			else server.handleFrame(decodeLine(line.bytes));
		}
		pending = buf.slice(consumed);
		if (pending.length > MAX_FRAME_BYTES) {
			pending = new Uint8Array(0);
			skipping = true;
		}
	}
	if (pending.length > 0 && !skipping) server.handleFrame(decodeLine(pending));
}
