"""How user fields are grounded and typed: the grammar's numbers for a Number() field,
choices as classifications ("other", "self-supervised"), and wrong-typed answers coerced
or refused item by item, never failing the paper.

The endpoint is the HAND-WRITTEN FAKE of test_custom_fields (KeyedDrafts over
httpx2.MockTransport), not a model."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import httpx2
from pydantic import BaseModel, Field, create_model

from papersift.extract.access.llm import Endpoint
from papersift.extract.domain.assembly.custom import ground_custom
from papersift.extract.domain.fields import FieldSet
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.schemas import PaperDraft
from papersift.schemas.fields import Choice, CustomField, Flag, Name
from papersift.testing.mock import KeyedDrafts
from papersift.warehouse.query import run_sql
from tests.test_custom_fields import DRAFTS, EXAMPLE, RETRIEVAL, TABULAR, fake_fields_model


class _Setting(BaseModel):
    setting: Annotated[Literal["supervised", "self-supervised", "reinforcement", "other"],
                       Choice(other=("prior baselines fail",))] = Field(
        description="The learning setting.")


def _setting() -> CustomField:
    return FieldSet(_Setting).custom[0]


def _grounded(spec: CustomField, value: Any, text: str) -> tuple[str, str | None]:
    items, _ = ground_custom(spec, value, text)
    values, _, found = items[0]
    return values["value"], None if found is None else text[found.start:found.end]


def test_the_local_grammar_lets_a_number_field_answer_a_size_glued_to_letters(
        tmp_path: Path) -> None:
    """'7B' states 7: the grammar a constrained decoder gets lists it for model_sizes
    (gains keep their result numbers only: sizes are no result)."""
    model = fake_fields_model()
    corpus = tmp_path / "a.txt"
    corpus.write_text(RETRIEVAL + "\n", encoding="utf-8")
    local = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json",
                     constrain_json=True)
    _, summary = run_inputs([str(corpus)], RunSettings(db=tmp_path / "w.duckdb", fields=EXAMPLE),
                            transport=httpx2.MockTransport(model), endpoint=local)
    assert summary.n_extracted == 1
    grammar = model.bodies[0]["response_format"]["schema"]
    assert "7" in grammar["properties"]["model_sizes"]["items"]["enum"]
    assert "7" not in grammar["$defs"]["DraftGain"]["properties"]["value"]["enum"]
    assert run_sql(tmp_path / "w.duckdb", "SELECT value FROM custom_model_sizes").rows == [
        ("7",)]


def test_a_catch_all_choice_is_not_grounded_by_the_word_other() -> None:
    spec = _setting()
    text = "Our model beats other baselines on three datasets."
    assert _grounded(spec, "other", text) == ("other", None)  # kept, flagged
    declared = "We find that prior baselines fail on long inputs."
    assert _grounded(spec, "other", declared) == ("other", "prior baselines fail")


def test_a_choice_is_not_grounded_inside_a_hyphenated_compound_or_a_longer_value() -> None:
    spec = _setting()
    compound = "We study self-supervised pretraining and semi-supervised fine-tuning."
    assert _grounded(spec, "supervised", compound) == ("supervised", None)
    assert _grounded(spec, "self-supervised", compound) == ("self-supervised",
                                                            "self-supervised")
    spaced = "Unlike self supervised methods, we train a supervised classifier."
    assert _grounded(spec, "supervised", spaced) == ("supervised", "supervised")


def test_wrong_typed_answers_are_coerced_or_refused_with_a_reason() -> None:
    fields = FieldSet.from_declaration(FieldSet(_Setting).declaration())
    spec = fields.custom[0]
    text = "We train a supervised classifier."
    assert _grounded(spec, ["supervised"], text) == ("supervised", "supervised")
    assert _grounded(spec, "Self Supervised", text)[0] == "self-supervised"
    items, rejected = ground_custom(spec, ["supervised", "other"], text)
    assert items == [] and rejected == ["setting: expected one value, got a list of 2"]
    _, rejected = ground_custom(spec, {"a": 1}, text)
    assert rejected == ["setting: expected text, got an object"]
    _, rejected = ground_custom(spec, "adversarial", text)
    assert rejected == ["setting: 'adversarial' is not one of supervised, self-supervised, "
                        "reinforcement, other"]


def test_a_wrong_typed_user_field_never_fails_the_paper(tmp_path: Path) -> None:
    wrong = {**DRAFTS["FlowNet"], "model_sizes": "7", "proves_theory": "yes",
             "setting": ["reinforcement", "other"], "baselines": [True, "BERT"]}
    model = KeyedDrafts({"FlowNet": wrong, "tabular": DRAFTS["tabular"]})
    corpus = tmp_path / "a.txt"
    corpus.write_text(f"{RETRIEVAL}\n\n{TABULAR}\n", encoding="utf-8")
    endpoint = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")
    _, summary = run_inputs([str(corpus)], RunSettings(db=tmp_path / "w.duckdb", fields=EXAMPLE),
                            transport=httpx2.MockTransport(model), endpoint=endpoint)
    assert (summary.n_extracted, summary.n_failed) == (2, 0)
    assert len(model.bodies) == 2  # no re-ask: the draft validates
    db = tmp_path / "w.duckdb"
    stored = run_sql(db, "SELECT field, value FROM custom WHERE field IN "
                         "('model_sizes', 'proves_theory', 'baselines', 'setting') "
                         "AND paper_id IN (SELECT paper_id FROM papers WHERE text LIKE "
                         "'We propose%') ORDER BY field, idx").rows
    assert stored == [("baselines", "BERT"), ("model_sizes", "7"), ("proves_theory", "true")]
    rejected = run_sql(db, "SELECT rejected FROM latest_extractions WHERE len(rejected) > 0"
                       ).rows[0][0]
    assert "setting: expected one value, got a list of 2" in rejected
    assert "baselines: expected text, got true/false" in rejected


def test_the_lenient_draft_sends_exactly_the_users_schema() -> None:
    """The draft class that lets wrong types through to grounding has, byte for byte,
    the JSON schema of the user's own model added to PaperDraft: requests (and cache
    keys) are what they were."""
    spec = importlib.util.spec_from_file_location("my_fields_for_test", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    strict = create_model("PaperDraft", __base__=PaperDraft,  # type: ignore[call-overload]
                          **{n: (i.annotation, i) for n, i in module.MyFields.model_fields.items()})
    assert json.dumps(FieldSet(module.MyFields).draft_model.model_json_schema()) == \
        json.dumps(strict.model_json_schema())


class _Defaults(BaseModel):
    solid: Annotated[bool, Flag("solid")] = False
    names: Annotated[list[str], Name()] = []
    kind: Annotated[Literal["a", "b"], Choice()] = Field("a", description="A kind.")


def test_user_defaults_stay_in_the_schema_and_fill_an_omitted_field() -> None:
    strict = create_model("PaperDraft", __base__=PaperDraft,  # type: ignore[call-overload]
                          **{n: (i.annotation, i) for n, i in _Defaults.model_fields.items()})
    lenient = FieldSet(_Defaults).draft_model
    assert json.dumps(lenient.model_json_schema()) == json.dumps(strict.model_json_schema())
    draft: Any = lenient.model_validate({key: value for key, value in DRAFTS["tabular"].items()
                                         if key in PaperDraft.model_fields})
    assert (draft.solid, draft.names, draft.kind) == (False, [], "a")
