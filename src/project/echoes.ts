/**
 * pi-events' own echoes (pure). When an agent searches its history with pi-events, the calls and
 * their outputs land in the session too: the tools the extension and the MCP server offer
 * (TOOL_NAMES), and `pi-events …` run through a bash tool or as a user `!command`. Their text
 * repeats the words and snippets of the events they found, so indexed like any other event they
 * would outrank the originals on the next search. They are derived events: indexed (read and
 * trace work on them), excluded from search unless asked for.
 *
 * Being left out of search by default is a cost for anything else, so a shell command is an echo
 * only when it does nothing but run pi-events: a command that runs anything else beside it (a
 * `curl … | sh` after `;`, a `git commit` whose message has a line starting with `pi-events`) is
 * searched like any other, and its failure shows in `--error`.
 */
import { TOOL_NAMES } from "../model.ts";

const PI_EVENTS_TOOLS: ReadonlySet<string> = new Set(TOOL_NAMES);
/** The same names as MCP clients prefix them (`mcp__pi-events__event_search`, `pi-events_event_read`). */
const PREFIXED_TOOL = /^(?:mcp__)?pi[-_]events(?:__|[_.:-])(\w+)$/;

/** A pi-events tool, also as MCP clients prefix it. */
export function isPiEventsTool(name: string | null): boolean {
	if (!name) return false;
	if (PI_EVENTS_TOOLS.has(name)) return true;
	const m = PREFIXED_TOOL.exec(name);
	return m !== null && PI_EVENTS_TOOLS.has(m[1]!);
}

/** Tools that run a shell command from their `command` argument. */
const SHELL_TOOLS: ReadonlySet<string> = new Set(["bash", "shell", "sh", "exec", "run_command", "terminal"]);

export function isShellTool(name: string | null): boolean {
	return name !== null && SHELL_TOOLS.has(name.toLowerCase());
}

/**
 * True when a shell command does nothing but run the pi-events executable (by name or path:
 * `./dist/pi-events`, `~/.local/bin/pi-events`, behind `env`/`timeout 5`/`bunx`-style launchers
 * and `NAME=value` assignments). Besides its runs, the command may only change directory (`cd
 * DIR &&`) and pipe a run's output through a text filter that reads and writes nothing else
 * (`| head`, `| jq .hits`: FILTERS). Anything else in its lists or pipelines, a command or
 * process substitution, a subshell or group, makes it not an echo. Quotes, escapes, comments and
 * here-documents are read as the shell reads them, so a quoted line or a here-document line that
 * starts with `pi-events` is text, not a run.
 */
export function runsPiEvents(command: string | null): boolean {
	if (!command?.includes("pi-events")) return false;
	const pipelines = parseShell(command);
	if (pipelines === null || pipelines.length === 0) return false;
	let runs = 0;
	for (const pipeline of pipelines) {
		const first = pipeline[0]!;
		if (pipeline.length === 1 && isCd(first)) continue;
		if (!isPiEventsRun(first)) return false;
		runs++;
		if (!pipeline.slice(1).every((stage) => FILTERS.has(stage[0] ?? ""))) return false;
	}
	return runs > 0;
}

/** Text filters a run's output may be piped through: they read their input and write their output, nothing else. */
const FILTERS: ReadonlySet<string> = new Set(["head", "tail", "grep", "jq", "wc", "cut"]);

/** Commands that start another (their own options first, then the command). */
const LAUNCHERS: ReadonlySet<string> = new Set(["sudo", "env", "exec", "command", "time", "nice", "nohup", "bunx", "npx"]);

/** A simple command's words without its leading assignments; `cd` alone or with one directory. */
function isCd(words: readonly string[]): boolean {
	return words[0] === "cd" && words.length <= 2;
}

function isPiEventsRun(words: readonly string[]): boolean {
	let i = 0;
	for (;;) {
		const word = words[i];
		if (word === undefined) return false;
		if (ASSIGNMENT.test(word)) i++;
		else if (LAUNCHERS.has(word)) i++;
		else if (word === "timeout" && words[i + 1] !== undefined) i += 2;
		else if ((word === "pnpm" && (words[i + 1] === "exec" || words[i + 1] === "dlx")) || (word === "bun" && (words[i + 1] === "x" || words[i + 1] === "run")))
			i += 2;
		else return /(?:^|\/)pi-events$/.test(word);
	}
}

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/** A command as the shell splits it: lists of pipelines, each a list of simple commands' words. */
type Pipelines = string[][][];

/**
 * Split a command into pipelines of simple commands (words with quotes removed; assignments
 * before the command dropped; redirections and their targets dropped). Null when it holds what
 * this reading does not follow: a command or process substitution, a subshell, an unterminated
 * quote. Enough of the shell's grammar to tell what runs, not to run it.
 */
function parseShell(text: string): Pipelines | null {
	const pipelines: Pipelines = [];
	let pipeline: string[][] = [];
	let words: string[] = [];
	let word: string | null = null;
	/** Here-document delimiters met on the current line: their bodies start at the next newline. */
	let heredocs: { delimiter: string; stripTabs: boolean }[] = [];
	/** The next word is a redirection's target (dropped), or a here-document's delimiter. */
	let target: "file" | "heredoc" | "heredoc-tabs" | null = null;

	const endWord = () => {
		if (word === null) return;
		if (target === "file") target = null;
		else if (target !== null) {
			heredocs.push({ delimiter: word, stripTabs: target === "heredoc-tabs" });
			target = null;
		} else if (!(words.length === 0 && ASSIGNMENT.test(word))) words.push(word);
		word = null;
	};
	const endCommand = () => {
		endWord();
		if (words.length > 0) pipeline.push(words);
		words = [];
	};
	const endPipeline = () => {
		endCommand();
		if (pipeline.length > 0) pipelines.push(pipeline);
		pipeline = [];
	};

	let i = 0;
	const n = text.length;
	while (i < n) {
		const c = text[i]!;
		if (c === "\\") {
			if (text[i + 1] === "\n") {
				i += 2; // a line continuation
				continue;
			}
			word = (word ?? "") + (text[i + 1] ?? "");
			i += 2;
			continue;
		}
		if (c === "'") {
			const end = text.indexOf("'", i + 1);
			if (end === -1) return null;
			word = (word ?? "") + text.slice(i + 1, end);
			i = end + 1;
			continue;
		}
		if (c === '"') {
			let j = i + 1;
			let inner = "";
			for (; j < n && text[j] !== '"'; j++) {
				if (text[j] === "\\" && j + 1 < n) inner += text[++j];
				else if (text[j] === "`" || (text[j] === "$" && text[j + 1] === "(")) return null;
				else inner += text[j];
			}
			if (j >= n) return null;
			word = (word ?? "") + inner;
			i = j + 1;
			continue;
		}
		if (c === "`" || (c === "$" && text[i + 1] === "(")) return null;
		if (c === "$" && text[i + 1] === "'") {
			const end = ansiQuoteEnd(text, i + 2);
			if (end === -1) return null;
			word = (word ?? "") + text.slice(i + 2, end);
			i = end + 1;
			continue;
		}
		if (c === "#" && word === null) {
			while (i < n && text[i] !== "\n") i++;
			continue;
		}
		if (c === "\n") {
			endPipeline();
			i++;
			if (target !== null) return null; // a redirection with no target
			for (const doc of heredocs) {
				const end = heredocEnd(text, i, doc.delimiter, doc.stripTabs);
				if (end === -1) return null;
				i = end;
			}
			heredocs = [];
			continue;
		}
		if (c === " " || c === "\t") {
			endWord();
			i++;
			continue;
		}
		if (c === ";" || c === "&" || c === "|") {
			const two = text.slice(i, i + 2);
			if (two === "&>") {
				endWord();
				target = "file";
				i += text[i + 2] === ">" ? 3 : 2;
				continue;
			}
			if (c === "|" && two !== "||") {
				endCommand(); // a pipe: the next command reads this one's output
				i += two === "|&" ? 2 : 1;
				continue;
			}
			endPipeline();
			i += two === "&&" || two === "||" || two === ";;" ? 2 : 1;
			continue;
		}
		if (c === "(" || c === ")" || ((c === "<" || c === ">") && text[i + 1] === "(")) return null;
		if (c === "<" || c === ">") {
			// A file descriptor number right before the operator belongs to it (`2>&1`).
			if (word !== null && /^\d+$/.test(word)) word = null;
			endWord();
			const three = text.slice(i, i + 3);
			if (three === "<<<") {
				target = "file";
				i += 3;
			} else if (three === "<<-") {
				target = "heredoc-tabs";
				i += 3;
			} else if (text.slice(i, i + 2) === "<<") {
				target = "heredoc";
				i += 2;
			} else {
				i++;
				if (text[i] === ">" || text[i] === "|" || text[i] === "<") i++;
				if (text[i] === "&") {
					// `>&2`, `2>&1`, `>&-`: a descriptor, not a file word.
					i++;
					while (i < n && /[\d-]/.test(text[i]!)) i++;
					continue;
				}
				target = "file";
			}
			continue;
		}
		word = (word ?? "") + c;
		i++;
	}
	if (target !== null || heredocs.length > 0) return null;
	endPipeline();
	return pipelines;
}

/** The closing quote of a `$'…'` string starting at `from` (backslash escapes skipped), or -1. */
function ansiQuoteEnd(text: string, from: number): number {
	for (let j = from; j < text.length; j++) {
		if (text[j] === "\\") j++;
		else if (text[j] === "'") return j;
	}
	return -1;
}

/** Where the text after a here-document body starting at `from` begins (past its delimiter line), or -1. */
function heredocEnd(text: string, from: number, delimiter: string, stripTabs: boolean): number {
	let at = from;
	while (at <= text.length) {
		const eol = text.indexOf("\n", at);
		const line = text.slice(at, eol === -1 ? text.length : eol);
		if ((stripTabs ? line.replace(/^\t+/, "") : line) === delimiter) return eol === -1 ? text.length : eol + 1;
		if (eol === -1) return -1;
		at = eol + 1;
	}
	return -1;
}
