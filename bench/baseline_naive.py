"""Baseline 1, ``naive-instructor``: what a typical user writes in ten minutes.

One instructor call in JSON mode with a plain pydantic schema (no field descriptions, no
validators, no evidence quotes) and a one-paragraph instruction. The schema is also sent
as ``response_format.schema``, which llama.cpp turns into a grammar, as papersift does for
its own schema; temperature 0; ``max_retries=1`` (instructor's default: one re-ask when the
answer does not parse). Its HTTP goes through papersift's client, so every call's latency
and tokens land in the calls table like papersift's own.
"""

from __future__ import annotations

import json

import httpx2
import openai
from instructor.core import IncompleteOutputException, InstructorRetryException
from pydantic import BaseModel, ValidationError

from bench.baseline_common import (
    BaselineExtractor,
    BenchmarkDraft,
    Draft,
    GainDraft,
    NamedDraft,
    baseline_endpoint,
    prompt_for,
    request_failure,
    schema_text,
)
from papersift.extract.access.extractor import Failure
from papersift.extract.access.llm import CallLog, Endpoint, RetryPolicy

NAME = "naive-instructor"
MAX_RETRIES = 1

INSTRUCTION = (
    "Extract structured information from the research-paper abstract given by the user "
    "and answer in JSON. contribution_types: what kind of contribution the paper makes, "
    "one or more of method, benchmark, dataset, theory, empirical_analysis, position, "
    "system. tasks: the research tasks or problems it addresses. methods: the names of "
    "the methods or models the paper proposes. benchmarks: the benchmarks or datasets it "
    "uses, with introduced set to true if the paper creates them. claimed_gains: the "
    "quantitative results it reports, each with the metric, the numeric value, the unit "
    "(%, pp, x, points, absolute or other), what it is compared against (baseline) and "
    "the dataset, using null when the abstract does not say."
)


class NaiveBenchmark(BaseModel):
    name: str
    introduced: bool


class NaiveGain(BaseModel):
    metric: str
    value: float | None
    unit: str | None
    baseline: str | None
    dataset: str | None


class NaivePaper(BaseModel):
    contribution_types: list[str]
    tasks: list[str]
    methods: list[str]
    benchmarks: list[NaiveBenchmark]
    claimed_gains: list[NaiveGain]


def draft_from(answer: NaivePaper) -> Draft:
    """The naive answer as a draft; it has no quotes, so each item's evidence is its name."""
    return Draft(
        contribution_types=list(answer.contribution_types),
        tasks=[NamedDraft(name) for name in answer.tasks],
        methods=[NamedDraft(name) for name in answer.methods],
        benchmarks=[BenchmarkDraft(b.name, introduced=b.introduced) for b in answer.benchmarks],
        gains=[GainDraft(g.metric, g.value, g.unit, g.baseline, g.dataset)
               for g in answer.claimed_gains],
    )


class NaiveInstructorExtractor(BaselineExtractor):
    """Baseline 1 (see the module docstring)."""

    baseline = NAME

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        transport: httpx2.BaseTransport | None = None,
        policy: RetryPolicy = RetryPolicy(),
    ) -> None:
        self.response_schema = NaivePaper.model_json_schema()
        prompt = prompt_for(NAME, INSTRUCTION,
                            [schema_text(self.response_schema), f"max_retries={MAX_RETRIES}"])
        super().__init__(endpoint, prompt, max_reasks=MAX_RETRIES, transport=transport,
                         policy=policy)

    def answer(self, text: str, log: CallLog) -> Draft | Failure:
        endpoint = self.endpoint
        try:
            answer = self.client.chat.completions.create(
                response_model=NaivePaper,
                messages=self.prompt.messages(text),  # type: ignore[arg-type]
                max_retries=MAX_RETRIES,
                model=endpoint.model,
                temperature=endpoint.temperature,
                max_tokens=endpoint.max_tokens,
                seed=endpoint.seed,
                extra_body={"response_format": {"type": "json_object",
                                                 "schema": self.response_schema}},
            )
        except IncompleteOutputException:
            return Failure("request", "length", "the answer hit max_tokens before the JSON ended")
        except InstructorRetryException as error:
            cause = error.__cause__
            if isinstance(cause, IncompleteOutputException):
                return Failure("request", "length", "the answer hit max_tokens")
            if isinstance(cause, openai.APIError):
                return request_failure(cause, log)
            reason = "schema_violation"
            if isinstance(cause, json.JSONDecodeError) or (
                isinstance(cause, ValidationError)
                and any(e.get("type") == "json_invalid" for e in cause.errors())
            ):
                reason = "invalid_json"
            detail = f"after {error.n_attempts} attempt(s): {cause or error}"
            return Failure("validation", reason, log.redact(detail)[:4000])
        except openai.APIError as error:
            return request_failure(error, log)
        return draft_from(answer)


def naive_extractor(base_url: str, model: str, *, timeout_s: float = 600.0,
                    transport: httpx2.BaseTransport | None = None) -> NaiveInstructorExtractor:
    """Baseline 1 against an OpenAI-compatible server."""
    return NaiveInstructorExtractor(baseline_endpoint(base_url, model, timeout_s=timeout_s),
                                    transport=transport)
