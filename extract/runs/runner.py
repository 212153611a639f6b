"""The one runner: every job of a run ends as a recorded outcome, however it is sent.

A :class:`Runner` owns the flow of a run: it takes the known answers first (skipped
papers, cache hits), hands the jobs that need the model to its :class:`Dispatch` (live
async calls, the Batch API, or one Ray shard's calls), turns each outcome into rows
(rows.py, built off the event loop by rowbuild.py) and writes them in batches to its
:class:`RunStore` (the warehouse, or a shard's Parquet partitions). Each batch is one
transaction, so a crash or Ctrl-C leaves the warehouse consistent and a rerun continues
from the cache without paying twice.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from papersift.extract.access.extractor import Extractor, Outcome
from papersift.extract.access.limits import RequestGate
from papersift.extract.domain.fields import DEFAULT_FIELDS
from papersift.extract.domain.reading.ingest import IngestProblem
from papersift.extract.runs.echoes import without_echoed_secrets
from papersift.extract.runs.jobs import UNKNOWN_FAILURE, Job
from papersift.extract.runs.live import LiveDispatch
from papersift.extract.runs.rowbuild import (
    Pending,
    RowBuilder,
    collect_workers,
    default_workers,
)
from papersift.extract.runs.rows import (
    AFTER_ANSWER_STAGE,
    new_run_id,
    outcome_batch,
    papersift_version,
    valid_cached_outcome,
)
from papersift.extract.runs.salvage import write_paper_by_paper
from papersift.warehouse import Warehouse
from papersift.warehouse.store import Batch, RunCounts

FLUSH_EVERY_PAPERS = 16
FLUSH_EVERY_SECONDS = 1.0


@dataclass
class RunSummary:
    """The counts of one run (or of one shard of a sharded run)."""

    run_id: str
    n_abstracts: int = 0
    n_extracted: int = 0
    n_cached: int = 0
    n_failed: int = 0
    n_reasked: int = 0
    n_cache_invalid: int = 0  # cached answers that failed validation, asked again
    prompt_tokens: int = 0
    completion_tokens: int = 0
    http_requests: int = 0
    seconds: float = 0.0
    status: str = "running"
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # paper, reason, detail
    input_problems: list[IngestProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one line each, printed after the summary

    @property
    def done(self) -> int:
        return self.n_extracted + self.n_cached + self.n_failed

    def line(self) -> str:
        return (
            f"{self.n_abstracts} abstracts: {self.n_extracted} extracted, "
            f"{self.n_cached} from cache, {self.n_failed} failed"
        )

    def counts(self) -> RunCounts:
        return RunCounts(n_abstracts=self.n_abstracts, n_extracted=self.n_extracted,
                         n_cached=self.n_cached, n_failed=self.n_failed,
                         prompt_tokens=self.prompt_tokens,
                         completion_tokens=self.completion_tokens)

    def to_json(self) -> str:
        """The summary as JSON, to cross a process boundary (input problems stay behind:
        a shard has none)."""
        values = dataclasses.asdict(self)
        values.pop("input_problems")
        return json.dumps(values)

    @classmethod
    def from_json(cls, text: str) -> RunSummary:
        values = json.loads(text)
        values["failures"] = [tuple(failure) for failure in values["failures"]]
        return cls(**values)


# progress(event, summary): event is "start", "advance" or "end".
Progress = Callable[[str, RunSummary], None]


class RunStore(Protocol):
    """Where a run's rows go and its cached answers come from."""

    def begin(self, run_id: str, provenance: Mapping[str, Any], params: dict[str, Any],
              inputs: list[str]) -> None: ...

    def end(self, run_id: str, status: str, counts: RunCounts) -> None: ...

    def cache_lookup(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]: ...

    def write(self, batch: Batch) -> None: ...


class WarehouseStore:
    """A run stored in a warehouse: its runs row, its rows, its cache."""

    def __init__(self, warehouse: Warehouse) -> None:
        self.warehouse = warehouse

    def begin(self, run_id: str, provenance: Mapping[str, Any], params: dict[str, Any],
              inputs: list[str]) -> None:
        self.warehouse.mark_unfinished_runs()
        self.warehouse.start_run(run_id, **provenance, params=params, inputs=inputs,
                                 papersift_version=papersift_version())

    def end(self, run_id: str, status: str, counts: RunCounts) -> None:
        self.warehouse.finish_run(run_id, status, counts)

    def cache_lookup(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        return self.warehouse.cache_lookup(keys)

    def write(self, batch: Batch) -> None:
        self.warehouse.write(batch)


class Dispatch(Protocol):
    """How the jobs that need the model get their outcomes: ``send`` hands every job's
    outcome to ``run.record`` (an outcome for each, even when the request failed)."""

    @property
    def params(self) -> dict[str, Any]:
        """What the run's params record about this way of sending."""
        ...

    def send(self, jobs: Iterator[Job], run: Runner) -> None: ...


class Runner:
    """Extracts a list of papers into a store with one extractor and one dispatch."""

    def __init__(
        self,
        store: RunStore | Warehouse,
        extractor: Extractor,
        *,
        dispatch: Dispatch | None = None,
        concurrency: int = 1,
        use_cache: bool = True,
        progress: Progress | None = None,
        run_id: str | None = None,
        inputs: Iterable[str] = (),
        extra_params: dict[str, Any] | None = None,
        gate: RequestGate | None = None,
        row_workers: int | None = None,
    ) -> None:
        self.store = WarehouseStore(store) if isinstance(store, Warehouse) else store
        self.dispatch: Dispatch = dispatch if dispatch is not None else LiveDispatch()
        self.gate = gate
        self.stopped_by_budget = False
        self.extractor = extractor
        key = getattr(extractor.endpoint, "api_key", None)
        self._secrets: tuple[str, ...] = (key,) if key else ()
        self.concurrency = max(1, concurrency)
        self.use_cache = use_cache
        self.progress = progress or (lambda _event, _summary: None)
        self.run_id = run_id or new_run_id()
        self.inputs = list(inputs)
        self.extra_params = {**(extra_params or {}), **self.dispatch.params}
        self.summary = RunSummary(run_id=self.run_id)
        self._jobs: dict[str, Job] = {}
        # Worker processes that ground answers and build their rows (rowbuild.py).
        self.row_workers = (default_workers(self.concurrency) if row_workers is None
                            else row_workers)
        self._row_workers_chosen = row_workers is not None
        self.flush_every_s = FLUSH_EVERY_SECONDS
        # A write's fixed cost (an insert per table, a CHECKPOINT) is most of a small
        # batch's: at high concurrency a batch is one round of requests in flight.
        self.flush_every_papers = max(FLUSH_EVERY_PAPERS, self.concurrency)
        self._last_flush = time.monotonic()
        self._hold_flush = False
        # While the event loop runs, writes go to one writer thread so the loop keeps
        # dispatching; a DuckDB write (insert + CHECKPOINT) takes tens of milliseconds.
        self._writer: ThreadPoolExecutor | None = None
        self._writing: Future[None] | None = None
        # Papers whose answer arrived but whose rows failed to build: found by the writer,
        # moved from the extracted (or cached) count to the failed one by _count_late.
        self._late_failures: list[dict[str, Any]] = []
        self._cached_ids: set[str] = set()
        endpoint = extractor.endpoint
        # What produced this run's answers: stored on the run and on each extraction.
        self.provenance = {
            "endpoint": endpoint.stored_identity,
            "model": endpoint.model,
            "mode": endpoint.mode,
            "prompt_version": extractor.prompt.version,
            "schema_version": extractor.fields.schema_version(),
        }
        self._rows = self._row_builder()

    def _row_function(self) -> functools.partial[Batch]:
        fields = self.extractor.fields
        user: dict[str, Any] = {} if fields is DEFAULT_FIELDS else {"fields": fields}
        return functools.partial(outcome_batch, run_id=self.run_id,
                                 provenance=self.provenance,
                                 model=self.extractor.endpoint.model, **user)

    def _row_builder(self) -> RowBuilder:
        # A user's fields travel to a worker process as their declarations (data), and
        # their draft class is rebuilt there (extract.domain.user_draft).
        return RowBuilder(self._row_function(), workers=self.row_workers)

    def rows_of(self, outcome: Outcome, job: Job) -> Batch:
        """The rows this run stores for an outcome (built here, at once)."""
        return self._row_function()(outcome, job)

    @property
    def pending_papers(self) -> int:
        """Papers recorded whose rows are not written yet."""
        return self._rows.pending.papers

    def start(self) -> None:
        self.store.begin(
            self.run_id, self.provenance,
            params={**self.extractor.endpoint.describe(), "concurrency": self.concurrency,
                    "use_cache": self.use_cache, "max_reasks": self.extractor.max_reasks,
                    **self.extra_params},
            inputs=self.inputs,
        )

    def run(
        self,
        jobs: Sequence[Job],
        open_live: Callable[[], AbstractContextManager[Extractor]] | None = None,
    ) -> RunSummary:
        """Extract every job; returns the summary (status 'interrupted' after Ctrl-C).

        With ``open_live``, the extractor given at construction only computes cache keys;
        the live one (which may start a local server) is opened only if some abstract is
        not cached.
        """
        return self.run_chunks([jobs], open_live)

    def run_chunks(
        self,
        chunks: Iterable[Sequence[Job]],
        open_live: Callable[[], AbstractContextManager[Extractor]] | None = None,
    ) -> RunSummary:
        """run() over jobs that arrive in chunks (a streamed corpus): each chunk's skips and
        cache hits are recorded as it arrives, its other jobs are sent, and only the jobs
        not yet recorded are held in memory."""
        started = time.monotonic()
        self.start()
        self.progress("start", self.summary)
        status = "crashed"
        try:
            to_send = self._sendable(chunks)
            first = next(to_send, None)
            if first is None:
                pass  # everything was cached or skipped
            elif open_live is not None:
                with open_live() as live:
                    self.extractor = live
                    self._rows.use(self._row_function())  # rows name the live model
                    self.dispatch.send(itertools.chain([first], to_send), self)
            else:
                self.dispatch.send(itertools.chain([first], to_send), self)
            status = "budget_reached" if self.stopped_by_budget else "finished"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            try:
                self.flush(force=True)
            finally:
                self.stop_row_workers()
            self._count_late()
            self.summary.status = status
            self.summary.seconds = time.monotonic() - started
            self.store.end(self.run_id, status, self.summary.counts())
            self.progress("end", self.summary)
        return self.summary

    def _sendable(self, chunks: Iterable[Sequence[Job]]) -> Iterator[Job]:
        """The jobs that need the model, chunk by chunk, after recording the others."""
        for chunk in chunks:
            self.add_jobs(chunk)
            yield from self._take_known(chunk)

    def add_jobs(self, jobs: Sequence[Job]) -> None:
        """Count jobs in the run: each then waits for its outcome to be recorded."""
        self.summary.n_abstracts += len(jobs)
        self._jobs.update((job.paper_id, job) for job in jobs)

    def stop_row_workers(self) -> None:
        """End the row worker processes (rows not yet written are built here)."""
        self._rows.close()

    def write_now(self, batch: Batch) -> None:
        """Write rows that belong to no outcome (ingested papers) after any write in
        progress, from the thread that runs the runner."""
        self._wait_for_writer()
        self.store.write(batch)

    def _take_known(self, jobs: Sequence[Job]) -> list[Job]:
        """Record skipped and cached papers; return those that need the model."""
        keys = {job.paper_id: self.extractor.key_for(job.text, job.title) for job in jobs}
        cached = self.store.cache_lookup(keys.values()) if self.use_cache else {}
        to_send = []
        # Skips and cache hits cost nothing to redo: one write for all of them, not one
        # per FLUSH_EVERY_PAPERS (100,000 tiny paragraphs would be 6,250 transactions).
        with self.holding_writes():
            for job in jobs:
                if job.skip is not None:
                    self.record(Outcome(paper_id=job.paper_id, cache_key=keys[job.paper_id],
                                        failure=job.skip))
                    continue
                hit = cached.get(keys[job.paper_id])
                if hit is None:
                    to_send.append(job)
                    continue
                outcome = valid_cached_outcome(job.paper_id, keys[job.paper_id], hit,
                                               self.extractor.fields.draft_model)
                if outcome is None:
                    self.summary.n_cache_invalid += 1
                    to_send.append(job)
                    continue
                self.record(outcome)
        self.flush(force=True)
        return to_send

    # -- what a dispatch uses -----------------------------------------------------------

    def waiting(self, paper_id: str) -> bool:
        """Whether the paper is a job of this run that has no recorded outcome yet."""
        return paper_id in self._jobs

    def record(self, outcome: Outcome) -> None:
        """Turn an outcome into rows in the pending batch and update the summary."""
        job = self._jobs.pop(outcome.paper_id)
        if not outcome.from_cache:  # an answer that echoes the key never reaches a row
            outcome = without_echoed_secrets(outcome, self._secrets,
                                             self.extractor.fields.draft_model)
        self._rows.add(outcome, job)
        summary = self.summary
        summary.http_requests += len(outcome.calls)
        summary.prompt_tokens += outcome.prompt_tokens
        summary.completion_tokens += outcome.completion_tokens
        if outcome.ok:
            if outcome.from_cache:
                summary.n_cached += 1
                self._cached_ids.add(outcome.paper_id)
            else:
                summary.n_extracted += 1
            summary.n_reasked += outcome.asks > 1 and not outcome.from_cache
        else:
            failure = outcome.failure or UNKNOWN_FAILURE
            summary.n_failed += 1
            summary.failures.append((outcome.paper_id, failure.reason, failure.detail))
            if failure.stage == "budget":
                self.stopped_by_budget = True
        self._count_late()
        self.progress("advance", summary)
        self.flush()

    def _count_late(self) -> None:
        """Count as failed the papers whose rows papersift could not build (the writer
        thread lists them; this runs where the summary is kept)."""
        while self._late_failures:
            row = self._late_failures.pop()
            summary = self.summary
            if row["paper_id"] in self._cached_ids:
                summary.n_cached -= 1
            else:
                summary.n_extracted -= 1
            summary.n_failed += 1
            summary.failures.append((row["paper_id"], row["reason"], row["detail"]))

    @contextmanager
    def holding_writes(self) -> Iterator[None]:
        """Collect rows without writing them until the block ends (or a forced flush)."""
        self._hold_flush = True
        try:
            yield
        finally:
            self._hold_flush = False

    @contextmanager
    def writing_in_background(self) -> Iterator[None]:
        """Inside the block, due writes go to one writer thread, so an event loop keeps
        dispatching; the block ends after the last of them."""
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warehouse-writer")
        try:
            yield
        finally:
            try:
                self._wait_for_writer()
            finally:
                self._writer.shutdown(wait=True)
                self._writer = None

    def build_rows_in_workers(self) -> None:
        """Ground a large set of answers in a worker process per CPU (collect_workers),
        unless the run chose its own number of row workers. A run whose concurrency
        already gave it workers keeps the larger number."""
        if not self._row_workers_chosen:
            self._rows.workers = max(self._rows.workers, collect_workers())

    def flush(self, force: bool = False) -> None:
        """Write the pending rows when a batch is due (always with ``force``). Inside
        ``writing_in_background`` the write goes to the writer thread, one batch at a time;
        outside it (or forced) it is done here, after any write in progress."""
        if self._hold_flush and not force:
            return
        due = (
            self.pending_papers >= self.flush_every_papers
            or time.monotonic() - self._last_flush >= self.flush_every_s
        )
        if not self.pending_papers or not (force or due):
            return
        if self._writer is not None and not force:
            if self._writing is not None and not self._writing.done():
                return  # rows keep collecting; the next batch is simply bigger
            self._wait_for_writer()
            self._writing = self._writer.submit(self._write, self._take_pending())
            return
        self._wait_for_writer()
        self._write(self._take_pending())

    def _write(self, pending: Pending) -> None:
        """Write pending rows (waiting for those still built in a worker)."""
        rows = pending.rows()
        try:
            self.store.write(rows)
        except Exception as error:  # one paper's rows never cost the others theirs
            self._late_failures.extend(write_paper_by_paper(rows, self.store.write, error))
        self._late_failures.extend(row for row in rows.rows.get("failures", ())
                                   if row["stage"] == AFTER_ANSWER_STAGE)

    def _take_pending(self) -> Pending:
        self._last_flush = time.monotonic()
        return self._rows.take()

    def _wait_for_writer(self) -> None:
        """Let the write in progress finish; raise its error, if any."""
        writing, self._writing = self._writing, None
        if writing is not None:
            writing.result()
