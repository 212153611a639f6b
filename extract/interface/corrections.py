"""The library functions behind `papersift corrections` and `eval --gold-from-corrections`:
reviewers' corrections read from a warehouse, written out as a file (the corrections, a
gold file, or a few-shot pool for `--fewshot-pool`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from papersift.extract.domain.review.fewshot import ExampleResult, example_answer
from papersift.prompts.pool import pool_document
from papersift.warehouse.corrections import CorrectionError, export_corrections
from papersift.warehouse.custom import declared_fields
from papersift.warehouse.repository import open_repository
from papersift.warehouse.reviewed import gold_from_corrections, reviewed_extractions


def default_gold_path(db: Path) -> Path:
    """Where `eval --gold-from-corrections` writes the gold it scores against."""
    return db.parent / f"{db.name}.corrections-gold.json"


def write_gold(db: Path, out: Path | None = None) -> tuple[Path, int]:
    """Write the reviewed papers, as corrected, as a gold file; (its path, papers)."""
    with open_repository(db, read_only=True) as repo:
        gold = repo.run(gold_from_corrections)
    path = out or default_gold_path(db)
    path.write_text(json.dumps(gold, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path, len(gold["papers"])


def write_corrections(db: Path, out: Path | None, fmt: str) -> tuple[str, int]:
    """Every correction as CSV or JSON lines, into ``out`` (None: returned as text);
    (the text, how many corrections)."""
    with open_repository(db, read_only=True) as repo:
        text = repo.run(export_corrections, fmt)
    count = text.count("\n") - (1 if fmt == "csv" else 0)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    return text, count


@dataclass
class PoolReport:
    """What `corrections pool` wrote: the pool's version, its examples, and each reviewed
    paper left out or trimmed, with why."""

    path: Path
    version: str
    examples: int
    skipped: list[ExampleResult] = field(default_factory=list)
    trimmed: list[ExampleResult] = field(default_factory=list)


def write_pool(db: Path, out: Path) -> PoolReport:
    """Write the reviewed papers, corrections applied, as a few-shot pool: each paper's
    grounded answer in the shape of the prompt's own examples."""
    with open_repository(db, read_only=True) as repo:
        papers = repo.run(reviewed_extractions)
        fields = repo.run(declared_fields)
    if not papers:
        raise CorrectionError(f"{db}: no reviewed papers yet: review some in `papersift "
                              "serve` first")
    results = [example_answer(paper, fields) for paper in papers]
    texts = {str(paper["paper_id"]): str(paper["text"]) for paper in papers}
    examples = [{"abstract": texts[r.paper_id], "answer": r.answer}
                for r in results if r.answer is not None]
    if not examples:
        raise CorrectionError(f"{db}: none of the {len(papers)} reviewed papers makes a "
                              f"grounded example ({results[0].reason}, ...)")
    document = pool_document(examples, f"{len(examples)} reviewed papers of {db.name}, "
                             "corrections applied; every name and number is a slice of its "
                             "own abstract (papersift corrections pool).")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return PoolReport(path=out, version=document["version"], examples=len(examples),
                      skipped=[r for r in results if r.answer is None],
                      trimmed=[r for r in results if r.answer is not None and r.left_out])
