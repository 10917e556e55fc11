/** `pi-events serve --stdio`: the MCP tool server used by the pi extension and other MCP clients. */
import { defineCommand } from "./argv.ts";
import { canonicalPath } from "../config.ts";
import { PiEventsError } from "../errors.ts";
import { compileForLongWork } from "../jit.ts";
import { VERSION } from "../version.ts";
import { serveStream, StdioServer } from "../server/stdio.ts";
import { openIndex } from "../store/db.ts";
import { checkFlags, commonArgs, settingsFrom } from "./shared.ts";

const args = {
	stdio: { type: "boolean", description: "Serve MCP over stdin/stdout (the only transport)" },
	index: commonArgs.index,
	"sessions-dir": commonArgs["sessions-dir"],
	root: { type: "string", description: "Authorization root for every call (default: from the caller's cwd)", valueHint: "dir" },
} as const;

export const serveCommand = defineCommand({
	meta: { name: "serve", description: "Run the MCP tool server (event_search, event_read, event_trace) over stdio" },
	args,
	async run({ args: a, rawArgs }) {
		checkFlags(rawArgs, args);
		if (!a.stdio) throw new PiEventsError("E_USAGE", "serve needs --stdio (the only transport)");
		if (a.root && !a.root.startsWith("/")) throw new PiEventsError("E_USAGE", "--root must be an absolute path");
		const settings = settingsFrom(a, rawArgs);
		// A server answers many calls: its code is worth compiling (jit.ts).
		compileForLongWork();
		const db = openIndex(settings.indexPath);
		const log = (line: string) => process.stderr.write(`${line}\n`);
		const server = new StdioServer({
			db,
			settings,
			version: VERSION,
			launch: {
				root: a.root ?? null,
				cwd: process.cwd(),
				sessionId: process.env.PI_SESSION_ID || null,
				sessionFile: process.env.PI_SESSION_FILE ? canonicalPath(process.env.PI_SESSION_FILE) : null,
			},
			write: (frame) => process.stdout.write(`${frame}\n`),
			log,
		});
		log(`pi-events serve: ready (index ${settings.indexPath})`);
		try {
			await serveStream(server, Bun.stdin.stream(), () =>
				process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: frame too large" } })}\n`),
			);
		} finally {
			db.close();
		}
		return 0;
	},
});
