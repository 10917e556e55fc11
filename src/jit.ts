/**
 * When JavaScriptCore compiles. The binary starts with its tier-up thresholds scaled by
 * STARTUP_JIT_POLICY (build.ts: `--compile-jit-policy`): most commands answer in tens of
 * milliseconds, and compiling their code on the way costs more than it saves (at 5 GB, a search
 * for a common word took 3–6 ms less, and 10 ms less CPU, with the code left in the interpreter).
 * Work that runs longer (a sync that reads many bytes, the cold-index worker, the tool server)
 * restores the normal policy for its own thread. From source (`bun src/main.ts`, tests) the
 * policy is normal from the start, so restoring it changes nothing there.
 */

/** The tier-up threshold scale the binary starts with. */
export const STARTUP_JIT_POLICY = 1000;

/**
 * Source bytes a sync must read before the JIT pays for itself: measured break-even about
 * 100–250 KB (a 1 MB cold index took 140 ms in the interpreter, 100 ms with the JIT).
 */
export const JIT_WORTH_BYTES = 128 * 1024;

/** Let this thread's code be compiled as usual from now on. */
export function compileForLongWork(): void {
	Bun.unsafe.setJITPolicy(1);
}
