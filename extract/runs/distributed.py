"""Extraction beyond one machine: Ray Data workers extract shards of papers into Parquet.

The flow (docs/scale.md explains the choices):

1. ``shard_corpus`` reads the inputs once and writes the work list as numbered Parquet
   shards (paper id, text, first occurrence, skip reason), plus the papers, sources and
   input failures of each shard as that shard's ingest partition.
2. ``run_on_ray`` hands the shard files to a Ray Data actor pool. Each actor builds one
   ``Extractor`` through the normal endpoint code, extracts its shard's papers (cache
   snapshot first), turns every outcome into rows with ``outcome_batch`` (extract/runs/pipeline.py)
   (the rows the single-process ``Runner`` stores) and writes one Parquet file per
   warehouse table under ``<out>/<table>/shard=<n>/``. File names depend only on the shard,
   so a retried shard replaces its files instead of adding a second copy.
3. ``parquet_views`` lets DuckDB query the partitions in place; ``merge_into`` copies them
   into a warehouse, honouring the same keys as ``Warehouse.write``, once per run.

``ray`` is imported inside ``run_on_ray`` only: the base package does not depend on it
(``pip install 'papersift[ray]'``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import httpx2
import pyarrow as pa
import pyarrow.parquet as pq

from papersift.errors import PapersiftError
from papersift.extract.access.endpoints import EndpointError, EndpointOptions, plan_endpoint
from papersift.extract.access.extractor import Extractor, Failure, Outcome
from papersift.extract.access.limits import RequestGate
from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.extract.access.recording import Recording, ReplayTransport
from papersift.extract.domain.ingest import DEFAULT_MAX_CHARS, ingest
from papersift.extract.runs.pipeline import (
    Job,
    cached_outcome,
    ingest_batch,
    jobs_from,
    outcome_batch,
    papersift_version,
)
from papersift.prompts import DEFAULT_PROMPT, load_prompt
from papersift.schemas import schema_version
from papersift.warehouse import Warehouse
from papersift.warehouse.store import _CHILDREN, _KEYS, WRITABLE_TABLES, Batch, RunCounts

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
        _write_atomically(pa.Table.from_pylist([_job_row(job) for job in chunk],
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
    transport: Callable[[], httpx2.BaseTransport] | None = None  # tests and replays

    def __post_init__(self) -> None:
        if isinstance(self.endpoint, Endpoint) and self.endpoint.api_key:
            raise DistributedError(
                "an endpoint with an API key would be copied to every worker; pass "
                "EndpointOptions so each worker reads its key from its own environment")


def replay_transport(recording: Path) -> httpx2.BaseTransport:
    """A transport answering from a recording (pass ``replaying(path)`` as a factory)."""
    return ReplayTransport(Recording.load(recording))


def replaying(recording: Path) -> Callable[[], httpx2.BaseTransport]:
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
class ShardReport:
    shard: int
    papers: int = 0
    extracted: int = 0
    cached: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    worker_pid: int = field(default_factory=os.getpid)


class ShardExtractor:
    """Extracts whole shards; one per Ray actor, so one Extractor (and connection pool)
    per worker, reused for every shard the actor is given."""

    def __init__(self, settings: ShardSettings) -> None:
        self.settings = settings
        endpoint = worker_endpoint(settings)
        transport = settings.transport() if settings.transport is not None else None
        self.extractor = Extractor(endpoint, load_prompt(settings.prompt),
                                   max_reasks=settings.max_reasks, transport=transport,
                                   policy=settings.retry)
        # One gate per worker, kept across its shards: the pacing the single process uses.
        self.gate = RequestGate(rpm=settings.rpm, tpm=settings.tpm)
        # The same provenance Runner stores on each extraction (tests compare the rows).
        self.provenance = {
            "endpoint": endpoint.cache_identity,
            "model": endpoint.model,
            "mode": endpoint.mode,
            "prompt_version": self.extractor.prompt.version,
            "schema_version": schema_version(),
        }

    def __call__(self, batch: pa.Table) -> pa.Table:
        """Ray Data's entry point: a batch of {shard, path} rows in, one report row each out."""
        reports = [self.extract_shard(int(row["shard"]), Path(row["path"]))
                   for row in batch.to_pylist()]
        return pa.Table.from_pylist([report.__dict__ for report in reports])

    def extract_shard(self, shard: int, path: Path) -> ShardReport:
        """Extract one shard and write its partitions (replacing any earlier attempt's)."""
        started = time.monotonic()
        jobs = read_shard(path)
        report = ShardReport(shard=shard, papers=len(jobs))
        outcomes = self._known(jobs)
        to_send = [job for job in jobs if job.paper_id not in outcomes]
        if to_send:
            outcomes.update(asyncio.run(self._send(to_send)))
        rows = Batch()
        for job in jobs:  # shard order, whatever order the answers came in
            outcome = outcomes[job.paper_id]
            rows.extend(outcome_batch(outcome, job, run_id=self.settings.run_id,
                                      provenance=self.provenance,
                                      model=self.extractor.endpoint.model))
            report.prompt_tokens += outcome.prompt_tokens
            report.completion_tokens += outcome.completion_tokens
            if not outcome.ok:
                report.failed += 1
            elif outcome.from_cache:
                report.cached += 1
            else:
                report.extracted += 1
        write_partitions(rows, self.settings.out, shard, EXTRACT_PART, EXTRACT_TABLES)
        report.seconds = round(time.monotonic() - started, 3)
        return report

    async def _send(self, jobs: Sequence[Job]) -> dict[str, Outcome]:
        """The shard's requests through the async client, ``concurrency`` at a time, each
        attempt paced by the worker's gate."""
        slots = asyncio.Semaphore(max(1, self.settings.concurrency))

        async def one(job: Job) -> Outcome:
            async with slots:
                return await self.extractor.extract_async(job.paper_id, job.text)

        async with self.extractor.session(self.gate):
            answers = await asyncio.gather(*(one(job) for job in jobs))
        return {outcome.paper_id: outcome for outcome in answers}

    def _known(self, jobs: Sequence[Job]) -> dict[str, Outcome]:
        """Outcomes that need no request: skipped papers and cache-snapshot hits."""
        keys = {job.paper_id: self.extractor.key_for(job.text) for job in jobs}
        cached = cache_hits(self.settings.cache_snapshot, keys.values())
        known: dict[str, Outcome] = {}
        for job in jobs:
            key = keys[job.paper_id]
            if job.skip is not None:
                known[job.paper_id] = Outcome(paper_id=job.paper_id, cache_key=key,
                                              failure=job.skip)
            elif key in cached:
                known[job.paper_id] = cached_outcome(job.paper_id, key, cached[key])
        return known


# -- Parquet partitions ----------------------------------------------------------------


def _write_atomically(table: pa.Table, path: Path) -> None:
    """Write next to the target, then rename over it: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    pq.write_table(table, partial)
    os.replace(partial, path)


@contextmanager
def _scratch_warehouse() -> Iterator[Warehouse]:
    with (tempfile.TemporaryDirectory(prefix="papersift-shard-") as scratch,
          Warehouse(Path(scratch) / "shard.duckdb") as warehouse):
        yield warehouse


def write_partitions(rows: Batch, out: Path, shard: int, part: str,
                     tables: Sequence[str]) -> None:
    """Write ``rows`` as ``<out>/<table>/shard=<shard>/<part>``, one file per table, every
    table written even when empty (so a retry replaces a previous attempt completely).

    The rows pass through a scratch warehouse's normal ``write``, so the files hold exactly
    the columns, types and key rules of the warehouse tables.
    """
    with _scratch_warehouse() as scratch:
        scratch.write(rows)
        for table in tables:
            arrow = scratch.con.execute(f"SELECT * FROM {table}").fetch_arrow_table()
            _write_atomically(arrow, out / table / f"shard={shard}" / part)


# -- cache across workers --------------------------------------------------------------


def export_cache_snapshot(db: Path, path: Path) -> int:
    """Copy a warehouse's llm_cache to one Parquet file every worker can read; returns
    the number of entries."""
    with Warehouse(db) as warehouse:
        table = warehouse.con.execute(
            "SELECT cache_key, response_json, lenient, asks FROM llm_cache").fetch_arrow_table()
    _write_atomically(table, path)
    return int(table.num_rows)


def cache_hits(snapshot: Path | None, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Snapshot entries for the given keys (pushed down into the Parquet scan)."""
    if snapshot is None:
        return {}
    wanted = pa.table({"key": pa.array(list(keys), type=pa.string())})
    con = duckdb.connect()
    try:
        con.register("wanted", wanted)
        rows = con.execute(
            "SELECT cache_key, response_json, lenient, asks FROM read_parquet(?) "
            "WHERE cache_key IN (SELECT key FROM wanted)", [str(snapshot)]).fetchall()
    finally:
        con.close()
    return {key: {"response": json.loads(response), "lenient": bool(lenient), "asks": asks}
            for key, response, lenient, asks in rows}


# -- 2b. the shards on Ray -------------------------------------------------------------


@dataclass
class DistributedSummary:
    run_id: str
    shards: list[ShardReport]
    seconds: float

    def total(self, name: str) -> int:
        return sum(int(getattr(report, name)) for report in self.shards)

    def line(self) -> str:
        workers = len({report.worker_pid for report in self.shards})
        return (f"{len(self.shards)} shards on {workers} worker(s): {self.total('papers')} "
                f"papers, {self.total('extracted')} extracted, {self.total('cached')} from "
                f"cache, {self.total('failed')} failed in {self.seconds:.1f} s")


def run_on_ray(shards: Sequence[Path], settings: ShardSettings, *, workers: int) -> (
        DistributedSummary):
    """Extract every shard on a pool of ``workers`` Ray actors (on the cluster ``ray.init``
    connected to, or a local one), each actor one worker with its own Extractor."""
    import ray

    started = time.monotonic()
    items = [{"shard": _shard_number(path), "path": str(path.resolve())} for path in shards]
    reports = (
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
    return DistributedSummary(
        run_id=settings.run_id,
        shards=sorted((ShardReport(**row) for row in reports), key=lambda r: r.shard),
        seconds=round(time.monotonic() - started, 3),
    )


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


# -- 3. reading the partitions ---------------------------------------------------------


def partition_glob(out: Path, table: str) -> str:
    return str(out.resolve() / table / "shard=*" / "*.parquet")


def parquet_views(con: duckdb.DuckDBPyConnection, out: Path) -> list[str]:
    """Create one view per warehouse table over its partitions (with a ``shard`` column
    from the directory names); returns the tables that have files."""
    made = []
    for table in WRITABLE_TABLES:
        if not any((out / table).glob("shard=*/*.parquet")):
            continue
        glob = partition_glob(out, table).replace("'", "''")
        con.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM read_parquet("
                    f"'{glob}', hive_partitioning = true, union_by_name = true)")
        made.append(table)
    return made


def merge_into(db: Path, out: Path, run_id: str, *, inputs: Sequence[str] = (),
               params: dict[str, Any] | None = None) -> RunCounts:
    """Copy a sharded run's partitions into a warehouse in one transaction: keyed rows
    already stored are kept, item rows come only with new extractions (as in
    ``Warehouse.write``), and the run gets its ``runs`` row. A run merges once: merging
    it again is an error, so calls and failures are never doubled."""
    with Warehouse(db) as warehouse:
        con = warehouse.con
        if con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone():
            raise DistributedError(f"{db}: run {run_id} is already in the warehouse")
        present = [t for t in WRITABLE_TABLES if any((out / t).glob("shard=*/*.parquet"))]
        if "run_papers" not in present:
            raise DistributedError(f"{out}: no extraction partitions; run the shards first")
        con.execute("BEGIN TRANSACTION")
        try:
            for table in present:
                _merge_table(warehouse, out, table)
            counts = _run_counts(con, out, run_id)
            warehouse.start_run(run_id, **_run_provenance(con, out, run_id),
                                params={"sharded": True, **(params or {})},
                                inputs=list(inputs), papersift_version=papersift_version())
            warehouse.finish_run(run_id, "finished", counts)
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        con.execute("CHECKPOINT")
    return counts


def _merge_table(warehouse: Warehouse, out: Path, table: str) -> None:
    columns = ", ".join(warehouse.columns(table))
    glob = partition_glob(out, table).replace("'", "''")
    source = f"read_parquet('{glob}', hive_partitioning = true, union_by_name = true)"
    keys = _KEYS.get(table)
    if table == "extractions":
        # Remember which extractions are new: only they bring their item rows.
        warehouse.con.execute(
            f"CREATE OR REPLACE TEMP TABLE _new_extractions AS SELECT DISTINCT extraction_id "
            f"FROM {source} WHERE extraction_id NOT IN (SELECT extraction_id FROM extractions)")
    if keys:
        key_list = ", ".join(keys)
        join = " AND ".join(f"t.{k} = i.{k}" for k in keys)
        sql = (f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {source} i "
               f"WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE {join}) "
               f"QUALIFY row_number() OVER (PARTITION BY {key_list} ORDER BY shard) = 1")
    elif table in _CHILDREN:
        sql = (f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {source} "
               "WHERE extraction_id IN (SELECT extraction_id FROM _new_extractions)")
    else:
        sql = f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {source}"
    warehouse.con.execute(sql)


def _run_provenance(con: duckdb.DuckDBPyConnection, out: Path, run_id: str) -> dict[str, Any]:
    """What produced the run's answers, read back from its extractions (as Runner stores)."""
    names = ("endpoint", "model", "mode", "prompt_version", "schema_version")
    if not any((out / "extractions").glob("shard=*/*.parquet")):
        return {}
    glob = partition_glob(out, "extractions").replace("'", "''")
    rows = con.execute(f"SELECT DISTINCT {', '.join(names)} FROM read_parquet('{glob}') "
                       "WHERE run_id = ?", [run_id]).fetchall()
    return dict(zip(names, rows[0], strict=True)) if len(rows) == 1 else {}


def _run_counts(con: duckdb.DuckDBPyConnection, out: Path, run_id: str) -> RunCounts:
    glob = partition_glob(out, "run_papers").replace("'", "''")
    calls = partition_glob(out, "calls").replace("'", "''")
    row = con.execute(
        f"SELECT count(*), count(*) FILTER (outcome = 'extracted'), "
        f"count(*) FILTER (outcome = 'cached'), count(*) FILTER (outcome = 'failed') "
        f"FROM read_parquet('{glob}') WHERE run_id = ?", [run_id]).fetchone()
    tokens = con.execute(
        f"SELECT coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0) "
        f"FROM read_parquet('{calls}') WHERE run_id = ?", [run_id]).fetchone()
    assert row is not None and tokens is not None
    return RunCounts(n_abstracts=row[0], n_extracted=row[1], n_cached=row[2],
                     n_failed=row[3], prompt_tokens=int(tokens[0]),
                     completion_tokens=int(tokens[1]))
