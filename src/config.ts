/**
 * Shell-side settings: where pi keeps sessions, where the index lives, the config file, and the
 * caller's authorization root. The only module that reads HOME, the environment and pi's
 * settings.json. Everything downstream receives a frozen Settings value.
 */
import { closeSync, fstatSync, lstatSync, readlinkSync, readSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import * as v from "valibot";
import { isWithin } from "./auth/scope.ts";
import { PiEventsError } from "./errors.ts";
import type { SourceDir } from "./source/discover.ts";
import { canonicalPath } from "./source/paths.ts";
import { openRegularFile } from "./source/read.ts";

export type Env = Readonly<Record<string, string | undefined>>;

export interface Settings {
	indexPath: string;
	sourceDirs: SourceDir[];
	/** Absolute path of the config file that was read, if any. */
	configFile: string | null;
	/** Workspace root from the config file, if any. */
	configRoot: string | null;
	agentDir: string;
	/**
	 * The largest index a query's sync scrubs a removed session from before it answers
	 * ($PI_EVENTS_SCRUB_INLINE_MAX_BYTES; unset: sync/scrub.ts SCRUB_INLINE_MAX_BYTES).
	 */
	scrubInlineMaxBytes?: number;
}

interface SettingsInput {
	indexPath?: string;
	sessionDirs?: string[];
	cwd: string;
	env: Env;
}

/** The config file's fields. */
interface FileConfig {
	sessionDirs?: string[];
	root?: string;
	index?: string;
}

/**
 * The config file's schema, built only when there is a config file to check. valibot is imported
 * as ES modules so the bundle keeps only the functions used; `require("valibot")` took its
 * CommonJS build whole (about 90 KB of the binary's 290 KB of JavaScript), which every process
 * then loaded at start.
 */
function configSchema() {
	return v.strictObject({
		sessionDirs: v.optional(v.array(v.pipe(v.string(), v.minLength(1)))),
		root: v.optional(v.pipe(v.string(), v.minLength(1))),
		index: v.optional(v.pipe(v.string(), v.minLength(1))),
	});
}

/**
 * $HOME, else the home directory of the user's account. node:os is loaded only then: importing it
 * cost every process about 0.8 ms, and $HOME is almost always set.
 */
function homeOf(env: Env): string {
	if (env.HOME) return env.HOME;
	const os: typeof import("node:os") = require("node:os");
	return os.homedir();
}

function expandHome(path: string, env: Env): string {
	if (path === "~") return homeOf(env);
	if (path.startsWith("~/")) return join(homeOf(env), path.slice(2));
	return path;
}

/** pi's agent dir: $PI_CODING_AGENT_DIR or ~/.pi/agent (pi's getAgentDir). */
export function agentDirOf(env: Env): string {
	const fromEnv = env.PI_CODING_AGENT_DIR;
	return fromEnv ? resolve(expandHome(fromEnv, env)) : join(homeOf(env), ".pi", "agent");
}

function defaultIndexPath(env: Env): string {
	const cache = env.XDG_CACHE_HOME ? resolve(env.XDG_CACHE_HOME) : join(homeOf(env), ".cache");
	return join(cache, "pi-events", "index.db");
}

function configPathOf(env: Env): string {
	if (env.PI_EVENTS_CONFIG) return resolve(expandHome(env.PI_EVENTS_CONFIG, env));
	const base = env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(homeOf(env), ".config");
	return join(base, "pi-events", "config.json");
}

export function resolveSettings(input: SettingsInput): Settings {
	const { env, cwd } = input;
	const agentDir = agentDirOf(env);
	const configFile = configPathOf(env);
	const config = readConfig(configFile, env.PI_EVENTS_CONFIG !== undefined);
	const configDir = dirname(configFile);

	const sourceDirs: SourceDir[] = [];
	const add = (path: string, origin: SourceDir["origin"], base: string) => {
		const abs = resolve(base, expandHome(path, env));
		if (!sourceDirs.some((d) => d.path === abs)) sourceDirs.push({ path: abs, origin });
	};
	add(join(agentDir, "sessions"), "pi", cwd);
	const customDir = env.PI_CODING_AGENT_SESSION_DIR || readPiSessionDir(join(agentDir, "settings.json"));
	if (customDir) add(customDir, "pi-session-dir", cwd);
	for (const dir of config.value?.sessionDirs ?? []) add(dir, "config", configDir);
	for (const dir of input.sessionDirs ?? []) add(dir, "flag", cwd);

	const indexPath = indexPathFrom(input, config.value, configDir);

	refuseUnsafeIndexPath(indexPath, sourceDirs);
	const scrubInlineMaxBytes = scrubInlineMaxBytesOf(env);
	return {
		indexPath,
		sourceDirs,
		configFile: config.value ? configFile : null,
		configRoot: config.value?.root ? resolve(configDir, expandHome(config.value.root, env)) : null,
		agentDir,
		...(scrubInlineMaxBytes === undefined ? {} : { scrubInlineMaxBytes }),
	};
}

function scrubInlineMaxBytesOf(env: Env): number | undefined {
	const raw = env.PI_EVENTS_SCRUB_INLINE_MAX_BYTES?.trim();
	if (!raw) return undefined;
	const n = Number(raw);
	if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n)) {
		throw new PiEventsError("E_CONFIG", `PI_EVENTS_SCRUB_INLINE_MAX_BYTES must be a whole number of bytes, got ${JSON.stringify(raw)}`);
	}
	return n;
}

/**
 * The index path alone: `--index`, else $PI_EVENTS_INDEX, else the config file's, else the
 * default. What a client of the resident server needs to find it (cli/command-client.ts).
 */
export function indexPathOf(input: Omit<SettingsInput, "sessionDirs">): string {
	const configFile = configPathOf(input.env);
	if (input.indexPath || input.env.PI_EVENTS_INDEX) return indexPathFrom(input, null, dirname(configFile));
	return indexPathFrom(input, readConfig(configFile, input.env.PI_EVENTS_CONFIG !== undefined).value, dirname(configFile));
}

function indexPathFrom(input: Omit<SettingsInput, "sessionDirs">, config: FileConfig | null, configDir: string): string {
	const { cwd, env } = input;
	if (input.indexPath) return resolve(cwd, expandHome(input.indexPath, env));
	if (env.PI_EVENTS_INDEX) return resolve(cwd, expandHome(env.PI_EVENTS_INDEX, env));
	if (config?.index) return resolve(configDir, expandHome(config.index, env));
	return defaultIndexPath(env);
}

function readConfig(path: string, explicit: boolean): { value: FileConfig | null } {
	let text: string | null;
	try {
		text = readSettingsFile(path, CONFIG_MAX_BYTES);
	} catch (err) {
		const code = (err as NodeJS.ErrnoException).code;
		const why =
			code === "EFTYPE"
				? "is not a regular file"
				: code === "EFBIG"
					? `is larger than ${CONFIG_MAX_BYTES / 1024} KiB`
					: `cannot be read (${code ?? String(err)})`;
		throw new PiEventsError("E_CONFIG", `config file ${path} ${why}`);
	}
	if (text === null) {
		if (explicit) throw new PiEventsError("E_CONFIG", `config file ${path} (from PI_EVENTS_CONFIG) does not exist`);
		return { value: null };
	}
	let raw: unknown;
	try {
		raw = JSON.parse(text);
	} catch (err) {
		throw new PiEventsError("E_CONFIG", `config file ${path} is not valid JSON: ${err instanceof Error ? err.message : err}`);
	}
	const schema = configSchema();
	const parsed = v.safeParse(schema, raw);
	if (!parsed.success) {
		throw new PiEventsError("E_CONFIG", `config file ${path} is invalid: ${v.summarize(parsed.issues).replace(/\n/g, "; ")}`);
	}
	return { value: parsed.output };
}

/** pi-events' config file is a few lines; pi's settings.json a few screens. */
const CONFIG_MAX_BYTES = 256 * 1024;
const PI_SETTINGS_MAX_BYTES = 1024 * 1024;

/**
 * A settings file's text, or null when there is none. Opened like a session file (source/read.ts):
 * non-blocking and only if it is a regular file, so a FIFO or a device named by the environment
 * (PI_EVENTS_CONFIG=/dev/zero, a FIFO as pi's settings.json) fails at once with EFTYPE instead of
 * blocking the process, or the resident server and all its clients, forever; and read only up to
 * `maxBytes` (EFBIG beyond), so no file makes it read without end.
 */
function readSettingsFile(path: string, maxBytes: number): string | null {
	let fd: number;
	try {
		fd = openRegularFile(path);
	} catch (err) {
		const code = (err as NodeJS.ErrnoException).code;
		if (code === "ENOENT" || code === "ENOTDIR") return null;
		throw err;
	}
	try {
		const size = fstatSync(fd).size;
		if (size > maxBytes) throw Object.assign(new Error(`${path} is larger than ${maxBytes} bytes`), { code: "EFBIG" });
		// The file may grow after the stat: one byte more than it held shows that it did.
		const buf = Buffer.alloc(size + 1);
		let filled = 0;
		for (let n = 1; n > 0 && filled < buf.length; filled += n) n = readSync(fd, buf, filled, buf.length - filled, filled);
		if (filled > size) throw Object.assign(new Error(`${path} grew while it was read`), { code: "EAGAIN" });
		return buf.subarray(0, filled).toString("utf8");
	} finally {
		closeSync(fd);
	}
}

/** `sessionDir` from pi's global settings.json; a broken settings file is pi's business, not ours. */
function readPiSessionDir(path: string): string | null {
	try {
		const text = readSettingsFile(path, PI_SETTINGS_MAX_BYTES);
		const settings = text === null ? null : (JSON.parse(text) as unknown);
		if (settings && typeof settings === "object" && "sessionDir" in settings) {
			const dir = (settings as { sessionDir?: unknown }).sessionDir;
			return typeof dir === "string" && dir ? dir : null;
		}
	} catch {
		// Missing, unreadable or not a regular file: pi would fall back to its default too.
	}
	return null;
}

export { canonicalPath };

/**
 * The caller's authorization root: an explicit root, else the Git worktree root containing the
 * cwd (the nearest ancestor with a `.git` entry Git itself would accept: see gitEntryKind), else
 * the cwd itself. As Git does, a repository owned by another account stops the walk: Git refuses
 * to work there ("dubious ownership"), so the cwd alone is the root.
 */
export function resolveRoot(cwd: string, explicit: string | null): string {
	return resolveRootSource(cwd, explicit).root;
}

/** The caller's authorization root (as resolveRoot) and whether it was given, a Git worktree root, or the cwd. */
export function resolveRootSource(cwd: string, explicit: string | null): { root: string; source: "explicit" | "git" | "cwd" } {
	if (explicit) {
		if (!isAbsolute(explicit)) throw new PiEventsError("E_USAGE", `--root must be an absolute path, got ${JSON.stringify(explicit)}`);
		return { root: canonicalPath(explicit), source: "explicit" };
	}
	const start = canonicalPath(cwd);
	let dir = start;
	for (;;) {
		const kind = gitEntryKind(dir);
		if (kind === "repository") return { root: dir, source: "git" };
		if (kind === "not-owned") return { root: start, source: "cwd" };
		const parent = dirname(dir);
		if (parent === dir) return { root: start, source: "cwd" };
		dir = parent;
	}
}

/**
 * What the `.git` entry of `worktree` makes of it, following Git (setup.c): a worktree root when
 * the entry is a Git directory, or a `.git` file whose `gitdir:` line names one (a relative path
 * is taken from the file's directory). Anything else (an empty `.git` directory, a planted `.git`
 * file pointing nowhere, a FIFO, a dangling link) would let whoever can write a parent directory
 * widen the scope of every caller below it, so it does not count. "not-owned": a repository whose
 * worktree, `.git` entry or Git directory belongs to another account (Git's "dubious ownership";
 * Git's `safe.directory` exceptions are not read: refusing only narrows the scope).
 */
function gitEntryKind(worktree: string): "repository" | "none" | "not-owned" {
	const entry = join(worktree, ".git");
	let st: ReturnType<typeof statSync>;
	try {
		st = statSync(entry);
	} catch {
		return "none";
	}
	let gitDir: string;
	if (st.isDirectory()) gitDir = entry;
	else if (st.isFile() && st.size <= 4096) {
		const match = /^gitdir: *(.+?)\s*$/m.exec(readSmallRegularFile(entry) ?? "");
		if (!match) return "none";
		gitDir = resolve(worktree, match[1]!);
	} else return "none";
	if (!isGitDirectory(gitDir)) return "none";
	return [worktree, entry, gitDir].every(ownedByMe) ? "repository" : "not-owned";
}

/**
 * Git's own test of a Git directory (setup.c is_git_directory): a HEAD that names a ref or an
 * object, and `objects/` and `refs/` directories in its common directory (a linked worktree's
 * Git directory names that in its `commondir` file).
 */
function isGitDirectory(gitDir: string): boolean {
	const head = readSmallRegularFile(join(gitDir, "HEAD"));
	if (head === null || !/^(?:ref: *refs\/|[0-9a-f]{40}(?:[0-9a-f]{24})?\s*$)/.test(head)) return false;
	const commonDir = readSmallRegularFile(join(gitDir, "commondir"))?.trim();
	const common = commonDir ? resolve(gitDir, commonDir) : gitDir;
	return isDirectory(join(common, "objects")) && isDirectory(join(common, "refs"));
}

function isDirectory(path: string): boolean {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}

/** A regular file's text up to 4 KiB, or null (missing, not regular, bigger). Never blocks on a FIFO. */
function readSmallRegularFile(path: string): string | null {
	try {
		return readSettingsFile(path, 4096);
	} catch {
		return null;
	}
}

/** Whether this process's account owns `path` itself (not a symlink's target), as Git checks it. */
function ownedByMe(path: string): boolean {
	const uid = process.geteuid?.();
	if (uid === undefined) return true; // no uids on this platform
	try {
		return lstatSync(path).uid === uid;
	} catch {
		return false;
	}
}

const SQLITE_MAGIC = "SQLite format 3\u0000";

/**
 * The index is written, so it must never land on pi's history or on someone else's file. Refused:
 * a path that is, or resolves through symlinks (even dangling ones) to, anything inside a session
 * source directory; an existing path that is not a regular file (a FIFO would hang SQLite); and an
 * existing non-empty file that is not a SQLite database. An empty file is taken as an index SQLite
 * had not written yet (a crash right after creating it), unless it is named like a session file.
 */
function refuseUnsafeIndexPath(indexPath: string, sourceDirs: readonly SourceDir[]): void {
	const target = resolvedPath(indexPath);
	for (const dir of sourceDirs) {
		const source = resolvedPath(dir.path);
		if (isWithin(target, source)) {
			throw new PiEventsError(
				"E_INDEX",
				`refusing the index path ${indexPath}: it ${target === indexPath ? "lies" : `resolves to ${target}, which lies`} inside the session directory ${dir.path}; choose a path outside pi's session directories`,
			);
		}
	}
	let st: ReturnType<typeof statSync>;
	try {
		st = statSync(target);
	} catch {
		return; // missing: SQLite creates it
	}
	const refuse = (why: string) => {
		throw new PiEventsError("E_INDEX", `refusing the index path ${indexPath}: ${why}; it is left untouched (choose another path)`);
	};
	if (!st.isFile()) refuse("it exists and is not a regular file");
	if (st.size === 0) {
		if (basename(target).endsWith(".jsonl")) refuse("it is an empty session-like file (.jsonl), not a pi-events index");
		return;
	}
	let magic = "";
	try {
		const fd = openRegularFile(target);
		try {
			const buf = Buffer.alloc(16);
			magic = buf.subarray(0, readSync(fd, buf, 0, 16, 0)).toString("latin1");
		} finally {
			closeSync(fd);
		}
	} catch {
		return; // unreadable: opening it reports the real reason
	}
	if (magic !== SQLITE_MAGIC) refuse("it exists and is not a SQLite database");
}

/** The absolute path `path` leads to: symlinks resolved, including dangling ones and missing tails. */
function resolvedPath(path: string, depth = 0): string {
	const abs = resolve(path);
	try {
		return realpathSync.native(abs);
	} catch {
		// missing somewhere: resolve what exists
	}
	if (depth > 40) return abs;
	try {
		if (lstatSync(abs).isSymbolicLink()) return resolvedPath(resolve(dirname(abs), readlinkSync(abs)), depth + 1);
	} catch {
		// not there at all
	}
	const parent = dirname(abs);
	return parent === abs ? abs : join(resolvedPath(parent, depth + 1), basename(abs));
}
