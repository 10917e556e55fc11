/**
 * A misbehaving stand-in for `pi-events serve --stdio`, for the extension's failure paths. It
 * speaks the legacy handshake, logs every frame it receives to $FAKE_LOG (one JSON per line),
 * and answers `tools/call` according to the query:
 *   "hang"       never answers
 *   "rpc-error"  a JSON-RPC error -32603
 *   "die"        writes to stderr and exits with code 3 without answering
 *   "is-error"   an isError result
 *   anything     echoes the call (arguments and _meta) and its argv as structuredContent
 * With FAKE_NO_INIT=1 it never answers initialize. With FAKE_NO_SOCKET=1 it refuses `--socket` as a
 * binary older than the flag does (usage error, exit 2).
 */
import { appendFileSync } from "node:fs";

const log = process.env.FAKE_LOG;
if (process.env.FAKE_NO_SOCKET === "1" && process.argv.includes("--socket")) {
	process.stderr.write("pi-events: unknown option --socket (see --help)\n");
	process.exit(2);
}
const write = (msg: unknown) => process.stdout.write(`${JSON.stringify(msg)}\n`);

let pending = "";
for await (const chunk of Bun.stdin.stream()) {
	pending += new TextDecoder().decode(chunk);
	let nl = pending.indexOf("\n");
	while (nl >= 0) {
		const line = pending.slice(0, nl);
		pending = pending.slice(nl + 1);
		nl = pending.indexOf("\n");
		if (!line.trim()) continue;
		if (log) appendFileSync(log, `${line}\n`);
		const msg = JSON.parse(line) as { id?: number; method: string; params?: any };
		if (msg.id === undefined) continue;
		if (msg.method === "initialize") {
			if (process.env.FAKE_NO_INIT === "1") continue;
			write({
				jsonrpc: "2.0",
				id: msg.id,
				result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "fake", version: "0" } },
			});
			continue;
		}
		const query = msg.params?.arguments?.query;
		if (query === "hang") continue;
		if (query === "rpc-error") {
			write({ jsonrpc: "2.0", id: msg.id, error: { code: -32603, message: "Internal error" } });
			continue;
		}
		if (query === "die") {
			process.stderr.write("fake server: simulated crash\n");
			process.exit(3);
		}
		if (query === "is-error") {
			write({ jsonrpc: "2.0", id: msg.id, result: { content: [{ type: "text", text: "event_search failed: simulated [E_USAGE]" }], isError: true } });
			continue;
		}
		write({
			jsonrpc: "2.0",
			id: msg.id,
			result: {
				content: [{ type: "text", text: `echo ${msg.params.name}` }],
				structuredContent: { echo: msg.params, argv: process.argv.slice(2) },
				isError: false,
			},
		});
	}
}
