/**
 * What a person sees: real pi in interactive mode (1.6.0 under bun, 0.73.1 under Node), in a real
 * terminal (tmux), with the scripted faux model of faux-script.ts and extension/pi-events.ts against
 * the compiled server. Keys are sent with `tmux send-keys` and the screen is read with
 * `tmux capture-pane -p`, so the assertions are on the text a person reads: the tool rows collapsed
 * and expanded (ctrl+o), an error row, `/events` with a hit opened and its reference put into the
 * editor, `/events` without a query, `/events status`.
 *
 * Each pi runs in its own tmux server (`-L`, a socket named after this process), killed in afterAll;
 * pi runs with NO_COLOR so the captured screen is plain text. PI_EVENTS_SHOW_SCREENS=1 prints the screens.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { cleanupTempDirs, ROOT } from "../helpers/temp.ts";
import { type E2eWorld, EXTENSION, expectedEntry, PHRASE, PROMPT, piEnv, processesRunning, scriptFor, seeded, setupWorld } from "./shared.ts";

const SHOW = process.env.PI_EVENTS_SHOW_SCREENS === "1";
const NODE = Bun.which("node") ?? "/usr/bin/node";

const VERSIONS = [
	{
		name: "1.6.0",
		runtime: process.execPath,
		cli: join(ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "cli.js"),
		faux: join(import.meta.dir, "faux-model.ts"),
	},
	{
		name: "0.73.1",
		runtime: NODE,
		cli: join(ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js"),
		faux: join(import.meta.dir, "faux-model-073.ts"),
	},
];

afterAll(() => {
	cleanupTempDirs();
});

for (const version of VERSIONS) {
	const SOCKET = `pi-events-e2e-${process.pid}-${version.name}`;
	let world: E2eWorld;

	const tmux = (...args: string[]): string => {
		const proc = Bun.spawnSync(["tmux", "-L", SOCKET, ...args], { stdout: "pipe", stderr: "pipe", timeout: 10_000 });
		if (proc.exitCode !== 0) throw new Error(`tmux ${args.join(" ")} failed: ${proc.stderr.toString()}`);
		return proc.stdout.toString();
	};
	const screen = () => tmux("capture-pane", "-p", "-t", "pi");
	/** Wait until the screen satisfies `cond`; the last screen is in the error when it does not. */
	const waitFor = async (what: string, cond: (text: string) => boolean, ms = 20_000): Promise<string> => {
		const deadline = Date.now() + ms;
		let text = "";
		while (Date.now() < deadline) {
			text = screen();
			if (cond(text)) {
				if (SHOW) console.log(`--- pi ${version.name}: ${what} ---\n${text.trimEnd()}\n`);
				return text;
			}
			await Bun.sleep(100);
		}
		throw new Error(`pi ${version.name}: the screen never showed ${what}; last screen:\n${text}`);
	};
	/** Until pi has quit: its tmux session, the server's only one, is gone. */
	const waitForExit = async () => {
		const deadline = Date.now() + 10_000;
		while (Date.now() < deadline && Bun.spawnSync(["tmux", "-L", SOCKET, "has-session", "-t", "pi"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0)
			await Bun.sleep(100);
	};
	const keys = (...k: string[]) => tmux("send-keys", "-t", "pi", ...k);
	const typeText = (text: string) => tmux("send-keys", "-t", "pi", "-l", "--", text);
	/** Enter, a moment after typed text: pi 0.73 drops an Enter that arrives in the same burst. */
	const enter = async () => {
		await Bun.sleep(200);
		keys("Enter");
	};

	/** pi in a new tmux session "pi", with `bin` as the server binary. */
	const startPi = (bin: string) => {
		const env = piEnv(world, bin, { ...scriptFor({ ownSearch: false }), errorCall: true });
		const envArgs = Object.entries({ ...env, TERM: "xterm-256color" }).map(([k, v]) => `${k}=${v}`);
		const argv = ["env", "-i", ...envArgs, version.runtime, version.cli, "--provider", "faux", "--model", "faux-1", "-e", version.faux, "-e", EXTENSION];
		tmux("-f", "/dev/null", "new-session", "-d", "-s", "pi", "-x", "130", "-y", "60", "-c", world.project, ...argv);
	};

	beforeAll(() => {
		world = setupWorld(`pi-events-terminal-${version.name}`);
		startPi(world.bin);
	});

	afterAll(() => {
		try {
			tmux("kill-server");
		} catch {
			// already gone
		}
	});

	describe(`pi ${version.name} in a terminal`, () => {
		// pi 0.73's interactive mode shows the prompt but never streams the in-process faux model's
		// reply (its print/json mode does: pi-extension-073.test.ts), so its tool rows are not seen here.
		test.skipIf(version.name === "0.73.1")(
			"the tool rows read at a glance, expand with ctrl+o, and an error row shows its message",
			async () => {
				await waitFor("pi's editor", (s) => s.includes("faux-1"));
				typeText(PROMPT);
				await enter();
				const collapsed = await waitFor("the scripted answer", (s) => s.includes("Done."));
				// The call: the tool and its query on one line; the result: one summary line.
				expect(collapsed).toContain(`event_search "${PHRASE}" limit 10`);
				expect(collapsed).toMatch(/\d+ hits? in 1 session · top \S+ \d{4}-\d\d-\d\d \d\d:\d\d · synced/);
				expect(collapsed).toContain("to expand)");
				expect(collapsed).toContain(`event_read ${seeded.sessionId.slice(0, 8)}/${expectedEntry}`);
				expect(collapsed).toMatch(/event_sessions limit 5\n(.*\n)*?.*of \d+ sessions? · latest/);
				// The error row: the call, then the message in one line.
				expect(collapsed).toContain(`event_read ${seeded.sessionId.slice(0, 8)}/no-such-entry`);
				expect(collapsed).toMatch(/✗ .*no-such-entry/);
				// The model's hit ids are not dumped into the scrollback.
				expect(collapsed).not.toContain("sessionId entryId fragmentId under each");

				keys("C-o");
				const expanded = await waitFor("the expanded rows", (s) => s.includes(`${seeded.sessionId.slice(0, 8)}/${expectedEntry}`) && /1\. \S+/.test(s));
				expect(expanded).toMatch(new RegExp(`1\\. \\S+.* \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d · ${seeded.sessionId.slice(0, 8)}/\\w+`));
				expect(expanded).toContain(PHRASE);
				// Under a hit, the answer line of its turn (the outcome the server attaches).
				expect(expanded).toMatch(/^\s+→ \S/m);
				keys("C-o");
			},
			60_000,
		);

		test("/events searches as the person types, opens a hit and puts its reference into the editor", async () => {
			await waitFor("pi's editor", (s) => s.includes("faux-1"));
			typeText("/events kumquat");
			await enter();
			await waitFor("the hits", (s) => /^\d+ hits? in \d+ sessions? · \d+ ms$/m.test(s) && s.includes("▶"));
			typeText("-offset");
			const typed = await waitFor("the refined query", (s) => s.includes("> kumquat-offset") && /^\d+ hits? in \d+ sessions? · \d+ ms$/m.test(s));
			expect(typed).toContain("search this workspace (this session excluded)");
			await enter();
			const opened = await waitFor("the opened event", (s) => s.includes("r insert reference"));
			expect(opened).toContain(seeded.sessionId);
			keys("r");
			const inserted = await waitFor("the reference in the editor", (s) => s.includes("pi-events read ") && !s.includes("r insert reference"));
			expect(inserted).toMatch(new RegExp(`pi-events read ${seeded.sessionId} \\S+`));
			// Clear the editor for the next test.
			keys("C-u");
			await waitFor("an empty editor", (s) => !s.includes("pi-events read "));
		}, 60_000);

		test("/events without a query lists the recent sessions; Enter searches inside one", async () => {
			typeText("/events");
			await enter();
			const sessions = await waitFor("the recent sessions", (s) => /^\d+ recent sessions? · \d+ ms/m.test(s));
			expect(sessions).toContain(seeded.sessionId.slice(0, 8));
			await enter();
			const inside = await waitFor(
				"the session's events",
				(s) => s.includes(`> --session ${seeded.sessionId} --sort oldest`) && /^\d+ hits? in 1 session · \d+ ms$/m.test(s),
			);
			expect(inside).toMatch(/▶ \S+ \d{4}-\d\d-\d\d \d\d:\d\d · 01a1a6dc\//);
			keys("Escape");
			await waitFor("the screen closed", (s) => !s.includes("search this workspace"));
		}, 60_000);

		test("/events status says the root, the index and its freshness", async () => {
			typeText("/events status");
			// The first Enter may accept the argument completion (`status`); the panel ignores a second one.
			await waitFor("the completion", (s) => s.includes("root, index and freshness"), 5_000).catch(() => "");
			await enter();
			await Bun.sleep(300);
			await enter();
			const status = await waitFor("the status panel", (s) => s.includes("pi-events status") && s.includes("freshness") && s.includes("index "));
			expect(status).toContain(`root       ${world.project}`);
			expect(status).toMatch(/index\s+\S+index\.db · \d+ sessions? · last sync/);
			expect(status).toMatch(/freshness\s+synced/);
			expect(status).toContain("tools      available");
			keys("Escape");
			await waitFor("the panel closed", (s) => !s.includes("pi-events status"));
		}, 60_000);

		test("pi quits and leaves no server behind", async () => {
			typeText("/quit");
			await enter();
			const deadline = Date.now() + 10_000;
			while (Date.now() < deadline && processesRunning(world.bin).length > 0) await Bun.sleep(100);
			expect(processesRunning(world.bin)).toEqual([]);
			await waitForExit();
		}, 30_000);

		test("without its binary: one line at session start, and /events status says the tools are inactive", async () => {
			startPi(join(world.layout.root, "no-such-pi-events"));
			const warned = await waitFor("the start-up line", (s) => s.includes("tools are inactive"));
			expect(warned).toMatch(/pi-events: the event_\* tools are inactive: binary not found\s+\(\S*no-such-pi-events, from\s+PI_EVENTS_BIN\)\./);
			await waitFor("pi's editor", (s) => s.includes("faux-1"));
			typeText("/events status");
			await waitFor("the completion", (s) => s.includes("root, index and freshness"), 5_000).catch(() => "");
			await enter();
			await Bun.sleep(300);
			await enter();
			const status = await waitFor("the status panel", (s) => s.includes("pi-events status") && /^tools +inactive/m.test(s));
			expect(status).toMatch(/^tools +inactive: pi-events binary not found/m);
			keys("Escape");
			typeText("/quit");
			await enter();
			await waitForExit();
		}, 60_000);
	});
}
