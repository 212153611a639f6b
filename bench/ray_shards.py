"""The sharded Ray Data path (extract.distributed) next to the single-process Runner.

Both extract the same synthetic corpus (the bundled abstracts, varied to reach --papers)
against the hand-written instant fake model of papersift/testing/mock.py, slowed by --latency-ms per
request to stand in for a network endpoint (NOT a real model: the figures measure
papersift's and Ray's overhead and parallelism, not extraction quality). Prints, per run:
wall time and abstracts/s; for the Ray path also cluster start, Parquet bytes, the merge
into a warehouse, and one query over the Parquet partitions vs the merged warehouse.

    python -m bench.ray_shards --papers 1000 --latency-ms 100 --concurrency 4 --workers 1 2
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import duckdb
import httpx2

from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.distributed import (
    ShardSettings,
    merge_into,
    parquet_views,
    run_on_ray,
    shard_corpus,
)
from papersift.extract.runs.ingest_files import ingest

ROOT = Path(__file__).resolve().parent.parent

QUERY = ("SELECT lower(name) AS task, count(DISTINCT paper_id) AS papers "
         "FROM extraction_tasks GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10")


class SlowFake(httpx2.BaseTransport):
    """papersift.testing.mock.FakeModel behind a fixed delay per request (a hand-written fake)."""

    def __init__(self, latency_s: float) -> None:
        from papersift.testing.mock import FakeModel

        self.latency_s = latency_s
        self.model = FakeModel()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        time.sleep(self.latency_s)
        return self.model(request)


class SlowFakeFactory:
    """Picklable: each Ray worker builds its own slowed fake."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s

    def __call__(self) -> httpx2.BaseTransport:
        return SlowFake(self.latency_s)


def build_corpus(folder: Path, papers: int) -> Path:
    abstracts = [p.text for p in ingest([ROOT / "examples" / "neurips-2026"]).papers]
    lines = ["Bench 2026 Papers"]
    lines += [f"{abstracts[i % len(abstracts)]} (variant {i})" for i in range(papers)]
    path = folder / "bench.txt"
    path.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    return path


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet")) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, default=4, help="requests in flight per "
                        "process (single) or per worker (Ray)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--papers-per-shard", type=int, default=100)
    args = parser.parse_args()
    endpoint = Endpoint(base_url="http://127.0.0.1:1/v1", model="handwritten-fake")
    latency = args.latency_ms / 1000.0
    policy = RetryPolicy(max_attempts=1)
    print(f"{args.papers} abstracts, {args.latency_ms:.0f} ms per request, "
          f"{args.concurrency} in flight per process/worker, {os.cpu_count()} CPUs")

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        corpus = build_corpus(folder, args.papers)
        started = time.perf_counter()
        _, summary = run_inputs([str(corpus)], RunSettings(
            db=folder / "single.duckdb", concurrency=args.concurrency, retry=policy,
            max_reasks=0), transport=SlowFake(latency), endpoint=endpoint)
        seconds = time.perf_counter() - started
        print(f"single process: {summary.line()} in {seconds:.2f} s = "
              f"{summary.n_abstracts / seconds:,.1f} abstracts/s")

        import ray

        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        os.environ["PYTHONPATH"] = str(ROOT)  # workers unpickle SlowFake from bench.ray_shards
        started = time.perf_counter()
        ray.init(num_cpus=max(args.workers), include_dashboard=False, log_to_driver=False)
        print(f"ray.init (local): {time.perf_counter() - started:.2f} s")
        for workers in args.workers:
            out = folder / f"out{workers}"
            started = time.perf_counter()
            shards = shard_corpus([corpus], out, papers_per_shard=args.papers_per_shard)
            sharding = time.perf_counter() - started
            settings = ShardSettings(out=out, run_id=f"run_ray_{workers}", endpoint=endpoint,
                                     max_reasks=0, concurrency=args.concurrency,
                                     retry=policy, transport=SlowFakeFactory(latency))
            result = run_on_ray(shards, settings, workers=workers)
            busy = sum(r.summary.seconds for r in result.shards)
            print(f"ray, {workers} worker(s): sharding {sharding:.2f} s; {result.line()} = "
                  f"{result.total('n_abstracts') / result.seconds:,.1f} abstracts/s; shard time "
                  f"{busy:.1f} s summed ({busy / workers / result.seconds:.0%} of the wall "
                  f"time per worker); Parquet {size_mb(out):.2f} MB in "
                  f"{len(list(out.rglob('*.parquet')))} files")
            started = time.perf_counter()
            db = folder / f"merged{workers}.duckdb"
            merge_into(db, out, settings.run_id)
            print(f"  merge into a warehouse: {time.perf_counter() - started:.2f} s")
            con = duckdb.connect()
            parquet_views(con, out)
            started = time.perf_counter()
            on_parquet = con.execute(QUERY).fetchall()
            print(f"  query over Parquet partitions: {time.perf_counter() - started:.3f} s")
            con.close()
            con = duckdb.connect(str(db), read_only=True)
            started = time.perf_counter()
            assert con.execute(QUERY).fetchall() == on_parquet
            print(f"  same query on the merged warehouse: {time.perf_counter() - started:.3f} s")
            con.close()
        ray.shutdown()


if __name__ == "__main__":
    main()
