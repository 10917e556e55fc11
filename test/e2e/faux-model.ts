/**
 * A pi 1.x extension for the end-to-end test: the scripted faux model of faux-script.ts, with
 * pi-ai's faux helpers from the 1.x package.
 */
// The compat entry point: pi maps both "@earendil-works/pi-ai" and ".../compat" to it for extensions,
// but only the compat typings declare registerFauxProvider.
import { fauxAssistantMessage, fauxText, fauxToolCall, registerFauxProvider } from "@earendil-works/pi-ai/compat";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { installFauxModel } from "./faux-script.ts";

export default function (pi: ExtensionAPI) {
	installFauxModel(pi, { registerFauxProvider, fauxAssistantMessage, fauxText, fauxToolCall });
}
