/**
 * Content hashes for locators and file fingerprints. Pure computation (Bun's wyhash).
 * Not cryptographic: it detects change, it does not authenticate.
 */

export function hashBytes(bytes: Uint8Array): string {
	return Bun.hash.wyhash(bytes).toString(16).padStart(16, "0");
}

export function hashString(text: string): string {
	return Bun.hash.wyhash(text).toString(16).padStart(16, "0");
}
