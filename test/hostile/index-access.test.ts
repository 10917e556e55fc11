/**
 * The index is private (issue 32 item 8): its term dictionary holds every word of the history, so
 * a new index directory is 0700 and the index files 0600, whatever the umask lets through; an
 * existing directory is left as it is, and `status` says when it is open to other accounts.
 * Run under the usual umask 022 (which made a 0755 directory and 0644 files before).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openIndex } from "../../src/store/db.ts";
import { markUnsynced, settleUnsynced } from "../../src/store/unsynced.ts";
import { type AgentLayout, cleanupTempDirs, makeAgentLayout, makeTempDir, runCli } from "../helpers/temp.ts";

const modeOf = (path: string) => statSync(path).mode & 0o777;
let umask: number;

beforeAll(() => {
	umask = process.umask(0o022);
});

afterAll(() => {
	process.umask(umask);
	cleanupTempDirs();
});

describe("a new index is private", () => {
	test("its directory is 0700, the database, -wal and -shm 0600", () => {
		const dir = join(makeTempDir("pi-events-access-"), "cache", "pi-events");
		const path = join(dir, "index.db");
		const db = openIndex(path);
		try {
			db.run("INSERT INTO meta (key, value) VALUES ('access-test', 'x')");
			expect({ dir: modeOf(dir), db: modeOf(path), wal: modeOf(`${path}-wal`), shm: modeOf(`${path}-shm`) }).toEqual({
				dir: 0o700,
				db: 0o600,
				wal: 0o600,
				shm: 0o600,
			});
		} finally {
			db.close();
		}
	});

	test("the unsynced marker's directory is 0700", () => {
		const path = join(makeTempDir("pi-events-access-"), "index.db");
		if (!markUnsynced(path)) return; // no boot id here: no marker is written at all
		try {
			expect(modeOf(`${path}-unsynced`)).toBe(0o700);
		} finally {
			settleUnsynced(path);
		}
	});

	test("the CLI's default index: status --json says it is closed to others", () => {
		const layout = makeAgentLayout();
		const run = runCli(layout, ["index", "--json"]);
		expect(run.exitCode).toBe(0);
		expect(modeOf(join(layout.cacheHome, "pi-events"))).toBe(0o700);
		expect(modeOf(layout.defaultIndex)).toBe(0o600);
		const status = runCli(layout, ["status", "--json"]);
		expect(status.json().access).toEqual({ directoryMode: "0700", fileMode: "0600", openToOthers: false });
		expect(runCli(layout, ["status"]).stdout).not.toContain("access:");
	});
});

describe("an existing directory is left alone, and status says so", () => {
	let layout: AgentLayout;
	let dir: string;
	let path: string;

	beforeAll(() => {
		layout = makeAgentLayout();
		dir = join(layout.root, "shared-place");
		mkdirSync(dir);
		chmodSync(dir, 0o755);
		path = join(dir, "index.db");
	});

	test("the directory keeps its 0755; the index file in it is still 0600", () => {
		expect(runCli(layout, ["index", "--index", path]).exitCode).toBe(0);
		expect(modeOf(dir)).toBe(0o755);
		expect(modeOf(path)).toBe(0o600);
		const status = runCli(layout, ["status", "--index", path, "--json"]);
		expect(status.json().access).toEqual({ directoryMode: "0755", fileMode: "0600", openToOthers: true });
		const text = runCli(layout, ["status", "--index", path]).stdout;
		expect(text).toContain("access:      the index directory is open to other accounts (0755");
		expect(text).toContain(`chmod 700 ${dir}`);
	});

	test("an index file an earlier version made 0644 is closed to others at the next write", () => {
		chmodSync(path, 0o644);
		expect(runCli(layout, ["index", "--index", path]).exitCode).toBe(0);
		expect(modeOf(path)).toBe(0o600);
		expect(existsSync(`${path}-wal`) ? modeOf(`${path}-wal`) : 0o600).toBe(0o600);
	});

	test("a planted symlink at a companion's name is never followed by the chmod", () => {
		const target = join(layout.root, "someone-elses-file");
		writeFileSync(target, "x");
		chmodSync(target, 0o644);
		const shm = `${path}-shm`;
		if (existsSync(shm)) return;
		symlinkSync(target, shm);
		runCli(layout, ["status", "--index", path]);
		expect(modeOf(target)).toBe(0o644);
	});
});
