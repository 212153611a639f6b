"""The field registry: one declaration per extracted field.

Each :class:`FieldSpec` says what varies from one field to the next: how its items are
grounded in the abstract, its long table and columns, its views (generated from it by
warehouse.views), what a reviewer may correct and the item's key, its column of the wide
paper table, its search filter, workbook sheet and colours, how the report labels and
details an item, and which matcher scores it against gold. An optional field is asked
only by runs that enable it (``--with NAME``), so the default request never changes.
The code that grounds, stores, exports, reports, reviews, searches and scores reads these
declarations; tests check that the migrations create every declared table and that the
generated views follow it (tests/test_field_registry.py, test_generated_views.py).

User-defined fields (``papersift run --fields my_fields.py``) are declared with the markers
at the end of this module; their items go to one generic long table, ``custom_items``.

This module imports nothing of the project's, and no pydantic when it runs (the command
line reads it at start).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pydantic import BaseModel

# How code finds a field's items in the abstract:
#   name    a name looked up as written (exact, ignoring case, then normalised)
#   number  a number the abstract states, with the unit written next to it
#   phrase  a phrase looked up, else the sentence sharing most of its words (flagged fuzzy)
#   flag    true/false, grounded by the sentence holding the field's cue words
#   choice  one of fixed values, grounded like a flag
#   detect  found by code alone, without the model (the draft does not change)
Grounding = Literal["name", "number", "phrase", "flag", "choice", "detect"]
GROUNDINGS: tuple[str, ...] = ("name", "number", "phrase", "flag", "choice", "detect")

# The columns of a grounded item: its evidence sentence and where the item itself sits.
EVIDENCE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("evidence", "VARCHAR"), ("char_start", "INTEGER"), ("char_end", "INTEGER"),
    ("alignment", "VARCHAR"), ("align_score", "DOUBLE"), ("mention_start", "INTEGER"),
    ("mention_end", "INTEGER"),
)
KEY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("extraction_id", "VARCHAR"), ("paper_id", "VARCHAR"), ("idx", "INTEGER"))


@dataclass(frozen=True)
class Column:
    """A column of a field's long table: its name, DuckDB type, and the stored item's
    attribute it is read from (``None``: the same name; ``""``: computed by code)."""

    name: str
    sql: str = "VARCHAR"
    attribute: str | None = None

    @property
    def source(self) -> str:
        return self.name if self.attribute is None else self.attribute


@dataclass(frozen=True)
class Entity:
    """A column of the item whose canonical entity the item view looks up (0008): the
    view adds ``PREFIXentity_id`` and ``canonical`` (``canonical_COLUMN`` with a prefix),
    then the lookup's ``extra`` columns (lookup column, name in the view)."""

    column: str
    kind: str  # entity_lookup.kind
    prefix: str = ""
    extra: tuple[tuple[str, str], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        canonical = f"canonical_{self.column}" if self.prefix else "canonical"
        return (f"{self.prefix}entity_id", canonical, *(name for _, name in self.extra))


@dataclass(frozen=True)
class FieldSpec:
    """Everything that varies by field, declared once."""

    name: str  # its key in the stored extraction (PaperExtraction) or in the draft
    item: str  # one item, as the report, `serve` and corrections call it (its item type)
    title: str  # the report's heading
    table: str  # long table of every extraction's items
    view: str  # the same, for each paper's latest extraction
    grounding: Grounding
    columns: tuple[Column, ...]
    # How eval scores it against gold: names / gains / types / tasks have their own
    # scoring (evaluate.py); artifacts / values are scored one to one over the items a
    # gold paper lists under the field's name (evaluate_fields.py, EXTRA_MATCHERS)
    matcher: str
    label: str = "name"  # the column shown as the item's name
    details: tuple[str, ...] = ()  # columns the report shows beside the name
    grounded: bool = True  # its rows carry evidence and offsets
    from_draft: bool = True  # the model proposes the items; False: code finds them alone
    shown: bool = True  # a section of the report's cards (contribution types are a header)
    # Columns a later migration appended to the table, after the evidence (computed by code)
    appended: tuple[Column, ...] = ()
    # Reviewers' corrections: the columns a reviewer may change (none: not correctable),
    # the columns a correction sets by code, and the columns of the item's identity
    # (its correction key: the first case-folded, the others as written).
    editable: tuple[str, ...] = ()
    derived: tuple[str, ...] = ()
    key: tuple[str, ...] = ("name",)
    # The canonical entities the item view adds (after the review columns)
    entities: tuple[Entity, ...] = ()
    # The wide paper table (paper_summary, papers.csv, the workbook): one column named
    # like the field, each item written as its label followed by these (text, column)
    # parts (a text before a value that is there; a flag's text when it is true).
    in_summary: bool = True
    summary_parts: tuple[tuple[str, str], ...] = ()
    # The report's and the review page's colours of its items: line, background
    colour: tuple[str, str] = ("#475569", "#e2e8f0")
    # Its filter of `papersift search` and `similar` (--NAME TEXT: papers with an item whose
    # label contains TEXT) and the filter's help; such fields also show in their hits.
    search: tuple[str, str] | None = None
    # Its sheet of the xlsx workbook: the view's columns it shows (none: no sheet)
    sheet: tuple[str, ...] = ()
    optional: bool = False  # asked only when a run enables it (`--with NAME`)
    # An optional field the model drafts: what the draft's list of strings asks for (sent
    # with its JSON schema; a number field's strings are held to the abstract's numbers),
    # at most how many, and the module under extract.domain whose
    # ``ground(raw, text, assembled)`` finds its items in the abstract.
    draft: str = ""
    draft_items: int = 8
    grounder: str = ""

    @property
    def export(self) -> str:
        """The name of its long export file (the view's name)."""
        return self.view

    @property
    def in_extraction(self) -> bool:
        """Its items are a list of the stored PaperExtraction (the default drafted
        fields); the others' come beside it (detected, or optional)."""
        return self.from_draft and not self.optional

    @property
    def correctable(self) -> bool:
        return bool(self.editable)

    @property
    def corrected_view(self) -> str:
        return f"corrected_{self.view}"

    @property
    def view_columns(self) -> tuple[str, ...]:
        """Columns the view adds to the table's own: the review state of corrections
        (0009) and the canonical entities (0008), exported after the table's."""
        review = REVIEW_COLUMNS if self.correctable else ()
        return review + tuple(name for entity in self.entities for name in entity.names)

    def column(self, name: str) -> Column:
        """A column of its table by name (evidence columns included)."""
        for found in (*self.columns, *self.appended):
            if found.name == name:
                return found
        sql = dict(self.table_columns()).get(name)
        if sql is None:
            raise KeyError(f"{self.name} has no column {name!r}")
        return Column(name, sql)

    def table_columns(self) -> tuple[tuple[str, str], ...]:
        """Every column its table has, in the migrations' order up to the evidence."""
        own = tuple((c.name, c.sql) for c in self.columns)
        late = tuple((c.name, c.sql) for c in self.appended)
        return KEY_COLUMNS + own + (EVIDENCE_COLUMNS if self.grounded else ()) + late


# Columns the item views add: the review state of corrections (migration 0009).
REVIEW_COLUMNS = ("item_key", "origin", "review")


# A sheet's last columns: where the item sits in the abstract.
_LOCATED = ("evidence", "mention_start", "mention_end", "alignment")


def _named(kind: str) -> tuple[Entity, ...]:
    return (Entity("name", kind),)


BUILTIN_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("contribution_types", "type", "Contribution types",
              "extraction_contribution_types", "contribution_types", "choice",
              (Column("type"),), matcher="types", label="type", grounded=False, shown=False,
              search=("type", "Only papers of this contribution type.")),
    FieldSpec("tasks", "task", "Tasks", "extraction_tasks", "tasks", "phrase",
              (Column("name"),), matcher="tasks", editable=("name",),
              entities=_named("task"), colour=("#2563eb", "#dbeafe"),
              search=("task", "Only papers with a task containing this text.")),
    FieldSpec("methods", "method", "Methods", "extraction_methods", "methods", "name",
              (Column("name"), Column("expansion"), Column("aliases", "VARCHAR[]")),
              matcher="names", details=("expansion", "aliases"), editable=("name",),
              entities=_named("method"), colour=("#c2410c", "#ffe4cc"),
              search=("method", "Only papers with a method containing this text."),
              sheet=("name", "canonical", "entity_id", "expansion", "aliases", *_LOCATED)),
    FieldSpec("benchmarks", "benchmark", "Benchmarks", "extraction_benchmarks", "benchmarks",
              "name", (Column("name"), Column("kind"), Column("introduced", "BOOLEAN")),
              matcher="names", details=("kind",), editable=("name", "introduced"),
              entities=_named("benchmark"), summary_parts=((" (new)", "introduced"),),
              colour=("#15803d", "#d1f2dc"),
              search=("benchmark", "Only papers using a benchmark containing this text."),
              sheet=("name", "canonical", "entity_id", "kind", "introduced", *_LOCATED)),
    FieldSpec("claimed_gains", "gain", "Claimed gains", "extraction_gains", "gains", "number",
              (Column("metric"), Column("value", "DOUBLE"), Column("unit"), Column("kind"),
               Column("baseline"), Column("dataset"),
               Column("value_in_evidence", "BOOLEAN", attribute="")),
              matcher="gains", label="metric", details=("kind", "baseline", "dataset"),
              # how code found the metric, baseline and dataset in the abstract (0006)
              appended=(Column("metric_alignment", attribute=""),
                        Column("baseline_alignment", attribute=""),
                        Column("dataset_alignment", attribute="")),
              editable=("metric", "value", "unit", "baseline", "dataset"),
              derived=("value_in_evidence",), key=("metric", "value"),
              entities=(Entity("metric", "metric", "metric_",
                               (("direction", "metric_direction"),
                                ("metric_kind", "metric_kind"))),
                        Entity("dataset", "benchmark", "dataset_")),
              summary_parts=((" ", "value"), (" ", "unit"), (" vs ", "baseline"),
                             (" on ", "dataset")),
              colour=("#7e22ce", "#eddcfb"),
              sheet=("metric", "canonical_metric", "metric_direction", "metric_kind", "value",
                     "unit", "kind", "baseline", "dataset", "canonical_dataset",
                     "value_in_evidence", *_LOCATED)),
    FieldSpec("artifacts", "artifact", "Artifacts released", "extraction_artifacts",
              "artifacts", "detect", (Column("kind"), Column("url")), matcher="artifacts",
              label="kind", details=("url",), from_draft=False,
              summary_parts=((" ", "url"),), colour=("#0e7490", "#cffafe"),
              search=("artifact", "Only papers that release an artifact of this kind "
                      "(code, data, model or benchmark)."),
              sheet=("kind", "url", *_LOCATED)),
    FieldSpec("prior_methods", "prior_method", "Compared with", "extraction_prior_methods",
              "prior_methods", "name", (Column("name"),), matcher="values",
              editable=("name",), entities=_named("method"), colour=("#be185d", "#fce7f3"),
              sheet=("name", "canonical", "entity_id", *_LOCATED), optional=True,
              draft="Names of earlier methods or models this paper compares against, as the "
              "abstract writes them; never the paper's own methods.", draft_items=6,
              grounder="assembly.prior_methods"),
)
# Kept for readers of the view's columns: a named field's review and entity columns.
ENTITY_COLUMNS = (*REVIEW_COLUMNS, "entity_id", "canonical")


def builtin_fields(enabled: tuple[str, ...] | frozenset[str] = ()) -> tuple[FieldSpec, ...]:
    """The built-in fields of a run: every default one, and the optional ones enabled."""
    return tuple(spec for spec in BUILTIN_FIELDS if not spec.optional or spec.name in enabled)


def optional_fields() -> tuple[FieldSpec, ...]:
    """The built-in fields a run asks for only when enabled (`--with NAME`)."""
    return tuple(spec for spec in BUILTIN_FIELDS if spec.optional)


def correctable_fields() -> tuple[FieldSpec, ...]:
    return tuple(spec for spec in BUILTIN_FIELDS if spec.correctable)


def search_fields() -> tuple[FieldSpec, ...]:
    """The fields `papersift search` filters by and shows (FieldSpec.search)."""
    return tuple(spec for spec in BUILTIN_FIELDS if spec.search is not None)


def summary_fields() -> tuple[FieldSpec, ...]:
    """The default fields with a column in paper_summary (optional ones join the wide
    table when a run stored them)."""
    return tuple(spec for spec in BUILTIN_FIELDS if spec.in_summary and not spec.optional)


# The matchers of fields scored over the items a gold paper lists under their name.
EXTRA_MATCHERS = ("artifacts", "values")


def extra_scored_fields() -> tuple[FieldSpec, ...]:
    """The built-in fields eval scores through evaluate_fields (EXTRA_MATCHERS)."""
    return tuple(spec for spec in BUILTIN_FIELDS if spec.matcher in EXTRA_MATCHERS)


# Items of user-defined fields: one generic long table, one view per field on top of it.
CUSTOM_TABLE = "custom_items"
CUSTOM_VIEW = "custom"
# A user field's items as the report, `serve` and corrections name them: custom-NAME.
CUSTOM_ITEM_PREFIX = "custom-"
CUSTOM_COLUMNS: tuple[tuple[str, str], ...] = (
    *KEY_COLUMNS[:2], ("field", "VARCHAR"), ("idx", "INTEGER"), ("value", "VARCHAR"),
    ("unit", "VARCHAR"), *EVIDENCE_COLUMNS)


def builtin(name: str) -> FieldSpec:
    """The built-in field called ``name`` (its stored key, item or view name)."""
    for spec in BUILTIN_FIELDS:
        if name in (spec.name, spec.item, spec.view):
            return spec
    raise KeyError(name)


def child_tables() -> tuple[str, ...]:
    """Tables whose rows belong to one extraction, in the order they are written."""
    return (*(spec.table for spec in BUILTIN_FIELDS), CUSTOM_TABLE)


# --------------------------------------------------------------------------- user fields


# Catch-all choice values: no word of an abstract states "other", so such a value is
# grounded only through cue phrases declared for it, else kept flagged (alignment none).
GENERIC_CHOICES = frozenset({"other", "others", "none", "unknown", "unclear", "mixed",
                             "misc", "n/a", "na", "not_applicable", "unspecified", "neither"})

ValueCues = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Ground:
    """Marks a user field with its grounding, inside ``Annotated``: ``Annotated[list[str],
    Ground("name")]``. ``cues`` are the words that evidence a true flag; ``value_cues``
    the phrases that evidence each value of a choice."""

    kind: Grounding
    cues: tuple[str, ...] = ()
    value_cues: ValueCues = ()

    def __post_init__(self) -> None:
        if self.kind not in GROUNDINGS or self.kind == "detect":
            raise ValueError(f"grounding {self.kind!r}: use one of name, number, phrase, "
                             "flag, choice")


def Name() -> Ground:  # noqa: N802 - reads as a type annotation in a user's fields file
    return Ground("name")


def Number() -> Ground:  # noqa: N802
    return Ground("number")


def Phrase() -> Ground:  # noqa: N802
    return Ground("phrase")


def Flag(*cues: str) -> Ground:  # noqa: N802
    return Ground("flag", tuple(cues))


def Choice(**cues: str | tuple[str, ...]) -> Ground:  # noqa: N802 - values: the Literal
    """A classification: ``Choice(other=("outperforms prior",))`` declares phrases that
    evidence a value; a value is otherwise evidenced by its own words (never a catch-all
    value such as "other")."""
    return Ground("choice", value_cues=tuple(
        (value, (said,) if isinstance(said, str) else tuple(said))
        for value, said in cues.items()))


_FIELD_NAME = re.compile(r"^[a-z][a-z0-9_]{0,40}$")


@dataclass(frozen=True)
class CustomField:
    """One user-defined field: its draft key, grounding, and the values a choice allows."""

    name: str
    grounding: Grounding
    many: bool  # a list of items, or one value
    cues: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    value_cues: ValueCues = ()
    description: str = ""  # written for the model (the prompt note, the report's heading)

    @property
    def view(self) -> str:
        return f"{CUSTOM_VIEW}_{self.name}"

    @property
    def item_type(self) -> str:
        """Its items' type in the report, `serve` and corrections."""
        return f"{CUSTOM_ITEM_PREFIX}{self.name}"

    @property
    def summary_column(self) -> str:
        """Its column in the wide paper table (paper_summary, papers.csv, the workbook)."""
        return f"{CUSTOM_VIEW}_{self.name}"

    def cues_for(self, value: str) -> tuple[str, ...]:
        """The phrases declared to evidence one choice value."""
        return dict(self.value_cues).get(value, ())

    def as_data(self) -> dict[str, Any]:
        """The declaration as JSON data (shipped to workers, stored in the warehouse)."""
        return {"name": self.name, "grounding": self.grounding, "many": self.many,
                "cues": list(self.cues), "choices": list(self.choices),
                "value_cues": [[value, list(said)] for value, said in self.value_cues],
                "description": self.description}

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> CustomField:
        return cls(data["name"], data["grounding"], bool(data["many"]), tuple(data["cues"]),
                   tuple(data["choices"]),
                   tuple((value, tuple(said)) for value, said in data.get("value_cues", ())),
                   data.get("description", ""))


# More user fields than this is a mistake, not a schema: every field is a part of each
# request's prompt and schema (3,000 of them took minutes to load, silently).
MAX_CUSTOM_FIELDS = 64
# The JSON types a grounding's values may have (one value, or a list's items).
_GROUNDING_TYPES = {"name": {"string"}, "phrase": {"string"}, "choice": {"string"},
                    "number": {"number", "integer", "string"}, "flag": {"boolean"}}


def custom_item_field(item_type: str) -> str | None:
    """The user field an item type (custom-NAME) names, else None."""
    name = item_type.removeprefix(CUSTOM_ITEM_PREFIX)
    return name if name != item_type and _FIELD_NAME.match(name) else None


def builtin_names() -> set[str]:
    """Every name a built-in field goes by (key, item, table, view) and the custom
    fields' own table and view: no user field may take one."""
    names = {CUSTOM_TABLE, CUSTOM_VIEW}
    for spec in BUILTIN_FIELDS:
        names |= {spec.name, spec.item, spec.table, spec.view}
    return names


def custom_fields(model: type[BaseModel], taken: set[str]) -> tuple[CustomField, ...]:
    """The user-defined fields a pydantic model declares; every field needs a ``Ground``
    marker, a value type its grounding can check, a lowercase name, and no clash with
    ``taken`` (the draft's keys and attributes, the built-in fields, the warehouse's
    tables and views: a field's view is ``custom_NAME``). A model that breaks a rule is
    a ValueError naming the field (extract.domain.fields wraps it in the project's error
    root)."""
    if len(model.model_fields) > MAX_CUSTOM_FIELDS:
        raise ValueError(f"{model.__name__}: declares {len(model.model_fields):,} fields; "
                         f"papersift takes at most {MAX_CUSTOM_FIELDS}")
    properties = model.model_json_schema()["properties"]
    found = []
    for name, info in model.model_fields.items():
        marks = [m for m in info.metadata if isinstance(m, Ground)]
        where = f"{model.__name__}.{name}"
        if not marks:
            raise ValueError(f"{where}: annotate it with a grounding, e.g. "
                              "Annotated[list[str], Name()]")
        if not _FIELD_NAME.match(name):
            raise ValueError(f"{where}: the name must be lowercase letters, digits and _")
        clash = sorted({name, f"{CUSTOM_VIEW}_{name}"} & taken)
        if clash:
            raise ValueError(f"{where}: the name {name!r} is taken (by a built-in field, a "
                             "warehouse table or view, or the draft's own attributes: "
                             f"{', '.join(clash)}); rename the field")
        schema = properties[name]
        many = schema.get("type") == "array"
        values = (schema.get("items", {}) if many else schema).get("enum", ())
        kind = marks[0].kind
        if kind == "choice" and not values:
            raise ValueError(f"{where}: a Choice() field needs a Literal[...] of its values")
        _check_type(where, kind, schema.get("items", {}) if many else schema)
        unknown = sorted({value for value, _ in marks[0].value_cues} - set(values))
        if unknown:
            raise ValueError(f"{where}: cues for {', '.join(unknown)}, which is not one of "
                             "its values")
        found.append(CustomField(name, kind, many, marks[0].cues, tuple(values),
                                 marks[0].value_cues, info.description or ""))
    if not found:
        raise ValueError(f"{model.__name__}: declares no fields")
    return tuple(found)


def _check_type(where: str, kind: str, schema: dict[str, Any]) -> None:
    """Refuse a value type the grounding cannot check (an int Flag(), a bool Name()...)."""
    types = {branch.get("type") for branch in schema.get("anyOf", [schema])} - {"null"}
    if "enum" in schema and not types:
        types = {"string"}
    wanted = _GROUNDING_TYPES[kind]
    if not types or not types <= wanted:
        raise ValueError(f"{where}: a {kind} field holds {' or '.join(sorted(wanted))} "
                         f"values, not {' or '.join(sorted(map(str, types))) or 'any'}; "
                         "change its type or its grounding")


def fields_hash(schema: dict[str, Any], fields: tuple[CustomField, ...]) -> str:
    """A content hash of a user's fields: their JSON schema and their groundings (a
    choice's value cues only when declared, so files without them keep their hash)."""
    document: dict[str, Any] = {
        "schema": schema,
        "grounding": [[f.name, f.grounding, list(f.cues)]
                      + ([[v, list(c)] for v, c in f.value_cues] if f.value_cues else [])
                      for f in fields],
    }
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
