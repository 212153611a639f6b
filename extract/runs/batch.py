"""OpenAI Batch API mode: the same requests as the live path, sent as one JSONL file.

Each line's body is what instructor would send for that abstract in the endpoint's mode
(instructor's own ``handle_response_model`` prepares it), and each answer is parsed by
instructor's own ``process_response`` for that mode, so validation is the live path's.
Outcomes go through the recording of :class:`papersift.extract.runs.pipeline.Runner`, so
the stored rows are the live runner's rows. A batch is recorded in the warehouse as soon
as the provider accepts it: a run killed while polling is resumed by the next run over
the same papers (or by ``papersift batch resume``) instead of being submitted and paid for twice.
There are no re-asks inside a batch; a rerun resubmits only what failed (successes are cached).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import openai
from instructor.core.exceptions import IncompleteOutputException
from instructor.processing.response import handle_response_model, process_response
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from papersift.errors import PapersiftError
from papersift.extract.access.extractor import (
    Extractor,
    Failure,
    Outcome,
    _completion_text,
    _is_json_error,
    failure_reason,
)
from papersift.extract.access.llm import MODES, CallRecord, Endpoint, redact
from papersift.extract.runs.pipeline import Job, Runner, outcome_batch
from papersift.schemas import PaperDraft, schema_version
from papersift.warehouse import Warehouse
from papersift.warehouse.batches import (
    TERMINAL,
    BatchRecord,
    BatchRequest,
    get_batch,
    mark_collected,
    open_batches_for,
    record_submission,
    requests_of,
    update_status,
)
from papersift.warehouse.store import Batch

BATCH_URL: Final = "/v1/chat/completions"
COMPLETION_WINDOW: Final = "24h"
# OpenAI's limits per batch: 50,000 requests and a 200 MB input file.
MAX_REQUESTS = 50_000
MAX_BYTES = 190_000_000
# Why the requests of a batch that ended without an answer for them failed.
UNANSWERED = {
    "expired": "batch_expired",
    "cancelled": "batch_cancelled",
    "failed": "batch_failed",
    "completed": "batch_missing",
}


# A batch in these states will never answer: not worth adopting after a kill.
DEAD_STATUSES = frozenset({"failed", "expired", "cancelling", "cancelled"})


class BatchError(PapersiftError):
    """A batch cannot be submitted, resumed or cancelled as asked."""


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


# -- requests ------------------------------------------------------------------------------


def prepare_request(extractor: Extractor, text: str) -> tuple[type[Any], dict[str, Any]]:
    """(response model instructor parses the answer with, request body) for one abstract:
    the body the live path sends, ``extra_body`` merged in as the SDK merges it."""
    # The very arguments extract() hands instructor's create().
    create_kwargs = extractor._create_kwargs(text)
    model, kwargs = handle_response_model(create_kwargs.pop("response_model"),
                                          mode=MODES[extractor.endpoint.mode], **create_kwargs)
    extra = kwargs.pop("extra_body", None) or {}
    assert model is not None
    return model, {**kwargs, **extra}


def request_line(custom_id: str, body: dict[str, Any]) -> bytes:
    line = {"custom_id": custom_id, "method": "POST", "url": BATCH_URL, "body": body}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def chunks(lines: Iterator[tuple[BatchRequest, bytes]], max_requests: int,
           max_bytes: int) -> Iterator[list[tuple[BatchRequest, bytes]]]:
    """Group request lines into input files within the provider's limits."""
    chunk: list[tuple[BatchRequest, bytes]] = []
    size = 0
    for request, line in lines:
        if len(line) > max_bytes:
            raise BatchError(f"the request for {request.paper_id} is {len(line):,} bytes, "
                             f"over the {max_bytes:,}-byte batch file limit")
        if chunk and (len(chunk) >= max_requests or size + len(line) > max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((request, line))
        size += len(line)
    if chunk:
        yield chunk


# -- answers -------------------------------------------------------------------------------


class ResultReader:
    """Turns one line of a batch's output or error file into an :class:`Outcome`, with
    instructor's response processing for the endpoint's mode."""

    def __init__(self, extractor: Extractor, response_model: type[Any]) -> None:
        self.endpoint = extractor.endpoint
        self.response_model = response_model
        self.secrets = (self.endpoint.api_key,) if self.endpoint.api_key else ()

    def outcome(self, request: BatchRequest, entry: dict[str, Any] | None, *,
                batch: BatchRecord, unanswered: str, detail: str) -> Outcome:
        outcome = Outcome(paper_id=request.paper_id, cache_key=request.cache_key)
        if entry is None:
            outcome.failure = Failure("request", unanswered, detail)
            return outcome
        response = entry.get("response") or {}
        status = response.get("status_code")
        body = response.get("body")
        record = CallRecord(ask=1, attempt=1, status="ok", started=batch.submitted,
                            http_status=status if isinstance(status, int) else None)
        outcome.calls, outcome.asks = [record], 1
        if status != 200 or not isinstance(body, dict):
            record.status = "http_error"
            record.error = self._redact(json.dumps(entry.get("error") or body)[:500])
            code = (entry.get("error") or {}).get("code")
            reason = (f"batch_http_{status}" if isinstance(status, int)
                      else f"batch_{code}" if isinstance(code, str) and code.isidentifier()
                      else "batch_error")
            outcome.failure = Failure("request", reason, f"{batch.batch_id}: {record.error}")
            return outcome
        usage = body.get("usage") or {}
        record.prompt_tokens = usage.get("prompt_tokens")
        record.completion_tokens = usage.get("completion_tokens")
        outcome.prompt_tokens = record.prompt_tokens or 0
        outcome.completion_tokens = record.completion_tokens or 0
        choices = body.get("choices") or [{}]
        first = choices[0] if isinstance(choices[0], dict) else {}
        record.finish_reason = first.get("finish_reason")
        if record.finish_reason == "length":
            record.status = "length"
        completion = ChatCompletion.construct(**body)
        try:
            outcome.draft = process_response(completion, response_model=self.response_model,
                                             stream=False, strict=True,
                                             mode=MODES[self.endpoint.mode])
        except IncompleteOutputException:
            outcome.failure = Failure(
                "request", "length",
                f"the answer hit max_tokens={self.endpoint.max_tokens} before the JSON ended")
        except Exception as error:  # what instructor's parser raises varies by mode
            record.status = "invalid"
            record.error = self._redact(str(error)[:2000])
            reason, why = self._refusal(completion, error)
            outcome.failure = Failure("validation", reason, self._redact(why)[:4000])
        return outcome

    def _refusal(self, completion: ChatCompletion, error: Exception) -> tuple[str, str]:
        """Why the answer was refused, in the live path's terms (no re-ask in a batch)."""
        text = _completion_text(completion)
        if text is None:
            return "no_answer", str(error)
        try:
            PaperDraft.model_validate_json(text)
        except ValidationError as last_error:
            reason = "invalid_json" if _is_json_error(last_error) else "schema_violation"
            return reason, str(last_error)
        return "schema_violation", str(error)

    def _redact(self, text: str) -> str:
        return redact(text, self.secrets)


def read_jsonl(text: str) -> dict[str, dict[str, Any]]:
    """custom_id -> result line; lines that are not JSON objects are skipped (their
    requests then count as unanswered)."""
    found: dict[str, dict[str, Any]] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("custom_id"), str):
            found.setdefault(entry["custom_id"], entry)
    return found


# -- the runner ----------------------------------------------------------------------------

PollCallback = Callable[[BatchProgress], None]


class BatchRunner(Runner):
    """A :class:`Runner` whose uncached abstracts go through the Batch API: submit (or find
    the open batch that already asked for them), poll, then record every answer."""

    def __init__(self, *args: Any, options: BatchOptions = BatchOptions(),
                 on_poll: PollCallback | None = None,
                 sleep: Callable[[float], None] = time.sleep, only_batch: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.options = options
        self.on_poll = on_poll or (lambda _progress: None)
        self.sleep = sleep
        self.extra_params = {**self.extra_params, "batch": True,
                             "completion_window": COMPLETION_WINDOW,
                             "poll_interval_s": options.poll_interval_s}
        self.batch_ids: list[str] = []  # every batch this run submitted or resumed
        self.submitted: list[str] = []
        self.only_batch = only_batch  # resume this batch and submit nothing

    def _extract_all(self, jobs: Iterable[Job]) -> None:
        jobs = list(jobs)
        if not jobs:
            return
        if self.extractor.endpoint.kind == "local":
            raise BatchError("--batch needs an endpoint with the OpenAI Batch API "
                             "(--provider openai or a compatible --base-url)")
        wanted = {self.extractor.key_for(job.text): job for job in jobs}
        found = open_batches_for(self.warehouse, wanted)
        if self.only_batch is not None:
            found = [b for b in found if b.batch_id == self.only_batch]
        covered = {request.cache_key for record in found
                   for request in requests_of(self.warehouse, record.batch_id)}
        new_jobs = [job for key, job in wanted.items() if key not in covered]
        records = list(found)
        if self.only_batch is None:
            records += self._submit(new_jobs, wanted)
        else:
            for job in new_jobs:  # asked to resume one batch: it lacks these, say so
                self._record(Outcome(paper_id=job.paper_id,
                                     cache_key=self.extractor.key_for(job.text),
                                     failure=Failure("request", "batch_missing",
                                                     f"not in batch {self.only_batch}")))
        self.batch_ids = [record.batch_id for record in records]
        self._follow(records, wanted)
        for key, job in wanted.items():  # every paper ends stored: none may slip through
            self._record(Outcome(paper_id=job.paper_id, cache_key=key, failure=Failure(
                "request", "batch_missing", "no batch answered or listed this request")))

    # -- submit --------------------------------------------------------------------

    def _submit(self, jobs: Sequence[Job], wanted: dict[str, Job]) -> list[BatchRecord]:
        """Upload the jobs' lines and create batches; a refused chunk's papers are recorded
        as failed (and taken out of ``wanted``)."""
        if not jobs:
            return []
        client = self.extractor.raw_client
        response_model: type[Any] | None = None
        records = []

        def lines() -> Iterator[tuple[BatchRequest, bytes]]:
            nonlocal response_model
            for job in jobs:
                response_model, body = prepare_request(self.extractor, job.text)
                request = BatchRequest(job.paper_id, job.paper_id,
                                       self.extractor.key_for(job.text))
                yield request, request_line(request.custom_id, body)

        for chunk in chunks(lines(), self.options.max_requests, self.options.max_bytes):
            content = b"".join(line for _, line in chunk)
            digest = "sha256:" + hashlib.sha256(content).hexdigest()
            try:
                found = self._unrecorded_batch(client, digest)
                if found is not None:  # accepted before a kill, never stored: adopt it
                    record = self._record_of(found.id, found.input_file_id, found.status,
                                             len(chunk))
                    record_submission(self.warehouse, record,
                                      [request for request, _ in chunk])
                    records.append(record)
                    continue
                uploaded = client.files.create(
                    file=(f"papersift-{self.run_id}.jsonl", content, "application/jsonl"),
                    purpose="batch",
                )
                remote = client.batches.create(
                    input_file_id=uploaded.id, endpoint=BATCH_URL,
                    completion_window=COMPLETION_WINDOW,
                    metadata={"papersift_run": self.run_id, "papersift_requests": digest},
                )
            except openai.APIError as error:  # refused: its papers fail, with the reason
                failure = Failure("request", f"batch_submit_{failure_reason(error)}",
                                  self._redact(f"submitting the batch failed: {error}")[:4000])
                for request, _ in chunk:
                    wanted.pop(request.cache_key, None)
                    self._record(Outcome(paper_id=request.paper_id,
                                         cache_key=request.cache_key, failure=failure))
                continue
            record = self._record_of(remote.id, uploaded.id, remote.status, len(chunk))
            record_submission(self.warehouse, record, [request for request, _ in chunk])
            self.submitted.append(remote.id)
            records.append(record)
        return records

    def _unrecorded_batch(self, client: openai.OpenAI, digest: str) -> Any | None:
        """A live batch of exactly these request lines that the warehouse does not know: a
        kill between the provider accepting a batch and papersift storing it leaves one.
        The provider's newest 100 batches are searched (by their ``papersift_requests``
        metadata, the hash of the uploaded lines)."""
        known = {row[0] for row in self.warehouse.con.execute(
            "SELECT batch_id FROM batches").fetchall()}
        try:
            listed = client.batches.list(limit=100).data
        except openai.APIError:
            return None  # best effort: a provider that cannot list still gets the batch
        for remote in listed:
            metadata = remote.metadata or {}
            if (metadata.get("papersift_requests") == digest and remote.id not in known
                    and remote.status not in DEAD_STATUSES):
                return remote
        return None

    def _record_of(self, batch_id: str, input_file_id: str, status: str,
                   count: int) -> BatchRecord:
        endpoint = self.extractor.endpoint
        return BatchRecord(
            batch_id=batch_id, run_id=self.run_id, endpoint=endpoint.cache_identity,
            model=endpoint.model, mode=endpoint.mode,
            prompt_version=self.extractor.prompt.version, schema_version=schema_version(),
            input_file_id=input_file_id, status=status, request_count=count,
            submitted=_now(),
        )

    # -- poll and collect ----------------------------------------------------------

    def _follow(self, records: Sequence[BatchRecord], wanted: dict[str, Job]) -> None:
        client = self.extractor.raw_client
        pending = {record.batch_id: record for record in records}
        started = time.monotonic()
        while pending:
            for batch_id in list(pending):
                try:
                    remote = client.batches.retrieve(batch_id)
                except openai.APIError as error:
                    raise self._stalled(batch_id, "checking", error) from error
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
                        self._collect(get_batch(self.warehouse, batch_id), wanted)
                    except openai.APIError as error:
                        raise self._stalled(batch_id, "downloading the results of",
                                            error) from error
            if pending:
                self.sleep(self.options.poll_interval_s)

    def _stalled(self, batch_id: str, doing: str, error: openai.APIError) -> BatchError:
        return BatchError(self._redact(
            f"{doing} batch {batch_id} failed ({error}); the batch is stored: rerun the same "
            f"command, or `papersift batch resume {batch_id}`, to continue"))

    def _redact(self, text: str) -> str:
        key = self.extractor.endpoint.api_key
        return redact(text, (key,) if key else ())

    def _download(self, file_id: str | None) -> dict[str, dict[str, Any]]:
        if not file_id:
            return {}
        return read_jsonl(self.extractor.raw_client.files.content(file_id).text)

    def _collect(self, record: BatchRecord, wanted: dict[str, Job]) -> None:
        """Store every request's result: answers, error lines, and what never came back."""
        results = self._download(record.error_file_id)
        results.update(self._download(record.output_file_id))
        reader = ResultReader(self.extractor, prepare_request(self.extractor, "")[0])
        unanswered = UNANSWERED.get(record.status, "batch_missing")
        detail = (f"batch {record.batch_id} ended {record.status} without an answer for it"
                  + (f" ({record.detail})" if record.detail else ""))
        elsewhere = []
        for request in requests_of(self.warehouse, record.batch_id):
            entry = results.get(request.custom_id)
            job = wanted.pop(request.cache_key, None)
            if job is None:  # not asked for by this run (cached since, or another input)
                if entry is not None:
                    elsewhere.append((request, entry))
                continue
            self._record(reader.outcome(request, entry, batch=record, unanswered=unanswered,
                                        detail=detail))
        self._cache_only(elsewhere, reader, record)
        self._flush(force=True)
        mark_collected(self.warehouse, record.batch_id, self.run_id)

    def _cache_only(self, results: list[tuple[BatchRequest, dict[str, Any]]],
                    reader: ResultReader, record: BatchRecord) -> None:
        """Keep paid-for answers of papers this run does not extract: cache rows only."""
        if not results:
            return
        ids = [request.paper_id for request, _ in results]
        texts = dict(self.warehouse.con.execute(
            "SELECT paper_id, text FROM papers WHERE list_contains(?, paper_id)", [ids]
        ).fetchall())
        rows = Batch()
        for request, entry in results:
            if request.paper_id not in texts:
                continue
            outcome = reader.outcome(request, entry, batch=record, unanswered="",
                                     detail="")
            if not outcome.ok:
                continue
            batch = outcome_batch(outcome, Job(request.paper_id, texts[request.paper_id]),
                                  run_id=self.run_id, provenance=self._provenance,
                                  model=self.extractor.endpoint.model)
            rows.add("llm_cache", *batch.rows.get("llm_cache", []))
        self.warehouse.write(rows)


# -- commands ------------------------------------------------------------------------------


def cancel_batch(warehouse: Warehouse, client: openai.OpenAI, batch_id: str) -> str:
    """Ask the provider to cancel a stored batch; returns the status it reports. Its partial
    results are stored by the next run or ``papersift batch resume``."""
    record = get_batch(warehouse, batch_id)
    if record.collected is not None:
        raise BatchError(f"batch {batch_id} is already collected (by run "
                         f"{record.collected_run_id})")
    try:
        remote = client.batches.cancel(batch_id)
    except openai.APIStatusError as error:
        raise BatchError(f"the provider refused to cancel {batch_id}: HTTP "
                         f"{error.status_code}: {error.message}") from error
    update_status(warehouse, batch_id, status=remote.status,
                  completed_count=remote.request_counts.completed
                  if remote.request_counts else None,
                  failed_count=remote.request_counts.failed if remote.request_counts else None,
                  output_file_id=remote.output_file_id, error_file_id=remote.error_file_id)
    return remote.status


def check_resumable(record: BatchRecord, endpoint: Endpoint) -> None:
    """A batch is resumed with the endpoint that submitted it (same cache keys)."""
    if record.collected is not None:
        raise BatchError(f"batch {record.batch_id} was collected by run "
                         f"{record.collected_run_id}; nothing to resume")
    if (record.endpoint, record.model) != (endpoint.cache_identity, endpoint.model):
        raise BatchError(
            f"batch {record.batch_id} was submitted to {record.endpoint} for model "
            f"{record.model}; pass the same --base-url/--provider and --model to resume it")
