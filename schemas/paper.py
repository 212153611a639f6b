"""Schema v2, stored side: the fields papersift keeps for one abstract.

Field descriptions are written for the model: instructor sends them inside the JSON
schema. The items are built and grounded by code (extract.domain.assembly.assemble), which finds
each quote in the abstract itself; these models only hold and check their shape.

This module imports nothing else of the project's (see the import contracts).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

ContributionType = Literal[
    "method", "benchmark", "dataset", "theory", "empirical_analysis", "position", "system"
]
BenchmarkKind = Literal["benchmark", "dataset", "environment", "task_suite", "other"]
GainKind = Literal["improvement", "score", "efficiency", "comparison"]
GainUnit = Literal["%", "pp", "x", "points", "absolute", "other"]

MAX_EVIDENCE_CHARS = 400

EVIDENCE_DESCRIPTION = (
    "A short quote copied word for word from the abstract (one clause or sentence) that "
    "supports this item. Do not paraphrase, do not add words."
)


def _evidence_field() -> Any:
    return Field(description=EVIDENCE_DESCRIPTION, min_length=3, max_length=MAX_EVIDENCE_CHARS)


def _name_field(description: str, min_length: int = 1) -> Any:
    """A short name as the abstract writes it (at most 120 characters)."""
    return Field(description=description, min_length=min_length, max_length=120)


class Grounded(BaseModel):
    """An item backed by a verbatim quote from the abstract (declared last in each item, so
    the model names the item first and then quotes the words that support it)."""

    model_config = ConfigDict(extra="forbid")


class Task(Grounded):
    """A research task or problem the paper addresses."""

    name: str = _name_field(
        "The task in a few words, e.g. 'long-context question answering'.", min_length=2)
    evidence: str = _evidence_field()


class Method(Grounded):
    """A named method, model, algorithm or system that the paper itself proposes."""

    name: str = _name_field(
        "The name the paper gives its own method, e.g. 'NCTS'. Only methods this "
        "paper introduces, not baselines or prior work.")
    expansion: str | None = Field(
        default=None,
        description="The spelled-out form if the name is an acronym, e.g. 'Nested Causal "
        "Thompson Sampling'; null otherwise.",
        max_length=200,
    )
    aliases: list[str] = Field(
        default_factory=list,
        description="Other names the abstract uses for the same method.",
        max_length=4,
    )
    evidence: str = _evidence_field()


class Benchmark(Grounded):
    """A benchmark, dataset or environment the paper evaluates on or introduces."""

    name: str = _name_field(
        "The benchmark or dataset name as written, e.g. 'ImageNet', 'MMLU'.")
    kind: BenchmarkKind = Field(
        description="benchmark: an evaluation suite; dataset: a data collection; environment: "
        "a simulator or interactive setting; task_suite: a family of tasks; other."
    )
    introduced: bool = Field(
        description="true only if this paper creates and releases it; false if it already existed."
    )
    evidence: str = _evidence_field()


class ClaimedGain(Grounded):
    """A quantitative result the abstract claims."""

    metric: str = _name_field(
        "What is measured, e.g. 'accuracy', 'speedup', 'FID', 'runtime'.")
    value: float | None = Field(
        description="The number exactly as written in the evidence (12.5 for '12.5%', 3 for "
        "'3x'); null if the claim has no number."
    )
    unit: GainUnit | None = Field(
        default=None,
        description="%: percent; pp: percentage points; x: a multiplier; points: score points; "
        "absolute: a raw quantity; other; null if there is no number.",
    )
    kind: GainKind = Field(
        description="improvement: better than a baseline by some amount; score: an absolute "
        "result; efficiency: faster, cheaper or smaller; comparison: matches or rivals another "
        "system."
    )
    baseline: str | None = Field(
        default=None,
        description="What it is compared against, if the abstract says; null otherwise.",
        max_length=200,
    )
    dataset: str | None = Field(
        default=None,
        description="Where it was measured, if the abstract says; null otherwise.",
        max_length=200,
    )
    evidence: str = _evidence_field()


class PaperExtraction(BaseModel):
    """Everything papersift extracts from one abstract, each item with its evidence."""

    model_config = ConfigDict(extra="forbid", title="PaperExtraction")

    contribution_types: list[ContributionType] = Field(
        description="What kind of contribution the paper makes; one or more of the allowed "
        "values, most important first.",
        min_length=1,
        max_length=4,
    )
    tasks: list[Task] = Field(
        description="The tasks or problems the paper tackles (usually one or two).",
        max_length=4,
    )
    methods: list[Method] = Field(
        description="Named methods the paper proposes. Empty if it names none.",
        max_length=4,
    )
    benchmarks: list[Benchmark] = Field(
        description="Named benchmarks, datasets or environments used or introduced. Empty if "
        "none are named.",
        max_length=8,
    )
    claimed_gains: list[ClaimedGain] = Field(
        description="Quantitative claims, one per number. Empty if the abstract gives none.",
        max_length=8,
    )

    @field_validator("contribution_types")
    @classmethod
    def no_repeats(cls, values: list[str]) -> list[str]:
        return list(dict.fromkeys(values))


def json_schema() -> dict[str, Any]:
    """The JSON schema of the stored extraction (what code builds from the model's draft)."""
    return PaperExtraction.model_json_schema()


def content_hash(document: dict[str, Any]) -> str:
    """sha256 of a JSON document in canonical form, with an algorithm prefix."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
