"""Baseline 2, ``langextract``: google's langextract with its OpenAI provider and few-shot
examples, pointed at the same OpenAI-compatible server.

Needs the optional ``[baselines]`` extra (``pip install -e '.[baselines]'``).

How it is set up, and why:

- The provider is langextract's own ``OpenAILanguageModel``; its SDK client is replaced by
  papersift's (same base URL), so every HTTP call's latency and tokens are logged into the
  calls table like papersift's own. One worker, so the calls stay in the calling thread.
- llama-cpp-python's server answers OpenAI's ``json_schema`` response format with HTTP 500,
  so langextract's own schema constraint (built from the examples) is sent the way
  llama.cpp accepts it: ``{"type": "json_object", "schema": ...}``, which it turns into a
  grammar. Raw JSON, no code fences.
- ``max_char_buffer`` (default 4,000 characters) keeps each abstract in one chunk, one
  request: the bundled abstracts are at most 2,209 characters.
- A reply that does not parse is a failure row (``suppress_parse_errors`` off), not an
  empty extraction.
- The two examples are synthetic (written for this file, not from the corpus) and are
  checked against their own text with langextract's prompt validation, strictly.

Each extraction's ``extraction_text`` (a span langextract asks to copy from the text)
becomes the stored evidence; langextract extracts no contribution types, so they are
derived by the rule in bench/baseline_common.py.
"""

from __future__ import annotations

import dataclasses
import json
from importlib.metadata import version
from typing import Any

import httpx2
import openai
from langextract import prompt_validation as pv
from langextract.core import data as lx_data
from langextract.core.exceptions import InferenceRuntimeError, LangExtractError
from langextract.extraction import extract as lx_extract
from langextract.providers.openai import OpenAILanguageModel
from langextract.providers.schemas.openai import OpenAISchema
from langextract.resolver import ResolverParsingError

from bench.baseline_common import (
    BaselineExtractor,
    BenchmarkDraft,
    Draft,
    GainDraft,
    NamedDraft,
    baseline_endpoint,
    number_from,
    prompt_for,
    request_failure,
    schema_text,
)
from papersift.extract.access.extractor import Failure
from papersift.extract.access.llm import CallLog, Endpoint, RetryPolicy

NAME = "langextract"
DEFAULT_MAX_CHAR_BUFFER = 4000

DESCRIPTION = (
    "Extract from a research-paper abstract, in order of appearance: the research tasks "
    "or problems it addresses (task); the methods, models or systems that the paper itself "
    "proposes (method); the benchmarks, datasets or environments it uses or introduces "
    "(benchmark, with attribute introduced: yes if this paper creates it, else no); and "
    "every quantitative result it claims (gain, with attributes metric, value as written, "
    "unit: one of %, pp, x, points, absolute, other; baseline: what it is compared "
    "against; dataset: where it was measured). Use the exact text of the abstract for each "
    "extraction. Do not paraphrase and do not overlap extractions."
)


def _extraction(cls: str, text: str, **attributes: str) -> lx_data.Extraction:
    return lx_data.Extraction(extraction_class=cls, extraction_text=text,
                              attributes=dict(attributes) or None)


EXAMPLES = [
    lx_data.ExampleData(
        text=(
            "We present GraphMender, a self-supervised method for repairing noisy edges in "
            "citation graphs. We evaluate it on Cora and on CiteNoise, a benchmark we "
            "release. GraphMender raises node classification accuracy from 71.2% to 78.9% "
            "on CiteNoise and runs 3x faster than the strongest baseline, GCN-Jaccard. It "
            "also improves link prediction AUC by 4.1 points."
        ),
        extractions=[
            _extraction("method", "GraphMender"),
            _extraction("task", "repairing noisy edges in citation graphs"),
            _extraction("benchmark", "Cora", introduced="no"),
            _extraction("benchmark", "CiteNoise", introduced="yes"),
            _extraction("gain", "raises node classification accuracy from 71.2% to 78.9% "
                        "on CiteNoise", metric="node classification accuracy", value="78.9",
                        unit="%", dataset="CiteNoise"),
            _extraction("gain", "runs 3x faster than the strongest baseline, GCN-Jaccard",
                        metric="speed", value="3", unit="x", baseline="GCN-Jaccard"),
            _extraction("gain", "improves link prediction AUC by 4.1 points",
                        metric="link prediction AUC", value="4.1", unit="points"),
        ],
    ),
    lx_data.ExampleData(
        text=(
            "Why do sparse mixture-of-experts models forget? We study catastrophic "
            "forgetting in continual instruction tuning and prove that router drift bounds "
            "the loss on earlier tasks. Experiments on TRACE and SuperNI confirm the bound, "
            "and freezing the router reduces forgetting by 35% relative to full fine-tuning."
        ),
        extractions=[
            _extraction("task", "catastrophic forgetting in continual instruction tuning"),
            _extraction("benchmark", "TRACE", introduced="no"),
            _extraction("benchmark", "SuperNI", introduced="no"),
            _extraction("gain", "freezing the router reduces forgetting by 35% relative to "
                        "full fine-tuning", metric="forgetting", value="35", unit="%",
                        baseline="full fine-tuning"),
        ],
    ),
]


def validate_examples() -> None:
    """Raise unless every example extraction is found exactly in its own example text."""
    report = pv.validate_prompt_alignment(EXAMPLES)
    pv.handle_alignment_report(report, pv.PromptValidationLevel.ERROR, strict_non_exact=True)


def response_schema() -> dict[str, Any]:
    """langextract's schema for these examples, as a plain JSON schema."""
    return dict(OpenAISchema.from_examples(EXAMPLES).schema_dict)


def _attribute(extraction: lx_data.Extraction, name: str) -> str | None:
    value = (extraction.attributes or {}).get(name)
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value)
    return None if value is None else str(value)


def draft_from(extractions: list[lx_data.Extraction]) -> Draft:
    """langextract's extractions as a draft: each one's text is its evidence; classes other
    than task/method/benchmark/gain are ignored."""
    draft = Draft(contribution_types=None)
    for item in extractions:
        quote = item.extraction_text
        cls = item.extraction_class.strip().lower()
        if cls == "task":
            draft.tasks.append(NamedDraft(quote, quote))
        elif cls == "method":
            draft.methods.append(NamedDraft(quote, quote))
        elif cls == "benchmark":
            introduced = (_attribute(item, "introduced") or "").strip().lower()
            draft.benchmarks.append(BenchmarkDraft(quote, quote,
                                                   introduced=introduced in {"yes", "true"}))
        elif cls == "gain":
            draft.gains.append(GainDraft(
                metric=_attribute(item, "metric"),
                value=number_from(_attribute(item, "value")),
                unit=_attribute(item, "unit"),
                baseline=_attribute(item, "baseline"),
                dataset=_attribute(item, "dataset"),
                evidence=quote,
            ))
    return draft


def _examples_text() -> str:
    return json.dumps([dataclasses.asdict(e) for e in EXAMPLES], sort_keys=True, default=str)


class LangExtractExtractor(BaselineExtractor):
    """Baseline 2 (see the module docstring)."""

    baseline = NAME

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        max_char_buffer: int = DEFAULT_MAX_CHAR_BUFFER,
        transport: httpx2.BaseTransport | None = None,
        policy: RetryPolicy = RetryPolicy(),
    ) -> None:
        validate_examples()
        self.max_char_buffer = max_char_buffer
        schema = response_schema()
        prompt = prompt_for(NAME, DESCRIPTION, [
            _examples_text(), schema_text(schema), f"langextract=={version('langextract')}",
            f"max_char_buffer={max_char_buffer}",
        ])
        super().__init__(endpoint, prompt, max_reasks=0, transport=transport, policy=policy)
        self.model = OpenAILanguageModel(
            model_id=endpoint.model,
            api_key=endpoint.api_key or "not-needed",
            base_url=endpoint.base_url,
            temperature=endpoint.temperature,
            max_workers=1,
            response_format={"type": "json_object", "schema": schema},
            max_output_tokens=endpoint.max_tokens,
            seed=endpoint.seed,
        )
        # Route its requests through papersift's logged, retrying client.
        self.model._client.close()
        self.model._client = self.raw_client

    def answer(self, text: str, log: CallLog) -> Draft | Failure:
        try:
            result = lx_extract(
                text,
                prompt_description=DESCRIPTION,
                examples=EXAMPLES,
                model=self.model,
                fence_output=False,
                use_schema_constraints=False,  # the schema is already on the model
                max_char_buffer=self.max_char_buffer,
                batch_length=1,
                max_workers=1,
                resolver_params={"suppress_parse_errors": False},
                prompt_validation_level=pv.PromptValidationLevel.OFF,  # checked at start
                show_progress=False,
            )
        except InferenceRuntimeError as error:
            if isinstance(error.original, openai.APIError):
                return request_failure(error.original, log)
            return Failure("request", "langextract_error", log.redact(str(error))[:4000])
        except ResolverParsingError as error:
            return Failure("validation", "invalid_json", log.redact(str(error))[:4000])
        except LangExtractError as error:
            return Failure("validation", "langextract_error", log.redact(str(error))[:4000])
        documents = result if isinstance(result, list) else [result]
        extractions = [e for doc in documents for e in doc.extractions or []]
        return draft_from(extractions)


def langextract_extractor(
    base_url: str, model: str, *, timeout_s: float = 600.0,
    max_char_buffer: int = DEFAULT_MAX_CHAR_BUFFER,
    transport: httpx2.BaseTransport | None = None,
) -> LangExtractExtractor:
    """Baseline 2 against an OpenAI-compatible server."""
    return LangExtractExtractor(baseline_endpoint(base_url, model, timeout_s=timeout_s),
                                max_char_buffer=max_char_buffer, transport=transport)
