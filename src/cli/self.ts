/** Starting this program again in the background (a server for the next commands, a scrub). */

/** The command that runs this program: the compiled binary itself, or bun with this entry point. */
export function selfCommand(): string[] {
	return Bun.main.startsWith("/$bunfs/") ? [process.execPath] : [process.execPath, Bun.main];
}

/**
 * Run `pi-events <args>` detached from this process, which neither waits for it nor keeps it:
 * no stdio (a caller reading this process's output must not wait for it), in `/` (a process in
 * the caller's cwd would keep that directory busy). Its pid, or null when it could not start.
 */
export function spawnDetached(args: readonly string[]): number | null {
	const self = selfCommand();
	// Loaded here: most processes never start another.
	const { spawn }: typeof import("node:child_process") = require("node:child_process");
	try {
		const child = spawn(self[0]!, [...self.slice(1), ...args], { detached: true, stdio: "ignore", cwd: "/" });
		child.on("error", () => {});
		child.unref();
		return child.pid ?? null;
	} catch {
		return null;
	}
}
