/**
 * A pi extension for the end-to-end test: registers pi's in-process faux provider ("faux",
 * model "faux-1") and scripts it from $PI_EVENTS_E2E_SCRIPT (JSON {phrase, sessionId, entryId}):
 *   1. call event_search with the phrase,
 *   2. call event_read on the expected hit (ids known in advance from the seeded fixture),
 *   3. answer with what the read returned.
 * No network: the faux provider streams scripted messages from memory.
 */
// The compat entry point: pi maps both "@earendil-works/pi-ai" and ".../compat" to it for extensions,
// but only the compat typings declare registerFauxProvider.
import {
	type FauxResponseStep,
	fauxAssistantMessage,
	fauxText,
	fauxToolCall,
	registerFauxProvider,
} from "@earendil-works/pi-ai/compat";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

interface Script {
	phrase: string;
	sessionId: string;
	entryId: string;
	/** When set (with pi's --session-id), a third call searches the invoking session itself. */
	ownSessionId?: string;
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

export default function (pi: ExtensionAPI) {
	const script = JSON.parse(process.env.PI_EVENTS_E2E_SCRIPT ?? "{}") as Script;
	const reg = registerFauxProvider({ provider: "faux", api: "faux-e2e", models: [{ id: "faux-1" }] });
	const ownSessionId = script.ownSessionId;
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
		...(ownSessionId
			? [
					// Answer after 1.6 s, like a real model: the server's pre-call sync is rate-limited
					// to once per 1.5 s, so the invoking assistant entry is certainly indexed by then.
					async () => {
						await new Promise((resolve) => setTimeout(resolve, 1600));
						return fauxAssistantMessage(
							[fauxToolCall("event_search", { query: script.phrase, sessionId: ownSessionId }, { id: "call_e2e_own" })],
							{ stopReason: "toolUse" },
						);
					},
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
