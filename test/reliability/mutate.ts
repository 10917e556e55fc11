/**
 * Seeded mutations of a session corpus, shaped like what pi and its users do to session files:
 * appends (plain, branching, large), lines written in two pieces, torn tails and pi 1.x's "\n"
 * repair, truncation, pi's in-place `_rewriteFile` (open "w", one write per line), replacement by
 * rename, new sessions, deletion and moves between directories. Each returns the bytes the next
 * sync has to read (an estimate of its work), and its kind.
 */
import {
	appendFileSync,
	closeSync,
	copyFileSync,
	existsSync,
	mkdirSync,
	openSync,
	readFileSync,
	renameSync,
	statSync,
	truncateSync,
	unlinkSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { completeLines, entryLines, lastEntryId, piEntry, type Rng, sessionFiles } from "./util.ts";

export type MutationKind = "append" | "branch" | "big-append" | "torn" | "repair" | "truncate" | "rewrite" | "replace" | "new" | "delete" | "move";

/** Mutations that make the next sync rebuild (or remove) rather than append. */
export const REBUILDING: ReadonlySet<MutationKind> = new Set(["truncate", "rewrite", "replace", "new", "delete", "move"]);

export interface Mutation {
	kind: MutationKind;
	file: string;
	/** Bytes the next sync reads because of this mutation. */
	bytes: number;
}

export class Mutator {
	private clock = Date.parse("2026-11-20T10:00:00.000Z");
	private serial = 0;

	constructor(
		private readonly rng: Rng,
		private readonly sessions: string,
		/** Keep the corpus around this size: growth mutations stop above it. */
		private readonly maxBytes: number,
	) {}

	files(): string[] {
		return sessionFiles(this.sessions);
	}

	totalBytes(): number {
		return this.files().reduce((n, f) => n + statSync(f).size, 0);
	}

	private tag(): string {
		return `zqcrash${++this.serial}x`;
	}

	private line(parent: string | null, opts: { bigText?: number; kind?: string } = {}): string {
		this.clock += 1000 + this.rng.int(60_000);
		return `${JSON.stringify(piEntry(this.rng, this.rng.hex(8), parent, this.clock, this.tag(), opts))}\n`;
	}

	private hasTornTail(file: string): boolean {
		const buf = readFileSync(file);
		return buf.length > 0 && buf[buf.length - 1] !== 0x0a;
	}

	/** One random mutation; `kinds` restricts the choice. */
	mutate(kinds?: MutationKind[]): Mutation {
		const files = this.files();
		const big = this.totalBytes() > this.maxBytes;
		const choices: MutationKind[] = kinds ?? [
			"append",
			"append",
			"append",
			"branch",
			...(big ? [] : (["big-append", "new"] as MutationKind[])),
			"torn",
			"repair",
			"truncate",
			"rewrite",
			"replace",
			"delete",
			"move",
		];
		let kind = this.rng.pick(choices);
		if (files.length < 4 && (kind === "delete" || kind === "move")) kind = "new";
		if (files.length === 0) kind = "new";
		const file = this.rng.pick(files.length > 0 ? files : [""]);
		switch (kind) {
			case "append":
			case "branch":
			case "big-append":
				return this.append(file, kind);
			case "torn":
				return this.torn(file);
			case "repair":
				return this.repair(file);
			case "truncate":
				return this.truncate(file);
			case "rewrite":
				return this.rewrite(file);
			case "replace":
				return this.replace(file, files);
			case "new":
				return this.create(files);
			case "delete":
				unlinkSync(file);
				return { kind, file, bytes: 0 };
			case "move":
				return this.move(file);
		}
	}

	append(file: string, kind: "append" | "branch" | "big-append" = "append"): Mutation {
		let text = "";
		if (this.hasTornTail(file) && this.rng.chance(0.5)) text += "\n"; // pi 1.x repairs before appending; older pi glued
		let parent = lastEntryId(file);
		if (kind === "branch") {
			// A rewind: the new entry continues from an earlier entry (a new branch).
			const ids = entryLines(file)
				.map((e) => e.id)
				.filter((id): id is string => typeof id === "string");
			if (ids.length > 0) parent = this.rng.pick(ids.slice(0, Math.max(1, ids.length - 1)));
		}
		const n = kind === "big-append" ? 1 : this.rng.range(1, 6);
		for (let i = 0; i < n; i++) {
			const opts = kind === "big-append" ? { bigText: this.rng.range(300_000, 1_500_000), kind: this.rng.pick(["toolResult", "bash"]) } : {};
			const line = this.line(parent, opts);
			parent = (JSON.parse(line) as { id: string }).id;
			text += line;
		}
		appendFileSync(file, text);
		return { kind, file, bytes: text.length };
	}

	torn(file: string): Mutation {
		const line = this.line(lastEntryId(file));
		const cut = this.rng.range(1, line.length - 2);
		appendFileSync(file, line.slice(0, cut));
		return { kind: "torn", file, bytes: 0 };
	}

	/** pi 1.x on resume: a last line without LF gets a lone "\n", then pi appends normally. */
	repair(file: string): Mutation {
		let bytes = 0;
		if (this.hasTornTail(file)) {
			appendFileSync(file, "\n");
			bytes++;
		}
		const line = this.line(lastEntryId(file));
		appendFileSync(file, line);
		return { kind: "repair", file, bytes: bytes + line.length };
	}

	truncate(file: string): Mutation {
		const buf = readFileSync(file);
		const headerEnd = buf.indexOf(0x0a) + 1;
		if (headerEnd <= 0 || buf.length <= headerEnd) return this.append(file);
		let at = headerEnd + this.rng.int(buf.length - headerEnd);
		if (this.rng.chance(0.6)) {
			// At a line boundary (an editor or a backup restore), else mid-line (a torn tail).
			const nl = buf.indexOf(0x0a, at);
			at = nl < 0 ? buf.length : nl + 1;
		}
		truncateSync(file, at);
		return { kind: "truncate", file, bytes: at };
	}

	/**
	 * pi's `_rewriteFile`: the same inode opened with "w" (truncated) and written one line per
	 * write. The content changes like a migration would (every object gains a key at its end),
	 * and malformed lines are dropped.
	 */
	rewrite(file: string): Mutation {
		const lines = completeLines(file);
		const out: string[] = [];
		for (const l of lines) {
			try {
				const v = JSON.parse(l) as Record<string, unknown>;
				if (v.type !== "session") v.rewritten = this.serial;
				out.push(JSON.stringify(v));
			} catch {
				// pi drops what it cannot parse
			}
		}
		const fd = openSync(file, "w");
		let bytes = 0;
		try {
			for (const l of out) bytes += writeSync(fd, `${l}\n`);
		} finally {
			closeSync(fd);
		}
		return { kind: "rewrite", file, bytes };
	}

	/** Another session renamed over this file (new inode, different header). */
	replace(file: string, files: string[]): Mutation {
		const other = this.rng.pick(files);
		const text = this.withNewSessionId(readFileSync(other, "utf8"));
		const tmp = `${file}.tmp-${this.serial++}`;
		writeFileSync(tmp, text);
		renameSync(tmp, file);
		return { kind: "replace", file, bytes: text.length };
	}

	private withNewSessionId(text: string): string {
		const nl = text.indexOf("\n");
		if (nl < 0) return text;
		try {
			const header = JSON.parse(text.slice(0, nl)) as Record<string, unknown>;
			header.id = `0${this.rng.hex(7)}-${this.rng.hex(4)}-7${this.rng.hex(3)}-8${this.rng.hex(3)}-${this.rng.hex(12)}`;
			return `${JSON.stringify(header)}${text.slice(nl)}`;
		} catch {
			return text;
		}
	}

	create(files: string[]): Mutation {
		const dir = files.length === 0 || this.rng.chance(0.3) ? join(this.sessions, `--work-new-${this.rng.hex(4)}--`) : dirname(this.rng.pick(files));
		mkdirSync(dir, { recursive: true });
		this.clock += 60_000;
		const id = `01${this.rng.hex(6)}-${this.rng.hex(4)}-7${this.rng.hex(3)}-8${this.rng.hex(3)}-${this.rng.hex(12)}`;
		const path = join(dir, `${new Date(this.clock).toISOString().replace(/[:.]/g, "-")}_${id}.jsonl`);
		let text: string;
		if (files.length > 0 && this.rng.chance(0.5)) {
			text = this.withNewSessionId(readFileSync(this.rng.pick(files), "utf8"));
		} else {
			text = `${JSON.stringify({ type: "session", version: 3, id, timestamp: new Date(this.clock).toISOString(), cwd: `/work/new-${this.rng.hex(3)}` })}\n`;
			let parent: string | null = null;
			for (let i = 0, n = this.rng.range(2, 20); i < n; i++) {
				const line = this.line(parent);
				parent = (JSON.parse(line) as { id: string }).id;
				text += line;
			}
		}
		if (existsSync(path)) return { kind: "new", file: path, bytes: 0 };
		writeFileSync(path, text);
		return { kind: "new", file: path, bytes: text.length };
	}

	/** Rename a session within its directory or into another project directory. */
	move(file: string): Mutation {
		const dirs = [...new Set(this.files().map((f) => dirname(f)))];
		const target = this.rng.chance(0.5) ? dirname(file) : this.rng.pick(dirs);
		const dest = join(target, `moved-${this.serial++}-${basename(file)}`);
		if (this.rng.chance(0.5)) renameSync(file, dest);
		else {
			copyFileSync(file, dest); // a copy then a delete (a move across filesystems)
			unlinkSync(file);
		}
		return { kind: "move", file: dest, bytes: statSync(dest).size };
	}
}
