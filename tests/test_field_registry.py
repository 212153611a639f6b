"""The field registry: migrations create what it declares, and every reader follows it."""

from __future__ import annotations

import json
import pickle
import time
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel

from papersift.extract.domain.fields import (
    DEFAULT_FIELDS,
    FieldsError,
    FieldSet,
    load_fields,
    prompt_for,
)
from papersift.prompts import load_prompt
from papersift.report.render import FIELD_TITLES
from papersift.schemas import PaperExtraction, draft_json_schema, schema_version
from papersift.schemas.fields import (
    BUILTIN_FIELDS,
    CUSTOM_COLUMNS,
    CUSTOM_TABLE,
    CUSTOM_VIEW,
    Name,
    builtin,
    optional_fields,
)
from papersift.warehouse import connect
from papersift.warehouse.db import schema_names
from papersift.warehouse.export import _LONG
from papersift.warehouse.report import FIELDS
from papersift.warehouse.store import _CHILDREN, WRITABLE_TABLES

EXAMPLE_FIELDS = Path(__file__).resolve().parents[1] / "examples" / "custom-fields" / \
    "my_fields.py"


def _columns(con: object, relation: str) -> list[tuple[str, str]]:
    rows = con.execute(f"DESCRIBE {relation}").fetchall()  # type: ignore[attr-defined]
    return [(row[0], row[1]) for row in rows]


def test_migrations_create_every_registered_table_column_and_view(tmp_path: Path) -> None:
    con = connect(tmp_path / "empty.duckdb")
    for spec in BUILTIN_FIELDS:
        assert _columns(con, spec.table) == list(spec.table_columns()), spec.name
        assert [name for name, _ in _columns(con, spec.view)] == \
            [name for name, _ in spec.table_columns()] + list(spec.view_columns), spec.view
    assert _columns(con, CUSTOM_TABLE) == list(CUSTOM_COLUMNS)
    assert [name for name, _ in _columns(con, CUSTOM_VIEW)] == [n for n, _ in CUSTOM_COLUMNS]


def test_every_reader_covers_every_field() -> None:
    assert set(_CHILDREN) == {spec.table for spec in BUILTIN_FIELDS} | {CUSTOM_TABLE}
    assert set(_CHILDREN) <= set(WRITABLE_TABLES)
    assert {spec.export for spec in BUILTIN_FIELDS} <= set(_LONG)
    shown = [spec.item for spec in BUILTIN_FIELDS if spec.shown]
    assert list(FIELDS) == [item for item in shown if not builtin(item).optional]
    assert set(FIELD_TITLES) == set(shown)
    # the stored extraction holds exactly the default fields the model drafts
    drafted = {spec.name for spec in BUILTIN_FIELDS if spec.in_extraction}
    assert drafted == set(PaperExtraction.model_fields)
    assert builtin("gain").view == "gains" and builtin("artifacts").grounding == "detect"


def test_without_user_fields_the_request_is_what_it_was() -> None:
    numbers = ["12.5", "3"]
    assert json.dumps(DEFAULT_FIELDS.draft_json_schema(numbers)) == \
        json.dumps(draft_json_schema(numbers))
    assert json.dumps(DEFAULT_FIELDS.draft_json_schema()) == json.dumps(draft_json_schema())
    assert DEFAULT_FIELDS.schema_version() == schema_version()
    prompt = load_prompt()
    assert prompt_for(prompt, DEFAULT_FIELDS) is prompt


def test_user_fields_change_the_draft_the_versions_and_the_prompt() -> None:
    fields = load_fields(EXAMPLE_FIELDS)
    assert [f.name for f in fields.custom] == ["baselines", "model_sizes", "limitation",
                                               "proves_theory", "setting"]
    schema = fields.draft_json_schema(["7"])
    base = draft_json_schema(["7"])
    assert set(schema["properties"]) - set(base["properties"]) == {
        f.name for f in fields.custom}
    assert schema["properties"]["model_sizes"]["items"]["enum"] == ["7"]
    assert {"proves_theory", "setting"} <= set(schema["required"])
    assert fields.schema_version() != schema_version()
    prompt = load_prompt()
    asked = prompt_for(prompt, fields)
    assert asked.version != prompt.version and '"baselines" (a list)' in asked.system
    assert asked.system.startswith(prompt.system)


class _Unmarked(BaseModel):
    baselines: list[str]


class _Clashing(BaseModel):
    tasks: Annotated[list[str], Name()]


@pytest.mark.parametrize(("model", "message"), [
    (_Unmarked, "annotate it with a grounding"),
    (_Clashing, "is taken"),
])
def test_a_bad_fields_model_is_refused_with_its_place(model: type[BaseModel],
                                                      message: str) -> None:
    with pytest.raises(FieldsError, match=message):
        FieldSet(model)


def test_a_bad_fields_file_is_named(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("from pydantic import BaseModel\nclass A(BaseModel):\n    x: int = (\n")
    with pytest.raises(FieldsError, match=r"broken\.py: cannot be loaded"):
        load_fields(broken)
    with pytest.raises(FieldsError, match="no fields file"):
        load_fields(tmp_path / "absent.py")
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    with pytest.raises(FieldsError, match="exactly one pydantic model"):
        load_fields(empty)


@pytest.mark.parametrize(("declaration", "message"), [
    ("artifacts: Annotated[list[str], Name()]", "'artifacts' is taken"),  # built-in field
    ("valid_unicode: Annotated[list[str], Name()]", "'valid_unicode' is taken"),  # a method
    ("model_dump: Annotated[list[str], Name()]", "model_dump"),  # pydantic refuses it
    ("items: Annotated[list[str], Name()]", "custom_items"),  # its view would be the table
    ("runs: Annotated[list[str], Name()]", "'runs' is taken"),  # a warehouse table
    ("leaderboard: Annotated[list[str], Name()]", "is taken"),  # a warehouse view
    ("gain: Annotated[list[str], Name()]", "is taken"),  # a built-in item name
    ("solid: Annotated[int, Flag('x')] = 0", "a flag field holds boolean"),
    ("sizes: Annotated[list[bool], Number()]", "a number field holds"),
    ("who: Annotated[list[int], Name()]", "a name field holds string"),
])
def test_a_user_field_that_clashes_or_cannot_be_grounded_is_refused_naming_the_file(
        tmp_path: Path, declaration: str, message: str) -> None:
    path = tmp_path / "mine.py"
    path.write_text("from typing import Annotated\nfrom pydantic import BaseModel\n"
                    "from papersift.schemas.fields import Flag, Name, Number\n"
                    f"class Mine(BaseModel):\n    {declaration}\n", encoding="utf-8")
    with pytest.raises(FieldsError, match=message) as refused:
        load_fields(path, reserved=schema_names())  # as app.run_fields passes them
    assert "mine.py" in str(refused.value)


def test_thousands_of_user_fields_are_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "many.py"
    lines = [f"    f{i}: Annotated[list[str], Name()] = []" for i in range(3000)]
    path.write_text("from typing import Annotated\nfrom pydantic import BaseModel\n"
                    "from papersift.schemas.fields import Name\n"
                    "class Many(BaseModel):\n" + "\n".join(lines) + "\n", encoding="utf-8")
    started = time.monotonic()
    with pytest.raises(FieldsError, match=r"many\.py: .*3,000 fields; papersift takes at most"):
        load_fields(path)
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("name", [spec.name for spec in optional_fields()])
def test_an_optional_field_changes_the_request_only_when_enabled(name: str) -> None:
    """Enabled, an optional built-in field is in the draft, its schema, the prompt and the
    versions, and travels to workers as data (a FieldSet and a draft pickle); an unknown
    name is refused."""
    fields = FieldSet(enabled=(name,))
    assert name in fields.draft_json_schema(["1"])["properties"]
    assert name in fields.draft_json_schema()["required"]
    assert fields.schema_version() != DEFAULT_FIELDS.schema_version()
    assert fields.grounding_version() != DEFAULT_FIELDS.grounding_version()
    prompt = load_prompt()
    assert prompt_for(prompt, fields).version != prompt.version
    again = pickle.loads(pickle.dumps(fields))
    assert [spec.name for spec in again.optional] == [name]
    assert again.schema_version() == fields.schema_version()
    draft = fields.draft_model.model_validate(
        {"tasks": ["t"], "methods": [], "benchmarks": [], "gains": [], "types": ["method"],
         name: ["X"]})
    assert getattr(pickle.loads(pickle.dumps(draft)), name) == ["X"]
    with pytest.raises(FieldsError, match="no optional field"):
        FieldSet(enabled=("no_such_field",))
