"""Pydantic models of what papersift extracts. Imports nothing else of the project's.

Two shapes: :class:`PaperDraft` is what the model writes (names and numbers, no quotes);
:class:`PaperExtraction` is what is stored, every item with evidence that code found.
The names below load on first use, so the field registry (``schemas.fields``) can be read
without loading pydantic (the command line declares options from it at start).
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from papersift.schemas.draft import (
        DraftBenchmark,
        DraftGain,
        PaperDraft,
        draft_json_schema,
    )
    from papersift.schemas.paper import (
        Benchmark,
        ClaimedGain,
        Grounded,
        Method,
        PaperExtraction,
        Task,
        content_hash,
        json_schema,
    )

SCHEMA_NAME = "paper_v2"
_HOMES = {**dict.fromkeys(("DraftBenchmark", "DraftGain", "PaperDraft", "draft_json_schema"),
                          "draft"),
          **dict.fromkeys(("Benchmark", "ClaimedGain", "Grounded", "Method", "PaperExtraction",
                           "Task", "content_hash", "json_schema"), "paper")}


@functools.cache
def schema_version() -> str:
    """Content hash over both shapes: a change to either changes every cache key (computed
    once: building the schemas takes milliseconds and every cache key needs it)."""
    from papersift.schemas.draft import draft_json_schema
    from papersift.schemas.paper import content_hash, json_schema

    both: dict[str, Any] = {"draft": draft_json_schema(), "stored": json_schema()}
    return content_hash(both)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "SCHEMA_NAME",
    "Benchmark",
    "ClaimedGain",
    "DraftBenchmark",
    "DraftGain",
    "Grounded",
    "Method",
    "PaperDraft",
    "PaperExtraction",
    "Task",
    "content_hash",
    "draft_json_schema",
    "json_schema",
    "schema_version",
]
