"""The field registry at work: the draft a run asks for, grounding and rows per field.

:class:`FieldSet` is a run's fields: the built-in ones (schemas.fields.BUILTIN_FIELDS),
the optional ones a run enables (``--with NAME``) and, with ``--fields``, a user's.
Without the last two every answer is exactly what it was: the same draft type, JSON
schema, schema version and prompt. With them, their fields are added to the draft and
its schema, and the schema version (so every cache key) covers them.

:func:`ground` is the whole of grounding: extract.domain.assembly.assemble for the draft's own
fields, the detectors for fields code finds alone (artifacts), and the strategies of
schemas.fields for user fields. :func:`item_rows` turns any field's items into rows of
its long table, as its declaration says.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from papersift.errors import PapersiftError
from papersift.extract.domain.assembly.assemble import Assembled, Found, assemble, result_numbers
from papersift.extract.domain.assembly.custom import ground_custom
from papersift.extract.domain.lookup.grounding import Alignment
from papersift.extract.domain.rules.artifacts import DETECTION_VERSION, detect_artifacts
from papersift.extract.domain.user_draft import user_draft
from papersift.prompts import Prompt, field_lines
from papersift.schemas import PaperDraft, draft_json_schema, schema_version
from papersift.schemas.draft import MAX_NAME_CHARS
from papersift.schemas.fields import (
    CustomField,
    FieldSpec,
    builtin_fields,
    builtin_names,
    custom_fields,
    fields_hash,
    optional_fields,
)
from papersift.schemas.numbers import number_spans
from papersift.schemas.paper import content_hash


@dataclass(frozen=True)
class ExtraItem:
    """An item of a field outside the stored PaperExtraction (detected or user-defined):
    its column values, evidence and where it was found."""

    values: dict[str, Any]
    evidence: str
    found: Found | None

    def alignment(self) -> Alignment:
        if self.found is None:
            return Alignment("none", None, None, 0.0)
        return Alignment(self.found.status, *self.found.sentence, 1.0)


@dataclass
class Grounded:
    """Everything grounding produced for one answer: the assembled draft fields, and the
    items of every other field, by field name."""

    assembled: Assembled
    extra: dict[str, list[ExtraItem]] = field(default_factory=dict)


# Fields code finds in the abstract alone: the detector of each, by field name.
DETECTORS: dict[str, Callable[[str], list[ExtraItem]]] = {
    "artifacts": lambda text: [
        ExtraItem({"kind": a.kind, "url": a.url}, a.evidence,
                  Found("exact", a.mention[0], a.mention[1], a.sentence))
        for a in detect_artifacts(text)],
}
# Part of every extraction id: a change to what code finds alone re-grounds cached
# answers; a change to how user fields are grounded (CUSTOM_GROUNDING) re-grounds those
# of runs that declare some (FieldSet.grounding_version), leaving other ids as they were.
GROUNDING_VERSION = f"{DETECTION_VERSION};custom/1"
CUSTOM_GROUNDING = "custom/2"  # 2: choices are classifications (cues, no compounds)


class FieldsError(PapersiftError):
    """A user's fields (file or model) cannot be used; the message names the place."""


class FieldSet:
    """The fields one run extracts: the built-in ones, plus a user's (``--fields``).
    A user's fields are data once loaded: their JSON schema and declarations
    (:meth:`declaration`). A FieldSet pickles as that data and is rebuilt from it in a
    Ray shard or a row worker, where the user's own class cannot be imported.
    ``reserved``: other names a field may not take (the warehouse's tables and views,
    warehouse.db.schema_names, which the caller passes: the domain reads no warehouse)."""

    def __init__(self, user_model: type[BaseModel] | None = None,
                 source: str | None = None, reserved: Collection[str] = (),
                 enabled: Collection[str] = ()) -> None:
        taken = {*PaperDraft.model_fields, *dir(PaperDraft), *builtin_names(), *reserved}
        try:
            custom = custom_fields(user_model, taken) if user_model is not None else ()
        except ValueError as error:
            raise FieldsError(str(error)) from error
        schema = user_model.model_json_schema() if user_model is not None else None
        self._set(schema, custom, source, _optional(enabled))

    def _set(self, schema: dict[str, Any] | None, custom: tuple[CustomField, ...],
             source: str | None, optional: tuple[FieldSpec, ...] = ()) -> None:
        self.user_schema = schema
        self.custom: tuple[CustomField, ...] = custom
        self.source = source
        self.optional: tuple[FieldSpec, ...] = optional  # the optional fields enabled
        added = self._added_schema()
        self.draft_model: type[PaperDraft] = (
            PaperDraft if added is None else user_draft(json.dumps(added)))

    def _added_schema(self) -> dict[str, Any] | None:
        """The draft's fields beyond PaperDraft's: the user's, then the optional ones
        enabled (a list of names each, required); None when there are none."""
        if not self.optional:
            return self.user_schema
        schema = copy.deepcopy(self.user_schema or {"properties": {}})
        for spec in self.optional:
            schema["properties"][spec.name] = {
                "description": spec.draft, "items": {"maxLength": MAX_NAME_CHARS,
                                                     "type": "string"},
                "maxItems": spec.draft_items, "type": "array"}
            schema["required"] = [*schema.get("required", []), spec.name]
        return schema

    @classmethod
    def from_declaration(cls, declaration: dict[str, Any] | None) -> FieldSet:
        """The FieldSet a :meth:`declaration` describes (None: the built-in fields)."""
        if declaration is None:
            return DEFAULT_FIELDS
        fields = cls.__new__(cls)
        fields._set(declaration["schema"],
                    tuple(CustomField.from_data(f) for f in declaration["fields"]),
                    declaration.get("source"), _optional(declaration.get("optional", ())))
        return fields

    def declaration(self) -> dict[str, Any] | None:
        """The user's fields as JSON data: their schema, declarations and file, and the
        optional built-in fields enabled (None: the default fields alone)."""
        if self.user_schema is None and not self.optional:
            return None
        found: dict[str, Any] = {"schema": self.user_schema,
                                 "fields": [f.as_data() for f in self.custom],
                                 "source": self.source}
        if self.optional:
            found["optional"] = [spec.name for spec in self.optional]
        return found

    def __reduce__(self) -> tuple[Any, ...]:
        return (FieldSet.from_declaration, (self.declaration(),))

    @property
    def builtin(self) -> tuple[FieldSpec, ...]:
        return builtin_fields(frozenset(spec.name for spec in self.optional))

    def grounding_version(self) -> str:
        """The grounding code's version in this run's extraction ids."""
        version = GROUNDING_VERSION if not self.custom else \
            f"{GROUNDING_VERSION};{CUSTOM_GROUNDING}"
        return version + "".join(f";{spec.name}" for spec in self.optional)

    def schema_version(self) -> str:
        """The built-in schema version, or a hash over it, the user's fields and the
        optional fields enabled."""
        if self.user_schema is None and not self.optional:
            return schema_version()
        user = fields_hash(self.user_schema, self.custom) if self.user_schema else ""
        if self.optional:
            user = content_hash({"user": user, "optional": [spec.name for spec in
                                                            self.optional]})
        return _user_version(schema_version(), user)

    def draft_json_schema(self, numbers: list[str] | None = None,
                          stated: list[str] | None = None) -> dict[str, Any]:
        """The draft's JSON schema (see schemas.draft), with the user's fields added. A
        gain's value may only be one of ``numbers`` (those that could be results); a
        user's number field one of ``stated`` (every number written, '7' of '7B'
        included; ``numbers`` when not given)."""
        schema = draft_json_schema(numbers)
        own = self._added_schema()
        if own is None:
            return schema
        own = copy.deepcopy(own)
        allowed = numbers if stated is None else stated
        for name, prop in own.get("properties", {}).items():
            if self._groundings().get(name) == "number" and allowed is not None:
                _numbers_only(prop, allowed)
            schema["properties"][name] = prop
        schema["required"] = [*schema.get("required", []), *own.get("required", [])]
        schema.setdefault("$defs", {}).update(own.get("$defs", {}))
        return schema

    def _groundings(self) -> dict[str, str]:
        """The grounding of each field added to the draft (user and optional fields): a
        number field's values are held to the abstract's numbers (the number policy)."""
        return {**{spec.name: spec.grounding for spec in self.optional},
                **{field.name: field.grounding for field in self.custom}}

    def grammar(self, text: str) -> dict[str, Any]:
        """The schema a constrained decoder gets for this abstract: gains from its result
        numbers, added number fields from every number it writes."""
        if "number" not in self._groundings().values():
            return self.draft_json_schema(result_numbers(text))
        return self.draft_json_schema(result_numbers(text), stated_numbers(text))

    def prompt_note(self) -> str:
        """The lines that tell the model about the user's fields and the optional fields
        enabled (empty without any)."""
        if not self.custom and not self.optional:
            return ""
        lines = ["Also answer these fields, in the same JSON object:"]
        for spec in self.custom:
            shape = "a list" if spec.many else "one value"
            lines.append(f'- "{spec.name}" ({shape}): {spec.description or spec.name}')
        lines += [field_lines(spec.name) for spec in self.optional]
        return "\n".join(lines)


def _optional(names: Collection[str]) -> tuple[FieldSpec, ...]:
    """The optional built-in fields of these names, in the registry's order."""
    known = {spec.name for spec in optional_fields()}
    unknown = sorted(set(names) - known)
    if unknown:
        raise FieldsError(f"no optional field {', '.join(unknown)}; one of "
                          f"{', '.join(sorted(known)) or 'none'}")
    return tuple(spec for spec in optional_fields() if spec.name in names)


@functools.cache
def _grounder(module: str) -> Callable[..., tuple[list[Any], list[str]]]:
    """The ``ground`` function of an optional drafted field (FieldSpec.grounder)."""
    found: Callable[..., tuple[list[Any], list[str]]] = importlib.import_module(
        f"papersift.extract.domain.{module}").ground
    return found


@functools.cache
def _user_version(base: str, user: str) -> str:
    return content_hash({"draft_and_stored": base, "user_fields": user})


def stated_numbers(text: str) -> list[str]:
    """Every number the abstract writes in digits, as written, without repeats: '7' of
    '7B' too (result_numbers leaves out sizes, counts and names)."""
    return list(dict.fromkeys(text[start:end] for _, start, end in number_spans(text)))


def _numbers_only(prop: dict[str, Any], numbers: list[str]) -> None:
    target = prop.get("items", prop) if prop.get("type") == "array" else prop
    if not numbers and prop.get("type") == "array":
        prop["maxItems"] = 0
    elif numbers:
        target.pop("maxLength", None)
        target["enum"] = list(numbers)


def load_fields(path: str | Path, reserved: Collection[str] = (),
                enabled: Collection[str] = ()) -> FieldSet:
    """A user's fields file: a Python file defining one pydantic model whose fields carry
    a grounding marker (schemas.fields.Name(), Number(), Phrase(), Flag(), Choice());
    ``reserved`` and ``enabled`` (optional built-in fields) as for FieldSet."""
    path = Path(path)
    if not path.is_file():
        raise FieldsError(f"no fields file at {path}")
    name = f"papersift_user_fields_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise FieldsError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's code: any error is theirs, said with the file
        raise FieldsError(f"{path}: cannot be loaded: {type(error).__name__}: {error}") \
            from error
    models = [value for value in vars(module).values()
              if inspect.isclass(value) and issubclass(value, BaseModel)
              and value is not BaseModel and value.__module__ == name]
    if len(models) != 1:
        raise FieldsError(f"{path}: define exactly one pydantic model of fields "
                              f"(found {len(models)})")
    try:
        return FieldSet(models[0], source=str(path), reserved=reserved, enabled=enabled)
    except FieldsError as error:
        raise FieldsError(f"{path}: {error}") from error


DEFAULT_FIELDS = FieldSet()


def ground(draft: PaperDraft, text: str, fields: FieldSet = DEFAULT_FIELDS,
           title: str | None = None) -> Grounded:
    """Ground one answer in its abstract (and the input's title, which may name the
    method): every field of the run, each by its strategy."""
    grounded = Grounded(assemble(draft, text, title))
    for spec in fields.builtin:
        detector = DETECTORS.get(spec.name)
        if not spec.from_draft and detector is not None:
            grounded.extra[spec.name] = detector(text)
    for spec in fields.optional:
        found, rejected = _grounder(spec.grounder)(getattr(draft, spec.name, None), text,
                                                   grounded.assembled)
        grounded.extra[spec.name] = [ExtraItem(values, evidence, spot)
                                     for values, evidence, spot in found]
        grounded.assembled.rejected.extend(rejected)
    for custom in fields.custom:
        found, rejected = ground_custom(custom, getattr(draft, custom.name, None), text)
        grounded.extra[custom.name] = [ExtraItem(values, evidence, spot)
                                       for values, evidence, spot in found]
        grounded.assembled.rejected.extend(rejected)
    return grounded


def item_rows(spec: FieldSpec, items: list[Any]) -> list[dict[str, Any]]:
    """The declared columns of each item (attributes of a stored item, or an ExtraItem's
    values); computed columns and evidence are added by the caller."""
    rows = []
    for idx, item in enumerate(items):
        row: dict[str, Any] = {"idx": idx}
        for column in spec.columns:
            if column.source == "":
                continue
            if isinstance(item, ExtraItem):
                value = item.values.get(column.source)
            elif isinstance(item, str):
                value = item
            else:
                value = getattr(item, column.source)
            row[column.name] = list(value) if isinstance(value, (list, tuple)) else value
        rows.append(row)
    return rows


def prompt_for(prompt: Prompt, fields: FieldSet) -> Prompt:
    """The prompt a run sends: unchanged without user fields; with them, their lines are
    added to the instructions and the version covers them."""
    note = fields.prompt_note()
    if not note:
        return prompt
    version = content_hash({"prompt": prompt.version, "note": note})
    return dataclasses.replace(prompt, system=f"{prompt.system}\n\n{note}", version=version)
