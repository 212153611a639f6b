"""Batch API mode and Ray shards under faults (issue 28: neither had been probed), each
class tried and counted: held (every abstract it touched ended stored, as a row or a
failure with its reason, and the run finished) or lost (an abstract without a stored
outcome).

Batch mode runs the bundled corpus against the hand-written fake of OpenAI's Files and
Batches routes (papersift/testing/fakebatch.py), one paper per fault of the output file
and of its answers, then whole batches that expire or are cancelled. Ray shards run it on
a local Ray (2 CPUs) against the simulated endpoint (papersift.testing.sim, a fake) with
30% of requests faulted, and with a worker SIGKILLed mid-shard (testing/killing.py).

    python -m bench.batch_ray_faults [--no-ray]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import httpx2

from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.batch import BatchOptions
from papersift.extract.runs.distributed import (
    ShardSettings,
    merge_into,
    run_on_ray,
    shard_corpus,
)
from papersift.testing.corpus import CORPUS
from papersift.testing.fakebatch import FAULTS, FILE_FAULTS, FakeBatchAPI
from papersift.testing.killing import KillOnce
from papersift.testing.sim import fault_profile, running
from papersift.warehouse.query import run_sql

Row = tuple[str, int, int, int, str]  # class, tried, held, lost, note
FAKE = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json",
                api_key="sk-bench-0123456789abcdef")
FAST = BatchOptions(poll_interval_s=0.0)


def _stored(db: Path) -> dict[str, tuple[str, str | None]]:
    """paper_id -> (outcome, failure reason) of the warehouse's latest run."""
    rows = run_sql(db, "SELECT r.paper_id, r.outcome, f.reason FROM run_papers r "
                       "LEFT JOIN failures f USING (run_id, paper_id) "
                       "WHERE r.run_id = (SELECT max(run_id) FROM runs)").rows
    return {str(paper): (str(outcome), reason) for paper, outcome, reason in rows}


def batch_rows(tmp: Path) -> list[Row]:
    probe = FakeBatchAPI()
    run_inputs([str(CORPUS)], RunSettings(db=tmp / "probe.duckdb", batch=FAST),
               transport=probe.transport(), endpoint=FAKE)
    ids = sorted(line["custom_id"] for line in probe.uploaded_lines)
    classes = (*FILE_FAULTS, *FAULTS)
    faults = dict(zip(ids, classes, strict=False))
    db = tmp / "batch.duckdb"
    _, summary = run_inputs([str(CORPUS)], RunSettings(db=db, batch=FAST),
                            transport=FakeBatchAPI(faults=faults).transport(), endpoint=FAKE)
    stored = _stored(db)
    rows: list[Row] = []
    for paper, fault in faults.items():
        outcome, reason = stored.get(paper, ("lost", None))
        held = outcome == "extracted" or (outcome == "failed" and bool(reason))
        rows.append((f"batch: {fault}", 1, int(held), int(paper not in stored),
                     f"{outcome}" + (f" ({reason})" if reason else "")))
    others = [p for p in ids if p not in faults]
    rows.append(("batch: the other lines of that file", len(others),
                 sum(stored.get(p, ("",))[0] == "extracted" for p in others),
                 sum(p not in stored for p in others), summary.line()))
    for status in ("expired", "cancelled", "failed"):
        db = tmp / f"{status}.duckdb"
        _, summary = run_inputs([str(CORPUS)], RunSettings(db=db, batch=FAST),
                                transport=FakeBatchAPI(final_status=status).transport(),
                                endpoint=FAKE)
        stored = _stored(db)
        reasons = sorted({reason for _, reason in stored.values() if reason})
        rows.append((f"batch: a batch that ends {status}", summary.n_abstracts,
                     sum(o == "extracted" or bool(r) for o, r in stored.values()),
                     summary.n_abstracts - len(stored),
                     f"{summary.line()}; reasons {reasons}"))
    return rows


def _ray_run(tmp: Path, name: str, settings: ShardSettings, workers: int = 2) -> Row:
    out = settings.out
    shards = shard_corpus([CORPUS], out, papers_per_shard=16, run_id=settings.run_id)
    started = time.monotonic()
    summary = run_on_ray(shards, settings, workers=workers)
    db = tmp / f"{settings.run_id}.duckdb"
    counts = merge_into(db, out, settings.run_id, inputs=[str(CORPUS)])
    stored = _stored(db)
    held = sum(o == "extracted" or bool(r) for o, r in stored.values())
    reasons = sorted({reason for _, reason in stored.values() if reason})
    return (name, counts.n_abstracts, held, summary.total("n_abstracts") - len(stored),
            f"{summary.line()}, merged in {time.monotonic() - started:.1f} s; "
            f"reasons {reasons}")


def ray_rows(tmp: Path) -> list[Row]:
    import ray

    os.environ["RAY_AUTH_MODE"] = "disabled"
    scratch = tempfile.mkdtemp(prefix="papersift-ray-")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=scratch)
    rows = []
    policy = RetryPolicy(max_attempts=3, initial_wait_s=0.05, max_wait_s=0.2, jitter_s=0.0)
    try:
        with running(fault_profile(rate=0.3, seed=28, retry_after="0", hang_s=3.0)) as sim:
            endpoint = Endpoint(base_url=sim.base_url, model="fault", mode="json",
                                timeout_s=1.0)
            rows.append(_ray_run(tmp, "ray: 30% of requests faulted", ShardSettings(
                out=tmp / "faulted", run_id="run_faulted", endpoint=endpoint,
                max_reasks=1, concurrency=4, retry=policy)))
            rows.append(_ray_run(tmp, "ray: a worker SIGKILLed mid-shard", ShardSettings(
                out=tmp / "killed", run_id="run_killed", endpoint=endpoint, max_reasks=1,
                concurrency=4, retry=policy, transport=KillOnce(
                    _plain_transport, tmp / "killed.marker", at_request=3))))
    finally:
        ray.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)
    return rows


def _plain_transport() -> httpx2.BaseTransport:
    return httpx2.HTTPTransport()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-ray", action="store_true", help="Batch mode only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        rows = batch_rows(tmp)
        if not args.no_ray:
            rows += ray_rows(tmp)
    print(f"{'class':42} | tried | held | lost | note")
    for name, tried, held, lost, note in rows:
        print(f"{name:42} | {tried:5} | {held:4} | {lost:4} | {note}")
    return 0 if all(lost == 0 and held == tried for _, tried, held, lost, _ in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
