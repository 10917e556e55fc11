/**
 * What a command-line process and the resident server (`pi-events serve --socket`) say to each
 * other over the server's Unix socket: one request line from the client, one answer line from the
 * server, both JSON, then the server closes the connection.
 *
 * The server listens beside the index it keeps open (`<index>.sock`): a client finds it from the
 * same settings that name the index. (A request naming another index is still run, through a
 * connection opened for it alone.)
 */

/** The commands a server runs for a client: those that read the index (and sync it first). */
export const SERVED_COMMAND_NAMES = ["search", "read", "trace", "sessions"] as const;
export type ServedCommandName = (typeof SERVED_COMMAND_NAMES)[number];
export const SERVED_COMMANDS: ReadonlySet<string> = new Set(SERVED_COMMAND_NAMES);

/** A request or answer longer than this is refused (an answer holds at most 100 hits' snippets). */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/** Longest socket path the platform takes (sun_path less its final NUL: 108 on Linux, 104 on macOS). */
const MAX_SOCKET_PATH_BYTES = process.platform === "linux" ? 107 : 103;

/**
 * The environment variables a served command reads (its settings, its caller, its output), and
 * the only ones a request carries: the rest of a client's environment (API keys, tokens) never
 * leaves its process. test/cli/command-server.test.ts checks that every variable src/ reads is
 * here or read by the client alone (CLIENT_ONLY_ENV).
 */
export const FORWARDED_ENV: readonly string[] = [
	"HOME",
	"NO_COLOR",
	"PI_CODING_AGENT_DIR",
	"PI_CODING_AGENT_SESSION_DIR",
	"PI_EVENTS_CONFIG",
	"PI_EVENTS_DEBUG",
	"PI_EVENTS_INDEX",
	"PI_EVENTS_SCRUB_INLINE_MAX_BYTES",
	"PI_SESSION_FILE",
	"PI_SESSION_ID",
	"XDG_CACHE_HOME",
	"XDG_CONFIG_HOME",
];

/** Variables that say how the client reaches a server, or start `serve` itself: never needed by the command. */
export const CLIENT_ONLY_ENV: readonly string[] = ["PI_EVENTS_SERVER", "PI_EVENTS_SERVER_IDLE"];

/** The part of an environment a request carries: FORWARDED_ENV's variables that are set. */
export function forwardedEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
	const kept: Record<string, string> = {};
	for (const name of FORWARDED_ENV) {
		const value = env[name];
		if (value !== undefined) kept[name] = value;
	}
	return kept;
}

export interface CommandRequest {
	/** The client's build (version.ts VERSION_LINE): a server of another build refuses. */
	version: string;
	/** The command and its arguments, as typed after `pi-events`. */
	argv: string[];
	cwd: string;
	/** forwardedEnv() of the client's environment; always with HOME (without, the client runs the command itself). */
	env: Record<string, string>;
	/** Whether the client's stdout and stderr are terminals (colours, progress). */
	terminal: { out: boolean; err: boolean };
}

export type CommandAnswer =
	/** What the command wrote, in order: data on 1, diagnostics on 2. */
	| { output: [1 | 2, string][]; exitCode: number }
	/** Not run: the client runs the command itself (another build, a request the server does not take). */
	| { refused: string };

/** The server's socket for an index, or null when its path is too long for a socket. */
export function socketPathFor(indexPath: string): string | null {
	const path = `${indexPath}.sock`;
	return Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES ? path : null;
}

/** An answer as received, checked field by field (the client builds no valibot schema: it starts fast). */
export function parseAnswer(text: string): CommandAnswer | null {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		return null;
	}
	if (typeof value !== "object" || value === null) return null;
	const a = value as Record<string, unknown>;
	if (typeof a.refused === "string") return { refused: a.refused };
	if (!Array.isArray(a.output) || !Number.isInteger(a.exitCode)) return null;
	const output: [1 | 2, string][] = [];
	for (const part of a.output) {
		if (!Array.isArray(part) || (part[0] !== 1 && part[0] !== 2) || typeof part[1] !== "string") return null;
		output.push([part[0], part[1]]);
	}
	return { output, exitCode: a.exitCode as number };
}
