"""Grounding and row building off the event loop (extract/runs/rowbuild.py): a run with row
workers stores exactly what a run without them stores, and a worker that dies or fails
loses nothing and hides nothing."""

from __future__ import annotations

import dataclasses
import functools
import pickle
from pathlib import Path
from typing import Any

import pytest
from instructor import response_schema

from bench.rows_digest import digests
from papersift.extract.access.extractor import Outcome, plain_draft
from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.pipeline import Job, outcome_batch
from papersift.extract.runs.rowbuild import RowBuilder, build_all, collect_workers, default_workers
from papersift.schemas import PaperDraft
from papersift.testing.mock import FakeModel
from papersift.warehouse.store import Batch
from tests.conftest import CORPUS

ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")
ABSTRACT = ("We propose FooNet, a graph method for protein folding. On the CASP15 benchmark "
            "it improves GDT-TS by 4.2% over AlphaFold.")
DRAFT = {"tasks": ["protein folding"], "methods": ["FooNet"],
         "benchmarks": [{"name": "CASP15", "new": False}], "types": ["method"],
         "gains": [{"metric": "GDT-TS", "value": "4.2", "vs": "AlphaFold"}]}


def test_a_plain_draft_pickles_and_dumps_as_the_answer() -> None:
    answer = response_schema(PaperDraft).model_validate(DRAFT)  # instructor's wrapped class
    plain = plain_draft(answer)
    assert type(plain) is PaperDraft
    assert pickle.loads(pickle.dumps(plain)).model_dump() == answer.model_dump()
    assert plain.model_dump(exclude_none=True) == answer.model_dump(exclude_none=True)


def _corpus_digest(db: Path, workers: int) -> dict[str, tuple[int, str]]:
    model = FakeModel()
    _, summary = run_inputs([str(CORPUS)], RunSettings(db=db, concurrency=4,
                                                       row_workers=workers),
                            transport=model.transport(), endpoint=ENDPOINT)
    assert summary.n_extracted == 63
    return digests(db)


def test_a_run_with_row_workers_stores_exactly_the_rows_of_one_without(tmp_path: Path) -> None:
    inline = _corpus_digest(tmp_path / "inline.duckdb", workers=0)
    offloaded = _corpus_digest(tmp_path / "workers.duckdb", workers=2)
    assert offloaded == inline
    assert inline["extraction_tasks"][0] == 63


def _outcomes(count: int) -> list[tuple[Outcome, Job]]:
    items = []
    for index in range(count):
        text = f"{ABSTRACT} Variant {index}."
        outcome = Outcome(paper_id=f"p{index}", cache_key=f"k{index}",
                          draft=PaperDraft.model_validate(DRAFT))
        items.append((outcome, Job(f"p{index}", text)))
    return items


BUILD = functools.partial(outcome_batch, run_id="run_x", provenance={"model": "fake"},
                          model="fake")


def _comparable(rows: dict[str, list[dict[str, Any]]]) -> dict[str, list[Any]]:
    return {table: [{k: v for k, v in row.items() if k not in ("created", "recorded")}
                    for row in found] for table, found in rows.items()}


def _one_worker_after_a_chunk(items: list[tuple[Outcome, Job]]) -> tuple[RowBuilder, Batch]:
    """A one-worker builder that has built the first 16 items, and those rows."""
    builder = RowBuilder(BUILD, workers=1)
    for outcome, job in items[:16]:
        builder.add(outcome, job)
    return builder, builder.take().rows()  # answered by the worker


def _inline(items: list[tuple[Outcome, Job]]) -> Batch:
    return build_all(BUILD, [(dataclasses.replace(o), j) for o, j in items])


def test_a_worker_that_dies_loses_no_rows() -> None:
    items = _outcomes(40)
    expected = _inline(items)
    builder, first = _one_worker_after_a_chunk(items)
    try:
        builder._pool[0].process.kill()
        builder._pool[0].process.wait()
        for outcome, job in items[16:]:
            builder.add(outcome, job)
        pending = builder.take()
        assert pending.papers == 24
        rest = pending.rows()  # rebuilt here
    finally:
        builder.close()
    first.extend(rest)
    assert _comparable(first.rows) == _comparable(expected.rows)


def test_raising_the_worker_count_grows_a_started_pool() -> None:
    items = _outcomes(48)
    expected = _inline(items)
    builder, first = _one_worker_after_a_chunk(items)
    try:
        assert len(builder._pool) == 1
        builder.workers = 2
        for outcome, job in items[16:]:
            builder.add(outcome, job)
        assert len(builder._pool) == 2
        first.extend(builder.take().rows())
    finally:
        builder.close()
    assert _comparable(first.rows) == _comparable(expected.rows)


def _refuse(outcome: Outcome, job: Job) -> Any:
    raise ValueError(f"cannot ground {job.paper_id}")


def test_an_error_in_a_worker_reaches_the_writer() -> None:
    builder = RowBuilder(_refuse, workers=1)
    try:
        for outcome, job in _outcomes(3):
            builder.add(outcome, job)
        with pytest.raises(ValueError, match="cannot ground p0"):
            builder.take().rows()
    finally:
        builder.close()


@pytest.mark.parametrize(("cpus", "live", "collect"), [
    (1, 0, 0), (2, 1, 2), (4, 3, 4), (16, 4, 4)])
def test_collecting_a_result_file_uses_every_cpu_and_a_live_run_leaves_one_to_the_loop(
        monkeypatch: pytest.MonkeyPatch, cpus: int, live: int, collect: int) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: cpus)
    assert default_workers(64) == live
    assert default_workers(1) == 0
    assert collect_workers() == collect
