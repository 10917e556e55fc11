/**
 * What every command does around its one use-case call, written once: its flags checked (a typo
 * must not silently change an answer), its settings resolved for whom it runs (this process, or a
 * resident server's client: invocation.ts), the caller's scope for a query command, and the index
 * connected for the call, synced first when asked, and released after it whatever happens.
 */
import type { Database } from "bun:sqlite";
import type { ArgsDef } from "citty";
import type { Scope } from "../auth/scope.ts";
import type { Env, Settings } from "../config.ts";
import { openIndex } from "../store/db.ts";
import { type Freshness, refresh } from "../sync/freshness.ts";
import { type CallerFlags, scopeFrom } from "./caller.ts";
import { invocation } from "./invocation.ts";
import { checkFlags, debugLog, settingsFrom } from "./shared.ts";

/** A command that has passed its prologue: whom it runs for, with what settings. */
export interface CommandStart {
	settings: Settings;
	cwd: string;
	env: Env;
}

/** A query command's start: also the caller's scope, which every read of the index goes through. */
export interface QueryStart extends CommandStart {
	scope: Scope;
}

/** Flags checked against the command's definition, settings resolved from them and the environment. */
export function startCommand(def: ArgsDef, a: { index?: string }, rawArgs: readonly string[]): CommandStart {
	checkFlags(rawArgs, def);
	const { cwd, env } = invocation();
	return { settings: settingsFrom(a, rawArgs), cwd, env };
}

/**
 * startCommand, then `checkFlags` (the command's own checks of its flag values, where it has them
 * before the scope), then the caller's scope from its flags and environment (cli/caller.ts).
 */
export function startQuery(def: ArgsDef, a: CallerFlags & { index?: string }, rawArgs: readonly string[], checkValues?: () => void): QueryStart {
	const start = startCommand(def, a, rawArgs);
	checkValues?.();
	return { ...start, scope: scopeFrom(a, start.settings, start.env, start.cwd) };
}

/**
 * Run a query's use case on the index, synced first unless `--no-sync`, with the freshness the
 * answer reports (without a sync: what the index holds against the files, compared).
 */
export function onFreshIndex<T>(start: QueryStart, sync: boolean, work: (db: Database, freshness: Freshness) => T): T {
	return onConnection(start, (db) => work(db, refresh(db, start.settings, { sync, scope: start.scope, debug: debugLog() })));
}

/** Run a query's use case on the index, synced first unless `--no-sync` (an answer that reports no freshness). */
export function onIndex<T>(start: QueryStart, sync: boolean, work: (db: Database) => T): T {
	return onConnection(start, (db) => {
		if (sync) refresh(db, start.settings, { sync: true, scope: start.scope, debug: debugLog() });
		return work(db);
	});
}

/** The index connected for this command (inside the resident server, its kept connection), released after whatever happens. */
function onConnection<T>(start: CommandStart, work: (db: Database) => T): T {
	const db = invocation().connect(start.settings.indexPath);
	try {
		return work(db);
	} finally {
		invocation().release(db);
	}
}

/**
 * For the commands that look after the index itself (`index`, `status`): the index opened by this
 * process alone (they are never run by a server), closed after whatever happens.
 */
export function onOwnIndex<T>(indexPath: string, work: (db: Database) => T): T {
	const db = openIndex(indexPath, { oneShot: true });
	try {
		return work(db);
	} finally {
		db.close();
	}
}
