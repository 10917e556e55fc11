/** Canonical paths: symlinks resolved where the path exists; a missing path is only normalised. */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";

export function canonicalPath(path: string): string {
	const abs = resolve(path);
	try {
		return realpathSync.native(abs);
	} catch {
		return abs;
	}
}
