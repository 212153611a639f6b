"""OpenAI Batch API dispatch: the same requests as the live path, sent as JSONL files.

The request and result lines are batch_files.py's. Outcomes go through the recording of
:class:`papersift.extract.runs.runner.Runner`, so the stored rows are the live run's rows.
A batch is recorded in the warehouse as soon as the provider accepts it: a run killed
while polling is resumed by the next run over the same papers (or by ``papersift batch
resume``) instead of being submitted and paid for twice. There are no re-asks inside a
batch; a rerun resubmits only what failed (successes are cached).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from papersift.extract.access.batch_api import BatchApi, BatchApiError
from papersift.extract.access.extractor import Extractor, Failure, Outcome
from papersift.extract.access.llm import Endpoint, redact
from papersift.extract.runs.batch_files import (
    BATCH_URL,
    COMPLETION_WINDOW,
    MAX_BYTES,
    MAX_REQUESTS,
    UNANSWERED,
    BatchError,
    ResultReader,
    chunks,
    read_jsonl,
    request_line,
)
from papersift.extract.runs.jobs import Job
from papersift.extract.runs.runner import Runner
from papersift.schemas import schema_version
from papersift.warehouse import Warehouse, reads
from papersift.warehouse.batches import (
    TERMINAL,
    BatchRecord,
    BatchRequest,
    batch_ids,
    get_batch,
    mark_collected,
    open_batches_for,
    record_submission,
    requests_of,
    update_status,
)
from papersift.warehouse.store import Batch

__all__ = ["BatchDispatch", "BatchError", "BatchOptions", "BatchProgress", "PollCallback",
           "cancel_batch", "check_resumable", "read_jsonl"]

# A batch's results are written this many at a time (one transaction each; a kill loses
# at most the unwritten ones, and the batch, not marked collected, is collected again).
COLLECT_WRITE_EVERY = 2_000
# From this many requests on, a batch's answers are grounded in worker processes.
COLLECT_WORKERS_FROM = 2_000

# A batch in these states will never answer: not worth adopting after a kill.
DEAD_STATUSES = frozenset({"failed", "expired", "cancelling", "cancelled"})


@dataclass(frozen=True)
class BatchOptions:
    poll_interval_s: float = 30.0
    max_requests: int = MAX_REQUESTS  # per submitted batch
    max_bytes: int = MAX_BYTES  # per input file


@dataclass(frozen=True)
class BatchProgress:
    """What the provider said at one poll, for a progress display."""

    batch_id: str
    status: str
    total: int
    completed: int
    failed: int
    open_batches: int
    elapsed_s: float


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


PollCallback = Callable[[BatchProgress], None]


class BatchDispatch:
    """Sends a run's uncached abstracts through the Batch API: submit (or find the open
    batch that already asked for them), poll, then record every answer."""

    def __init__(self, warehouse: Warehouse, options: BatchOptions = BatchOptions(), *,
                 on_poll: PollCallback | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 only_batch: str | None = None) -> None:
        self.warehouse = warehouse
        self.options = options
        self.on_poll = on_poll or (lambda _progress: None)
        self.sleep = sleep
        self.batch_ids: list[str] = []  # every batch this run submitted or resumed
        self.submitted: list[str] = []
        self.only_batch = only_batch  # resume this batch and submit nothing

    @property
    def params(self) -> dict[str, Any]:
        return {"batch": True, "completion_window": COMPLETION_WINDOW,
                "poll_interval_s": self.options.poll_interval_s}

    def send(self, jobs: Iterator[Job], run: Runner) -> None:
        listed = list(jobs)
        if not listed:
            return
        extractor = run.extractor
        if extractor.endpoint.kind == "local":
            raise BatchError("--batch needs an endpoint with the OpenAI Batch API "
                             "(--provider openai or a compatible --base-url)")
        wanted = {extractor.key_for(job.text, job.title): job for job in listed}
        found = open_batches_for(self.warehouse, wanted)
        if self.only_batch is not None:
            found = [b for b in found if b.batch_id == self.only_batch]
        covered = {request.cache_key for record in found
                   for request in requests_of(self.warehouse, record.batch_id)}
        new_jobs = [job for key, job in wanted.items() if key not in covered]
        records = list(found)
        if self.only_batch is None:
            records += self._submit(new_jobs, wanted, run)
        else:
            for job in new_jobs:  # asked to resume one batch: it lacks these, say so
                run.record(Outcome(paper_id=job.paper_id,
                                   cache_key=extractor.key_for(job.text, job.title),
                                   failure=Failure("request", "batch_missing",
                                                   f"not in batch {self.only_batch}")))
        self.batch_ids = [record.batch_id for record in records]
        self._follow(records, wanted, run)
        for key, job in wanted.items():  # every paper ends stored: none may slip through
            run.record(Outcome(paper_id=job.paper_id, cache_key=key, failure=Failure(
                "request", "batch_missing", "no batch answered or listed this request")))

    # -- submit --------------------------------------------------------------------

    def _submit(self, jobs: Sequence[Job], wanted: dict[str, Job],
                run: Runner) -> list[BatchRecord]:
        """Upload the jobs' lines and create batches; a refused chunk's papers are recorded
        as failed (and taken out of ``wanted``)."""
        if not jobs:
            return []
        extractor = run.extractor
        api = extractor.batch_api
        records = []

        def lines() -> Iterator[tuple[BatchRequest, bytes]]:
            for job in jobs:
                body = extractor.request_body(job.text, job.title)
                request = BatchRequest(job.paper_id, job.paper_id,
                                       extractor.key_for(job.text, job.title))
                yield request, request_line(request.custom_id, body)

        for chunk in chunks(lines(), self.options.max_requests, self.options.max_bytes):
            content = b"".join(line for _, line in chunk)
            digest = "sha256:" + hashlib.sha256(content).hexdigest()
            try:
                found = self._unrecorded_batch(api, digest)
                if found is not None:  # accepted before a kill, never stored: adopt it
                    record = self._record_of(run, found.id, found.input_file_id,
                                             found.status, len(chunk))
                    record_submission(self.warehouse, record,
                                      [request for request, _ in chunk])
                    records.append(record)
                    continue
                uploaded = api.upload(f"papersift-{run.run_id}.jsonl", content)
                remote = api.create(
                    uploaded, BATCH_URL, COMPLETION_WINDOW,
                    {"papersift_run": run.run_id, "papersift_requests": digest})
            except BatchApiError as error:  # refused: its papers fail, with the reason
                why = _redact(extractor, f"submitting the batch failed: {error}")
                failure = Failure("request", f"batch_submit_{error.reason}",
                                  why[:4000])
                for request, _ in chunk:
                    wanted.pop(request.cache_key, None)
                    run.record(Outcome(paper_id=request.paper_id,
                                       cache_key=request.cache_key, failure=failure))
                continue
            record = self._record_of(run, remote.id, uploaded, remote.status, len(chunk))
            record_submission(self.warehouse, record, [request for request, _ in chunk])
            self.submitted.append(remote.id)
            records.append(record)
        return records

    def _unrecorded_batch(self, api: BatchApi, digest: str) -> Any | None:
        """A live batch of exactly these request lines that the warehouse does not know: a
        kill between the provider accepting a batch and papersift storing it leaves one.
        The provider's newest 100 batches are searched (by their ``papersift_requests``
        metadata, the hash of the uploaded lines)."""
        known = batch_ids(self.warehouse)
        try:
            listed = api.newest(100)
        except BatchApiError:
            return None  # best effort: a provider that cannot list still gets the batch
        for remote in listed:
            metadata = remote.metadata or {}
            if (metadata.get("papersift_requests") == digest and remote.id not in known
                    and remote.status not in DEAD_STATUSES):
                return remote
        return None

    @staticmethod
    def _record_of(run: Runner, batch_id: str, input_file_id: str, status: str,
                   count: int) -> BatchRecord:
        endpoint = run.extractor.endpoint
        return BatchRecord(
            batch_id=batch_id, run_id=run.run_id, endpoint=endpoint.stored_identity,
            model=endpoint.model, mode=endpoint.mode,
            prompt_version=run.extractor.prompt.version, schema_version=schema_version(),
            input_file_id=input_file_id, status=status, request_count=count,
            submitted=_now(),
        )

    # -- poll and collect ----------------------------------------------------------

    def _follow(self, records: Sequence[BatchRecord], wanted: dict[str, Job],
                run: Runner) -> None:
        api = run.extractor.batch_api
        pending = {record.batch_id: record for record in records}
        started = time.monotonic()
        while pending:
            for batch_id in list(pending):
                try:
                    remote = api.retrieve(batch_id)
                except BatchApiError as error:
                    raise _stalled(run.extractor, batch_id, "checking", error) from error
                counts = remote.request_counts
                detail = None
                if remote.errors is not None and remote.errors.data:
                    detail = "; ".join(f"{e.code}: {e.message}" for e in remote.errors.data)
                update_status(self.warehouse, batch_id, status=remote.status,
                              completed_count=counts.completed if counts else None,
                              failed_count=counts.failed if counts else None,
                              output_file_id=remote.output_file_id,
                              error_file_id=remote.error_file_id, detail=detail)
                self.on_poll(BatchProgress(
                    batch_id=batch_id, status=remote.status,
                    total=counts.total if counts else pending[batch_id].request_count,
                    completed=counts.completed if counts else 0,
                    failed=counts.failed if counts else 0,
                    open_batches=len(pending), elapsed_s=time.monotonic() - started))
                if remote.status in TERMINAL:
                    pending.pop(batch_id)
                    try:
                        self.collect(get_batch(self.warehouse, batch_id), wanted, run)
                    except BatchApiError as error:
                        raise _stalled(run.extractor, batch_id, "downloading the results of",
                                       error) from error
            if pending:
                self.sleep(self.options.poll_interval_s)

    def download(self, api: BatchApi, file_id: str | None) -> dict[str, dict[str, Any]]:
        """A batch's output or error file, by custom_id (none without a file)."""
        if not file_id:
            return {}
        return read_jsonl(api.content(file_id))

    def collect(self, record: BatchRecord, wanted: dict[str, Job], run: Runner) -> None:
        """Store every request's result: answers, error lines, and what never came back;
        the papers recorded are taken out of ``wanted``."""
        extractor = run.extractor
        files = [self.download(extractor.batch_api, record.error_file_id),
                 self.download(extractor.batch_api, record.output_file_id)]
        results = {**files[0], **files[1]}
        reader = ResultReader(extractor)
        unanswered = UNANSWERED.get(record.status, "batch_missing")
        requests = requests_of(self.warehouse, record.batch_id)
        asked = {request.custom_id for request in requests}
        unread = (sum(getattr(lines, "unreadable", 0) for lines in files)
                  + sum(custom_id not in asked for custom_id in results))
        detail = (f"batch {record.batch_id} ended {record.status} without an answer for it"
                  + (f" ({record.detail})" if record.detail else "")
                  + (f"; its result files held {unread} unreadable line(s) (not JSON, no "
                     "custom_id, or one it was not asked)" if unread else ""))
        elsewhere = []
        if len(requests) >= COLLECT_WORKERS_FROM:
            run.build_rows_in_workers()
        with run.holding_writes():  # one write per COLLECT_WRITE_EVERY, not per 16 answers
            for request in requests:
                entry = results.get(request.custom_id)
                job = wanted.pop(request.cache_key, None)
                if job is None:  # not asked for by this run (cached since, or another input)
                    if entry is not None:
                        elsewhere.append((request, entry))
                    continue
                run.record(reader.outcome(request, entry, batch=record,
                                          unanswered=unanswered, detail=detail))
                if run.pending_papers >= COLLECT_WRITE_EVERY:
                    run.flush(force=True)
        self._cache_only(elsewhere, reader, record, run)
        run.flush(force=True)
        mark_collected(self.warehouse, record.batch_id, run.run_id)

    def _cache_only(self, results: list[tuple[BatchRequest, dict[str, Any]]],
                    reader: ResultReader, record: BatchRecord, run: Runner) -> None:
        """Keep paid-for answers of papers this run does not extract: cache rows only."""
        if not results:
            return
        ids = [request.paper_id for request, _ in results]
        texts = dict(self.warehouse.run(reads.papers_by_id, ids))
        rows = Batch()
        for request, entry in results:
            if request.paper_id not in texts:
                continue
            outcome = reader.outcome(request, entry, batch=record, unanswered="",
                                     detail="")
            if not outcome.ok:
                continue
            batch = run.rows_of(outcome, Job(request.paper_id, texts[request.paper_id]))
            rows.add("llm_cache", *batch.rows.get("llm_cache", []))
        run.write_now(rows)


def _redact(extractor: Extractor, text: str) -> str:
    key = extractor.endpoint.api_key
    return redact(text, (key,) if key else ())


def _stalled(extractor: Extractor, batch_id: str, doing: str,
             error: BatchApiError) -> BatchError:
    return BatchError(_redact(
        extractor,
        f"{doing} batch {batch_id} failed ({error}); the batch is stored: rerun the same "
        f"command, or `papersift batch resume {batch_id}`, to continue"))


# -- commands ------------------------------------------------------------------------------


def cancel_batch(warehouse: Warehouse, api: BatchApi, batch_id: str) -> str:
    """Ask the provider to cancel a stored batch; returns the status it reports. Its partial
    results are stored by the next run or ``papersift batch resume``."""
    record = get_batch(warehouse, batch_id)
    if record.collected is not None:
        raise BatchError(f"batch {batch_id} is already collected (by run "
                         f"{record.collected_run_id})")
    try:
        remote = api.cancel(batch_id)
    except BatchApiError as error:
        if error.status_code is None:
            raise
        raise BatchError(f"the provider refused to cancel {batch_id}: HTTP "
                         f"{error.status_code}: {error.message}") from error
    update_status(warehouse, batch_id, status=remote.status,
                  completed_count=remote.request_counts.completed
                  if remote.request_counts else None,
                  failed_count=remote.request_counts.failed if remote.request_counts else None,
                  output_file_id=remote.output_file_id, error_file_id=remote.error_file_id)
    return str(remote.status)


def check_resumable(record: BatchRecord, endpoint: Endpoint) -> None:
    """A batch is resumed with the endpoint that submitted it (same cache keys)."""
    if record.collected is not None:
        raise BatchError(f"batch {record.batch_id} was collected by run "
                         f"{record.collected_run_id}; nothing to resume")
    if record.endpoint not in (endpoint.stored_identity, endpoint.cache_identity) or \
            record.model != endpoint.model:
        raise BatchError(
            f"batch {record.batch_id} was submitted to {record.endpoint} for model "
            f"{record.model}; pass the same --base-url/--provider and --model to resume it")
