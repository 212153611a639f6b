"""Ingest into the warehouse: the rows of papers, their sources and input failures.

The runs layer's names are gathered in pipeline.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from papersift.extract.domain.reading.ingest import IngestProblem, IngestResult, Occurrence
from papersift.extract.runs.ingest_files import ingest
from papersift.warehouse import Warehouse
from papersift.warehouse.reads import count_papers
from papersift.warehouse.store import Batch


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass
class IngestReport:
    files: int
    occurrences: int
    papers: int
    new_papers: int
    problems: list[IngestProblem]


def _canonical_path(file: str) -> str:
    """One spelling per file (absolute, resolved), so the same occurrence read through a
    relative and an absolute path is stored once."""
    return str(Path(file).resolve())


def canonical_paths() -> Callable[[str], str]:
    """_canonical_path, resolving each file once (a file may hold 100,000 abstracts)."""
    resolved: dict[str, str] = {}

    def canonical(file: str) -> str:
        if file not in resolved:
            resolved[file] = _canonical_path(file)
        return resolved[file]

    return canonical


def _source_row(paper_id: str, occ: Occurrence, file: str, now: datetime) -> dict[str, Any]:
    return {"paper_id": paper_id, "file": file, "position": occ.position, "line": occ.line,
            "collection": occ.collection, "venue": occ.venue, "year": occ.year,
            "source_id": occ.source_id, "title": occ.title, "url": occ.url,
            "extra": occ.extra, "first_seen": now}


def ingest_batch(result: IngestResult, run_id: str | None) -> Batch:
    """Rows for papers, sources and input failures of one ingest (or one chunk of a
    streamed ingest: its repeats are new places of papers an earlier chunk returned)."""
    now = _now()
    batch = Batch()
    canonical = canonical_paths()
    for paper in result.papers:
        batch.add(
            "papers",
            {
                "paper_id": paper.paper_id,
                "text": paper.text,
                "text_sha256": "sha256:" + hashlib.sha256(paper.text.encode("utf-8")).hexdigest(),
                "chars": len(paper.text),
                "first_seen": now,
            },
        )
        for occ in paper.occurrences:
            batch.add("sources", _source_row(paper.paper_id, occ, canonical(occ.file), now))
    for repeat in result.repeats:
        occ = repeat.occurrence
        batch.add("sources", _source_row(repeat.paper_id, occ, canonical(occ.file), now))
    for problem in result.problems:
        if problem.reason == "too_long":
            continue  # the paper is stored; its failure is recorded when a run skips it
        batch.add(
            "failures",
            {
                "run_id": run_id,
                "paper_id": problem.paper_id,
                "file": canonical(problem.file),
                "position": problem.position,
                "stage": "ingest",
                "reason": problem.reason,
                "detail": problem.message,
                "created": now,
            },
        )
    return batch


def ingest_into(
    warehouse: Warehouse, inputs: Sequence[str | Path], *, max_chars: int, run_id: str | None = None
) -> tuple[IngestResult, IngestReport]:
    """Read the inputs and store their papers and provenance; bad inputs become failure rows."""
    result = ingest(inputs, max_chars=max_chars)
    before = warehouse.run(count_papers)
    warehouse.write(ingest_batch(result, run_id))
    after = warehouse.run(count_papers)
    report = IngestReport(
        files=len(result.files),
        occurrences=result.occurrences,
        papers=len(result.papers),
        new_papers=after - before,
        problems=list(result.problems),
    )
    return result, report
