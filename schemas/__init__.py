"""Pydantic models of what papersift extracts. Imports nothing else of the project's.

Two shapes: :class:`PaperDraft` is what the model writes (names and numbers, no quotes);
:class:`PaperExtraction` is what is stored, every item with evidence that code found.
"""

import functools
from typing import Any

from papersift.schemas.draft import DraftBenchmark, DraftGain, PaperDraft, draft_json_schema
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


@functools.cache
def schema_version() -> str:
    """Content hash over both shapes: a change to either changes every cache key (computed
    once: building the schemas takes milliseconds and every cache key needs it)."""
    both: dict[str, Any] = {"draft": draft_json_schema(), "stored": json_schema()}
    return content_hash(both)


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
    "draft_json_schema",
    "json_schema",
    "schema_version",
]
