"""The whole run on the real corpus against a hand-written fake model (papersift/testing/mock.py):
counts add up, nothing is duplicated, a warm cache makes no requests, Ctrl-C resumes."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest

from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.app import RunSettings, extract_stored, ingest_only, run_inputs
from papersift.testing.mock import FakeModel
from papersift.warehouse.export import export
from papersift.warehouse.query import run_sql
from tests.conftest import CORPUS

ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")


def _run(db: Path, model: FakeModel, **settings: object) -> tuple[object, object]:
    return run_inputs([str(CORPUS)], RunSettings(db=db, **settings),  # type: ignore[arg-type]
                      transport=model.transport(), endpoint=ENDPOINT)


def _count(db: Path, sql: str) -> int:
    rows = run_sql(db, sql).rows
    return int(rows[0][0])


def _counts(db: Path, **queries: str) -> dict[str, int]:
    """Each named count: ``tasks="count(*) FROM tasks"`` -> {"tasks": n}."""
    return {name: _count(db, f"SELECT {query}") for name, query in queries.items()}


def _run_asking(db: Path, requests: int, line: str, **settings: object) -> tuple[Any, Any]:
    """A run with a fresh fake model that must make ``requests`` requests and end with
    the summary ``line``; (ingest report, summary)."""
    model = FakeModel()
    report, summary = _run(db, model, **settings)
    assert model.requests == requests
    assert summary.line() == line  # type: ignore[attr-defined]
    return report, summary


# Every abstract stored once: one extraction, one task, one latest extraction.
ONE_EACH = {"extractions": "count(*) FROM extractions",
            "tasks": "count(*) FROM extraction_tasks",
            "papers_with_tasks": "count(DISTINCT paper_id) FROM extraction_tasks",
            "latest": "count(*) FROM latest_extractions"}


def test_corpus_run_then_warm_cache_rerun(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    report, _ = _run_asking(db, 63, "63 abstracts: 63 extracted, 0 from cache, 0 failed")
    assert (report.files, report.occurrences, report.papers) == (4, 76, 63)
    assert _count(db, "SELECT count(*) FROM papers") == 63
    assert _count(db, "SELECT count(*) FROM sources") == 76
    assert _count(db, "SELECT count(*) FROM calls WHERE status = 'ok'") == 63
    assert _count(db, "SELECT count(*) FROM tasks WHERE alignment = 'exact'") == 63

    _run_asking(db, 0, "63 abstracts: 0 extracted, 63 from cache, 0 failed")
    assert _counts(db, **ONE_EACH) == dict.fromkeys(ONE_EACH, 63)
    assert _count(db, "SELECT count(*) FROM runs WHERE status = 'finished'") == 2

    fresh = FakeModel()
    _, third = _run(db, fresh, use_cache=False)
    assert fresh.requests == 63 and third.n_extracted == 63  # type: ignore[attr-defined]
    assert _count(db, "SELECT count(*) FROM extractions") == 63  # same answers, same ids


def test_interrupted_run_is_consistent_and_resumes(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with pytest.raises(KeyboardInterrupt):
        _run(db, FakeModel(interrupt_after=20))
    status = run_sql(db, "SELECT status, n_extracted FROM runs").rows
    assert status == [("interrupted", 20)]
    assert _count(db, "SELECT count(*) FROM extractions") == 20
    assert _count(db, "SELECT count(*) FROM llm_cache") == 20

    _run_asking(db, 43, "63 abstracts: 43 extracted, 20 from cache, 0 failed")
    assert _counts(db, **ONE_EACH) == dict.fromkeys(ONE_EACH, 63)


def test_concurrent_run_gets_the_same_result(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    model = FakeModel()
    _, summary = _run(db, model, concurrency=4)
    assert summary.n_extracted == 63 and model.requests == 63  # type: ignore[attr-defined]
    assert _count(db, "SELECT count(*) FROM calls") == 63


def test_too_long_and_bad_inputs_become_failures_not_losses(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "ok.txt").write_text("Venue 2025 Papers\n\nA short abstract about graphs.\n\n"
                                   + "word " * 400 + "\n", encoding="utf-8")
    (folder / "bad.txt").write_bytes(b"Title\n\nCaf\xe9 au lait\n")
    db = tmp_path / "w.duckdb"
    model = FakeModel()
    _, summary = run_inputs([str(folder)], RunSettings(db=db, max_chars=1000),
                            transport=model.transport(), endpoint=ENDPOINT)
    assert summary.line() == "2 abstracts: 1 extracted, 0 from cache, 1 failed"
    assert model.requests == 1
    reasons = run_sql(db, "SELECT stage, reason, file FROM failures ORDER BY reason").rows
    assert reasons[0][:2] == ("ingest", "not_utf8") and reasons[0][2].endswith("bad.txt")
    assert reasons[1][:2] == ("ingest", "too_long") and reasons[1][2].endswith("ok.txt")
    assert run_sql(db, "SELECT position FROM failures WHERE reason = 'too_long'").rows == [(2,)]
    assert [p.reason for p in summary.input_problems] == ["not_utf8"]


def test_the_same_file_through_another_path_adds_no_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "w.duckdb"
    ingest_only(db, [str(CORPUS)])
    monkeypatch.chdir(CORPUS.parent.parent)
    ingest_only(db, ["examples/neurips-2026/"])
    assert _count(db, "SELECT count(*) FROM sources") == 76
    files = run_sql(db, "SELECT DISTINCT file FROM sources").rows
    assert all(Path(f).is_absolute() for (f,) in files)


def test_ingest_then_extract_stored(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    report = ingest_only(db, [str(CORPUS)])
    assert (report.papers, report.new_papers) == (63, 63)
    assert ingest_only(db, [str(CORPUS)]).new_papers == 0
    model = FakeModel()
    summary = extract_stored(RunSettings(db=db), transport=model.transport(), endpoint=ENDPOINT)
    assert summary.n_extracted == 63
    assert extract_stored(RunSettings(db=db), transport=model.transport(),
                          endpoint=ENDPOINT).n_abstracts == 0


def test_exports_in_every_format(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    _run(db, FakeModel())
    out = tmp_path / "exports"
    csv_files = {e.path.name: e.rows for e in export(db, out, "csv")}
    assert csv_files["papers.csv"] == 63 and csv_files["tasks.csv"] == 63
    with (out / "papers.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 63
    assert rows[0]["tasks"] == " ".join(rows[0]["text"].split()[:6])  # what FakeModel answers
    assert "text" in rows[0] and rows[0]["contribution_types"].startswith("method")

    export(db, out, "parquet")
    assert pq.read_table(out / "tasks.parquet").num_rows == 63
    assert pq.read_table(out / "papers.parquet").num_rows == 63

    (item,) = export(db, out, "jsonl")
    lines = (out / "papers.jsonl").read_text(encoding="utf-8").splitlines()
    assert item.rows == 63 and len(lines) == 63
    paper = json.loads(lines[0])
    assert paper["text"] and paper["tasks"][0]["alignment"] == "exact"
    start, end = paper["tasks"][0]["char_start"], paper["tasks"][0]["char_end"]
    assert paper["text"][start:end] == paper["tasks"][0]["evidence"]
    assert paper["sources"][0]["venue"] == "NeurIPS"


def test_the_warehouse_is_not_locked_after_a_run(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    _run(db, FakeModel())
    con = duckdb.connect(str(db))
    assert con.execute("SELECT count(*) FROM papers").fetchone() == (63,)
    con.close()


def test_a_request_failure_is_a_row_naming_the_file_and_place(tmp_path: Path) -> None:
    import httpx2

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "two.txt").write_text(
        "Venue 2025 Papers\n\nA first abstract about trees and forests.\n\n"
        "A second abstract about graphs and their spectra.\n", encoding="utf-8")
    fake = FakeModel()

    def handler(request: httpx2.Request) -> httpx2.Response:
        if b"graphs" in request.content:  # hand-written: the endpoint refuses this one
            return httpx2.Response(400, json={"error": {"message": "context length exceeded"}})
        return fake(request)

    db = tmp_path / "w.duckdb"
    _, summary = run_inputs([str(folder)], RunSettings(db=db),
                            transport=httpx2.MockTransport(handler), endpoint=ENDPOINT)
    assert summary.line() == "2 abstracts: 1 extracted, 0 from cache, 1 failed"
    ((stage, reason, file, position, detail),) = run_sql(
        db, "SELECT stage, reason, file, position, detail FROM failures").rows
    assert (stage, reason, position) == ("request", "http_400", 2)
    assert file.endswith("two.txt") and "context length exceeded" in detail


def test_streamed_run_in_small_chunks_stores_what_one_chunk_stores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import papersift.extract.interface.app

    whole = tmp_path / "whole.duckdb"
    _, one = _run(whole, FakeModel())
    # 76 places: ~15 chunks
    monkeypatch.setattr(papersift.extract.interface.app, "STREAM_CHUNK_PAPERS", 5)
    streamed = tmp_path / "streamed.duckdb"
    report, many = _run(streamed, FakeModel())
    assert (report.files, report.occurrences, report.papers, report.new_papers) == (  # type: ignore[attr-defined]
        4, 76, 63, 63)
    assert many.line() == one.line() == "63 abstracts: 63 extracted, 0 from cache, 0 failed"  # type: ignore[attr-defined]
    for sql in ("SELECT paper_id, text FROM papers ORDER BY 1",
                "SELECT paper_id, file, position, line FROM sources ORDER BY 1, 2, 3",
                "SELECT extraction_id FROM extractions ORDER BY 1",
                "SELECT paper_id, name FROM tasks ORDER BY 1"):
        assert run_sql(streamed, sql).rows == run_sql(whole, sql).rows, sql
