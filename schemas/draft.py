"""Schema v2, model side: the short answer the model writes for one abstract.

The model names things; it does not quote. Names, numbers and task phrases are looked up
in the abstract by code (extract.assemble), which picks each item's evidence sentence and
its character offsets, parses numbers and units, drops what the abstract does not contain,
and merges repeats. Short keys and no quotes keep the answer to a few dozen tokens, which is
most of the time a small local model spends per abstract.

This module imports nothing else of the project's (see the import contracts).
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from papersift.schemas.paper import ContributionType

MAX_NAME_CHARS = 120


class DraftBenchmark(BaseModel):
    """A benchmark, dataset or environment named in the abstract."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The name exactly as the abstract writes it.", min_length=1,
                      max_length=MAX_NAME_CHARS)
    new: bool = Field(description="true only if this paper creates it.")


class DraftGain(BaseModel):
    """One number the abstract reports as a result."""

    model_config = ConfigDict(extra="forbid")

    value: str = Field(
        description="The number exactly as the abstract writes it, without its unit: '12.5' "
        "for '12.5%', '3' for '3x'.",
        min_length=1,
        max_length=40,
    )
    metric: str = Field(description="What the number measures, in a few words.", min_length=1,
                        max_length=MAX_NAME_CHARS)
    vs: str | None = Field(default=None, description="The baseline it is compared with.",
                           max_length=MAX_NAME_CHARS)
    on: str | None = Field(default=None, description="The benchmark or dataset it is measured on.",
                           max_length=MAX_NAME_CHARS)


class PaperDraft(BaseModel):
    """What the model answers for one abstract; code grounds it into a PaperExtraction."""

    model_config = ConfigDict(extra="forbid", title="PaperDraft")

    tasks: list[str] = Field(description="The problem the paper tackles, in the abstract's words.",
                             min_length=1, max_length=2)
    methods: list[str] = Field(description="Names of methods this paper itself proposes.",
                               max_length=4)
    benchmarks: list[DraftBenchmark] = Field(description="Named benchmarks, datasets, "
                                             "environments.", max_length=8)
    gains: list[DraftGain] = Field(description="Numbers reported as results.", max_length=8)
    types: list[ContributionType] = Field(description="Kinds of contribution, main one first.",
                                          min_length=1, max_length=3)

    # Before the field's own checks, so that min_length counts what is kept: a draft that
    # passes validation must pass it again when read back from the cache.
    @field_validator("tasks", "methods", mode="before")
    @classmethod
    def no_blank_names(cls, values: Any) -> Any:
        if not isinstance(values, list):
            return values
        return [value.strip() if isinstance(value, str) else value for value in values
                if not (isinstance(value, str) and not value.strip())]

    @model_validator(mode="after")
    def valid_unicode(self) -> PaperDraft:
        """Refuse a lone UTF-16 surrogate anywhere (JSON can spell one, '\\ud800'): it
        is no text, and no database column can store it."""
        for text in _strings(self.model_dump()):
            if any("\ud800" <= ch <= "\udfff" for ch in text):
                raise ValueError("a string holds a lone UTF-16 surrogate; write plain text")
        return self


_EATEN = {"\t": "\\t", "\b": "\\b", "\f": "\\f", "\r": "\\r", "\n": "\\n"}
_EATEN_BEFORE_LETTER = re.compile(r"[\t\b\f\r\n](?=[A-Za-z])")


def with_latex_backslashes(draft: PaperDraft) -> PaperDraft:
    """The draft with LaTeX given back the backslash a JSON escape ate: a model that copies
    '\\texttt{dattri}' or '\\beta' into JSON unescaped writes '\\t' (a tab) or '\\b' (a
    backspace), so the name no longer matches the abstract. A control character before a
    letter is never meant in a name, a metric or a number. Not a validator, so a stored
    draft reads back as it was stored; a repair that would break a field's limit is not made."""
    dumped = draft.model_dump()
    repaired = _with_backslashes(dumped)
    if repaired == dumped:
        return draft
    try:
        return PaperDraft.model_validate(repaired)
    except ValueError:
        return draft


def _with_backslashes(value: Any) -> Any:
    if isinstance(value, str):
        repaired = _EATEN_BEFORE_LETTER.sub(lambda m: _EATEN[m.group(0)], value)
        return repaired if len(repaired) <= MAX_NAME_CHARS else value
    if isinstance(value, dict):
        return {key: _with_backslashes(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_backslashes(item) for item in value]
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


@functools.cache
def _base_schema() -> dict[str, Any]:
    return PaperDraft.model_json_schema()


def draft_json_schema(numbers: list[str] | None = None) -> dict[str, Any]:
    """The JSON schema the model's answer must follow (sent as a grammar to llama.cpp).

    With ``numbers`` (the numbers an abstract states, as written), a gain's value must be
    one of them, and an abstract without numbers gets no gains: a constrained decoder then
    cannot invent a number, and does not spend tokens on gains that are not there.
    """
    schema = copy.deepcopy(_base_schema())
    if numbers is None:
        return schema
    gains = schema["properties"]["gains"]
    if not numbers:
        gains["maxItems"] = 0
        return schema
    gains["maxItems"] = min(gains.get("maxItems", len(numbers)), len(numbers))
    value = schema["$defs"]["DraftGain"]["properties"]["value"]
    schema["$defs"]["DraftGain"]["properties"]["value"] = {
        "description": value["description"], "enum": list(numbers), "type": "string"}
    return schema
