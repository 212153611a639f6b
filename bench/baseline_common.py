"""What the two reference baselines share: an Extractor whose ``extract`` is the baseline's
own approach, and the conversion of its loose answer into papersift's stored shape.

A baseline answer is turned into a :class:`schemas.PaperExtraction` *without* the
validation context, so no grounding check runs and nothing is re-asked: the stored
alignment of each evidence quote then shows honestly how often the baseline's text is
found in the abstract. Values the stored schema cannot hold are coerced (and counted), so
storing never fails:

- contribution types outside the allowed set are dropped; if none is left (or the baseline
  extracts none, like langextract here), they are derived by a rule: ``method`` when a
  method was extracted, ``benchmark`` when a benchmark is marked introduced, else
  ``method`` (the majority class);
- units outside the allowed set become ``other``; lists are cut to the schema's caps;
  names and quotes to its length limits;
- a missing quote becomes the item's own name (metric for a gain);
- the fields a baseline does not extract get fixed values: a benchmark's kind is
  ``other``; a gain's kind is ``improvement`` when it names a baseline, else ``score``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar, get_args

import httpx2
import instructor
import openai
from pydantic import ValidationError

from papersift.extract.access.batch_api import failure_reason
from papersift.extract.access.extractor import Extractor, Failure, Outcome
from papersift.extract.access.llm import CallLog, Endpoint, RetryPolicy, call_log, current_log
from papersift.extract.access.request import MODES
from papersift.prompts import Prompt
from papersift.schemas import Benchmark, ClaimedGain, Method, PaperExtraction, Task
from papersift.schemas.paper import MAX_EVIDENCE_CHARS, ContributionType, GainUnit

CONTRIBUTION_TYPES: tuple[ContributionType, ...] = get_args(ContributionType)
UNITS: tuple[GainUnit, ...] = get_args(GainUnit)

# The stored schema's caps (schemas/paper.py).
MAX_TASKS, MAX_METHODS, MAX_BENCHMARKS, MAX_GAINS, MAX_TYPES = 4, 4, 8, 8, 4
NAME_CHARS, DETAIL_CHARS, MIN_EVIDENCE_CHARS = 120, 200, 3

_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)")


# -- drafts: what a baseline found, before it is fitted to the stored schema ---------------


@dataclass(frozen=True)
class NamedDraft:
    """A task or a method: a name and, when the baseline gives one, a quote."""

    name: str
    evidence: str | None = None


@dataclass(frozen=True)
class BenchmarkDraft(NamedDraft):
    """A named draft, and whether the paper introduces the benchmark."""

    introduced: bool = False


@dataclass(frozen=True)
class GainDraft:
    metric: str | None
    value: float | None
    unit: str | None
    baseline: str | None = None
    dataset: str | None = None
    evidence: str | None = None


@dataclass(frozen=True)
class Draft:
    """A baseline's answer for one abstract. ``contribution_types`` None: not extracted."""

    contribution_types: list[str] | None
    tasks: list[NamedDraft] = field(default_factory=list)
    methods: list[NamedDraft] = field(default_factory=list)
    benchmarks: list[BenchmarkDraft] = field(default_factory=list)
    gains: list[GainDraft] = field(default_factory=list)


# -- coercions -----------------------------------------------------------------------------


def _clean(value: str | None, limit: int) -> str | None:
    """Stripped text cut to ``limit`` characters; None when nothing is left."""
    if value is None:
        return None
    text = " ".join(value.split())
    if not text or text.lower() in {"none", "null", "n/a"}:
        return None
    return text[:limit]


def unit_for(raw: str | None, notes: Counter[str]) -> GainUnit | None:
    """An allowed unit (case-insensitive), None for no unit, ``other`` for anything else."""
    text = _clean(raw, 40)
    if text is None:
        return None
    for unit in UNITS:
        if text.lower() == unit:
            return unit
    notes["unit became 'other'"] += 1
    return "other"


def number_from(raw: str | None) -> float | None:
    """The first number written in ``raw`` ("12.5%", "3x", "1,024"); None if there is none."""
    if raw is None:
        return None
    match = _NUMBER.search(raw.replace(",", ""))
    if match is None:
        return None
    value = float(match.group())
    return value if math.isfinite(value) else None


def contribution_types_for(
    raw: list[str] | None, methods: list[Method], benchmarks: list[Benchmark],
    notes: Counter[str],
) -> list[ContributionType]:
    """The allowed types among ``raw`` (normalised spelling), else the rule in the module
    docstring."""
    kept: list[ContributionType] = []
    for value in raw or []:
        spelled = "_".join(value.strip().lower().replace("-", " ").split())
        match = next((t for t in CONTRIBUTION_TYPES if t == spelled), None)
        if match is None:
            notes["contribution type dropped"] += 1
        elif match not in kept:
            kept.append(match)
    if kept:
        return kept[:MAX_TYPES]
    notes["contribution types from the rule"] += 1
    derived: list[ContributionType] = []
    if methods:
        derived.append("method")
    if any(b.introduced for b in benchmarks):
        derived.append("benchmark")
    return derived or ["method"]


def evidence_for(quote: str | None, name: str, text: str, notes: Counter[str]) -> str:
    """The baseline's quote, else the name; widened to whole words of the abstract when
    shorter than the schema's minimum, quoted when it is not in the abstract at all."""
    candidate = _clean(quote, MAX_EVIDENCE_CHARS)
    if candidate is None:
        candidate = name[:MAX_EVIDENCE_CHARS]
    if len(candidate) >= MIN_EVIDENCE_CHARS:
        return candidate
    start = text.find(candidate)
    if start < 0:
        notes["short evidence not in the abstract"] += 1
        return f'"{candidate}"'
    end = start + len(candidate)
    # Grow to whole words, then add the next words (or, at the end, the previous ones).
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    while end - start < MIN_EVIDENCE_CHARS and end < len(text):
        end += 1
        while end < len(text) and not text[end].isspace():
            end += 1
    while end - start < MIN_EVIDENCE_CHARS and start > 0:
        start -= 1
        while start > 0 and not text[start - 1].isspace():
            start -= 1
    if end - start < MIN_EVIDENCE_CHARS:
        notes["short evidence not in the abstract"] += 1
        return f'"{candidate}"'
    notes["short evidence widened to whole words"] += 1
    return text[start:end]


def _clipped(items: list[Any], cap: int, what: str, notes: Counter[str]) -> list[Any]:
    if len(items) > cap:
        notes[f"{what} cut to {cap}"] += len(items) - cap
    return items[:cap]


Item = TypeVar("Item", NamedDraft, BenchmarkDraft)


def _named(items: list[Item], dropped: str, notes: Counter[str],
           shortest: int = 1) -> list[tuple[str, Item]]:
    """(clean name, item) for each item whose name is usable; the others counted as
    ``dropped`` in ``notes``."""
    kept: list[tuple[str, Item]] = []
    for item in items:
        name = _clean(item.name, NAME_CHARS)
        if name is None or len(name) < shortest:
            notes[dropped] += 1
            continue
        kept.append((name, item))
    return kept


def to_extraction(draft: Draft, text: str, notes: Counter[str]) -> PaperExtraction:
    """The draft in the stored shape, validated without grounding (see module docstring)."""
    tasks = [Task(name=name, evidence=evidence_for(item.evidence, name, text, notes))
             for name, item in _named(draft.tasks, "task without a usable name dropped",
                                      notes, shortest=2)]
    methods = [Method(name=name, evidence=evidence_for(item.evidence, name, text, notes))
               for name, item in _named(draft.methods, "method without a name dropped", notes)]
    benchmarks = [Benchmark(name=name, kind="other", introduced=bench.introduced,
                            evidence=evidence_for(bench.evidence, name, text, notes))
                  for name, bench in _named(draft.benchmarks,
                                            "benchmark without a name dropped", notes)]
    gains = []
    for gain in draft.gains:
        metric = _clean(gain.metric, NAME_CHARS)
        if metric is None:
            metric = _clean(gain.evidence, NAME_CHARS)
            if metric is None:
                notes["gain without metric or quote dropped"] += 1
                continue
            notes["gain metric taken from its quote"] += 1
        value = gain.value if gain.value is not None and math.isfinite(gain.value) else None
        baseline = _clean(gain.baseline, DETAIL_CHARS)
        gains.append(ClaimedGain(
            metric=metric, value=value, unit=unit_for(gain.unit, notes),
            kind="improvement" if baseline else "score", baseline=baseline,
            dataset=_clean(gain.dataset, DETAIL_CHARS),
            evidence=evidence_for(gain.evidence, metric, text, notes),
        ))
    methods = _clipped(methods, MAX_METHODS, "methods", notes)
    benchmarks = _clipped(benchmarks, MAX_BENCHMARKS, "benchmarks", notes)
    return PaperExtraction(
        contribution_types=contribution_types_for(draft.contribution_types, methods,
                                                  benchmarks, notes),
        tasks=_clipped(tasks, MAX_TASKS, "tasks", notes),
        methods=methods,
        benchmarks=benchmarks,
        claimed_gains=_clipped(gains, MAX_GAINS, "gains", notes),
    )


# -- the extractor the Runner drives -------------------------------------------------------


def prompt_for(baseline: str, instruction: str, material: Iterable[str]) -> Prompt:
    """A Prompt carrying the baseline's instruction, versioned by a hash of everything that
    shapes its answers, so its cache keys never collide with papersift's own."""
    digest = hashlib.sha256("\n\x00\n".join([instruction, *material]).encode("utf-8"))
    return Prompt(name=f"baseline-{baseline}", system=instruction,
                  user_template="{{abstract}}", examples=(),
                  version=f"baseline:{baseline}/sha256:{digest.hexdigest()}")


def baseline_endpoint(base_url: str, model: str, *, timeout_s: float = 600.0) -> Endpoint:
    """The endpoint both baselines use: the same settings papersift uses for a local
    server (temperature 0, seed 0, 1,536 output tokens, a schema sent as the grammar)."""
    return Endpoint(base_url=base_url, model=model, mode="json", constrain_json=True,
                    timeout_s=timeout_s, kind="compatible")


class BaselineExtractor(Extractor):
    """An Extractor the Runner drives like papersift's own, but whose answer comes from a
    reference approach. Subclasses implement :meth:`answer`; this class logs the HTTP
    calls, times each paper and turns the draft into the stored shape."""

    baseline = "baseline"

    def __init__(
        self,
        endpoint: Endpoint,
        prompt: Prompt,
        *,
        max_reasks: int,
        transport: httpx2.BaseTransport | None = None,
        policy: RetryPolicy = RetryPolicy(),
    ) -> None:
        super().__init__(endpoint, prompt, max_reasks=max_reasks, transport=transport,
                         policy=policy)
        self.secrets = (endpoint.api_key,) if endpoint.api_key else ()
        self.notes: Counter[str] = Counter()  # coercions applied, by kind
        self.timings: list[tuple[str, float]] = []  # (paper_id, seconds), in finishing order
        self._lock = threading.Lock()
        self._sdk: openai.OpenAI | None = None
        self._instructor: instructor.Instructor | None = None

    @property
    def raw_client(self) -> openai.OpenAI:
        """The SDK client a reference approach calls, over papersift's retrying client."""
        if self._sdk is None:
            endpoint = self.endpoint
            self._sdk = openai.OpenAI(base_url=endpoint.base_url,
                                      api_key=endpoint.api_key or "not-needed",
                                      max_retries=0, timeout=endpoint.timeout_s,
                                      http_client=self.http)
        return self._sdk

    @property
    def client(self) -> instructor.Instructor:
        """instructor around raw_client (the naive baseline's road), marking each answer it
        rejects in the call log."""
        if self._instructor is None:
            self._instructor = instructor.from_openai(
                self.raw_client, mode=MODES[self.endpoint.mode])
            self._instructor.on("parse:error", _mark_invalid)
        return self._instructor

    def answer(self, text: str, log: CallLog) -> Draft | Failure:
        """The baseline's answer for one abstract, or why there is none."""
        raise NotImplementedError

    def extract(self, paper_id: str, text: str, title: str | None = None) -> Outcome:
        """Ask the baseline (the abstract alone: a baseline is sent no title); never raises
        for model or network trouble."""
        outcome = Outcome(paper_id=paper_id, cache_key=self.key_for(text, title))
        started = time.perf_counter()
        notes: Counter[str] = Counter()
        with call_log(self.secrets) as log:
            result = self.answer(text, log)
            if isinstance(result, Failure):
                outcome.failure = result
            else:
                try:
                    outcome.extraction = to_extraction(result, text, notes)
                except ValidationError as error:  # a coercion this module lacks
                    outcome.failure = Failure("validation", "unstorable", str(error)[:4000])
            outcome.calls = list(log.records)
            outcome.asks = log.asks
            outcome.prompt_tokens = log.prompt_tokens
            outcome.completion_tokens = log.completion_tokens
        with self._lock:
            self.notes.update(notes)
            self.timings.append((paper_id, time.perf_counter() - started))
        return outcome


    async def extract_async(self, paper_id: str, text: str,
                            title: str | None = None) -> Outcome:
        """The runner's async road: the baseline's own sync call, in a worker thread."""
        return await asyncio.to_thread(self.extract, paper_id, text, title)


def _mark_invalid(error: Exception, *_args: Any, **_kwargs: Any) -> None:
    log = current_log()
    if log is not None:
        log.mark_last_invalid(error)


def request_failure(error: openai.APIError, log: CallLog) -> Failure:
    """A failure row for an endpoint error (the key is redacted from its text)."""
    return Failure("request", failure_reason(error), log.redact(str(error))[:4000])


def schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))
