"""The evaluation harness: name and number matching, and scoring a stored run against a
hand-written gold file (the answers here come from a hand-written fake endpoint)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from papersift.extract.access.llm import Endpoint
from papersift.extract.domain.evaluation.evaluate_gold import (
    GoldError,
    load_gold,
    match_one_to_one,
    metrics_agree,
    name_forms,
    name_key,
    names_match,
)
from papersift.extract.domain.reading.ingest import paper_id_for
from papersift.extract.interface.app import (
    RunSettings,
    compare_runs,
    evaluate_run,
    paper_ids_from,
    run_inputs,
)
from papersift.extract.interface.cli import cli
from papersift.testing.mock import ScriptedServer, ok
from tests.conftest import stored_rows

ABSTRACT = (
    "We propose Nested Causal Thompson Sampling (NCTS) for contextual bandits. On the "
    "OpenBandit benchmark and our new BanditArena suite, NCTS lowers regret by 12.5% and "
    "is 3x faster than LinUCB, reaching 0.91 AUC."
)
GOLD_PAPER = {
    "paper_id": paper_id_for(ABSTRACT),
    "contribution_types": ["method", "benchmark"],
    "tasks": ["contextual bandits"],
    "methods": [{"name": "NCTS", "aliases": ["Nested Causal Thompson Sampling"]}],
    "benchmarks": [{"name": "OpenBandit", "introduced": False},
                   {"name": "BanditArena", "introduced": True}],
    "gains": [{"metric": "regret", "value": 12.5, "unit": "%"},
              {"metric": "speed", "value": 3, "unit": "x"},
              {"metric": "AUC", "value": 0.91, "unit": "absolute"}],
}
ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="gpt-4o-mini", mode="json")


def test_name_matching_ignores_case_markup_generic_words_and_pairs_acronyms() -> None:
    assert name_key(r"\textbf{SpanSearch} framework") == "spansearch"
    assert names_match(name_forms("the BanditArena benchmark"), name_forms("BanditArena"))
    assert names_match(name_forms("Nested Causal Thompson Sampling (NCTS)"), name_forms("NCTS"))
    assert names_match(name_forms("Span-RAG"), name_forms("SpanRAG"))
    assert not names_match(name_forms("NCTS"), name_forms("LinUCB"))


def test_matching_is_one_to_one() -> None:
    pairs = match_one_to_one(["a", "a", "b"], ["a", "b"], lambda p, g: p == g)
    assert pairs == [(0, 0), (2, 1)]  # the repeated 'a' is a false positive


def test_metrics_agree_softly() -> None:
    assert metrics_agree("top-1 accuracy", "accuracy")
    assert metrics_agree("regret reduction", "regret")
    assert not metrics_agree("FID", "accuracy")


def _gold_file(tmp_path: Path, papers: list[dict[str, Any]]) -> Path:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"format": "papersift-gold/1", "papers": papers}),
                    encoding="utf-8")
    return path


def _run(tmp_path: Path, draft: dict[str, Any]) -> tuple[Path, str]:
    corpus = tmp_path / "one.txt"
    corpus.write_text(f"Test Papers\n\n{ABSTRACT}\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    server = ScriptedServer([ok(draft, prompt_tokens=1000, completion_tokens=50)])
    _, summary = run_inputs([str(corpus)], RunSettings(db=db, use_cache=False),
                            transport=server.transport(), endpoint=ENDPOINT)
    return db, summary.run_id


def test_scores_a_stored_run(tmp_path: Path) -> None:
    draft = {
        "tasks": ["contextual bandits"],
        "methods": ["NCTS", "LinUCB", "Thompson"],  # right, a baseline, not in the text
        "benchmarks": [{"name": "OpenBandit", "new": True}, {"name": "BanditArena", "new": True}],
        "gains": [{"value": "12.5", "metric": "regret"}, {"value": "3", "metric": "accuracy"}],
        "types": ["method"],
    }
    db, run_id = _run(tmp_path, draft)
    evaluation = evaluate_run(db, _gold_file(tmp_path, [GOLD_PAPER]))
    m = evaluation.metrics
    assert evaluation.run_id == run_id
    # the baseline and the invented name were dropped by assembly, not scored
    assert (m["methods"]["tp"], m["methods"]["fp"], m["methods"]["fn"]) == (1, 0, 0)
    assert m["benchmarks"]["f1"] == 1.0
    assert m["benchmark_introduced_accuracy"] == 1.0  # 'new' on OpenBandit lacks a cue
    # the model left out '0.91 AUC'; code adds it (a decimal followed by a metric's name)
    assert (m["gains_value"]["tp"], m["gains_value"]["fn"]) == (3, 0)
    assert m["gains_value_metric"]["tp"] == 2  # '3' is speed, not accuracy
    assert m["contribution_types"]["primary_accuracy"] == 1.0
    assert m["tasks_soft_f1"] == 1.0
    assert m["grounding_rate"] == 1.0 and m["gains_with_numbers_not_in_abstract"] == 0
    assert m["tokens_per_paper"] == {"prompt": 1000.0, "completion": 50.0}
    assert m["cost_usd_per_1000_papers"] == pytest.approx((1000 * 0.15 + 50 * 0.60) / 1000)
    assert m["latency_s"]["papers_timed"] == 1
    assert stored_rows(db, "SELECT run_id, gold_papers FROM evals") == [(run_id, 1)]
    rows = stored_rows(db, "SELECT m.name, m.mention_start, m.mention_end, m.evidence, "
                           "m.char_start, m.char_end, p.text FROM methods m "
                           "JOIN papers p USING (paper_id)")
    for name, m_start, m_end, evidence, e_start, e_end, text in rows:
        assert text[m_start:m_end] == name  # the highlight is the name itself
        assert text[e_start:e_end] == evidence and e_start <= m_start < m_end <= e_end


def test_compare_and_cli_json(tmp_path: Path) -> None:
    db, run_id = _run(tmp_path, {"tasks": ["bandits"], "methods": [], "benchmarks": [],
                                 "gains": [], "types": ["theory"]})
    gold = _gold_file(tmp_path, [GOLD_PAPER])
    both = compare_runs(db, gold, [run_id, run_id])
    assert both[0].metrics["methods"] == both[1].metrics["methods"]
    # the draft named no method; code found the acronym the proposal sentence defines
    assert both[0].metrics["methods"]["recall"] == 1.0
    result = CliRunner().invoke(cli, ["eval", "--gold", str(gold), "--db", str(db),
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed[0]["run_id"] == run_id and printed[0]["metrics"]["papers"] == 1
    table = CliRunner().invoke(cli, ["eval", "--gold", str(gold), "--db", str(db),
                                     "--compare", run_id, run_id])
    assert table.exit_code == 0 and "methods F1" in table.output


def test_bad_gold_files_are_named(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    with pytest.raises(GoldError, match="no gold file"):
        load_gold(missing)
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"format": "other"}', encoding="utf-8")
    with pytest.raises(GoldError, match=r"wrong\.json"):
        load_gold(wrong)
    twice = _gold_file(tmp_path, [GOLD_PAPER, GOLD_PAPER])
    with pytest.raises(GoldError, match="appears twice"):
        load_gold(twice)
    ids = tmp_path / "ids.txt"
    ids.write_text("sha256:abc\nnot-an-id\n", encoding="utf-8")
    with pytest.raises(GoldError, match="line 2"):
        paper_ids_from(ids)


def test_bundled_gold_file_loads() -> None:
    gold = load_gold(Path(__file__).resolve().parent.parent / "bench/gold/neurips-2026.gold.json")
    assert len(gold.papers) >= 25


def test_gold_can_be_narrowed_to_listed_papers(tmp_path: Path) -> None:
    other = {**GOLD_PAPER, "paper_id": "sha256:" + "0" * 64}
    path = _gold_file(tmp_path, [GOLD_PAPER, other])
    narrowed = load_gold(path, [other["paper_id"]])
    assert [p.paper_id for p in narrowed.papers] == [other["paper_id"]]
    assert narrowed.sha256 != load_gold(path).sha256  # a different yardstick, said so
    with pytest.raises(GoldError, match="has no paper"):
        load_gold(path, ["sha256:" + "1" * 64])


def test_cost_is_zero_only_for_local_models_and_unknown_without_a_price(tmp_path: Path) -> None:
    from papersift.extract.domain.evaluation.evaluate import PredictedPaper, score

    gold = load_gold(_gold_file(tmp_path, [GOLD_PAPER]))
    paid = [PredictedPaper(GOLD_PAPER["paper_id"], ABSTRACT, "extracted", prompt_tokens=2000,
                           completion_tokens=100)]
    assert score(gold, paid, "gpt-4o-mini")["cost_usd_per_1000_papers"] == pytest.approx(
        (2000 * 0.15 + 100 * 0.60) / 1000)
    assert score(gold, paid, "my-vllm-model")["cost_usd_per_1000_papers"] is None
    assert score(gold, paid, "qwen2.5-coder-1.5b", local=True)[
        "cost_usd_per_1000_papers"] == 0.0


@pytest.mark.parametrize("extra", [[], ["--all"]])
def test_extracting_listed_papers_names_those_not_stored(tmp_path: Path,
                                                          extra: list[str]) -> None:
    db, _ = _run(tmp_path, {"tasks": ["bandits"], "methods": [], "benchmarks": [],
                            "gains": [], "types": ["theory"]})
    ids = tmp_path / "ids.txt"
    ids.write_text(f"{paper_id_for(ABSTRACT)}\nsha256:{'0' * 64}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["extract", "--ids", str(ids), "--db", str(db), *extra])
    assert result.exit_code == 1
    assert "1 of the requested papers are not in the warehouse" in result.output
