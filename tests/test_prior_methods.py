"""The optional built-in field prior_methods (`papersift run --with prior_methods`) end to
end: asked only when enabled, grounded as names in the abstract (never the paper's own
method), stored in its table and generated views, and in the CSV, JSONL, workbook,
report, corrections and eval; a run without it sends and stores what it always did.

The endpoint is a HAND-WRITTEN FAKE (KeyedDrafts over httpx2.MockTransport), not a model.
"""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path
from typing import Any

import httpx2
import pytest

from papersift.extract.access.llm import Endpoint
from papersift.extract.domain.fields import DEFAULT_FIELDS, FieldSet
from papersift.extract.domain.review.corrected import review_grounder
from papersift.extract.interface.app import RunSettings, evaluate_run, run_inputs
from papersift.extract.interface.serve.review import load_cards
from papersift.report.render import render_html
from papersift.testing.mock import KeyedDrafts
from papersift.warehouse import connect, open_repository
from papersift.warehouse.corrections import Review, edit_item
from papersift.warehouse.export import export
from papersift.warehouse.query import run_sql
from papersift.warehouse.report import load_report

ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")
ABSTRACT = (
    "We propose FlowNet, a method for long-context retrieval. Compared with BERT and "
    "RetroMAE, FlowNet improves recall by 4.2% on MS MARCO. Strong baselines fall behind.")
DRAFT: dict[str, Any] = {
    "tasks": ["long-context retrieval"], "methods": ["FlowNet"],
    "benchmarks": [{"name": "MS MARCO", "new": False}],
    "gains": [{"value": "4.2", "metric": "recall"}], "types": ["method"],
    # the paper's own method, a name the abstract lacks and a description are refused
    "prior_methods": ["BERT", "RetroMAE", "FlowNet", "GPT-9", "strong baselines", "bert"]}


def _answer(draft: dict[str, Any], request: httpx2.Request) -> dict[str, Any]:
    if "prior_methods" in request.content.decode():
        return draft
    return {key: value for key, value in draft.items() if key != "prior_methods"}


def _run(folder: Path, enabled: tuple[str, ...]) -> tuple[KeyedDrafts, Path]:
    model = KeyedDrafts({"FlowNet": DRAFT}, _answer)
    corpus = folder / "abstracts.txt"
    corpus.write_text(ABSTRACT + "\n", encoding="utf-8")
    db = folder / "w.duckdb"
    run_inputs([str(corpus)], RunSettings(db=db, with_fields=enabled),
               transport=httpx2.MockTransport(model), endpoint=ENDPOINT)
    return model, db


@pytest.fixture(scope="module")
def enabled(tmp_path_factory: pytest.TempPathFactory) -> tuple[KeyedDrafts, Path]:
    return _run(tmp_path_factory.mktemp("with"), ("prior_methods",))


def test_a_run_without_the_field_asks_and_stores_what_it_always_did(tmp_path: Path) -> None:
    model, db = _run(tmp_path, ())
    assert "prior_methods" not in json.dumps(model.bodies[0])
    assert run_sql(db, "SELECT count(*) FROM prior_methods").rows == [(0,)]
    written = {item.path.name for item in export(db, tmp_path / "out", "csv")}
    assert "prior_methods.csv" not in written
    with (tmp_path / "out" / "papers.csv").open(encoding="utf-8") as handle:
        assert "prior_methods" not in next(csv.reader(handle))
    assert FieldSet(enabled=()).schema_version() == DEFAULT_FIELDS.schema_version()


def test_the_field_is_asked_and_grounded_as_names(enabled: tuple[KeyedDrafts, Path]) -> None:
    model, db = enabled
    sent = json.dumps(model.bodies[0])
    assert "prior_methods" in sent and "Never the paper's own methods" in sent
    rows = run_sql(db, """
        SELECT m.name, m.alignment, substr(p.text, m.mention_start + 1,
               m.mention_end - m.mention_start), m.evidence
        FROM extraction_prior_methods m JOIN papers p USING (paper_id) ORDER BY m.idx""").rows
    assert [row[:3] for row in rows] == [("BERT", "exact", "BERT"),
                                         ("RetroMAE", "exact", "RetroMAE")]
    assert rows[0][3].startswith("Compared with BERT")
    rejected = run_sql(db, "SELECT rejected FROM extractions").rows[0][0]
    assert any("FlowNet" in r and "own method" in r for r in rejected)
    assert any("GPT-9" in r for r in rejected) and any("strong baselines" in r
                                                        for r in rejected)
    view = run_sql(db, "SELECT name, origin, canonical FROM prior_methods ORDER BY idx").rows
    assert view == [("BERT", "model", "BERT"), ("RetroMAE", "model", "RetroMAE")]


def test_the_field_reaches_every_export(enabled: tuple[KeyedDrafts, Path],
                                        tmp_path: Path) -> None:
    _, db = enabled
    export(db, tmp_path / "csv", "csv")
    with (tmp_path / "csv" / "papers.csv").open(encoding="utf-8") as handle:
        papers = list(csv.DictReader(handle))
    assert papers[0]["prior_methods"] == "BERT; RetroMAE"
    with (tmp_path / "csv" / "prior_methods.csv").open(encoding="utf-8") as handle:
        assert [row["name"] for row in csv.DictReader(handle)] == ["BERT", "RetroMAE"]
    export(db, tmp_path / "jsonl", "jsonl")
    paper = json.loads((tmp_path / "jsonl" / "papers.jsonl").read_text(encoding="utf-8"))
    assert [item["name"] for item in paper["prior_methods"]] == ["BERT", "RetroMAE"]
    export(db, tmp_path / "parquet", "parquet")
    assert (tmp_path / "parquet" / "prior_methods.parquet").exists()
    export(db, tmp_path / "xlsx", "xlsx")
    with zipfile.ZipFile(tmp_path / "xlsx" / "papersift.xlsx") as archive:
        assert '<sheet name="prior_methods"' in archive.read("xl/workbook.xml").decode()


def test_the_report_shows_the_field(enabled: tuple[KeyedDrafts, Path]) -> None:
    _, db = enabled
    data = load_report(db)
    assert "prior_method" in data.fields
    assert [item.name for item in data.papers[0].of("prior_method")] == ["BERT", "RetroMAE"]
    page = render_html(data)
    assert "Compared with" in page and ".hl-prior_method" in page


def test_the_review_page_shows_the_field(enabled: tuple[KeyedDrafts, Path]) -> None:
    _, db = enabled
    with open_repository(db, read_only=True) as repo:
        paper = repo.fetch_one("SELECT paper_id FROM papers")
        assert paper is not None
        card = load_cards(repo, [paper[0]])[0]
    assert "prior_method" in card.fields
    assert [item.item.name for item in card.of("prior_method")] == ["BERT", "RetroMAE"]
    assert card.of("prior_method")[0].fields == {"name": "BERT"}


def test_a_reviewer_corrects_a_prior_method(tmp_path: Path) -> None:
    _, db = _run(tmp_path, ("prior_methods",))
    con = connect(db)
    paper_id = con.execute("SELECT paper_id FROM papers").fetchone()[0]  # type: ignore[index]
    edit_item(con, paper_id, "prior_method", "retromae", {"name": "MS MARCO"},
              Review("me", 0), ground=review_grounder(()))
    con.close()
    rows = run_sql(db, "SELECT name, origin, mention_start FROM prior_methods "
                       "ORDER BY idx").rows
    assert rows[1][:2] == ("MS MARCO", "corrected")
    assert ABSTRACT[rows[1][2]:].startswith("MS MARCO")  # grounded again at its new name


def test_eval_scores_the_field_when_the_gold_lists_it(enabled: tuple[KeyedDrafts, Path],
                                                      tmp_path: Path) -> None:
    _, db = enabled
    paper_id = run_sql(db, "SELECT paper_id FROM papers").rows[0][0]
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"format": "papersift-gold/1", "papers": [{
        "paper_id": paper_id, "tasks": ["long-context retrieval"], "methods": [{"name": "FlowNet"}],
        "benchmarks": [], "gains": [], "contribution_types": ["method"],
        "prior_methods": ["BERT", "T5"]}]}), encoding="utf-8")
    report = evaluate_run(db, gold)
    scores = report.metrics["prior_methods"]
    assert (scores["precision"], scores["recall"]) == (0.5, 0.5)
