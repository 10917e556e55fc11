/**
 * The world of the search-surface suite: a real project directory (a Git worktree root, with a
 * subdirectory the caller works in), another workspace beside it, and hand-written sessions in
 * both, written for the behaviours under test (one session with many matches, literal « » in
 * the source, ids sharing a prefix in and out of scope, relative file paths, branches). Both
 * runners use the compiled binary: `pi-events <command> --json` and `serve --stdio`.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { makeRepo } from "../helpers/git.ts";
import { type AgentLayout, isolatedEnv, makeAgentLayout } from "../helpers/temp.ts";
import { assistantEntry, type Entry, toolResultEntry, userEntry, writeSession } from "../query/helpers.ts";
import { compiledBinary, modernMeta, RawServer } from "../server/harness.ts";

export interface World {
	layout: AgentLayout;
	bin: string;
	/** The authorization root: a Git worktree root. */
	project: string;
	/** Where the caller works: below the root. */
	callerCwd: string;
	/** Another workspace, outside the root. */
	other: string;
	sessions: string;
	ids: typeof IDS;
}

/** Session ids. The `shared` ones begin with the same 8 characters, two in scope and one outside. */
export const IDS = {
	flaky: "f1a4e000-0000-4000-8000-000000000001",
	flakyTwo: "f1a4e000-0000-4000-8000-000000000002",
	quoted: "9a0e7e00-0000-4000-8000-000000000003",
	files: "f11e5000-0000-4000-8000-000000000004",
	long: "10a65000-0000-4000-8000-000000000005",
	sharedA: "5a4ed000-aaaa-4000-8000-000000000006",
	sharedB: "5a4ed000-bbbb-4000-8000-000000000007",
	sharedOut: "5a4ed000-cccc-4000-8000-000000000008",
	outOnly: "0b7e4000-0000-4000-8000-000000000009",
	branchy: "b4a2c000-0000-4000-8000-00000000000a",
} as const;

const at = (day: number, minute: number) => `2026-11-${String(day).padStart(2, "0")}T10:${String(minute).padStart(2, "0")}:00.000Z`;

/** A chain of entries: each entry's parent is the previous one. */
function chain(entries: ((parent: string | null) => Entry)[]): Entry[] {
	const out: Entry[] = [];
	let parent: string | null = null;
	for (const make of entries) {
		const e = make(parent);
		out.push(e);
		parent = e.id as string;
	}
	return out;
}

export function makeWorld(): World {
	const layout = makeAgentLayout();
	const project = join(layout.root, "proj");
	const callerCwd = join(project, "pkg");
	const other = join(layout.root, "other");
	for (const d of [callerCwd, other]) mkdirSync(d, { recursive: true });
	makeRepo(project);
	const sessions = join(layout.root, "sessions");

	// Four failing runs of one flaky test in one session, one in another: grouping and time order.
	writeSession(sessions, {
		id: IDS.flaky,
		cwd: project,
		timestamp: at(2, 0),
		entries: chain([
			(p) => userEntry("fl-u1", p, at(2, 1), "run the tests; flakytest keeps failing"),
			...[2, 4, 6, 8].flatMap((m, i) => [
				(p: string | null) => assistantEntry(`fl-a${i}`, p, at(2, m), null, [{ id: `call-${i}`, name: "bash", arguments: { command: "bun test" } }]),
				(p: string | null) => toolResultEntry(`fl-r${i}`, p, at(2, m + 1), `call-${i}`, "bash", `FAIL flakytest run ${i}: expected 200, got 500`, true),
			]),
			(p) => assistantEntry("fl-a9", p, at(2, 20), "The flakytest failure is a race in the fixture setup."),
		]),
	});
	writeSession(sessions, {
		id: IDS.flakyTwo,
		cwd: callerCwd,
		timestamp: at(5, 0),
		entries: chain([
			(p) => userEntry("f2-u1", p, at(5, 1), "is flakytest fixed now?"),
			(p) => assistantEntry("f2-a1", p, at(5, 2), "Yes: flakytest passed ten times in a row."),
		]),
	});
	// Literal guillemets in the source.
	writeSession(sessions, {
		id: IDS.quoted,
		cwd: project,
		timestamp: at(3, 0),
		entries: [userEntry("q-u1", null, at(3, 1), "rename the «quokka» label to quokka-final (keep the \\«escape\\» too)")],
	});
	// A relative path in a read call, recorded against the session cwd (the project root).
	writeSession(sessions, {
		id: IDS.files,
		cwd: project,
		timestamp: at(4, 0),
		entries: chain([
			(p) => userEntry("fi-u1", p, at(4, 1), "check the yaml config"),
			(p) => assistantEntry("fi-a1", p, at(4, 2), null, [{ id: "call-read", name: "read", arguments: { path: "src/config/app.yaml" } }]),
			(p) => toolResultEntry("fi-r1", p, at(4, 3), "call-read", "read", "port: 8080\nhost: yamlhost"),
		]),
	});
	// Twelve long answers: the MCP text of ten hits must stay concise.
	writeSession(sessions, {
		id: IDS.long,
		cwd: project,
		timestamp: at(6, 0),
		entries: chain(
			Array.from(
				{ length: 12 },
				(_, i) => (p: string | null) =>
					assistantEntry(
						`lo-a${i}`,
						p,
						at(6, i + 1),
						`${"Long explanation of the verbose build pipeline with many words. ".repeat(6)}verbosity level ${i}. ${"More words follow here. ".repeat(10)}`,
					),
			),
		),
	});
	// Two abandoned replies: the user rewound twice; the last reply is on the selected branch.
	writeSession(sessions, {
		id: IDS.branchy,
		cwd: project,
		timestamp: at(1, 0),
		entries: [
			userEntry("br-u1", null, at(1, 1), "pick a name for the cache module"),
			assistantEntry("br-a1", "br-u1", at(1, 2), "Call it stash."),
			assistantEntry("br-a2", "br-u1", at(1, 3), "Call it hoard."),
			assistantEntry("br-a3", "br-u1", at(1, 4), "Call it cache."),
		],
	});
	// Ids sharing their first 8 characters: two in scope, one in the other workspace; one id only outside.
	for (const [id, cwd] of [
		[IDS.sharedA, project],
		[IDS.sharedB, project],
		[IDS.sharedOut, other],
		[IDS.outOnly, other],
	] as const) {
		writeSession(sessions, { id, cwd, timestamp: at(7, 0), entries: [userEntry(`sh-${id.slice(9, 13)}`, null, at(7, 1), `prefixword in ${id.slice(9, 13)}`)] });
	}
	return { layout, bin: compiledBinary(), project, callerCwd, other, sessions, ids: IDS };
}

export interface Outcome {
	/** CLI: exit code; MCP: 0, or 2 when isError. */
	exitCode: number;
	/** CLI --json stdout / MCP structuredContent (undefined on errors). */
	json: any;
	/** CLI text stdout / MCP text content. */
	text: string;
	/** CLI stderr / MCP error text. */
	error: string;
	/** What accompanies the text: CLI stderr of the text run (freshness, counts); MCP: the text itself. */
	notes: string;
}

/** Run `pi-events <command> ...args` (the compiled binary) from the caller's cwd. */
export function runBinary(world: World, args: string[]): { exitCode: number; stdout: string; stderr: string } {
	const [command, ...rest] = args;
	const proc = Bun.spawnSync([world.bin, command!, "--sessions-dir", world.sessions, ...rest], {
		cwd: world.callerCwd,
		env: isolatedEnv(world.layout),
		stdout: "pipe",
		stderr: "pipe",
	});
	return { exitCode: proc.exitCode ?? -1, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

export function cliOutcome(world: World, args: string[]): Outcome {
	const json = runBinary(world, [...args, "--json"]);
	const text = runBinary(world, args);
	let parsed: any;
	try {
		parsed = json.exitCode === 2 ? undefined : JSON.parse(json.stdout);
	} catch {
		throw new Error(`not JSON (exit ${json.exitCode}): ${json.stdout}\n${json.stderr}`);
	}
	return { exitCode: json.exitCode, json: parsed, text: text.stdout, error: json.stderr, notes: text.stderr };
}

/** A `serve --stdio` child (compiled binary); the caller works in `world.callerCwd`. */
export function startServer(world: World): RawServer {
	return new RawServer(world.bin, isolatedEnv(world.layout), ["--sessions-dir", world.sessions]);
}

export async function mcpOutcome(world: World, server: RawServer, tool: string, args: Record<string, unknown>): Promise<Outcome> {
	const frame = await server.request("tools/call", { name: tool, arguments: args, _meta: modernMeta({ cwd: world.callerCwd }) }, undefined, 30_000);
	if (frame.error) throw new Error(`JSON-RPC error: ${JSON.stringify(frame.error)}`);
	const result = frame.result;
	const text = (result.content as { text: string }[]).map((c) => c.text).join("");
	return result.isError
		? { exitCode: 2, json: undefined, text: "", error: text, notes: "" }
		: {
				exitCode: (result.structuredContent.hits ?? result.structuredContent.sessions)?.length === 0 ? 1 : 0,
				json: result.structuredContent,
				text,
				error: "",
				notes: text,
			};
}
