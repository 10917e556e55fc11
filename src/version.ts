/**
 * The version of pi-events, from package.json, and the build's target and commit, which build.ts
 * compiles in with --define (a run from source says so).
 */
import pkg from "../package.json" with { type: "json" };

declare const PI_EVENTS_BUILD_TARGET: string | undefined;
declare const PI_EVENTS_BUILD_COMMIT: string | undefined;

export const VERSION: string = pkg.version;
const BUILD_TARGET: string = typeof PI_EVENTS_BUILD_TARGET === "string" ? PI_EVENTS_BUILD_TARGET : `${process.platform}-${process.arch} from source`;
const BUILD_COMMIT: string = typeof PI_EVENTS_BUILD_COMMIT === "string" ? PI_EVENTS_BUILD_COMMIT : "unknown";

/** `pi-events --version`: the version first (scripts can cut it), then the target and the commit. */
export const VERSION_LINE = `${VERSION} (${BUILD_TARGET}, commit ${BUILD_COMMIT})`;
