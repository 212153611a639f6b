"""The calibrated gain decision (rules/gain_decision.py, stop 36): every grounded gain is
scored by how the abstract states it, kept, flagged or refused, stored with its score and
features (migration 0016) and shown by `papersift explain`. The model's answers here are
hand-written fakes; the shipped weights are bench/decision/train_gains.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from papersift.extract.domain.assembly.assemble import assemble
from papersift.extract.domain.rules.gain_decision import (
    FEATURES,
    decide_gain,
    gain_features,
    load_gain_weights,
)
from papersift.extract.domain.rules.method_decision import Weights, weights_from
from papersift.extract.interface.cli import cli
from papersift.schemas import PaperDraft
from tests.conftest import run_one_abstract, stored_rows

ABSTRACT = (
    "Grid agents plan poorly. We propose GridPlanner, an agent that plans on grids. "
    "GridPlanner improves accuracy by 5.3% over the strongest baseline on OrbitSet. "
    "The planner keeps working on maps that are updated up to 180 Hz, which suits live use."
)
# The fake answer gives the result (5.3%) and an operating condition (180 Hz) as gains.
DRAFT = {"tasks": ["grid planning"], "methods": ["GridPlanner"],
         "benchmarks": [{"name": "OrbitSet", "new": False}],
         "gains": [{"value": "5.3%", "metric": "accuracy"},
                   {"value": "180", "metric": "update rate (Hz)"}],
         "types": ["method"]}


def test_features_say_how_the_abstract_states_the_number() -> None:
    result = ABSTRACT.index("5.3")
    sentence = (ABSTRACT.index("GridPlanner improves"), ABSTRACT.index(" The planner"))
    features = gain_features(ABSTRACT, (result, result + 3), sentence, "%", 5.3, added=False,
                             baseline=True, dataset=True)
    assert {"unit_percent", "decimal", "by_before", "result_words", "comparison",
            "baseline_found", "dataset_found"} <= set(features)
    assert "unit_absolute" not in features and 0.4 < features["late"] < 0.5
    condition = ABSTRACT.index("180")
    features = gain_features(ABSTRACT, (condition, condition + 3), (ABSTRACT.index("The planner"),
                                                   len(ABSTRACT)), "absolute", 180.0,
                             added=True, baseline=False, dataset=False)
    assert {"unit_absolute", "large_quantity", "qualified", "added_by_code"} <= set(features)
    assert not {"result_words", "comparison", "decimal"} & set(features)


def test_a_result_is_kept_and_an_operating_condition_is_not() -> None:
    got = assemble(PaperDraft.model_validate(DRAFT), ABSTRACT)
    assert [g.value for g in got.extraction.claimed_gains] == [5.3]
    outcomes = {d.value: d.outcome for d in got.gain_decisions}
    assert outcomes[5.3] == "kept" and outcomes[180.0] in ("flagged", "refused")
    [note] = [line for line in got.rejected if line.startswith("gain 180:")]
    assert "(score 0." in note and "a bare quantity" in note


def test_thresholds_split_kept_flagged_and_refused() -> None:
    weights = Weights(bias=0.0, weights={"result_words": 2.0, "unit_absolute": -2.0},
                      keep_at=0.7, flag_at=0.4, version="test")
    assert decide_gain(1.0, 0, 1, {"result_words": 1.0}, weights).outcome == "kept"
    assert decide_gain(1.0, 0, 1, {}, weights).outcome == "flagged"
    assert decide_gain(1.0, 0, 1, {"unit_absolute": 1.0}, weights).outcome == "refused"


def test_the_shipped_weights_name_only_known_features_and_were_trained() -> None:
    weights = load_gain_weights()
    assert set(weights.weights) <= set(FEATURES) and weights.weights
    assert 0.0 < weights.flag_at <= weights.keep_at < 1.0
    assert weights.trained["by"] == "bench/decision/train_gains.py"


def test_a_weights_file_with_an_unknown_feature_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "gains.json"
    path.write_text(json.dumps({"bias": 0.0, "weights": {"no_such_feature": 1.0},
                                "keep_at": 0.5, "flag_at": 0.4}))
    with pytest.raises(ValueError, match="no_such_feature"):
        weights_from(path, FEATURES)


def test_gain_decisions_are_stored_and_explained(tmp_path: Path) -> None:
    db = run_one_abstract(tmp_path, "Grid Planning", ABSTRACT, DRAFT)
    rows = stored_rows(db, "SELECT name, outcome, weights FROM gain_decisions ORDER BY name")
    assert [(name, outcome != "kept") for name, outcome, _ in rows] == [
        ("180", True), ("5.3", False)]
    assert rows[0][2] == load_gain_weights().version
    [(value,)] = stored_rows(db, "SELECT value FROM extraction_gains")
    assert value == 5.3
    paper_id = stored_rows(db, "SELECT paper_id FROM papers")[0][0]
    shown = CliRunner().invoke(cli, ["explain", paper_id[:20], "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert "gain 5.3" in shown.output and "gain 180" in shown.output
    assert "a bare quantity, with no unit of change" in shown.output
    flagged = CliRunner().invoke(cli, ["query", "flagged_gains", "--db", str(db),
                                       "--format", "json"])
    assert flagged.exit_code == 0, flagged.output
    listed = json.loads(flagged.output)
    assert [row["value"] for row in listed] == (["180"] if rows[0][1] == "flagged" else [])
