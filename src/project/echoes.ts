/**
 * pi-events' own echoes (pure). When an agent searches its history with pi-events, the calls and
 * their outputs land in the session too: the `event_search` / `event_read` / `event_trace` tools
 * the extension registers, and `pi-events …` run through a bash tool or as a user `!command`.
 * Their text repeats the words and snippets of the events they found, so indexed like any other
 * event they would outrank the originals on the next search. They are derived events: indexed
 * (read and trace work on them), excluded from search unless asked for.
 */

/** The tool names the pi extension registers (extension/pi-events.ts). */
const PI_EVENTS_TOOLS: ReadonlySet<string> = new Set(["event_search", "event_read", "event_trace"]);

/** A pi-events tool, also as MCP clients prefix it (`mcp__pi-events__event_search`, `pi-events_event_read`). */
export function isPiEventsTool(name: string | null): boolean {
	if (!name) return false;
	if (PI_EVENTS_TOOLS.has(name)) return true;
	const m = /^(?:mcp__)?pi[-_]events(?:__|[_.:-])(event_(?:search|read|trace))$/.exec(name);
	return m !== null;
}

/** Tools that run a shell command from their `command` argument. */
const SHELL_TOOLS: ReadonlySet<string> = new Set(["bash", "shell", "sh", "exec", "run_command", "terminal"]);

export function isShellTool(name: string | null): boolean {
	return name !== null && SHELL_TOOLS.has(name.toLowerCase());
}

/**
 * True when a shell command runs the pi-events executable: as a command word at the start or
 * after `;`, `&&`, `||`, `|`, `(`, `$(`, `` ` `` or `env`/`bunx`/`npx`-style launchers, by name or path
 * (`./dist/pi-events`, `~/.local/bin/pi-events`). A mere mention (`grep pi-events README.md`,
 * `cd pi-events`) is not a run.
 */
export function runsPiEvents(command: string | null): boolean {
	if (!command?.includes("pi-events")) return false;
	return RUNS_PI_EVENTS.test(command);
}

const LAUNCHERS = "(?:(?:sudo|env|exec|time|nice|timeout\\s+\\S+|bunx|npx|pnpm\\s+(?:exec|dlx)|bun\\s+(?:x|run))\\s+|[A-Z_][A-Z0-9_]*=\\S*\\s+)*";
const RUNS_PI_EVENTS = new RegExp(`(?:^|[;&|(\`\\n]|\\$\\()\\s*${LAUNCHERS}(?:\\S*/)?pi-events(?=\\s|$|[;&|)\`])`);
