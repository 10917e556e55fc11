/**
 * Preloaded by bunfig.toml. bun 1.4.4 ignores `[test] timeout` in bunfig.toml (checked: a 6 s
 * test and a 6 s beforeAll both fail at 5 s), so the default is set here, for tests and hooks
 * alike. Suites that build a corpus or start processes take seconds on a loaded machine; a test
 * with its own timeout keeps it.
 */
import { setDefaultTimeout } from "bun:test";

setDefaultTimeout(30_000);
