"""`papersift eval` shows the errors: false positives and negatives per field and paper,
the scores per source, and the papers that changed between two runs (answers from a
hand-written fake endpoint)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from papersift.extract.domain.evaluation.eval_errors import PaperErrors, changed_papers
from papersift.extract.interface.app import evaluate_run, evaluation_details
from papersift.extract.interface.cli import cli
from tests.test_evaluate import GOLD_PAPER, _gold_file, _run

WRONG_DRAFT: dict[str, Any] = {  # no method and one of the two benchmarks
    "tasks": ["contextual bandits"], "methods": [],
    "benchmarks": [{"name": "OpenBandit", "new": False}],
    "gains": [{"value": "12.5", "metric": "regret"}, {"value": "0.91", "metric": "AUC"}],
    "types": ["method"],
}


# The gold also lists a benchmark the abstract never names, so the run must miss it
# (code finds BanditArena itself: 'our new BanditArena suite').
GOLD_WITH_A_MISS: dict[str, Any] = {**GOLD_PAPER, "benchmarks": [
    *GOLD_PAPER["benchmarks"], {"name": "BanditGym", "introduced": False}]}


def test_errors_list_what_each_field_missed_and_add_up_to_the_counts(tmp_path: Path) -> None:
    db, run_id = _run(tmp_path, WRONG_DRAFT)
    gold = _gold_file(tmp_path, [GOLD_WITH_A_MISS])
    metrics = evaluate_run(db, gold).metrics
    (found,) = evaluation_details(db, gold, [run_id])
    (errors,) = found.errors
    assert errors.false_negatives["benchmarks"] == ["BanditGym"]
    # '3x faster' is a result the draft left out: code adds it (gain_candidates)
    assert errors.false_negatives["gains"] == []
    for name, key in (("methods", "methods"), ("benchmarks", "benchmarks"),
                      ("gains", "gains_value")):
        assert len(errors.false_positives[name]) == metrics[key]["fp"]
        assert len(errors.false_negatives[name]) == metrics[key]["fn"]
    # one source here: the text file's collection has no venue, so the file names it
    assert list(found.sources) == ["one.txt"]
    assert found.sources["one.txt"]["benchmarks"] == metrics["benchmarks"]


def test_the_cli_prints_errors_sources_and_changed_papers(tmp_path: Path) -> None:
    db, run_id = _run(tmp_path, WRONG_DRAFT)
    gold = _gold_file(tmp_path, [GOLD_WITH_A_MISS])
    result = CliRunner().invoke(cli, ["eval", "--gold", str(gold), "--db", str(db),
                                      "--errors", "--by-source"])
    assert result.exit_code == 0, result.output
    assert "-BanditGym" in result.output and "by source" in result.output
    assert "gain baselines in abstract" in result.output
    same = CliRunner().invoke(cli, ["eval", "--gold", str(gold), "--db", str(db),
                                    "--compare", run_id, run_id])
    assert "0 paper(s) changed" in same.output
    as_json = CliRunner().invoke(cli, ["eval", "--gold", str(gold), "--db", str(db),
                                       "--errors", "--format", "json"])
    printed = json.loads(as_json.output)
    assert printed[0]["errors"][0]["false_negatives"]["benchmarks"] == ["BanditGym"]
    assert "gain_attributes" in printed[0]["metrics"]


def test_changed_papers_are_those_whose_errors_differ() -> None:
    before = [PaperErrors("sha256:a", "", {"methods": ["X"]}), PaperErrors("sha256:b", "")]
    after = [PaperErrors("sha256:a", ""), PaperErrors("sha256:b", "")]
    assert [(a.paper_id, b.paper_id) for a, b in changed_papers(before, after)] == [
        ("sha256:a", "sha256:a")]
