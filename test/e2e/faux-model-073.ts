/**
 * A pi 0.73 extension for the end-to-end test: the scripted faux model of faux-script.ts, with
 * pi-ai's faux helpers from the 0.73 package. pi 0.73's extension loader aliases only the
 * `@mariozechner/*` scope (and typebox), and 0.73.1 exports the faux helpers from the package root.
 */
import { fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider } from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { type FauxApi, installFauxModel } from "./faux-script.ts";

export default function (pi: ExtensionAPI) {
	// The 0.73 and 1.x typings differ in detail; the runtime API of these four is the same.
	installFauxModel(pi, { registerFauxProvider, fauxAssistantMessage, fauxText, fauxToolCall } as unknown as FauxApi);
}
