/**
 * The one error type of pi-events, with a closed set of codes.
 * Throw only to abort an operation; per-line trouble is a Diagnostic value instead.
 */

type ErrorCode =
	/** Bad command-line or tool input (exit 2, tool isError). */
	| "E_USAGE"
	/** A query that cannot be searched (empty after parsing). */
	| "E_BAD_QUERY"
	/** Unknown or unauthorized session/entry/fragment: both look exactly alike. */
	| "E_NOT_FOUND"
	/** The source file changed since indexing; the caller should re-index. */
	| "E_STALE"
	/** Configuration could not be read or is invalid. */
	| "E_CONFIG"
	/** The index database could not be opened or written (read-only location, full disk, I/O error, another writer). */
	| "E_INDEX"
	/** Anything else: a bug. */
	| "E_INTERNAL";

export class PiEventsError extends Error {
	override name = "PiEventsError";
	constructor(
		readonly code: ErrorCode,
		message: string,
		options?: { cause?: unknown },
	) {
		super(message, options);
	}
}

export function isPiEventsError(err: unknown): err is PiEventsError {
	return err instanceof PiEventsError;
}

/** A message safe to show a user or a model: never a stack, never SQL internals. */
export function publicMessage(err: unknown): string {
	if (err instanceof PiEventsError) return err.message;
	return "internal error (run with PI_EVENTS_DEBUG=1 for details)";
}

export function errorCode(err: unknown): ErrorCode {
	return err instanceof PiEventsError ? err.code : "E_INTERNAL";
}
