/**
 * Where pi-events looks without a flag: under $HOME, or, when $HOME is unset or empty, under the
 * home directory of the user's account (node:os, which config.ts loads only then).
 */
import { expect, test } from "bun:test";
import { homedir } from "node:os";
import { join } from "node:path";
import { agentDirOf } from "../../src/config.ts";

test("the agent directory is under $HOME, and under the account's home directory without it", () => {
	expect(agentDirOf({ HOME: "/home/someone" })).toBe(join("/home/someone", ".pi", "agent"));
	expect(agentDirOf({})).toBe(join(homedir(), ".pi", "agent"));
	expect(agentDirOf({ HOME: "" })).toBe(join(homedir(), ".pi", "agent"));
	// An explicit agent directory wins, and `~` in it expands the same way.
	expect(agentDirOf({ HOME: "/home/someone", PI_CODING_AGENT_DIR: "~/agent" })).toBe("/home/someone/agent");
	expect(agentDirOf({ PI_CODING_AGENT_DIR: "~/agent" })).toBe(join(homedir(), "agent"));
});
