"""The library functions behind the CLI commands: each does one whole job."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papersift.extract.access.endpoints import (
    EndpointError,
    EndpointOptions,
    EndpointPlan,
    plan_endpoint,
)
from papersift.extract.access.extractor import Extractor
from papersift.extract.access.http import Transport
from papersift.extract.access.limits import RequestGate, approx_tokens
from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.extract.access.recording import recording_transport
from papersift.extract.domain.evaluation.eval_errors import EvalDetails
from papersift.extract.domain.evaluation.evaluate import Evaluation, GoldError, load_gold
from papersift.extract.domain.fields import DEFAULT_FIELDS, FieldSet, load_fields, prompt_for
from papersift.extract.domain.prices import Pricing, pricing_for
from papersift.extract.domain.reading.ingest import (
    DEFAULT_CHUNK_PAPERS,
    DEFAULT_MAX_CHARS,
    check_inputs,
)
from papersift.extract.domain.reading.ingest_results import IngestProblem
from papersift.extract.domain.reading.sampling import seeded_sample
from papersift.extract.runs.batch import (
    BatchDispatch,
    BatchError,
    BatchOptions,
    PollCallback,
    cancel_batch,
    check_resumable,
)
from papersift.extract.runs.canon import entities_after_run
from papersift.extract.runs.evaluation import details, evaluate
from papersift.extract.runs.ingest_files import ingest_stream
from papersift.extract.runs.introductions import introductions_after_run
from papersift.extract.runs.pipeline import (
    IngestReport,
    Job,
    Progress,
    Runner,
    RunSummary,
    ingest_batch,
    ingest_into,
    jobs_for_stored,
    jobs_from,
    new_run_id,
)
from papersift.prompts import DEFAULT_PROMPT, Prompt, load_prompt
from papersift.prompts.pool import answering, load_pool, with_pool
from papersift.warehouse import Warehouse, reads
from papersift.warehouse.batches import get_batch, requests_of
from papersift.warehouse.custom import record_custom_fields
from papersift.warehouse.db import remove_empty, schema_names


@dataclass(frozen=True)
class RunSettings:
    """Everything a run needs besides its inputs."""

    db: Path
    endpoint: EndpointOptions = EndpointOptions()
    concurrency: int = 1
    use_cache: bool = True
    max_chars: int = DEFAULT_MAX_CHARS
    max_reasks: int | None = None  # None: 1 for the local model (each re-ask is slow), else 2
    prompt: str = DEFAULT_PROMPT
    retry: RetryPolicy = RetryPolicy()
    record_to: Path | None = None  # save every HTTP exchange here (see extract.recording)
    rpm: float | None = None  # the endpoint's limits; None: learned from its headers
    tpm: float | None = None
    max_cost: float | None = None  # US$; None: no budget
    price: tuple[float, float] | None = None  # US$ per million tokens, over the price table
    batch: BatchOptions | None = None  # send through the OpenAI Batch API (extract.batch)
    fields: Path | None = None  # a user's fields file (extract.domain.fields.load_fields)
    # Optional built-in fields to extract too (schemas.fields: FieldSpec.optional)
    with_fields: tuple[str, ...] | None = None
    fewshot_pool: Path | None = None  # examples from reviewed papers (prompts/pool.py)
    # Processes that ground answers and build rows off the event loop (runs/rowbuild.py);
    # None: one per spare CPU (at most 4) from --concurrency 16 on, else none.
    row_workers: int | None = None
    # Extract only a seeded random sample of this many abstracts (all are still ingested).
    sample: int | None = None
    sample_seed: int = 0


def ingest_only(
    db: Path, inputs: Sequence[str], max_chars: int = DEFAULT_MAX_CHARS
) -> IngestReport:
    """Store papers and provenance without extracting. Inputs that name nothing are
    refused first; a warehouse this call made stays only if an abstract was read."""
    check_inputs(inputs)
    fresh = not db.exists()
    with Warehouse(db) as warehouse:
        _, report = ingest_into(warehouse, inputs, max_chars=max_chars)
    if fresh and report.occurrences == 0:
        remove_empty(db)
    return report


def _reasks(settings: RunSettings, endpoint: Endpoint) -> int:
    if settings.max_reasks is not None:
        return settings.max_reasks
    return 1 if endpoint.kind == "local" else 2  # a re-ask on a CPU model costs ~30 s


# The jobs of a run: a function of the runner, so a streamed corpus can write each chunk's
# papers through the runner (after its write in progress) before handing over its jobs.
JobChunks = Callable[[Runner], Iterable[Sequence[Job]]]


def _extract_jobs(
    warehouse: Warehouse,
    jobs: JobChunks,
    settings: RunSettings,
    *,
    run_id: str,
    inputs: Sequence[str],
    progress: Progress | None,
    transport: Transport | None,
    endpoint: Endpoint | None,
    on_poll: PollCallback | None = None,
    only_batch: str | None = None,
) -> RunSummary:
    """Extract the jobs; ``endpoint`` replaces the one ``settings`` describe (tests)."""
    plan = EndpointPlan(endpoint) if endpoint is not None else plan_endpoint(settings.endpoint)
    fields = run_fields(settings)
    prompt = run_prompt(settings, fields)

    def make_extractor(live_endpoint: Endpoint) -> Extractor:
        wire = transport
        if settings.record_to is not None:
            wire = recording_transport(settings.record_to, live_endpoint,
                                       prompt_for(prompt, fields).version, wire)
        return Extractor(live_endpoint, prompt, max_reasks=_reasks(settings, live_endpoint),
                         transport=wire, policy=settings.retry, fields=fields)

    @contextmanager
    def open_live() -> Iterator[Extractor]:
        with plan.open() as live_endpoint:
            live = make_extractor(live_endpoint)
            try:
                yield live
            finally:
                live.close()

    if settings.batch is not None and settings.max_cost is not None:
        raise BatchError("--max-cost paces live requests; a batch is priced before it is "
                         "sent: check it with --batch --dry-run instead")
    gate = request_gate(settings, plan.endpoint)
    # Keys only: no connection is made by building a client.
    keys_only = Extractor(plan.endpoint, prompt, max_reasks=_reasks(settings, plan.endpoint),
                          fields=fields)
    if fields.custom:
        warehouse.run(record_custom_fields, fields.custom)
    try:
        common: dict[str, Any] = dict(
            concurrency=settings.concurrency,
            use_cache=settings.use_cache,
            progress=progress,
            run_id=run_id,
            inputs=inputs,
            extra_params={"prompt": settings.prompt, "max_chars": settings.max_chars,
                          "rpm": settings.rpm, "tpm": settings.tpm,
                          "max_cost": settings.max_cost,
                          **({"fields": fields.source, "fields_version": fields.schema_version()}
                             if fields.custom else {}),
                          **({"with": [spec.name for spec in fields.optional]}
                             if fields.optional else {}),
                          **({"fewshot_pool": str(settings.fewshot_pool),
                              "fewshot_pool_version": prompt.pool.version}
                             if prompt.pool is not None else {})},
            gate=gate,
            row_workers=settings.row_workers,
        )
        dispatch = None if settings.batch is None else BatchDispatch(
            warehouse, settings.batch, on_poll=on_poll, only_batch=only_batch)
        runner = Runner(warehouse, keys_only, dispatch=dispatch, **common)
        summary = runner.run_chunks(jobs(runner), open_live)
        summary.notes.extend(plan.notes)  # e.g. the local server's threads, and why
        return summary
    finally:
        keys_only.close()


def run_prompt(settings: RunSettings, fields: FieldSet = DEFAULT_FIELDS) -> Prompt:
    """The prompt a run sends: the named one, with its few-shot pool cut to the run's fields."""
    prompt = load_prompt(settings.prompt)
    if settings.fewshot_pool is None:
        return prompt
    pool = answering(load_pool(settings.fewshot_pool), fields.draft_model.model_fields)
    return with_pool(prompt, pool)


def run_fields(settings: RunSettings) -> FieldSet:
    """The fields a run extracts: the built-in ones, the optional ones it enables, plus
    the user's fields file's (whose names may not be the warehouse's tables and views)."""
    enabled = tuple(settings.with_fields or ())
    if settings.fields is None:
        return FieldSet(enabled=enabled) if enabled else DEFAULT_FIELDS
    return load_fields(settings.fields, reserved=schema_names(), enabled=enabled)


def request_gate(settings: RunSettings, endpoint: Endpoint) -> RequestGate:
    """The pacing of a run's requests: its limits, its budget and the model's prices."""
    pricing = pricing_for(endpoint.model, override=settings.price)
    if endpoint.kind == "local":
        pricing = Pricing(0.0, 0.0)  # a local model costs nothing per token
    if settings.max_cost is not None and pricing is None:
        raise EndpointError(
            f"--max-cost needs the price of {endpoint.model!r}, which the price table lacks: "
            "pass --price IN OUT (US$ per million prompt and completion tokens)")
    return RequestGate(rpm=settings.rpm, tpm=settings.tpm, budget_usd=settings.max_cost,
                       pricing=pricing, max_pause_s=settings.retry.max_retry_after_s)


# Papers read, stored and handed to the runner at a time: memory holds about one chunk.
STREAM_CHUNK_PAPERS = DEFAULT_CHUNK_PAPERS


def _as_chunks(jobs: list[Job]) -> JobChunks:
    return lambda _runner: [jobs]


def _papers_stored(warehouse: Warehouse) -> int:
    return warehouse.run(reads.count_papers)


def run_inputs(
    inputs: Sequence[str],
    settings: RunSettings,
    *,
    progress: Progress | None = None,
    transport: Transport | None = None,
    endpoint: Endpoint | None = None,
    on_poll: PollCallback | None = None,
) -> tuple[IngestReport, RunSummary]:
    """Ingest the inputs, then extract every abstract in them (cache first).

    ``transport``/``endpoint`` let tests and the recorder replace the network and the
    endpoint choice; normally the endpoint comes from ``settings.endpoint``.
    """
    check_inputs(inputs)
    fresh = not settings.db.exists()
    run_id = new_run_id()
    report = IngestReport(files=0, occurrences=0, papers=0, new_papers=0, problems=[])
    chosen = sampled_papers(inputs, settings)

    def streamed(runner: Runner) -> Iterator[list[Job]]:
        for chunk in ingest_stream(inputs, max_chars=settings.max_chars,
                                   chunk_papers=STREAM_CHUNK_PAPERS):
            runner.write_now(ingest_batch(chunk, run_id))
            report.files += len(chunk.files)
            report.occurrences += chunk.occurrences
            report.papers += len(chunk.papers)
            report.problems.extend(chunk.problems)
            jobs = jobs_from(chunk)
            yield jobs if chosen is None else [job for job in jobs if job.paper_id in chosen]

    with Warehouse(settings.db) as warehouse:
        before = _papers_stored(warehouse)
        summary = _extract_jobs(
            warehouse, streamed, settings, run_id=run_id, inputs=inputs, progress=progress,
            transport=transport, endpoint=endpoint, on_poll=on_poll,
        )
        report.new_papers = _papers_stored(warehouse) - before
        summary.input_problems = [p for p in report.problems if p.reason != "too_long"]
        entities_after_run(warehouse)
        introductions_after_run(warehouse, summary.notes)
    if fresh and report.occurrences == 0:
        remove_empty(settings.db)
    return report, summary


def sampled_papers(inputs: Sequence[str], settings: RunSettings) -> set[str] | None:
    """The papers a ``--sample N`` run extracts (a first, read-only pass over the inputs),
    or None when the run extracts every paper."""
    if settings.sample is None:
        return None
    ids = (paper.paper_id
           for chunk in ingest_stream(inputs, max_chars=settings.max_chars,
                                      chunk_papers=STREAM_CHUNK_PAPERS)
           for paper in chunk.papers)
    return seeded_sample(ids, settings.sample, settings.sample_seed)


def extract_stored(
    settings: RunSettings,
    *,
    only_missing: bool = True,
    paper_ids: Sequence[str] | None = None,
    progress: Progress | None = None,
    transport: Transport | None = None,
    endpoint: Endpoint | None = None,
    on_poll: PollCallback | None = None,
) -> RunSummary:
    """Extract papers already in the warehouse (by default those without an extraction);
    ``paper_ids`` narrows the choice to those papers."""
    run_id = new_run_id()
    with Warehouse(settings.db, create=False) as warehouse:
        if paper_ids is not None:
            unknown = warehouse.run(reads.unknown_paper_ids, paper_ids)
            if unknown:
                raise GoldError(f"{len(unknown)} of the requested papers are not in the "
                                f"warehouse (e.g. {sorted(unknown)[0]}); ingest them first")
        rows = warehouse.run(reads.papers_to_extract, only_missing=only_missing,
                             paper_ids=paper_ids)
        jobs = jobs_for_stored(rows, settings.max_chars)
        if settings.sample is not None:  # a sample of the papers this command would extract
            keep = seeded_sample((job.paper_id for job in jobs), settings.sample,
                                 settings.sample_seed)
            jobs = [job for job in jobs if job.paper_id in keep]
        summary = _extract_jobs(
            warehouse, _as_chunks(jobs), settings, run_id=run_id, inputs=["<warehouse>"],
            progress=progress, transport=transport, endpoint=endpoint, on_poll=on_poll,
        )
        entities_after_run(warehouse)
        introductions_after_run(warehouse, summary.notes)
        return summary


def resume_batch(
    settings: RunSettings,
    batch_id: str,
    *,
    progress: Progress | None = None,
    on_poll: PollCallback | None = None,
    transport: Transport | None = None,
    endpoint: Endpoint | None = None,
) -> RunSummary:
    """Poll a stored, uncollected batch to its end and store its results in a new run; its
    papers already cached are counted as cached. Nothing new is submitted."""
    chosen = endpoint if endpoint is not None else plan_endpoint(settings.endpoint).endpoint
    with Warehouse(settings.db, create=False) as warehouse:
        check_resumable(get_batch(warehouse, batch_id), chosen)
        ids = [request.paper_id for request in requests_of(warehouse, batch_id)]
        rows = warehouse.run(reads.papers_by_id, ids)
        batch = settings.batch or BatchOptions()
        return _extract_jobs(
            warehouse, _as_chunks(jobs_for_stored(rows, settings.max_chars)),
            dataclasses.replace(settings, batch=batch), run_id=new_run_id(),
            inputs=[f"<batch {batch_id}>"], progress=progress, transport=transport,
            endpoint=chosen, on_poll=on_poll, only_batch=batch_id,
        )


def cancel_stored_batch(
    settings: RunSettings,
    batch_id: str,
    *,
    transport: Transport | None = None,
    endpoint: Endpoint | None = None,
) -> str:
    """Ask the provider to cancel a stored batch; returns the status it reports."""
    chosen = endpoint if endpoint is not None else plan_endpoint(settings.endpoint).endpoint
    with Warehouse(settings.db, create=False) as warehouse:
        check_resumable(get_batch(warehouse, batch_id), chosen)
        extractor = Extractor(chosen, load_prompt(settings.prompt), transport=transport,
                              policy=settings.retry)
        try:
            return cancel_batch(warehouse, extractor.batch_api, batch_id)
        finally:
            extractor.close()


def evaluate_run(db: Path, gold_file: Path, run_id: str | None = None,
                 only: Sequence[str] | None = None) -> Evaluation:
    """Score a run (default: the latest on the gold papers) against a gold file; stored.
    ``only`` restricts the gold file to those paper ids."""
    gold = load_gold(gold_file, only)
    with Warehouse(db, create=False) as warehouse:
        return evaluate(warehouse, gold, run_id)


def compare_runs(db: Path, gold_file: Path, run_ids: Sequence[str],
                 only: Sequence[str] | None = None) -> list[Evaluation]:
    """Score several runs on the same gold file, for a side-by-side table."""
    gold = load_gold(gold_file, only)
    with Warehouse(db, create=False) as warehouse:
        return [evaluate(warehouse, gold, run_id) for run_id in run_ids]


def evaluation_details(db: Path, gold_file: Path, run_ids: Sequence[str],
                       only: Sequence[str] | None = None) -> list[EvalDetails]:
    """Each run's false positives and negatives per paper and its figures per source."""
    gold = load_gold(gold_file, only)
    with Warehouse(db, create=False) as warehouse:
        return [details(warehouse, gold, run_id) for run_id in run_ids]


def paper_ids_from(path: Path) -> list[str]:
    """Paper ids listed in a file: a gold JSON file, or one `sha256:` id per line."""
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("{"):
        return [paper.paper_id for paper in load_gold(path).papers]
    ids = [line.strip() for line in text.splitlines() if line.strip()]
    bad = [(n, line) for n, line in enumerate(ids, 1) if not line.startswith("sha256:")]
    if bad:
        raise GoldError(f"{path}: line {bad[0][0]}: expected a paper id (sha256:...), "
                        f"got {bad[0][1][:40]!r}")
    return ids


# Completion tokens per abstract before any request: the recording run of the bundled
# corpus wrote 4,156 completion tokens for 63 abstracts (prompt tokens are estimated from
# each request's text, see billed_prompt_tokens).
COMPLETION_TOKENS_PER_ABSTRACT = 66


@dataclass(frozen=True)
class Estimate:
    """What a run would do and cost, worked out without asking the model anything."""

    model: str
    abstracts: int
    cached: int
    skipped: int
    to_send: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None  # None: no price known for this model
    problems: tuple[IngestProblem, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether a run would read every input: something to read, no input missing."""
        return self.abstracts > 0 and not any(p.reason == "not_found" for p in self.problems)

    def lines(self) -> list[str]:
        cost = "unknown (no price for this model)" if self.cost_usd is None \
            else f"${self.cost_usd:,.4f}"
        return [*(f"input problem: {p.message}" for p in self.problems[:20]),
            f"{self.abstracts} abstracts: {self.to_send} to send, {self.cached} cached, "
            f"{self.skipped} skipped (too long or too short)",
            f"estimated {self.prompt_tokens:,} prompt + {self.completion_tokens:,} completion "
            f"tokens for {self.model}: {cost}",
        ]


def billed_prompt_tokens(extractor: Extractor, text: str, title: str | None = None) -> int:
    """Estimated prompt tokens of this abstract's request (its title too, when the input has
    one) as it would be sent: the messages
    with the schema text of the JSON modes, plus the tools or response_format schema a
    remote provider bills; a local server's grammar is not prompt. About 4 tokens of chat
    framing per message."""
    body = extractor.request_body(text, title)
    parts = [str(message.get("content") or "") for message in body["messages"]]
    if extractor.endpoint.kind != "local":
        parts += [json.dumps(body[key], separators=(",", ":"))
                  for key in ("tools", "response_format") if key in body]
    return sum(approx_tokens(part) for part in parts) + 4 * len(body["messages"])


def estimate_run(inputs: Sequence[str], settings: RunSettings) -> Estimate:
    """Read the inputs and the cache (read-only) and estimate tokens and cost; nothing is
    written, no server is started and no request is made."""
    from papersift.warehouse import open_repository

    check_inputs(inputs)
    plan = plan_endpoint(settings.endpoint)
    fields = run_fields(settings)
    keys_only = Extractor(plan.endpoint, run_prompt(settings, fields), max_reasks=0,
                          fields=fields)
    cache = (open_repository(settings.db, read_only=True)
             if settings.use_cache and settings.db.exists() else None)
    abstracts = skipped = cached = 0
    sent = prompt_tokens = 0
    chosen = sampled_papers(inputs, settings)
    problems: list[IngestProblem] = []
    try:  # chunk by chunk, so a corpus of millions is estimated in bounded memory
        for chunk in ingest_stream(inputs, max_chars=settings.max_chars,
                                   chunk_papers=STREAM_CHUNK_PAPERS):
            jobs = [job for job in jobs_from(chunk) if chosen is None or job.paper_id in chosen]
            problems.extend(p for p in chunk.problems if p.reason != "too_long")
            abstracts += len(jobs)
            skipped += sum(1 for job in jobs if job.skip is not None)
            keys = {job.paper_id: keys_only.key_for(job.text, job.title)
                    for job in jobs if job.skip is None}
            hits = (cache.run(reads.cached_keys, set(keys.values())) if cache is not None
                    else set())
            to_send = [job for job in jobs
                       if job.skip is None and keys[job.paper_id] not in hits]
            cached += len(keys) - len(to_send)
            sent += len(to_send)
            prompt_tokens += sum(billed_prompt_tokens(keys_only, job.text, job.title)
                                 for job in to_send)
    finally:
        keys_only.close()
        if cache is not None:
            cache.close()
    completion_tokens = COMPLETION_TOKENS_PER_ABSTRACT * sent
    pricing = pricing_for(plan.endpoint.model, override=settings.price,
                          batch=settings.batch is not None)
    if plan.endpoint.kind == "local":
        cost: float | None = 0.0
    elif pricing is not None:
        cost = pricing.cost(prompt_tokens, completion_tokens)
    else:
        cost = None
    return Estimate(
        model=plan.endpoint.model, abstracts=abstracts, cached=cached, skipped=skipped,
        to_send=sent,
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, cost_usd=cost,
        problems=tuple(problems),
    )
