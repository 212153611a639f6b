"""Probe the installed DuckDB: which write patterns survive a kill -9 and WAL replay?

Each case runs in a child process that writes, then SIGKILLs itself before DuckDB can
checkpoint, so the next open must replay the WAL. The parent reopens (replay and
checkpoint), writes the same key again the way the case does, and reports whether the
uniqueness the schema promises still holds. papersift's own pattern (PRIMARY KEY in
CREATE TABLE, schema checkpointed at once, inserts keyed by an anti-join) is the last case.

    python -m bench.wal_replay_probe
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

CASES = {
    "unique index + ON CONFLICT, index DDL in the WAL": (
        ["CREATE TABLE t (id VARCHAR, v INT)", "CREATE UNIQUE INDEX ti ON t (id)",
         "INSERT INTO t VALUES ('a', 1)"],
        "INSERT INTO t VALUES ('a', 2) ON CONFLICT DO NOTHING",
    ),
    "unique index + ON CONFLICT, index DDL checkpointed": (
        ["CREATE TABLE t (id VARCHAR, v INT)", "CREATE UNIQUE INDEX ti ON t (id)",
         "CHECKPOINT", "INSERT INTO t VALUES ('a', 1)"],
        "INSERT INTO t VALUES ('a', 2) ON CONFLICT DO NOTHING",
    ),
    "unique index, plain INSERT, index DDL in the WAL": (
        ["CREATE TABLE t (id VARCHAR, v INT)", "CREATE UNIQUE INDEX ti ON t (id)",
         "INSERT INTO t VALUES ('a', 1)"],
        "INSERT INTO t VALUES ('a', 2)",
    ),
    "primary key + ON CONFLICT, DDL in the WAL": (
        ["CREATE TABLE t (id VARCHAR PRIMARY KEY, v INT)", "INSERT INTO t VALUES ('a', 1)"],
        "INSERT INTO t VALUES ('a', 2) ON CONFLICT DO NOTHING",
    ),
    "primary key, DELETE + INSERT of one key in a transaction": (
        ["CREATE TABLE t (id VARCHAR PRIMARY KEY, v INT)", "CHECKPOINT",
         "INSERT INTO t VALUES ('a', 1)", "BEGIN", "DELETE FROM t WHERE id = 'a'",
         "INSERT INTO t VALUES ('a', 3)", "COMMIT"],
        "INSERT INTO t SELECT 'a', 4 WHERE NOT EXISTS (SELECT 1 FROM t WHERE id = 'a')",
    ),
    "papersift: primary key, schema checkpointed, anti-join inserts": (
        ["CREATE TABLE t (id VARCHAR PRIMARY KEY, v INT)", "CHECKPOINT",
         "INSERT INTO t SELECT 'a', 1 WHERE NOT EXISTS (SELECT 1 FROM t WHERE id = 'a')"],
        "INSERT INTO t SELECT 'a', 2 WHERE NOT EXISTS (SELECT 1 FROM t WHERE id = 'a')",
    ),
    "papersift: primary key, UPDATE of a non-key column (cache)": (
        ["CREATE TABLE t (id VARCHAR PRIMARY KEY, v INT)", "CHECKPOINT",
         "INSERT INTO t VALUES ('a', 1)", "CHECKPOINT", "BEGIN",
         "UPDATE t SET v = 2 WHERE id = 'a'", "COMMIT"],
        "INSERT INTO t SELECT 'a', 3 WHERE NOT EXISTS (SELECT 1 FROM t WHERE id = 'a')",
    ),
    "papersift, one 200,000-row batch (written straight to blocks)": (
        ["CREATE TABLE t (id VARCHAR PRIMARY KEY, v INT)", "CHECKPOINT",
         "INSERT INTO t SELECT CASE WHEN i = 0 THEN 'a' ELSE 'k' || i END, i "
         "FROM range(200000) r(i) WHERE NOT EXISTS (SELECT 1 FROM t)"],
        "INSERT INTO t SELECT 'a', 2 WHERE NOT EXISTS (SELECT 1 FROM t WHERE id = 'a')",
    ),
}


def child(db: str, statements: list[str]) -> None:
    con = duckdb.connect(db)
    for statement in statements:
        con.execute(statement)
    os.kill(os.getpid(), signal.SIGKILL)


def probe(folder: Path, name: str, statements: list[str], again: str) -> str:
    db = str(folder / f"{abs(hash(name))}.duckdb")
    subprocess.run([sys.executable, __file__, "--child", db, *statements], check=False)
    try:
        duckdb.connect(db).close()  # replay, then checkpoint on close
    except duckdb.Error as error:
        return f"does not open: {error}"
    con = duckdb.connect(db)
    try:
        con.execute(again)
        # A full scan, and a point lookup (which the index answers).
        scanned = con.execute("SELECT sum(CASE WHEN id = 'a' THEN 1 END) FROM t").fetchone()
        looked_up = con.execute("SELECT count(*) FROM t WHERE id = 'a'").fetchone()
    except duckdb.Error as error:
        return f"second write refused: {str(error)[:80]}"
    finally:
        con.close()
    rows = scanned[0] if scanned else 0
    seen = looked_up[0] if looked_up else 0
    if rows == 1:
        return "key stored once"
    return f"DUPLICATE: key stored {rows} times (a lookup by key finds {seen})"


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3:])
        return
    print(f"duckdb {duckdb.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (statements, again) in CASES.items():
            print(f"{name:66} {probe(Path(tmp), name, statements, again)}")


if __name__ == "__main__":
    main()
