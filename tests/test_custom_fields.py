"""User-defined fields end to end: `--fields examples/custom-fields/my_fields.py` through
the draft, grounding, the warehouse, exports, the report and eval.

The endpoint is a HAND-WRITTEN FAKE (httpx2.MockTransport, not a recording): it answers
each abstract with a fixed draft that includes the custom fields."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import httpx2
from click.testing import CliRunner

from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.app import RunSettings, evaluate_run, run_inputs
from papersift.extract.interface.cli import cli
from papersift.report.render import render_html
from papersift.testing.mock import KeyedDrafts
from papersift.warehouse.export import export
from papersift.warehouse.query import run_sql
from papersift.warehouse.report import load_report

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "custom-fields" / "my_fields.py"
ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")

RETRIEVAL = (
    "We propose FlowNet, a method for long-context retrieval. Compared with BERT and "
    "RetroMAE, FlowNet improves recall by 4.2% with a 7B model. We prove a convergence "
    "theorem for its training. Our approach relies on reinforcement learning, which limits "
    "it to simulated settings. Code is available at https://github.com/example/flownet.")
TABULAR = (
    "This paper studies self-supervised pretraining for tabular data. We find that masking "
    "columns helps downstream classification. The method does not scale beyond small tables.")

# The fake's answers: what a model might draft, one wrong baseline included.
DRAFTS: dict[str, dict[str, Any]] = {
    "FlowNet": {"tasks": ["long-context retrieval"], "methods": ["FlowNet"], "benchmarks": [],
                "gains": [{"value": "4.2", "metric": "recall"}], "types": ["method"],
                "baselines": ["BERT", "RetroMAE", "GPT-9"], "model_sizes": ["7"],
                "limitation": ["limits it to simulated settings"], "proves_theory": True,
                "setting": "reinforcement"},
    "tabular": {"tasks": ["self-supervised pretraining for tabular data"], "methods": [],
                "benchmarks": [], "gains": [], "types": ["empirical_analysis"],
                "baselines": [], "model_sizes": [],
                "limitation": ["does not scale beyond small tables"], "proves_theory": False,
                "setting": "self-supervised"},
}


BUILT_IN = ("tasks", "methods", "benchmarks", "gains", "types")


def _without_user_fields(draft: dict[str, Any], request: httpx2.Request) -> dict[str, Any]:
    """The built-in part of a draft when the request does not ask for the user fields."""
    if "proves_theory" in request.content.decode():
        return draft
    return {key: value for key, value in draft.items() if key in BUILT_IN}


def fake_fields_model() -> KeyedDrafts:
    """HAND-WRITTEN FAKE endpoint: answers the draft of DRAFTS whose key the abstract
    contains (without the user fields when the request does not ask for them), and keeps
    every request body it saw."""
    return KeyedDrafts(DRAFTS, _without_user_fields)


def _run(tmp_path: Path, model: KeyedDrafts, fields: Path | None) -> Any:
    corpus = tmp_path / "abstracts.txt"
    corpus.write_text(f"{RETRIEVAL}\n\n{TABULAR}\n", encoding="utf-8")
    _, summary = run_inputs([str(corpus)], RunSettings(db=tmp_path / "w.duckdb",
                                                       fields=fields),
                            transport=httpx2.MockTransport(model), endpoint=ENDPOINT)
    return summary


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    return run_sql(db, sql).rows


def test_user_fields_are_asked_for_grounded_and_stored(tmp_path: Path) -> None:
    model = fake_fields_model()
    summary = _run(tmp_path, model, EXAMPLE)
    assert (summary.n_extracted, summary.n_failed) == (2, 0)
    sent = json.dumps(model.bodies[0])
    assert "proves_theory" in sent and "Also answer these fields" in sent

    db = tmp_path / "w.duckdb"
    stored = _rows(db, """
        SELECT c.field, c.value, c.alignment, substr(p.text, c.mention_start + 1,
               c.mention_end - c.mention_start), c.evidence
        FROM custom c JOIN papers p USING (paper_id) WHERE p.text LIKE 'We propose%'
        ORDER BY c.field, c.idx""")
    by_field: dict[str, list[tuple[Any, ...]]] = {}
    for field, *rest in stored:
        by_field.setdefault(field, []).append(tuple(rest))
    assert [(v, a, m) for v, a, m, _ in by_field["baselines"]] == [
        ("BERT", "exact", "BERT"), ("RetroMAE", "exact", "RetroMAE")]
    assert [(v, m) for v, _, m, _ in by_field["model_sizes"]] == [("7", "7")]
    assert by_field["proves_theory"][0][:3] == ("true", "exact", "prove")
    assert by_field["setting"][0][:3] == ("reinforcement", "exact", "reinforcement")
    assert "simulated settings" in by_field["limitation"][0][3]
    rejected = _rows(db, "SELECT rejected FROM extractions WHERE list_contains(rejected, "
                         "'baselines ''GPT-9'': not in the abstract')")
    assert len(rejected) == 1  # a name the abstract lacks is dropped, and said

    # a false flag has no sentence behind it: kept, flagged
    assert _rows(db, "SELECT value, alignment FROM custom_proves_theory "
                     "WHERE value = 'false'") == [("false", "none")]
    assert _rows(db, "SELECT count(*) FROM custom_baselines") == [(2,)]
    # the built-in code-found field rides along
    assert _rows(db, "SELECT kind, url FROM artifacts") == [
        ("code", "https://github.com/example/flownet")]


def test_user_fields_reach_exports_report_and_eval(tmp_path: Path) -> None:
    _run(tmp_path, fake_fields_model(), EXAMPLE)
    db = tmp_path / "w.duckdb"
    export(db, tmp_path / "csv", "csv")
    with (tmp_path / "csv" / "custom.csv").open(encoding="utf-8") as handle:
        exported = list(csv.DictReader(handle))
    assert {row["field"] for row in exported} == {"baselines", "model_sizes", "limitation",
                                                  "proves_theory", "setting"}
    export(db, tmp_path / "jsonl", "jsonl")
    papers = [json.loads(line) for line in
              (tmp_path / "jsonl" / "papers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(paper["custom"] for paper in papers)
    assert any(paper["artifacts"] for paper in papers)

    data = load_report(db)
    assert "custom-baselines" in data.fields and data.titles["custom-baselines"] == "baselines"
    page = render_html(data)
    assert "hl-custom-baselines" in page and "hl-artifact" in page

    ids = {text[:10]: pid for pid, text in _rows(db, "SELECT paper_id, text FROM papers")}
    gold = {"format": "papersift-gold/1", "papers": [
        {"paper_id": ids[RETRIEVAL[:10]], "tasks": ["long-context retrieval"],
         "methods": [{"name": "FlowNet"}],
         "artifacts": [{"kind": "code", "url": "https://github.com/example/flownet/"}],
         "custom": {"baselines": ["BERT", "RetroMAE", "ColBERT"], "proves_theory": [True]}},
        {"paper_id": ids[TABULAR[:10]], "artifacts": [],
         "custom": {"baselines": [], "proves_theory": [False]}},
    ]}
    gold_file = tmp_path / "gold.json"
    gold_file.write_text(json.dumps(gold), encoding="utf-8")
    metrics = evaluate_run(db, gold_file).metrics
    assert metrics["custom"]["baselines"] == {"precision": 1.0, "recall": 0.6667,
                                              "f1": 0.8, "tp": 2, "fp": 0, "fn": 1}
    assert metrics["custom"]["proves_theory"]["f1"] == 1.0
    assert set(metrics["custom"]) == {"baselines", "proves_theory"}  # only annotated ones
    assert metrics["artifacts"]["f1"] == 1.0 and metrics["artifacts"]["url_accuracy"] == 1.0


def test_the_cache_key_covers_the_users_schema(tmp_path: Path) -> None:
    first = fake_fields_model()
    _run(tmp_path, first, EXAMPLE)
    assert len(first.bodies) == 2
    again = fake_fields_model()
    assert _run(tmp_path, again, EXAMPLE).n_cached == 2 and again.bodies == []
    plain = fake_fields_model()  # no --fields: another schema, so another request
    assert _run(tmp_path, plain, None).n_extracted == 2 and len(plain.bodies) == 2
    assert "proves_theory" not in json.dumps(plain.bodies[0])
    versions = _rows(tmp_path / "w.duckdb",
                     "SELECT count(DISTINCT schema_version) FROM runs")
    assert versions == [(2,)]


def test_a_missing_fields_file_is_one_clean_message(tmp_path: Path) -> None:
    corpus = tmp_path / "a.txt"
    corpus.write_text(TABULAR, encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(corpus), "--db", str(tmp_path / "w.duckdb"),
                                      "--base-url", "http://127.0.0.1:9/v1", "--model", "x",
                                      "--fields", str(tmp_path / "absent.py")])
    assert result.exit_code == 1, result.output
    assert "no fields file" in result.output and "Traceback" not in result.output


def test_user_fields_go_through_batch_mode(tmp_path: Path) -> None:
    """The batch request file carries the user fields' schema and prompt lines, and the
    collected answers are grounded into the same rows as live answers."""
    from papersift.extract.runs.batch import BatchOptions
    from papersift.testing.fakebatch import FakeBatchAPI

    live = tmp_path / "live"
    live.mkdir()
    _run(live, fake_fields_model(), EXAMPLE)
    own = {"baselines", "model_sizes", "limitation", "proves_theory", "setting"}
    api = FakeBatchAPI(polls_to_finish=1, user_answers=lambda abstract: {
        key: value for draft_key, draft in DRAFTS.items() if draft_key in abstract
        for key, value in draft.items() if key in own})
    corpus = tmp_path / "abstracts.txt"
    corpus.write_text(f"{RETRIEVAL}\n\n{TABULAR}\n", encoding="utf-8")
    endpoint = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json",
                        api_key="sk-test-secret-0123456789")
    settings = RunSettings(db=tmp_path / "b.duckdb", fields=EXAMPLE,
                           batch=BatchOptions(poll_interval_s=0.0))
    _, summary = run_inputs([str(corpus)], settings, transport=api.transport(),
                            endpoint=endpoint)
    assert (summary.n_extracted, summary.n_failed) == (2, 0)
    body = json.dumps(api.uploaded_lines[0]["body"])
    assert "proves_theory" in body and "Also answer these fields" in body
    query = ("SELECT p.text[:12], field, idx, value, unit, alignment, mention_start "
             "FROM custom c JOIN papers p USING (paper_id) ORDER BY ALL")
    assert _rows(tmp_path / "b.duckdb", query) == _rows(live / "w.duckdb", query)
