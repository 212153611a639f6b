"""Schema v1 validators: quotes must be in the abstract, numbers in their quotes."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from papersift.extract.domain.grounding import locator
from papersift.schemas import PaperExtraction, json_schema, schema_version
from papersift.schemas.numbers import numbers_in, value_matches

TEXT = "Our method, QuickNet, improves top-1 accuracy by 3.2% on ImageNet and runs twice as fast."


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


def _validate(answer: dict[str, Any]) -> PaperExtraction:
    return PaperExtraction.model_validate(answer, context={"locate": locator(TEXT)})


def test_a_grounded_answer_validates_and_repeats_collapse() -> None:
    result = _validate(_answer())
    assert result.contribution_types == ["method"]
    assert result.methods[0].aliases == []


def test_a_quote_not_in_the_abstract_is_rejected() -> None:
    answer = _answer(methods=[{"name": "QuickNet", "evidence": "We present the amazing QuickNet"}])
    with pytest.raises(ValidationError, match="not in the abstract"):
        _validate(answer)


def test_a_value_not_in_its_quote_is_rejected() -> None:
    gains = [{"metric": "top-1 accuracy", "value": 4.0, "unit": "%", "kind": "improvement",
              "evidence": "top-1 accuracy by 3.2%"}]
    with pytest.raises(ValidationError, match="does not occur in the evidence"):
        _validate(_answer(claimed_gains=gains))


def test_number_words_count_as_numbers() -> None:
    gains = [{"metric": "speed", "value": 2, "unit": "x", "kind": "efficiency",
              "evidence": "runs twice as fast"}]
    assert _validate(_answer(claimed_gains=gains)).claimed_gains[0].value == 2


def test_without_context_only_the_shape_is_checked() -> None:
    answer = _answer(methods=[{"name": "QuickNet", "evidence": "words not in any abstract"}])
    assert PaperExtraction.model_validate(answer).methods[0].name == "QuickNet"


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
