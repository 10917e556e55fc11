"""Replay SQL recorded by test/store/sql-capture.ts on this Python's SQLite (Debian: the system
libsqlite3), one statement at a time into a fresh database, and print one JSON line per statement:
{"i", "ok", "error"?, "rows"?}. Used by test/store/sqlite-compat.test.ts. Usage:
    python3 replay.py DB_PATH LOG_PATH..."""
import json
import sqlite3
import sys


def decode(value):
    if isinstance(value, dict):
        if "$blob" in value:
            return bytes.fromhex(value["$blob"])
        if "$bigint" in value:
            return int(value["$bigint"])
    return value


def encode(value):
    if isinstance(value, bytes):
        return {"$blob": value.hex()}
    return value


def main():
    db_path, logs = sys.argv[1], sys.argv[2:]
    print(json.dumps({"sqlite_version": sqlite3.sqlite_version}), flush=True)
    conn = sqlite3.connect(db_path, isolation_level=None)
    i = 0
    for log in logs:
        with open(log, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                rec = json.loads(line)
                sql, params = rec["sql"], rec["params"]
                params = {k: decode(v) for k, v in params.items()} if isinstance(params, dict) else [decode(v) for v in params]
                out = {"i": i}
                try:
                    try:
                        rows = conn.execute(sql, params).fetchall()
                    except sqlite3.ProgrammingError as err:
                        # Several statements in one text (the DDL): run as a script, no rows.
                        if params or "one statement at a time" not in str(err):
                            raise
                        conn.executescript(sql)
                        rows = []
                    out["ok"] = True
                    out["rows"] = [[encode(v) for v in r] for r in rows]
                except Exception as err:  # noqa: BLE001 - reported to the test
                    out["ok"] = False
                    out["error"] = f"{type(err).__name__}: {err}"
                print(json.dumps(out), flush=True)
                i += 1


main()
