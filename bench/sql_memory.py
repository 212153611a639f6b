"""How far `papersift sql --memory-limit` lets a heavy query's process grow: peak RSS and
peak spill against the limit.

Each query runs in its own `papersift sql` process (`--format csv`, output discarded) on
an empty warehouse (the queries make their rows with range()); the peak RSS comes from
wait4(), the spill from polling the process's temporary folder. The first line is a
trivial query: the interpreter and papersift's imports, which the limit does not cover.

    python -m bench.sql_memory [--memory-limit 1GB] [--only NAME]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from papersift.warehouse import Warehouse

QUERIES = {
    "baseline (SELECT 1)": "SELECT 1",
    "hash aggregate, 30M groups":
        "SELECT count(*), sum(n) FROM (SELECT i % 30000000 AS k, count(*) AS n "
        "FROM range(60000000) t(i) GROUP BY k)",
    "window sort, 30M rows":
        "SELECT max(r) FROM (SELECT row_number() OVER (ORDER BY hash(i)) AS r "
        "FROM range(30000000) t(i))",
    "hash join, 20M x 20M":
        "SELECT count(*) FROM range(20000000) a(i) JOIN range(20000000) b(j) ON i = j",
    "distinct strings, 20M":
        "SELECT count(DISTINCT i::VARCHAR || repeat('x', 40)) FROM range(20000000) t(i)",
    "spill past the cap: sort of 60M strings":
        "SELECT max(r) FROM (SELECT row_number() OVER (ORDER BY i::VARCHAR || repeat('z', 30)"
        ") AS r FROM range(60000000) t(i))",
    "large result, 5M rows x 3 columns":
        "SELECT i, i::VARCHAR || repeat('y', 20) AS s, i * 0.5 AS f FROM range(5000000) t(i)",
}


def folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):  # removed while we looked
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def measure(db: Path, sql: str, memory_limit: str, timeout_s: float) -> tuple[float, float,
                                                                              float, str]:
    """(peak RSS MiB, peak spill MiB, seconds, last line of stderr) of one query."""
    with tempfile.TemporaryDirectory(prefix="papersift-sqlmem-") as tmp:
        env = {**os.environ, "TMPDIR": tmp}
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "papersift", "sql", sql, "--db", str(db), "--format", "csv",
             "--memory-limit", memory_limit, "--timeout", str(timeout_s)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        spill = [0]
        done = threading.Event()

        def poll() -> None:
            while not done.is_set():
                spill[0] = max(spill[0], folder_bytes(Path(tmp)))
                done.wait(0.1)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        assert process.stderr is not None
        err = process.stderr.read().decode("utf-8", "replace")
        _, _, usage = os.wait4(process.pid, 0)
        seconds = time.monotonic() - started
        done.set()
        poller.join()
        last = (err.strip().splitlines() or ["ok"])[-1][:90]
    return usage.ru_maxrss / 1024, spill[0] / 2**20, seconds, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memory-limit", default="1GB")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--only", help="run only the queries whose name contains this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="papersift-sqlmem-db-") as folder:
        db = Path(folder) / "w.duckdb"
        Warehouse(db).close()
        print(f"--memory-limit {args.memory_limit}, {os.cpu_count()} CPUs")
        print(f"{'query':36} | peak RSS MiB | peak spill MiB | seconds | outcome")
        for name, sql in QUERIES.items():
            if args.only and args.only not in name and not name.startswith("baseline"):
                continue
            rss, spill, seconds, outcome = measure(db, sql, args.memory_limit, args.timeout)
            print(f"{name:36} | {rss:12.0f} | {spill:14.0f} | {seconds:7.1f} | {outcome}",
                  flush=True)


if __name__ == "__main__":
    main()
