"""Where memory grows while a warehouse is written: RSS against the Python heap.

Writes the rows of N synthetic papers (built as in bench/warehouse_writes.py: papers,
sources, an extraction with its items) with `Warehouse.write`, B papers per write, and
every 10,000 papers prints the process's peak RSS, the Python heap (tracemalloc) and what
DuckDB accounts for (`duckdb_memory()`).

    python -m bench.write_memory [--papers 40000] [--batch 200] [--memory-limit 100MB]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import tracemalloc
from pathlib import Path

from bench.warehouse_writes import paper_batches, template_batches
from papersift.warehouse import Warehouse
from papersift.warehouse.store import Batch

ROOT = Path(__file__).resolve().parent.parent


def peak_rss_mib() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=40_000)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--memory-limit", help="DuckDB's memory_limit, e.g. 100MB")
    args = parser.parse_args()
    templates = template_batches(200)
    folder = Path(tempfile.mkdtemp(prefix="papersift-write-memory-"))
    tracemalloc.start()
    print("papers | peak RSS MiB | Python heap MiB | duckdb_memory() MiB")
    with Warehouse(folder / "w.duckdb") as warehouse:
        if args.memory_limit:
            warehouse.con.execute(f"SET memory_limit = '{args.memory_limit}'")
        pending = Batch()
        for count, batch in enumerate(paper_batches(templates, args.papers), start=1):
            pending.extend(batch)
            if count % args.batch == 0:
                warehouse.write(pending)
                pending = Batch()
            if count % 10_000 == 0:
                heap, _ = tracemalloc.get_traced_memory()
                row = warehouse.con.execute(
                    "SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()
                duck = (row[0] or 0) if row else 0
                print(f"{count:,} | {peak_rss_mib()} | {heap // 2**20} | {duck // 2**20}",
                      flush=True)
        warehouse.write(pending)


if __name__ == "__main__":
    main()
