"""Grounding a user-defined field's values with the built-in strategies.

name     looked up as written (extract.domain.lookup.assemble_spans.find_name); not found: rejected
number   a number the abstract states, with the unit written next to it; else rejected
phrase   as a task phrase: found, or the sentence sharing most of its words (flagged)
flag     true/false; true is evidenced by the first sentence holding one of its cue words
choice   a classification, not a span: a value is evidenced by a phrase declared for it
         (``Choice(other=(...))``), else by its own words where they stand alone: not
         inside a hyphenated compound ("supervised" in "self-supervised"), not part of a
         longer value of the same field; a catch-all value ("other") only by its cues

Flags, choices and phrases are kept when no sentence supports them (a false flag never
has one), with alignment ``none`` (flagged), as task phrases are; names and numbers not
in the abstract are never stored, and are listed with the extraction's rejected items.

An answer of the wrong type (a string for a flag, a list for a choice) is coerced when
its meaning is plain ("7" for a number, ["self-supervised"] for a choice), else refused
item by item with the reason in the rejected items: a user field never fails a paper.
"""

from __future__ import annotations

import re
from typing import Any

from papersift.extract.domain.assembly.assemble_gains import unit_at
from papersift.extract.domain.assembly.assemble_names import ground_tasks
from papersift.extract.domain.lookup.assemble_spans import (
    Found,
    evidence_window,
    find_name,
    sentence_of,
    sentence_spans,
)
from papersift.extract.domain.lookup.wholeword import whole_word
from papersift.schemas import PaperDraft
from papersift.schemas.fields import GENERIC_CHOICES, CustomField
from papersift.schemas.numbers import number_spans, numbers_in

CustomItem = tuple[dict[str, Any], str, Found | None]  # column values, evidence, where


def _kind(value: Any) -> str:
    """A JSON value's kind, as a refusal names it."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "a list"
    return "an object" if isinstance(value, dict) else "text"


def _values(spec: CustomField, raw: Any) -> tuple[list[Any], list[str]]:
    """The answer's items (one value is a list of one), and why any were refused."""
    if raw is None:
        return [], []
    if isinstance(raw, (list, tuple)):
        if spec.many or len(raw) <= 1:
            return list(raw), []
        return [], [f"{spec.name}: expected one value, got a list of {len(raw)}"]
    return [raw], []


_TRUE, _FALSE = frozenset({"true", "yes", "1"}), frozenset({"false", "no", "0"})


def _squash(value: str) -> str:
    return re.sub(r"[\s_-]+", " ", value.strip().lower())


def coerce(spec: CustomField, value: Any) -> tuple[Any, str | None]:
    """One item as its grounding reads it (text; "true"/"false" for a flag; a declared
    value for a choice), or None and the reason it is refused."""
    plain = not isinstance(value, (bool, list, tuple, dict)) and value is not None
    if spec.grounding == "flag":
        said = str(value).strip().lower() if plain or isinstance(value, bool) else None
        if said in _TRUE or said in _FALSE:
            return ("true" if said in _TRUE else "false"), None
        return None, f"{spec.name}: expected true or false, got {_kind(value)} {value!r}"
    if not plain:
        return None, f"{spec.name}: expected text, got {_kind(value)}"
    text = (str(int(value)) if isinstance(value, float) and value.is_integer()
            else str(value).strip())
    if spec.grounding == "number" and not numbers_in(text):
        return None, f"{spec.name}: {text!r} states no number"
    if spec.grounding == "choice":
        named = {_squash(choice): choice for choice in spec.choices}.get(_squash(text))
        if named is None:
            return None, f"{spec.name}: {text!r} is not one of {', '.join(spec.choices)}"
        return named, None
    return (text, None) if text else (None, f"{spec.name}: an empty value")


def _at(text: str, spans: list[tuple[int, int]], start: int, end: int,
        status: str = "exact") -> tuple[str, Found]:
    sentence = sentence_of(spans, start, end)
    low, high = evidence_window(text, sentence, (start, end))
    return text[low:high], Found(status, start, end, (low, high))  # type: ignore[arg-type]


def _in_compound(text: str, start: int, end: int) -> bool:
    """A word joined by a hyphen to a word before or after it ('self-supervised')."""
    before = text[max(0, start - 2):start]
    after = text[end:end + 2]
    return (len(before) == 2 and before[1] == "-" and before[0].isalnum()) or (
        len(after) == 2 and after[0] == "-" and after[1].isalnum())


def _flag(spec: CustomField, value: str, text: str,
          spans: list[tuple[int, int]]) -> CustomItem:
    """A true flag, evidenced by the first sentence holding one of its cue words (else
    its name's words); a false flag has no evidence (alignment none, flagged)."""
    words = [] if value != "true" else (
        list(spec.cues) or [w for w in spec.name.split("_") if len(w) > 2])
    for word in words:
        match = whole_word(word, re.I).search(text)
        if match:
            evidence, found = _at(text, spans, match.start(), match.end())
            return {"value": value}, evidence, found
    return {"value": value}, "", None


def _choice(spec: CustomField, value: str, text: str,
            spans: list[tuple[int, int]]) -> CustomItem:
    """A choice, evidenced by its declared cue phrases, else by its own words standing
    alone; kept with no evidence (flagged) when nothing in the abstract says it."""
    own = value.replace("_", " ")
    phrases = list(spec.cues_for(value))
    if value.lower() not in GENERIC_CHOICES:
        phrases.append(own)
    longer = [other.replace("_", " ") for other in spec.choices
              if other != value and own.lower() in other.replace("_", " ").lower()]
    taken = [(m.start(), m.end()) for other in longer
             for m in whole_word(other, re.I).finditer(text)]
    for phrase in phrases:
        for match in whole_word(phrase, re.I).finditer(text):
            start, end = match.start(), match.end()
            if _in_compound(text, start, end) or any(
                    low <= start and end <= high for low, high in taken):
                continue
            evidence, found = _at(text, spans, start, end)
            return {"value": value}, evidence, found
    return {"value": value}, "", None


def ground_custom(spec: CustomField, raw: Any, text: str) -> tuple[list[CustomItem], list[str]]:
    """The grounded items of one user field's value(s), and what was rejected."""
    spans = sentence_spans(text) or [(0, len(text))]
    items: list[CustomItem] = []
    used: set[int] = set()
    values, rejected = _values(spec, raw)
    for answered in values:
        value, refused = coerce(spec, answered)
        if refused is not None:
            rejected.append(refused)
            continue
        if spec.grounding == "flag":
            items.append(_flag(spec, value, text, spans))
        elif spec.grounding == "choice":
            items.append(_choice(spec, value, text, spans))
        elif spec.grounding == "phrase":
            draft = PaperDraft.model_construct(tasks=[str(value)])
            for task, found in zip(*ground_tasks(draft, text, spans), strict=True):
                items.append(({"value": task.name}, task.evidence, found))
        elif spec.grounding == "name":
            spot = find_name(str(value), text)
            if spot is None:
                rejected.append(f"{spec.name} {value!r}: not in the abstract")
                continue
            status, start, end = spot
            evidence, found = _at(text, spans, start, end, status)
            items.append(({"value": text[start:end]}, evidence, found))
        else:  # number
            item = _number(spec, str(value), text, spans, used)
            if item is None:
                rejected.append(f"{spec.name} {value!r}: number not in the abstract")
            else:
                items.append(item)
    return items, rejected


def _number(spec: CustomField, value: str, text: str, spans: list[tuple[int, int]],
            used: set[int]) -> CustomItem | None:
    wanted = numbers_in(value)
    if not wanted:
        return None
    for number, start, end in number_spans(text):
        if start not in used and abs(number - wanted[0]) <= 1e-9 * max(1.0, abs(number)):
            used.add(start)
            evidence, found = _at(text, spans, start, end)
            unit = unit_at(text, start, end)
            return {"value": text[start:end], "unit": unit}, evidence, found
    return None
