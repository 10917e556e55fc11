/**
 * The scripted faux model shared by the end-to-end extensions (faux-model.ts for pi 1.x,
 * faux-model-073.ts for pi 0.73). It registers pi's in-process faux provider ("faux", model
 * "faux-1") and scripts it from $PI_EVENTS_E2E_SCRIPT (JSON {phrase, sessionId, entryId}):
 *   1. call event_search with the phrase,
 *   2. call event_read on the expected hit (ids known in advance from the seeded fixture),
 *   3. list the workspace's sessions with event_sessions,
 *   4. (optionally) search the invoking session itself,
 *   5. answer with what the last call returned.
 * No network: the faux provider streams scripted messages from memory.
 *
 * The faux helpers are passed in rather than imported: each pi version only resolves its own
 * package scope for extensions (0.73 knows `@mariozechner/pi-ai`, 1.x `@earendil-works/pi-ai`).
 * This module therefore has no runtime imports at all.
 */
import type { FauxResponseStep, fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider } from "@earendil-works/pi-ai/compat";

/** pi-ai's faux helpers (same API in 0.73 and 1.x). */
export interface FauxApi {
	registerFauxProvider: typeof registerFauxProvider;
	fauxAssistantMessage: typeof fauxAssistantMessage;
	fauxText: typeof fauxText;
	fauxToolCall: typeof fauxToolCall;
}

/** The part of pi's ExtensionAPI used here (identical in 0.73 and 1.x). */
export interface ProviderHost {
	registerProvider(name: string, config: any): void;
}

export interface Script {
	phrase: string;
	sessionId: string;
	entryId: string;
	/** When true, a third call searches the invoking session itself, named explicitly. */
	ownSearch?: boolean;
	/** The invoking session's id (pi 1.x: given with --session-id); default: the `sessionId` pi passes
	 * in the stream options (pi 0.73 has no --session-id, so its id is not known in advance). */
	ownSessionId?: string;
	/** When true, a last call reads an event that does not exist (an error row for the terminal test). */
	errorCall?: boolean;
}

/** Text of the last tool result in the model's context (what the previous step returned). */
function lastToolResultText(context: { messages?: unknown[] }): string {
	const messages = (context.messages ?? []) as { role?: string; content?: unknown }[];
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i]!;
		if (m.role !== "toolResult") continue;
		const content = Array.isArray(m.content) ? (m.content as { type?: string; text?: string }[]) : [];
		return content.map((c) => (c.type === "text" ? (c.text ?? "") : "")).join("\n");
	}
	return "";
}

export function installFauxModel(pi: ProviderHost, faux: FauxApi): void {
	const { registerFauxProvider, fauxAssistantMessage, fauxText, fauxToolCall } = faux;
	const script = JSON.parse(process.env.PI_EVENTS_E2E_SCRIPT ?? "{}") as Script;
	const reg = registerFauxProvider({ provider: "faux", api: "faux-e2e", models: [{ id: "faux-1" }] });
	const steps: FauxResponseStep[] = [
		fauxAssistantMessage(
			[fauxText("Searching earlier sessions."), fauxToolCall("event_search", { query: script.phrase, limit: 10 }, { id: "call_e2e_search" })],
			{ stopReason: "toolUse" },
		),
		(context) => {
			const found = lastToolResultText(context).includes(script.entryId);
			return fauxAssistantMessage(
				[
					fauxText(found ? "Found it; reading the event." : "Search did not show the expected event; reading it anyway."),
					fauxToolCall("event_read", { sessionId: script.sessionId, entryId: script.entryId }, { id: "call_e2e_read" }),
				],
				{ stopReason: "toolUse" },
			);
		},
		fauxAssistantMessage([fauxToolCall("event_sessions", { limit: 5 }, { id: "call_e2e_sessions" })], { stopReason: "toolUse" }),
		...(script.ownSearch
			? [
					// Answer after 1.6 s, like a real model: the server's pre-call sync is rate-limited
					// to once per 1.5 s, so the invoking assistant entry is certainly indexed by then.
					async (_context: unknown, options: { sessionId?: string } | undefined) => {
						await new Promise((resolve) => setTimeout(resolve, 1600));
						const sessionId = script.ownSessionId ?? options?.sessionId ?? "unknown-own-session";
						return fauxAssistantMessage([fauxToolCall("event_search", { query: script.phrase, sessionId }, { id: "call_e2e_own" })], { stopReason: "toolUse" });
					},
				]
			: []),
		...(script.errorCall
			? [
					fauxAssistantMessage([fauxToolCall("event_read", { sessionId: script.sessionId, entryId: "no-such-entry" }, { id: "call_e2e_error" })], {
						stopReason: "toolUse",
					}),
				]
			: []),
		(context) => fauxAssistantMessage(`Done. The earlier event said: ${lastToolResultText(context).slice(0, 200)}`),
	];
	reg.setResponses(steps);
	pi.registerProvider("faux", {
		baseUrl: "http://localhost:0",
		apiKey: "faux-key",
		api: reg.api,
		models: [
			{
				id: "faux-1",
				name: "Faux",
				reasoning: false,
				input: ["text"],
				cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
				contextWindow: 128000,
				maxTokens: 4096,
			},
		],
	});
}
