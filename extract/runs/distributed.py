"""Extraction beyond one machine: Ray Data workers extract shards of papers into Parquet.

The flow (docs/scale.md explains the choices):

1. ``shard_corpus`` reads the inputs once and writes the work list as numbered Parquet
   shards (paper id, text, first occurrence, skip reason), plus the papers, sources and
   input failures of each shard as that shard's ingest partition.
2. ``run_on_ray`` hands the shard files to a Ray Data actor pool. Each actor builds one
   ``Extractor`` through the normal endpoint code and extracts its shard's papers with
   the one :class:`~papersift.extract.runs.runner.Runner` (cache snapshot first, live
   requests), which stores into a :class:`ShardStore`: the rows a single-process run
   stores, written as one Parquet file per warehouse table under
   ``<out>/<table>/shard=<n>/``. File names depend only on the shard, so a retried shard
   replaces its files instead of adding a second copy.
3. ``parquet_views`` lets DuckDB query the partitions in place; ``merge_into`` copies them
   into a warehouse, honouring the same keys as ``Warehouse.write``, once per run (the
   SQL of both is warehouse/partitions.py's).

``ray`` is imported inside ``run_on_ray`` only: the base package does not depend on it
(``pip install 'papersift[ray]'``).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from papersift.errors import PapersiftError
from papersift.extract.access.endpoints import EndpointError, EndpointOptions, plan_endpoint
from papersift.extract.access.extractor import Extractor, Failure
from papersift.extract.access.http import Transport
from papersift.extract.access.limits import RequestGate
from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.extract.access.recording import Recording, ReplayTransport
from papersift.extract.domain.fields import FieldSet
from papersift.extract.domain.reading.ingest import DEFAULT_MAX_CHARS
from papersift.extract.runs.ingest_files import ingest
from papersift.extract.runs.ingested import ingest_batch
from papersift.extract.runs.jobs import Job, jobs_from
from papersift.extract.runs.rows import papersift_version
from papersift.extract.runs.runner import Runner, RunSummary
from papersift.prompts import DEFAULT_PROMPT, load_prompt
from papersift.warehouse import Warehouse
from papersift.warehouse.custom import record_custom_fields
from papersift.warehouse.partitions import (
    MergeError,
    cache_hits,
    export_cache_snapshot,
    merge_run,
    parquet_views,
    write_atomically,
    write_partitions,
)
from papersift.warehouse.store import WRITABLE_TABLES, Batch, RunCounts

__all__ = ["DistributedError", "DistributedSummary", "MergeError", "ShardExtractor",
           "ShardResult", "ShardSettings", "export_cache_snapshot", "merge_into",
           "missing_shards", "parquet_views", "read_shard", "replaying", "run_on_ray",
           "shard_corpus"]

SHARD_DIR = "shards"
INGEST_PART = "ingest.parquet"  # papers, sources, input failures of a shard
EXTRACT_PART = "extract.parquet"  # everything the shard's extraction stored
# The tables a shard's extraction writes (every one, empty or not, so a retry replaces all).
EXTRACT_TABLES = tuple(t for t in WRITABLE_TABLES if t not in ("papers", "sources"))
_SHARD_SCHEMA = pa.schema([
    ("paper_id", pa.string()),
    ("text", pa.string()),
    ("file", pa.string()),
    ("position", pa.int64()),
    ("skip_reason", pa.string()),
    ("skip_detail", pa.string()),
])


class DistributedError(PapersiftError):
    """A sharded run cannot be set up, or its output cannot be merged, as asked."""


# -- 1. shards -------------------------------------------------------------------------


def shard_corpus(
    inputs: Sequence[str | Path],
    out: Path,
    *,
    papers_per_shard: int,
    max_chars: int = DEFAULT_MAX_CHARS,
    run_id: str | None = None,
) -> list[Path]:
    """Read the inputs and write the work as shards of ``papers_per_shard`` papers under
    ``<out>/shards/``; each shard's papers and sources go to its ingest partition (input
    problems too, under ``run_id``). Returns the shard files in order."""
    if papers_per_shard < 1:
        raise DistributedError(f"papers_per_shard must be at least 1, not {papers_per_shard}")
    result = ingest(inputs, max_chars=max_chars)
    jobs = jobs_from(result)
    if not jobs:
        problems = "; ".join(p.message for p in result.problems[:3])
        raise DistributedError(f"no abstracts to shard in {', '.join(map(str, inputs))}"
                               + (f": {problems}" if problems else ""))
    ingested = ingest_batch(result, run_id)
    sources_of: dict[str, list[dict[str, Any]]] = {}
    for row in ingested.rows.get("sources", []):
        sources_of.setdefault(row["paper_id"], []).append(row)
    papers_of = {row["paper_id"]: row for row in ingested.rows.get("papers", [])}
    count = -(-len(jobs) // papers_per_shard)
    stale = [p for p in sorted((out / SHARD_DIR).glob("shard-*.parquet"))
             if _shard_number(p) >= count]
    if stale:
        raise DistributedError(f"{out}: holds {len(stale)} shard(s) beyond the {count} of "
                               f"these inputs (e.g. {stale[0].name}); use a new folder per run")
    (out / SHARD_DIR).mkdir(parents=True, exist_ok=True)
    shards = []
    for number, start in enumerate(range(0, len(jobs), papers_per_shard)):
        chunk = jobs[start:start + papers_per_shard]
        path = out / SHARD_DIR / f"shard-{number:05d}.parquet"
        write_atomically(pa.Table.from_pylist([_job_row(job) for job in chunk],
                                               schema=_SHARD_SCHEMA), path)
        rows = Batch()
        rows.add("papers", *(papers_of[job.paper_id] for job in chunk))
        rows.add("sources", *(r for job in chunk for r in sources_of.get(job.paper_id, [])))
        if number == 0:  # unreadable inputs belong to no shard; the first one keeps them
            rows.add("failures", *ingested.rows.get("failures", []))
        write_partitions(rows, out, number, INGEST_PART, ("papers", "sources", "failures"))
        shards.append(path)
    return shards


def _job_row(job: Job) -> dict[str, Any]:
    return {"paper_id": job.paper_id, "text": job.text, "file": job.file,
            "position": job.position,
            "skip_reason": job.skip.reason if job.skip else None,
            "skip_detail": job.skip.detail if job.skip else None}


def read_shard(path: Path) -> list[Job]:
    """The jobs of one shard file."""
    jobs = []
    for row in pq.read_table(path).to_pylist():
        skip = (Failure("ingest", row["skip_reason"], row["skip_detail"])
                if row["skip_reason"] else None)
        jobs.append(Job(row["paper_id"], row["text"], skip, row["file"], row["position"]))
    return jobs


# -- 2. one shard's extraction ---------------------------------------------------------


@dataclass(frozen=True)
class ShardSettings:
    """What every worker needs; pickled to each of them, so it never holds an API key
    (with ``EndpointOptions``, each worker reads the key from its own environment)."""

    out: Path
    run_id: str
    endpoint: EndpointOptions | Endpoint = EndpointOptions()
    prompt: str = DEFAULT_PROMPT
    max_reasks: int = 2
    concurrency: int = 4  # requests in flight per worker
    # This worker's share of the account's limits (RPM / workers, TPM / workers); None:
    # adopted from the provider's x-ratelimit headers, which announce the whole account's.
    rpm: float | None = None
    tpm: float | None = None
    retry: RetryPolicy = RetryPolicy()
    cache_snapshot: Path | None = None  # Parquet of llm_cache rows (export_cache_snapshot)
    transport: Callable[[], Transport] | None = None  # tests and replays
    # A user's fields (``--fields``) as data, FieldSet.declaration(): each worker rebuilds
    # them, since it cannot import the user's file.
    fields: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.endpoint, Endpoint) and self.endpoint.api_key:
            raise DistributedError(
                "an endpoint with an API key would be copied to every worker; pass "
                "EndpointOptions so each worker reads its key from its own environment")


def replay_transport(recording: Path) -> Transport:
    """A transport answering from a recording (pass ``replaying(path)`` as a factory)."""
    return ReplayTransport(Recording.load(recording))


def replaying(recording: Path) -> Callable[[], Transport]:
    """A picklable transport factory that replays ``recording`` in each worker."""
    return functools.partial(replay_transport, recording)


def worker_endpoint(settings: ShardSettings) -> Endpoint:
    """The worker's endpoint, resolved where it runs; a local model is refused (one
    llama.cpp server per worker would fight over the machine's cores)."""
    if isinstance(settings.endpoint, Endpoint):
        return settings.endpoint
    plan = plan_endpoint(settings.endpoint)
    if plan.local_model is not None or plan.catalogue_model is not None:
        raise EndpointError("a sharded run needs a remote endpoint (--provider openai or "
                            "compatible); the local model serves one process per machine")
    return plan.endpoint


@dataclass
class ShardResult:
    """What one shard's extraction did, and which worker did it."""

    shard: int
    worker_pid: int
    summary: RunSummary


class ShardStore:
    """A shard's run as a :class:`RunStore`: cached answers from the snapshot, rows kept
    for the shard's partitions (the merge stores the run itself)."""

    def __init__(self, snapshot: Path | None) -> None:
        self.snapshot = snapshot
        self.rows = Batch()

    def begin(self, run_id: str, provenance: Mapping[str, Any], params: dict[str, Any],
              inputs: list[str]) -> None:
        """Nothing to store: the run's row is written when the shards are merged."""

    def end(self, run_id: str, status: str, counts: RunCounts) -> None:
        """Nothing to store: the merge counts the run from its partitions."""

    def cache_lookup(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        return cache_hits(self.snapshot, keys)

    def write(self, batch: Batch) -> None:
        self.rows.extend(batch)


class ShardExtractor:
    """Extracts whole shards; one per Ray actor, so one Extractor (and connection pool)
    per worker, reused for every shard the actor is given."""

    def __init__(self, settings: ShardSettings) -> None:
        self.settings = settings
        endpoint = worker_endpoint(settings)
        transport = settings.transport() if settings.transport is not None else None
        self.extractor = Extractor(endpoint, load_prompt(settings.prompt),
                                   max_reasks=settings.max_reasks, transport=transport,
                                   policy=settings.retry,
                                   fields=FieldSet.from_declaration(settings.fields))
        # One gate per worker, kept across its shards: the pacing the single process uses.
        self.gate = RequestGate(rpm=settings.rpm, tpm=settings.tpm)

    def __call__(self, batch: pa.Table) -> pa.Table:
        """Ray Data's entry point: a batch of {shard, path} rows in, one result row each out."""
        results = [self.extract_shard(int(row["shard"]), Path(row["path"]))
                   for row in batch.to_pylist()]
        return pa.Table.from_pylist([
            {"shard": result.shard, "worker_pid": result.worker_pid,
             "summary": result.summary.to_json()} for result in results])

    def extract_shard(self, shard: int, path: Path) -> ShardResult:
        """Extract one shard with the one runner (live requests, ``concurrency`` at a time,
        cache snapshot first) and write its partitions, replacing any earlier attempt's."""
        started = time.monotonic()
        store = ShardStore(self.settings.cache_snapshot)
        runner = Runner(store, self.extractor, concurrency=self.settings.concurrency,
                        run_id=self.settings.run_id, gate=self.gate, row_workers=0)
        summary = runner.run(read_shard(path))
        write_partitions(store.rows, self.settings.out, shard, EXTRACT_PART, EXTRACT_TABLES)
        summary.seconds = round(time.monotonic() - started, 3)
        return ShardResult(shard=shard, worker_pid=os.getpid(), summary=summary)


# -- the shards on Ray -----------------------------------------------------------------


@dataclass
class DistributedSummary:
    run_id: str
    shards: list[ShardResult]
    seconds: float

    def total(self, name: str) -> int:
        """The sum over the shards of one RunSummary count (``n_extracted``...)."""
        return sum(int(getattr(result.summary, name)) for result in self.shards)

    def line(self) -> str:
        workers = len({result.worker_pid for result in self.shards})
        return (f"{len(self.shards)} shards on {workers} worker(s): "
                f"{self.total('n_abstracts')} papers, {self.total('n_extracted')} extracted, "
                f"{self.total('n_cached')} from cache, {self.total('n_failed')} failed in "
                f"{self.seconds:.1f} s")


def run_on_ray(shards: Sequence[Path], settings: ShardSettings, *, workers: int) -> (
        DistributedSummary):
    """Extract every shard on a pool of ``workers`` Ray actors (on the cluster ``ray.init``
    connected to, or a local one), each actor one worker with its own Extractor."""
    import ray

    started = time.monotonic()
    items = [{"shard": _shard_number(path), "path": str(path.resolve())} for path in shards]
    rows = (
        ray.data.from_items(items)
        .map_batches(
            ShardExtractor,
            fn_constructor_kwargs={"settings": settings},
            batch_size=1,  # a shard is the unit of work, of retry and of output
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=max(1, workers)),
        )
        .take_all()
    )
    results = [ShardResult(shard=row["shard"], worker_pid=row["worker_pid"],
                           summary=RunSummary.from_json(row["summary"])) for row in rows]
    return DistributedSummary(run_id=settings.run_id,
                              shards=sorted(results, key=lambda result: result.shard),
                              seconds=round(time.monotonic() - started, 3))


def missing_shards(shards: Sequence[Path], out: Path) -> list[Path]:
    """The shards whose extraction has not written its partitions yet: after a run that
    stopped part-way, run these again (the others are done; a shard's last file is
    written last, so a shard that died mid-write counts as missing)."""
    last = EXTRACT_TABLES[-1]
    return [path for path in shards
            if not (out / last / f"shard={_shard_number(path)}" / EXTRACT_PART).exists()]


def _shard_number(path: Path) -> int:
    try:
        return int(path.stem.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        raise DistributedError(f"{path}: not a shard file (expected shard-NNNNN.parquet)") \
            from None


# -- 3. merging ------------------------------------------------------------------------


def merge_into(db: Path, out: Path, run_id: str, *, inputs: Sequence[str] = (),
               params: dict[str, Any] | None = None,
               fields: dict[str, Any] | None = None) -> RunCounts:
    """Copy a sharded run's partitions into a warehouse once (warehouse/partitions.py
    says how); the run's row records it as sharded. ``fields``: the run's user fields
    (ShardSettings.fields), whose declarations and views the warehouse then gets."""
    counts = merge_run(db, out, run_id, params={"sharded": True, **(params or {})},
                       inputs=inputs, papersift_version=papersift_version())
    declared = FieldSet.from_declaration(fields).custom
    if declared:
        with Warehouse(db) as warehouse:
            warehouse.run(record_custom_fields, declared)
    return counts
