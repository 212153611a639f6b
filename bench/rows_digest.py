"""A digest of everything a run stores, without what differs between two equal runs
(timestamps, run ids, latencies), to show that a change to the hot path leaves rows, ids
and figures identical.

Three sources: the bundled corpus replayed from the real recording (`--replay`), N
synthetic abstracts against the simulated endpoint (`--sim N`, with `--concurrency`), or
a simulated Batch API run (`--sim N --batch`). Prints one line per table (rows and a
SHA-256 of its sorted rows) and one overall digest; compare the output of two checkouts.

    python -m bench.rows_digest --replay
    python -m bench.rows_digest --sim 400 --concurrency 64 [--batch]
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
from pathlib import Path

from papersift.schemas.fields import optional_fields
from papersift.warehouse import Warehouse
from papersift.warehouse.store import WRITABLE_TABLES

# Columns that differ between two runs of the same input by design.
VOLATILE = {"run_id", "first_seen", "created", "recorded", "started", "latency_ms",
            "collected_run_id", "submitted", "file"}


def digests(db: Path) -> dict[str, tuple[int, str]]:
    """table -> (rows, sha256 of the sorted rows without the volatile columns)."""
    found = {}
    optional = {spec.table for spec in optional_fields()}
    with Warehouse(db) as warehouse:
        for table in WRITABLE_TABLES:
            if table in optional and not warehouse.con.execute(
                    f"SELECT count(*) FROM {table}").fetchone()[0]:
                continue  # an optional field no run enabled: as if its table did not exist
            columns = [c for c in warehouse.columns(table) if c not in VOLATILE]
            rows = warehouse.con.execute(
                f"SELECT {', '.join(columns)} FROM {table}").fetchall()
            lines = sorted(repr(row) for row in rows)
            found[table] = (len(lines), hashlib.sha256("\n".join(lines).encode()).hexdigest())
    return found


def replayed(db: Path) -> None:
    from papersift.testing.corpus import replay_corpus

    replay_corpus(db)


def simulated(db: Path, papers: int, concurrency: int, batch: bool, port: int) -> None:
    from bench.simendpoint import SimConfig, SimEndpoint
    from bench.synth import write_corpus
    from papersift.extract.access.endpoints import EndpointOptions
    from papersift.extract.interface.app import RunSettings, run_inputs
    from papersift.extract.runs.batch import BatchOptions

    corpus = db.parent / "corpus"
    write_corpus(corpus, papers, files=1, fmt="jsonl", seed=3)
    # A fixed port: the endpoint's URL is part of every cache key and extraction id.
    config = SimConfig(latency="fixed:0", batch_seconds=0.5)
    with SimEndpoint(config, port=port).start() as sim:
        settings = RunSettings(
            db=db, concurrency=concurrency,
            batch=BatchOptions(poll_interval_s=0.2) if batch else None,
            endpoint=EndpointOptions(provider="compatible", base_url=sim.base_url,
                                     model="gpt-4o-mini", max_tokens=512))
        run_inputs([str(corpus)], settings)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replay", action="store_true")
    parser.add_argument("--sim", type=int, default=0, help="synthetic abstracts")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--batch", action="store_true")
    parser.add_argument("--port", type=int, default=47318, help="the simulator's port")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "digest.duckdb"
        if args.replay:
            replayed(db)
        else:
            simulated(db, args.sim, args.concurrency, args.batch, args.port)
        found = digests(db)
    print_digests(found)
    return 0


def print_digests(found: dict[str, tuple[int, str]]) -> None:
    """One line per table or view (rows, digest), then the digest of them all."""
    overall = hashlib.sha256()
    for name, (count, digest) in found.items():
        print(f"{name:32} {count:7d} {digest[:16]}")
        overall.update(f"{name}:{count}:{digest}\n".encode())
    print(f"{'all':32} {'':7} {overall.hexdigest()[:16]}")


if __name__ == "__main__":
    raise SystemExit(main())
