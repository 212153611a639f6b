"""The stored schema: the shape it checks, the JSON schema sent, its version, numbers."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from papersift.schemas import PaperExtraction, json_schema, schema_version
from papersift.schemas.numbers import numbers_in, value_matches


def _answer(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "contribution_types": ["method", "method"],
        "tasks": [{"name": "image classification", "evidence": "improves top-1 accuracy"}],
        "methods": [{"name": "QuickNet", "evidence": "Our method, QuickNet"}],
        "benchmarks": [{"name": "ImageNet", "kind": "dataset", "introduced": False,
                        "evidence": "on ImageNet"}],
        "claimed_gains": [{"metric": "top-1 accuracy", "value": 3.2, "unit": "%",
                           "kind": "improvement", "evidence": "top-1 accuracy by 3.2%"}],
    }
    base.update(changes)
    return base


def test_an_answer_validates_and_repeats_collapse() -> None:
    result = PaperExtraction.model_validate(_answer())
    assert result.contribution_types == ["method"]
    assert result.methods[0].aliases == []


@pytest.mark.parametrize("change", [
    {"contribution_types": []},
    {"contribution_types": ["novelty"]},
    {"tasks": [{"name": "x", "evidence": "improves top-1 accuracy", "extra": 1}]},
    {"claimed_gains": [{"metric": "m", "value": 1, "unit": "furlongs", "kind": "score",
                        "evidence": "by 3.2%"}]},
    {"benchmarks": [{"name": f"B{i}", "kind": "dataset", "introduced": False,
                     "evidence": "on ImageNet"} for i in range(9)]},
])
def test_shape_violations_are_rejected(change: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        PaperExtraction.model_validate(_answer(**change))


def test_lists_are_capped_in_the_json_schema_sent_to_the_model() -> None:
    schema = json_schema()
    for name in ("tasks", "methods", "benchmarks", "claimed_gains"):
        assert schema["properties"][name]["maxItems"] <= 8
    task = schema["$defs"]["Task"]
    assert list(task["properties"]) == ["name", "evidence"]
    assert "word for word" in task["properties"]["evidence"]["description"]


def test_schema_version_is_a_prefixed_content_hash() -> None:
    version = schema_version()
    assert version.startswith("sha256:") and len(version) == 7 + 64
    assert version == schema_version()


def test_numbers_in_text() -> None:
    assert numbers_in("from 1,024 to 2.5x, 12% and GPT-4") == [1024.0, 2.5, 12.0, 4.0]
    assert value_matches(-3.0, [3.0])
    assert not value_matches(3.1, [3.0])
    assert value_matches(2, numbers_in("runs twice as fast"))  # number words are numbers
