"""Pydantic models of what papersift extracts. Imports nothing else of the project's."""

from schemas.paper import (
    Benchmark,
    ClaimedGain,
    Grounded,
    Method,
    PaperExtraction,
    Task,
    json_schema,
    schema_version,
)

__all__ = [
    "Benchmark",
    "ClaimedGain",
    "Grounded",
    "Method",
    "PaperExtraction",
    "Task",
    "json_schema",
    "schema_version",
]
