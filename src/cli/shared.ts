/**
 * What every subcommand shares: the common flags, strict flag checking (citty accepts unknown
 * flags silently; a typo must not silently change a search), settings resolution, and the
 * stderr progress bar.
 */
import type { ArgsDef } from "citty";
import { resolveSettings, type Settings } from "../config.ts";
import { PiEventsError } from "../errors.ts";
import { isTerminal, writeErr } from "./out.ts";
import { invocation } from "./invocation.ts";
import { groupThousands } from "../project/text.ts";

export const commonArgs = {
	index: {
		type: "string",
		description:
			"Index database path (default: $PI_EVENTS_INDEX, else index in the config file, else $XDG_CACHE_HOME/pi-events/index.db or ~/.cache/pi-events/index.db)",
		valueHint: "path",
	},
	"sessions-dir": {
		type: "string",
		description: "Extra session directory to index (repeatable; added to pi's own)",
		valueHint: "dir",
	},
	json: { type: "boolean", description: "Print JSON on stdout" },
} as const satisfies ArgsDef;

/** All values of a repeatable `--name value` / `--name=value` flag (citty keeps only the last). */
export function collectRepeated(rawArgs: readonly string[], name: string): string[] {
	const values: string[] = [];
	for (let i = 0; i < rawArgs.length; i++) {
		const arg = rawArgs[i]!;
		if (arg === "--") break;
		if (arg === `--${name}`) {
			const next = rawArgs[i + 1];
			if (next === undefined || next.startsWith("--")) throw new PiEventsError("E_USAGE", `--${name} needs a value`);
			values.push(next);
			i++;
		} else if (arg.startsWith(`--${name}=`)) {
			values.push(arg.slice(name.length + 3));
		}
	}
	return values;
}

const toKebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** Reject flags the command does not define, with a hint. */
export function checkFlags(rawArgs: readonly string[], def: ArgsDef): void {
	const known = new Set<string>(["help", "h"]);
	for (const [name, arg] of Object.entries(def)) {
		if (arg.type === "positional") continue;
		known.add(name);
		known.add(toKebab(name));
		if (arg.type === "boolean") known.add(`no-${toKebab(name)}`);
		const aliases = "alias" in arg && arg.alias ? (Array.isArray(arg.alias) ? arg.alias : [arg.alias]) : [];
		for (const a of aliases) known.add(a);
	}
	for (const arg of rawArgs) {
		if (arg === "--") break;
		if (!arg.startsWith("-") || arg === "-" || /^-\d/.test(arg)) continue;
		const name = arg.replace(/^--?/, "").split("=")[0]!;
		if (!known.has(name)) throw new PiEventsError("E_USAGE", `unknown option ${arg.split("=")[0]} (see --help)`);
	}
}

export function settingsFrom(args: { index?: string }, rawArgs: readonly string[]): Settings {
	return resolveSettings({
		indexPath: args.index,
		sessionDirs: collectRepeated(rawArgs, "sessions-dir"),
		cwd: invocation().cwd,
		env: invocation().env,
	});
}

/** A progress bar on stderr, shown only on a terminal and only once work takes over a second. */
export function progressReporter(label: string): {
	update: (p: { done: number; total: number; bytes: number }) => void;
	finish: () => void;
} {
	const tty = isTerminal(2);
	const started = performance.now();
	let shown = false;
	let last = 0;
	return {
		update(p) {
			if (!tty) return;
			const now = performance.now();
			if (now - started < 1000 || now - last < 100) return;
			last = now;
			shown = true;
			const width = 30;
			const filled = p.total > 0 ? Math.round((p.done / p.total) * width) : width;
			const mb = (p.bytes / 1e6).toFixed(1);
			writeErr(`\r${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${p.done}/${p.total} files, ${mb} MB`);
		},
		finish() {
			if (shown) writeErr("\r\x1b[2K");
		},
	};
}

export function formatMs(ms: number): string {
	return ms < 1000 ? `${ms.toFixed(ms < 10 ? 1 : 0)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export function plural(n: number, word: string): string {
	return `${groupThousands(n)} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * Full descriptions of unexpected errors, only when the command's environment sets
 * PI_EVENTS_DEBUG: inside the resident server, the client's, never the server's own (its lines
 * would reach every client's stderr).
 */
export function debugLog(): ((line: string) => void) | undefined {
	return invocation().env.PI_EVENTS_DEBUG ? (line: string) => writeErr(`pi-events debug: ${line}\n`) : undefined;
}
