"""A reviewed paper as a few-shot example: the answer the model should have given.

The answer has the shape of the prompt's own examples (a PaperDraft). Every name, phrase
and number in it is a slice of the paper's own abstract: an item whose (corrected) name
or metric the abstract does not contain is left out and reported, and the whole answer
is then grounded by code (``assemble``) as a model's would be; an example that code would
not keep as it is is no example.

A user field (``--fields``) is answered as the model would answer it: its corrected
values, each grounded by the field's own strategy (a name or number the abstract lacks is
left out, a choice or flag is kept as the classification it is).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from papersift.extract.domain.assembly.assemble import assemble, result_numbers
from papersift.extract.domain.assembly.custom import ground_custom
from papersift.schemas import PaperDraft
from papersift.schemas.fields import CustomField
from papersift.schemas.numbers import numbers_in, value_matches

# PaperDraft's limits per list, read from its own declaration (max_length)
LIMITS: dict[str, int] = {
    name: next(m.max_length for m in info.metadata if hasattr(m, "max_length"))
    for name, info in PaperDraft.model_fields.items()}


@dataclass
class ExampleResult:
    """A paper's example answer (None when it makes none), and why items were left out."""

    paper_id: str
    answer: dict[str, Any] | None = None
    left_out: list[str] = field(default_factory=list)
    reason: str | None = None  # why there is no answer


def slice_of(text: str, name: str | None) -> str | None:
    """``name`` as the abstract writes it (exact, else ignoring case), or None."""
    if not name or not name.strip():
        return None
    name = name.strip()
    start = text.find(name)
    if start < 0:
        start = text.lower().find(name.lower())
        if start < 0 or len(text.lower()) != len(text):
            return None
    found = text[start:start + len(name)]
    return found if found.lower() == name.lower() else None


def _number_as_written(text: str, value: Any) -> str | None:
    if value is None:
        return None
    for written in result_numbers(text):
        if value_matches(float(value), numbers_in(written)):
            return written
    return None


def _names(text: str, rows: Sequence[Mapping[str, Any]], kind: str,
           left_out: list[str]) -> list[str]:
    names: list[str] = []
    for row in rows:
        found = slice_of(text, row.get("name"))
        if found is None:
            left_out.append(f"{kind} {row.get('name')!r}: not in the abstract")
        elif found not in names:
            names.append(found)
    return names


def _gains(text: str, rows: Sequence[Mapping[str, Any]],
           left_out: list[str]) -> list[dict[str, Any]]:
    gains: list[dict[str, Any]] = []
    for row in rows:
        label = f"gain {row.get('metric')!r} {row.get('value')}"
        value = _number_as_written(text, row.get("value"))
        metric = slice_of(text, row.get("metric"))
        if value is None or metric is None:
            left_out.append(f"{label}: its {'value' if value is None else 'metric'} is not "
                            "in the abstract")
            continue
        gain: dict[str, Any] = {"value": value, "metric": metric}
        for key, column in (("vs", "baseline"), ("on", "dataset")):
            found = slice_of(text, row.get(column))
            if found is not None:
                gain[key] = found
            elif row.get(column):
                left_out.append(f"{label}: its {column} {row.get(column)!r} is not in the "
                                "abstract (left out)")
        if gain not in gains:
            gains.append(gain)
    return gains


def _user_answers(text: str, paper: Mapping[str, Any], fields: Sequence[CustomField],
                  left_out: list[str]) -> dict[str, Any]:
    """Each user field's answer: its corrected values as grounding keeps them."""
    answers: dict[str, Any] = {}
    for spec in fields:
        values = [row["value"] for row in paper.get("custom", {}).get(spec.name, [])]
        items, rejected = ground_custom(spec, values, text)
        left_out.extend(rejected)
        kept: list[Any] = [values_of["value"] for values_of, _, _ in items]
        if spec.grounding == "flag":
            kept = [value == "true" for value in kept]
        if spec.many:
            answers[spec.name] = list(dict.fromkeys(kept))
        elif kept:
            answers[spec.name] = kept[0]
    return answers


def example_answer(paper: Mapping[str, Any],
                   fields: Sequence[CustomField] = ()) -> ExampleResult:
    """The grounded example answer of one reviewed paper (see warehouse/reviewed.py for
    the shape of ``paper``), with the answers of these user fields."""
    text = str(paper["text"])
    result = ExampleResult(paper_id=str(paper["paper_id"]))
    left = result.left_out
    answer: dict[str, Any] = {
        "tasks": _names(text, paper.get("task", []), "task", left),
        "methods": _names(text, paper.get("method", []), "method", left),
        "benchmarks": [],
        "gains": _gains(text, paper.get("gain", []), left),
        "types": list(dict.fromkeys(paper.get("types", []))),
    }
    for row in paper.get("benchmark", []):
        found = slice_of(text, row.get("name"))
        if found is None:
            left.append(f"benchmark {row.get('name')!r}: not in the abstract")
        elif found not in [b["name"] for b in answer["benchmarks"]]:
            answer["benchmarks"].append({"name": found, "new": bool(row.get("introduced"))})
    for key, limit in LIMITS.items():
        if len(answer[key]) > limit:
            left.extend(f"{key[:-1]} {item!r}: over the {limit} a draft may hold"
                        for item in answer[key][limit:])
            answer[key] = answer[key][:limit]
    own = _user_answers(text, paper, fields, left)
    for _ in range(3):  # leave out what code refuses, then ground again
        reason = _check(answer, text)
        if reason is None:
            result.answer = {**answer, **own}
            return result
        if not isinstance(reason, list):
            result.reason = reason
            return result
        left.extend(f"{refused} (code refuses it)" for refused in reason)
        answer = _without(answer, reason)
    result.reason = "code kept refusing its items"
    return result


def _check(answer: dict[str, Any], text: str) -> str | list[str] | None:
    """None when code keeps the answer as it is; else why not: a sentence, or the items
    code refuses (its reasons)."""
    if not answer["tasks"]:
        return "no task of it is in its abstract"
    if not answer["types"]:
        return "it has no contribution type"
    try:
        draft = PaperDraft.model_validate(answer)
    except ValidationError as error:
        return f"not a valid draft: {error.errors()[0]['msg']}"
    return list(assemble(draft, text).rejected) or None


def _without(answer: dict[str, Any], refused: list[str]) -> dict[str, Any]:
    """The answer without the items code's reasons name (``KIND 'NAME': why``)."""
    def named(kind: str, label: str) -> bool:
        return any(reason.startswith(f"{kind} {label!r}") for reason in refused)

    return {
        "tasks": [t for t in answer["tasks"] if not named("task", t)],
        "methods": [m for m in answer["methods"] if not named("method", m)],
        "benchmarks": [b for b in answer["benchmarks"] if not named("benchmark", b["name"])],
        "gains": [g for g in answer["gains"] if not named("gain", g["value"])],
        "types": answer["types"],
    }
