"""Run orchestration: ingest into the warehouse, extract from one asyncio event loop with
``concurrency`` abstracts in flight, and store the rows in batches, one write at a time.

Every abstract of a run ends as an extraction (new or from cache) or as a failure row with
its reason. Inside the event loop a batch goes to the one writer thread; other writes wait
for it. Each batch is one transaction, so a crash or Ctrl-C leaves the warehouse
consistent and a rerun continues from the cache without paying twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from papersift.extract.access.extractor import Extractor, Failure, Outcome
from papersift.extract.access.limits import RequestGate
from papersift.extract.domain.assemble import ASSEMBLY_VERSION, Assembled, Found
from papersift.extract.domain.fields import (
    DEFAULT_FIELDS,
    GROUNDING_VERSION,
    ExtraItem,
    FieldSet,
    ground,
    item_rows,
)
from papersift.extract.domain.grounding import Alignment, align
from papersift.extract.domain.ingest import IngestProblem, IngestResult, Occurrence, ingest
from papersift.schemas import ClaimedGain, PaperDraft, PaperExtraction
from papersift.schemas.fields import BUILTIN_FIELDS, CUSTOM_TABLE
from papersift.schemas.numbers import numbers_in, value_matches
from papersift.warehouse import Warehouse
from papersift.warehouse.reads import count_papers
from papersift.warehouse.store import Batch, RunCounts

FLUSH_EVERY_PAPERS = 16
FLUSH_EVERY_SECONDS = 1.0
# Fewer words than this cannot name a task and quote it: not an abstract, not sent.
MIN_WORDS = 5


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def papersift_version() -> str:
    try:
        return version("papersift")
    except PackageNotFoundError:
        return "0+unknown"


def new_run_id() -> str:
    return f"run_{datetime.now(UTC):%Y%m%dT%H%M%S}_{secrets.token_hex(3)}"


# -- ingest --------------------------------------------------------------------------------


@dataclass
class IngestReport:
    files: int
    occurrences: int
    papers: int
    new_papers: int
    problems: list[IngestProblem]


def _canonical_path(file: str) -> str:
    """One spelling per file (absolute, resolved), so the same occurrence read through a
    relative and an absolute path is stored once."""
    return str(Path(file).resolve())


def _canonical_paths() -> Callable[[str], str]:
    """_canonical_path, resolving each file once (a file may hold 100,000 abstracts)."""
    resolved: dict[str, str] = {}

    def canonical(file: str) -> str:
        if file not in resolved:
            resolved[file] = _canonical_path(file)
        return resolved[file]

    return canonical


def _source_row(paper_id: str, occ: Occurrence, file: str, now: datetime) -> dict[str, Any]:
    return {"paper_id": paper_id, "file": file, "position": occ.position, "line": occ.line,
            "collection": occ.collection, "venue": occ.venue, "year": occ.year,
            "source_id": occ.source_id, "title": occ.title, "first_seen": now}


def ingest_batch(result: IngestResult, run_id: str | None) -> Batch:
    """Rows for papers, sources and input failures of one ingest (or one chunk of a
    streamed ingest: its repeats are new places of papers an earlier chunk returned)."""
    now = _now()
    batch = Batch()
    canonical = _canonical_paths()
    for paper in result.papers:
        batch.add(
            "papers",
            {
                "paper_id": paper.paper_id,
                "text": paper.text,
                "text_sha256": "sha256:" + hashlib.sha256(paper.text.encode("utf-8")).hexdigest(),
                "chars": len(paper.text),
                "first_seen": now,
            },
        )
        for occ in paper.occurrences:
            batch.add("sources", _source_row(paper.paper_id, occ, canonical(occ.file), now))
    for repeat in result.repeats:
        occ = repeat.occurrence
        batch.add("sources", _source_row(repeat.paper_id, occ, canonical(occ.file), now))
    for problem in result.problems:
        if problem.reason == "too_long":
            continue  # the paper is stored; its failure is recorded when a run skips it
        batch.add(
            "failures",
            {
                "run_id": run_id,
                "paper_id": problem.paper_id,
                "file": canonical(problem.file),
                "position": problem.position,
                "stage": "ingest",
                "reason": problem.reason,
                "detail": problem.message,
                "created": now,
            },
        )
    return batch


def ingest_into(
    warehouse: Warehouse, inputs: Sequence[str | Path], *, max_chars: int, run_id: str | None = None
) -> tuple[IngestResult, IngestReport]:
    """Read the inputs and store their papers and provenance; bad inputs become failure rows."""
    result = ingest(inputs, max_chars=max_chars)
    before = count_papers(warehouse.con)
    warehouse.write(ingest_batch(result, run_id))
    after = count_papers(warehouse.con)
    report = IngestReport(
        files=len(result.files),
        occurrences=result.occurrences,
        papers=len(result.papers),
        new_papers=after - before,
        problems=list(result.problems),
    )
    return result, report


# -- outcome -> rows -----------------------------------------------------------------------


def extraction_id_for(cache_key: str, raw: dict[str, Any]) -> str:
    """Content id of a stored extraction: the request, the answer and the grounding code."""
    canonical = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    material = f"{cache_key}\n{ASSEMBLY_VERSION}\n{GROUNDING_VERSION}\n{canonical}"
    return "sha256:" + hashlib.sha256(material.encode()).hexdigest()


def _grounded(evidence: str, text: str, found: Alignment | None = None) -> dict[str, Any]:
    alignment = found if found is not None else align(evidence, text)
    return {
        "evidence": evidence,
        "char_start": alignment.char_start,
        "char_end": alignment.char_end,
        "alignment": alignment.status,
        "align_score": round(alignment.score, 4),
    }


def extraction_rows(
    batch: Batch,
    *,
    paper_id: str,
    text: str,
    extraction: PaperExtraction,
    raw: dict[str, Any],
    extraction_id: str,
    common: dict[str, Any],
    assembled: Assembled | None = None,
    extra: dict[str, list[ExtraItem]] | None = None,
) -> None:
    """Add an extraction and the items of every field, grounded by code, to the batch:
    each field's rows as its declaration in schemas.fields says.

    With ``assembled``, items were found by extract.assemble and carry its alignments;
    otherwise (answers that come with their own quotes) each quote is aligned here.
    ``extra`` holds the items of fields outside the stored extraction (code-detected
    ones and user fields), which carry their own alignments.
    """
    base = {"extraction_id": extraction_id, "paper_id": paper_id}
    items = 0
    ungrounded = 0

    def grounded(evidence: str, found: Alignment | None, spot: Found | None) -> dict[str, Any]:
        row = _grounded(evidence, text, found)
        row["mention_start"] = spot.start if spot is not None else None
        row["mention_end"] = spot.end if spot is not None else None
        return row

    for spec in BUILTIN_FIELDS:
        stored = getattr(extraction, spec.name) if spec.from_draft else (extra or {}).get(
            spec.name, [])
        for item, row in zip(stored, item_rows(spec, stored), strict=True):
            if spec.grounded and isinstance(item, ExtraItem):
                row.update(grounded(item.evidence, item.alignment(), item.found))
            elif spec.grounded:
                idx = row["idx"]
                found = assembled.alignment(spec.name, idx) if assembled is not None else None
                spot = assembled.found[spec.name][idx] if assembled is not None else None
                row.update(grounded(item.evidence, found, spot))
                items += 1
                ungrounded += row["alignment"] == "none"
            if spec.name == "claimed_gains":
                row["value_in_evidence"] = _value_in_evidence(item)
                if row["value_in_evidence"] is False and row["alignment"] != "none":
                    ungrounded += 1
            batch.add(spec.table, {**base, **row})
    for name, custom_items in (extra or {}).items():
        if any(spec.name == name for spec in BUILTIN_FIELDS):
            continue
        for idx, item in enumerate(custom_items):
            row = grounded(item.evidence, item.alignment(), item.found)
            items += 1
            ungrounded += row["alignment"] == "none"
            batch.add(CUSTOM_TABLE, {**base, "field": name, "idx": idx, **item.values, **row})
    batch.add(
        "extractions",
        {**base, **common, "raw_json": raw,
         "items": items, "items_ungrounded": ungrounded,
         "items_rejected": len(assembled.rejected) if assembled is not None else 0,
         "rejected": assembled.rejected if assembled is not None else [],
         "created": _now()},
    )


def _value_in_evidence(gain: ClaimedGain) -> bool | None:
    """Whether a gain's number occurs in its own evidence (None when it has no number)."""
    return None if gain.value is None else value_matches(gain.value, numbers_in(gain.evidence))


# -- extraction run ------------------------------------------------------------------------


@dataclass
class RunSummary:
    run_id: str
    n_abstracts: int = 0
    n_extracted: int = 0
    n_cached: int = 0
    n_failed: int = 0
    n_reasked: int = 0
    n_lenient: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    http_requests: int = 0
    seconds: float = 0.0
    status: str = "running"
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # paper, reason, detail
    input_problems: list[IngestProblem] = field(default_factory=list)

    @property
    def done(self) -> int:
        return self.n_extracted + self.n_cached + self.n_failed

    def line(self) -> str:
        return (
            f"{self.n_abstracts} abstracts: {self.n_extracted} extracted, "
            f"{self.n_cached} from cache, {self.n_failed} failed"
        )


# progress(event, summary): event is "start", "advance" or "end".
Progress = Callable[[str, RunSummary], None]


@dataclass(frozen=True)
class Job:
    paper_id: str
    text: str
    skip: Failure | None = None  # a known reason not to send it (too long for the context)
    file: str | None = None  # first occurrence, so failure rows can name the place
    position: int | None = None


UNKNOWN_FAILURE = Failure("unknown", "unknown", "no result and no reason")
BUDGET_SPENT = Failure("budget", "max_cost",
                       "not sent: the run's --max-cost budget was reached; rerun with a "
                       "larger budget to extract it")


def outcome_batch(
    outcome: Outcome, job: Job, *, run_id: str, provenance: dict[str, Any], model: str,
    fields: FieldSet = DEFAULT_FIELDS,
) -> Batch:
    """The rows one abstract's outcome adds to the warehouse: its calls, then its grounded
    extraction (with the cache entry when the answer is new) or its failure, and its
    run_papers row. Pure: the same outcome always gives the same rows (but timestamps)."""
    now = _now()
    batch = Batch()
    for call in outcome.calls:
        batch.add("calls", {"run_id": run_id, "paper_id": outcome.paper_id,
                            "cache_key": outcome.cache_key, **call.__dict__})
    answer = outcome.draft or outcome.extraction
    if answer is not None:
        raw = answer.model_dump(mode="json", exclude_none=outcome.draft is not None)
        grounded = ground(outcome.draft, job.text, fields) if outcome.draft is not None else None
        assembled = grounded.assembled if grounded is not None else None
        extraction = assembled.extraction if assembled is not None else outcome.extraction
        assert extraction is not None
        extraction_id = extraction_id_for(outcome.cache_key, raw)
        extraction_rows(
            batch,
            paper_id=outcome.paper_id,
            text=job.text,
            extraction=extraction,
            assembled=assembled,
            extra=grounded.extra if grounded is not None else None,
            raw=raw,
            extraction_id=extraction_id,
            common={**provenance, "run_id": run_id, "cache_key": outcome.cache_key,
                    "asks": outcome.asks, "lenient": outcome.lenient},
        )
        if not outcome.from_cache:
            batch.add("llm_cache", {
                "cache_key": outcome.cache_key, "response_json": raw,
                "lenient": outcome.lenient, "model": model,
                "asks": outcome.asks, "prompt_tokens": outcome.prompt_tokens,
                "completion_tokens": outcome.completion_tokens, "created": now,
            })
        batch.add("run_papers", {"run_id": run_id, "paper_id": outcome.paper_id,
                                 "outcome": "cached" if outcome.from_cache else "extracted",
                                 "extraction_id": extraction_id, "recorded": now})
    else:
        failure = outcome.failure or UNKNOWN_FAILURE
        batch.add("failures", {"run_id": run_id, "paper_id": outcome.paper_id,
                               "file": job.file, "position": job.position,
                               "stage": failure.stage,
                               "reason": failure.reason, "detail": failure.detail,
                               "created": now})
        batch.add("run_papers", {"run_id": run_id, "paper_id": outcome.paper_id,
                                 "outcome": "failed", "extraction_id": None,
                                 "recorded": now})
    return batch


class Runner:
    """Extracts a list of papers into a warehouse with one extractor."""

    def __init__(
        self,
        warehouse: Warehouse,
        extractor: Extractor,
        *,
        concurrency: int = 1,
        use_cache: bool = True,
        progress: Progress | None = None,
        run_id: str | None = None,
        inputs: Iterable[str] = (),
        extra_params: dict[str, Any] | None = None,
        gate: RequestGate | None = None,
    ) -> None:
        self.warehouse = warehouse
        self.gate = gate
        self.stopped_by_budget = False
        self.extractor = extractor
        self.concurrency = max(1, concurrency)
        self.use_cache = use_cache
        self.progress = progress or (lambda _event, _summary: None)
        self.run_id = run_id or new_run_id()
        self.inputs = list(inputs)
        self.extra_params = extra_params or {}
        self.summary = RunSummary(run_id=self.run_id)
        self._pending = Batch()
        self._jobs: dict[str, Job] = {}
        self._pending_papers = 0
        self._last_flush = time.monotonic()
        self._hold_flush = False
        # While the event loop runs, writes go to one writer thread so the loop keeps
        # dispatching; a DuckDB write (insert + CHECKPOINT) takes tens of milliseconds.
        self._writer: ThreadPoolExecutor | None = None
        self._writing: Future[None] | None = None
        endpoint = extractor.endpoint
        # What produced this run's answers: stored on the run and on each extraction.
        self._provenance = {
            "endpoint": endpoint.cache_identity,
            "model": endpoint.model,
            "mode": endpoint.mode,
            "prompt_version": extractor.prompt.version,
            "schema_version": extractor.fields.schema_version(),
        }

    def start(self) -> None:
        self.warehouse.mark_unfinished_runs()
        self.warehouse.start_run(
            self.run_id,
            **self._provenance,
            params={**self.extractor.endpoint.describe(), "concurrency": self.concurrency,
                    "use_cache": self.use_cache, "max_reasks": self.extractor.max_reasks,
                    **self.extra_params},
            inputs=self.inputs,
            papersift_version=papersift_version(),
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
                    self._extract_all(itertools.chain([first], to_send))
            else:
                self._extract_all(itertools.chain([first], to_send))
            status = "budget_reached" if self.stopped_by_budget else "finished"
        except KeyboardInterrupt:
            status = "interrupted"
            raise
        finally:
            self._flush(force=True)
            self.summary.status = status
            self.summary.seconds = time.monotonic() - started
            self.warehouse.finish_run(
                self.run_id,
                status,
                RunCounts(
                    n_abstracts=self.summary.n_abstracts,
                    n_extracted=self.summary.n_extracted,
                    n_cached=self.summary.n_cached,
                    n_failed=self.summary.n_failed,
                    prompt_tokens=self.summary.prompt_tokens,
                    completion_tokens=self.summary.completion_tokens,
                ),
            )
            self.progress("end", self.summary)
        return self.summary

    def _sendable(self, chunks: Iterable[Sequence[Job]]) -> Iterator[Job]:
        """The jobs that need the model, chunk by chunk, after recording the others."""
        for chunk in chunks:
            self.summary.n_abstracts += len(chunk)
            self._jobs.update((job.paper_id, job) for job in chunk)
            yield from self._take_known(chunk)

    def write_now(self, batch: Batch) -> None:
        """Write rows that belong to no outcome (ingested papers) after any write in
        progress, from the thread that runs the runner."""
        self._wait_for_writer()
        self.warehouse.write(batch)

    def _take_known(self, jobs: Sequence[Job]) -> list[Job]:
        """Record skipped and cached papers; return those that need the model."""
        keys = {job.paper_id: self.extractor.key_for(job.text) for job in jobs}
        cached = self.warehouse.cache_lookup(keys.values()) if self.use_cache else {}
        to_send = []
        # Skips and cache hits cost nothing to redo: one write for all of them, not one
        # per FLUSH_EVERY_PAPERS (100,000 tiny paragraphs would be 6,250 transactions).
        self._hold_flush = True
        for job in jobs:
            if job.skip is not None:
                self._record(Outcome(paper_id=job.paper_id, cache_key=keys[job.paper_id],
                                     failure=job.skip))
                continue
            hit = cached.get(keys[job.paper_id])
            if hit is None:
                to_send.append(job)
                continue
            self._record(cached_outcome(job.paper_id, keys[job.paper_id], hit,
                                        self.extractor.fields.draft_model))
        self._hold_flush = False
        self._flush(force=True)
        return to_send

    def _extract_all(self, jobs: Iterable[Job]) -> None:
        """Send the jobs through the extractor's async client, ``concurrency`` at a time."""
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warehouse-writer")
        try:
            asyncio.run(self._dispatch(iter(jobs)))
        finally:
            try:
                self._wait_for_writer()
            finally:
                self._writer.shutdown(wait=True)
                self._writer = None

    async def _dispatch(self, jobs: Iterator[Job]) -> None:
        async with self.extractor.session(self.gate):
            running: set[asyncio.Task[None]] = set()
            try:
                for job in jobs:
                    if self.stopped_by_budget:
                        self._record(Outcome(paper_id=job.paper_id,
                                             cache_key=self.extractor.key_for(job.text),
                                             failure=BUDGET_SPENT))
                        continue
                    while len(running) >= self.concurrency:
                        running = await self._settle(running)
                    running.add(asyncio.create_task(self._extract_one(job)))
                while running:
                    running = await self._settle(running)
            finally:
                for task in running:
                    task.cancel()
                if running:
                    await asyncio.wait(running)

    async def _settle(self, running: set[asyncio.Task[None]]) -> set[asyncio.Task[None]]:
        """Wait for a task to end (or a flush to be due); raise what a task raised."""
        done, running = await asyncio.wait(running, timeout=FLUSH_EVERY_SECONDS,
                                           return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            error = task.exception()
            if error is not None:
                raise error
        self._flush()
        return running

    async def _extract_one(self, job: Job) -> None:
        outcome = await self.extractor.extract_async(job.paper_id, job.text)
        # Recorded in the same step as the answer arrives: an interrupt raised by another
        # task can never drop an answer already paid for.
        self._record(outcome)
        if outcome.failure is not None and outcome.failure.stage == "budget":
            self.stopped_by_budget = True

    def _record(self, outcome: Outcome) -> None:
        """Turn an outcome into rows in the pending batch and update the summary."""
        job = self._jobs.pop(outcome.paper_id)
        rows = outcome_batch(outcome, job, run_id=self.run_id, provenance=self._provenance,
                             model=self.extractor.endpoint.model, fields=self.extractor.fields)
        self._pending.extend(rows)
        summary = self.summary
        summary.http_requests += len(outcome.calls)
        summary.prompt_tokens += outcome.prompt_tokens
        summary.completion_tokens += outcome.completion_tokens
        if outcome.ok:
            if outcome.from_cache:
                summary.n_cached += 1
            else:
                summary.n_extracted += 1
            summary.n_reasked += outcome.asks > 1 and not outcome.from_cache
            summary.n_lenient += outcome.lenient
        else:
            failure = outcome.failure or UNKNOWN_FAILURE
            summary.n_failed += 1
            summary.failures.append((outcome.paper_id, failure.reason, failure.detail))
        self._pending_papers += 1
        self.progress("advance", summary)
        self._flush()

    def _flush(self, force: bool = False) -> None:
        """Write the pending rows when a batch is due (always with ``force``). Inside the
        event loop the write goes to the writer thread, one batch at a time; outside it
        (or forced) it is done here, after any write in progress."""
        if self._hold_flush and not force:
            return
        due = (
            self._pending_papers >= FLUSH_EVERY_PAPERS
            or time.monotonic() - self._last_flush >= FLUSH_EVERY_SECONDS
        )
        if not self._pending_papers or not (force or due):
            return
        if self._writer is not None and not force:
            if self._writing is not None and not self._writing.done():
                return  # rows keep collecting; the next batch is simply bigger
            self._wait_for_writer()
            self._writing = self._writer.submit(self.warehouse.write, self._take_pending())
            return
        self._wait_for_writer()
        self.warehouse.write(self._take_pending())

    def _take_pending(self) -> Batch:
        batch, self._pending = self._pending, Batch()
        self._pending_papers = 0
        self._last_flush = time.monotonic()
        return batch

    def _wait_for_writer(self) -> None:
        """Let the write in progress finish; raise its error, if any."""
        writing, self._writing = self._writing, None
        if writing is not None:
            writing.result()


def cached_outcome(paper_id: str, cache_key: str, hit: dict[str, Any],
                   draft_model: type[PaperDraft] = PaperDraft) -> Outcome:
    """The outcome of a cache hit (a row of ``cache_lookup``): a draft (schema v2) or an
    already grounded answer, with the asks it once took; no request is made."""
    response = hit["response"]
    answer: dict[str, Any] = (
        {"draft": draft_model.model_validate(response)} if "types" in response
        else {"extraction": PaperExtraction.model_validate(response)})
    return Outcome(paper_id=paper_id, cache_key=cache_key, **answer, lenient=hit["lenient"],
                   asks=hit["asks"] or 0, from_cache=True)


def too_short(text: str, where: str) -> Failure | None:
    """The skip reason of a text too short to be an abstract (a stray line, a list item)."""
    words = len(text.split())
    if words >= MIN_WORDS:
        return None
    return Failure("ingest", "too_short",
                   f"{where}: {words} word(s), fewer than {MIN_WORDS}: too short to be an "
                   "abstract; it is stored but not sent to the model")


def jobs_for_stored(papers: Iterable[tuple[str, str]], max_chars: int) -> list[Job]:
    """Jobs for papers already in the warehouse; too long or too short ones carry their
    skip reason."""
    jobs = []
    for paper_id, text in papers:
        skip = too_short(text, paper_id)
        if len(text) > max_chars:
            skip = Failure("ingest", "too_long",
                           f"{paper_id}: {len(text):,} characters, over the "
                           f"{max_chars:,}-character "
                           "limit for the model's context")
        jobs.append(Job(paper_id, text, skip))
    return jobs


def jobs_from(result: IngestResult) -> list[Job]:
    """One job per distinct paper; too long or too short papers carry their skip reason."""
    too_long = {p.paper_id: p for p in result.problems if p.reason == "too_long" and p.paper_id}
    jobs = []
    canonical = _canonical_paths()
    for paper in result.papers:
        problem = too_long.get(paper.paper_id)
        first = paper.occurrences[0]
        unit = "abstract" if first.file.lower().endswith(".txt") else "row"
        skip = Failure("ingest", "too_long", problem.message) if problem else too_short(
            paper.text, f"{first.file}, {unit} {first.position} (line {first.line})")
        jobs.append(Job(paper.paper_id, paper.text, skip, canonical(first.file),
                        first.position))
    return jobs
