"""The draft model of a run with user fields, built from their JSON schema (data).

Each user field takes any JSON value: a wrong-typed answer reaches grounding (which
coerces or refuses it item by item, extract.domain.assembly.custom) instead of failing the paper,
while the model's JSON schema, and so every request, stays exactly the user's.

The class is built once per process from the schema's text, so a Ray worker or a row
worker, which cannot import the user's file, builds the same one; a draft pickles as
that text and its values, and is rebuilt on the other side.
"""

from __future__ import annotations

import copy
import functools
import json
from typing import Annotated, Any, ClassVar

from pydantic import ConfigDict, WithJsonSchema

from papersift.schemas import PaperDraft


class UserDraft(PaperDraft):
    """The base of every draft class with user fields (see :func:`user_draft`)."""

    papersift_user_schema: ClassVar[str] = ""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuilt, (self.papersift_user_schema, dict(self.__dict__),
                           set(self.model_fields_set)))


def _rebuilt(schema_json: str, values: dict[str, Any], fields_set: set[str]) -> PaperDraft:
    return user_draft(schema_json).model_construct(_fields_set=fields_set, **values)


@functools.cache
def user_draft(schema_json: str) -> type[PaperDraft]:
    """PaperDraft with the fields of this JSON schema (its text, in its own order) added."""
    schema = json.loads(schema_json)
    required = list(schema.get("required", []))
    properties = schema.get("properties", {})

    def keep_required(document: dict[str, Any]) -> None:
        document["required"] = [*document.get("required", []), *required]
        for name, prop in properties.items():  # each exactly as the user's model has it
            document["properties"][name] = copy.deepcopy(prop)
        if schema.get("$defs"):
            document.setdefault("$defs", {}).update(schema["$defs"])

    namespace: dict[str, Any] = {
        "__module__": PaperDraft.__module__,
        "__annotations__": {name: Annotated[Any, WithJsonSchema(prop)]
                            for name, prop in properties.items()},
        # an omitted field takes the user's default (a flag's False), else None
        **{name: prop.get("default") for name, prop in properties.items()},
        "papersift_user_schema": schema_json,
        "model_config": ConfigDict(**{**PaperDraft.model_config,
                                      "json_schema_extra": keep_required}),
    }
    return type("PaperDraft", (UserDraft,), namespace)


def plain_class(draft: PaperDraft) -> type[PaperDraft]:
    """The draft's own class without instructor's wrapping: PaperDraft, or the user
    draft class it was made from."""
    return next(k for k in type(draft).__mro__ if k is PaperDraft or UserDraft in k.__bases__)
