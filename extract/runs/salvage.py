"""When a batch of rows cannot be written, write it paper by paper: one paper whose rows
the warehouse refuses (a value no check foresaw) becomes that paper's failure row, and
every other paper of the batch is stored as usual.

A batch's rows name their paper directly (``paper_id``), through their extraction
(``extraction_id``) or through their request (``cache_key``); rows that name none are
written first, together."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from papersift.warehouse.store import Batch

STORE_STAGE = "store"
Write = Callable[[Batch], None]


def by_paper(batch: Batch) -> tuple[Batch, dict[str, Batch]]:
    """(the rows of no paper, each paper's rows) of a batch."""
    of_extraction: dict[str, str] = {}
    of_key: dict[str, str] = {}
    for table in ("extractions", "calls"):
        for row in batch.rows.get(table, ()):
            paper = row.get("paper_id")
            if isinstance(paper, str):
                if row.get("extraction_id"):
                    of_extraction[row["extraction_id"]] = paper
                if row.get("cache_key"):
                    of_key[row["cache_key"]] = paper
    shared = Batch()
    papers: dict[str, Batch] = {}
    for table, rows in batch.rows.items():
        for row in rows:
            paper = _paper_of(row, of_extraction, of_key)
            target = shared if paper is None else papers.setdefault(paper, Batch())
            target.rows.setdefault(table, []).append(row)
    return shared, papers


def _paper_of(row: dict[str, Any], of_extraction: dict[str, str],
              of_key: dict[str, str]) -> str | None:
    paper = row.get("paper_id")
    if isinstance(paper, str):
        return paper
    return of_extraction.get(row.get("extraction_id") or "") or \
        of_key.get(row.get("cache_key") or "")


def unstorable(rows: Batch, paper_id: str, error: Exception) -> tuple[Batch, dict[str, Any]]:
    """The rows that stand for a paper whose own rows could not be written: its failure
    and its run_papers row (its calls kept, their numbers left out), and the failure."""
    now = datetime.now(UTC).replace(tzinfo=None)
    message = " ".join(str(error).split())[:500]
    run_id = next((row.get("run_id") for row in rows.rows.get("run_papers", ())), None)
    source = next(iter(rows.rows.get("failures", ())), {})
    failure = {"run_id": run_id, "paper_id": paper_id, "file": source.get("file"),
               "position": source.get("position"), "stage": STORE_STAGE,
               "reason": f"unstorable: {type(error).__name__}", "detail": message,
               "created": now}
    stand_in = Batch()
    stand_in.add("failures", failure)
    stand_in.add("run_papers", {"run_id": run_id, "paper_id": paper_id, "outcome": "failed",
                                "extraction_id": None, "recorded": now})
    calls = [{**call, "prompt_tokens": None, "completion_tokens": None,
              "finish_reason": None, "latency_ms": None}
             for call in rows.rows.get("calls", ())]
    if calls:
        stand_in.add("calls", *calls)
    return stand_in, failure


def write_paper_by_paper(rows: Batch, write: Write, error: Exception
                         ) -> list[dict[str, Any]]:
    """Write ``rows`` (whose write as one batch raised ``error``) one paper at a time;
    return the failure rows written for the papers that could not be stored. Raises the
    batch's error when even a paper's failure cannot be written (a full disk, a lost
    file): then nothing would be stored paper by paper either."""
    shared, papers = by_paper(rows)
    if shared.rows:
        write(shared)
    failed = []
    for paper_id, paper in papers.items():
        try:
            write(paper)
        except Exception as paper_error:
            stand_in, failure = unstorable(paper, paper_id, paper_error)
            try:
                write(stand_in)
            except Exception:
                stand_in.rows.pop("calls", None)
                try:
                    write(stand_in)
                except Exception:
                    raise error from paper_error
            if not paper.rows.get("failures"):
                failed.append(failure)
    return failed
