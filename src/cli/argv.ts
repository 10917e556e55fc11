/**
 * A subcommand's arguments, parsed from its citty definition (`defineCommand({ args })`) the way
 * citty's `parseArgs` reads them, without its cost: citty parses by building camelCase and
 * kebab-case aliases for every flag, handing them to `node:util`'s `parseArgs` and reading the
 * result through a Proxy that converts each name again. For `search`'s 28 flags that was 2.3–2.7
 * ms of every new process, and 0.15–0.2 ms warm (bun 1.4.4, measured in the compiled binary),
 * against a search that answers in under 1 ms. citty still defines the commands and renders their
 * usage; `test/cli/argv.test.ts` checks this parser against citty's on the same definitions.
 *
 * What it reads: `--name value` and `--name=value` for string flags (the last one given wins; a
 * string flag with nothing after it is ""), `--name` and `--name=false|…` for boolean flags,
 * `--no-name` for false, defaults, positionals in order (a required one that is missing is a usage
 * error), and everything after `--` as positionals. Unknown flags are refused before this runs
 * (`checkFlags`); short flags other than `-h` are not defined, and are skipped as citty skips them.
 *
 * `defineCommand` lives here too: the commands are typed by citty's definitions without loading
 * citty itself.
 */
import type { ArgsDef, CommandDef } from "citty";
import { PiEventsError } from "../errors.ts";

/**
 * citty's `defineCommand` (an identity that types a definition), without initialising citty's
 * module in every process: main.ts loads it only to render usage (`--help`). `pi-events --version`
 * took 15.8 → 14.3 ms (medians of 60 interleaved runs).
 */
export function defineCommand<const T extends ArgsDef = ArgsDef>(def: CommandDef<T>): CommandDef<T> {
	return def;
}

/** citty's `ParsedArgs` shape: each flag and positional by its defined name, and `_`. */
export type ParsedArgv = Record<string, string | boolean | string[]> & { _: string[] };

export function parseArgv(rawArgs: readonly string[], def: ArgsDef): ParsedArgv {
	const out: ParsedArgv = { _: [] };
	for (const [name, arg] of Object.entries(def)) {
		if (arg.type !== "positional" && arg.default !== undefined) out[name] = arg.default;
	}
	const negated: string[] = [];
	for (let i = 0; i < rawArgs.length; i++) {
		const arg = rawArgs[i]!;
		if (arg === "--") {
			out._.push(...rawArgs.slice(i + 1));
			break;
		}
		if (arg.startsWith("--no-")) {
			negated.push(arg.slice(5));
			continue;
		}
		if (arg.startsWith("--")) {
			const eq = arg.indexOf("=");
			const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
			const type = def[name]?.type;
			if (eq !== -1) {
				const value = arg.slice(eq + 1);
				out[name] = type === "boolean" ? value !== "false" : value;
			} else if (type === "string" || type === "enum") {
				// A string flag takes the next argument, whatever it looks like (as node's parseArgs does).
				const value = rawArgs[i + 1];
				out[name] = value ?? "";
				if (value !== undefined) i++;
			} else {
				out[name] = true;
			}
			continue;
		}
		// A lone "-" is an argument; "-x" is a short flag (none is defined: checkFlags refused it).
		if (arg.startsWith("-") && arg.length > 1) continue;
		out._.push(arg);
	}
	for (const name of negated) out[name] = false;
	const positionals = [...out._];
	for (const [name, arg] of Object.entries(def)) {
		if (arg.type !== "positional") continue;
		const value = positionals.shift();
		if (value !== undefined) out[name] = value;
		else if (arg.default === undefined && arg.required !== false) {
			throw new PiEventsError("E_USAGE", `missing required argument ${name.toUpperCase()} (see --help)`);
		} else if (arg.default !== undefined) out[name] = arg.default;
	}
	return out;
}
