"""The hand-written gold set stays consistent with the corpus and its own rules."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "bench" / "gold" / "neurips-2026.gold.json"


@pytest.fixture(scope="module")
def checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "check_gold", ROOT / "bench" / "gold" / "check_gold.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


def test_the_gold_set_has_no_problems_and_covers_at_least_25_abstracts(
    checker: ModuleType,
) -> None:
    report = checker.check(GOLD)
    assert report.problems == []
    assert report.counts["papers"] >= 25
    assert len(report.files) == 4


def test_a_misquoted_evidence_and_a_value_absent_from_it_are_reported(
    checker: ModuleType, tmp_path: Path
) -> None:
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    paper = next(p for p in gold["papers"] if p["gains"])
    paper["gains"][0]["value"] = 9999.5
    paper["methods"].append({"name": "X", "aliases": [], "evidence": "not in the abstract X"})
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(gold), encoding="utf-8")
    problems = checker.check(broken).problems
    assert any("9999.5 does not occur" in problem for problem in problems)
    assert any("not an exact substring" in problem for problem in problems)
