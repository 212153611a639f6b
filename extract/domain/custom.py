"""Grounding a user-defined field's values with the built-in strategies.

name     looked up as written (extract.domain.assemble_spans.find_name); not found: rejected
number   a number the abstract states, with the unit written next to it; else rejected
phrase   as a task phrase: found, or the sentence sharing most of its words (flagged)
flag     true/false; true is evidenced by the first sentence holding one of its cue words
choice   a value, evidenced by the first sentence naming it

Flags, choices and phrases are kept when no sentence supports them (a false flag never
has one), with alignment ``none`` (flagged), as task phrases are; names and numbers not
in the abstract are never stored, and are listed with the extraction's rejected items.
"""

from __future__ import annotations

import re
from typing import Any

from papersift.extract.domain.assemble_gains import unit_at
from papersift.extract.domain.assemble_names import ground_tasks
from papersift.extract.domain.assemble_spans import (
    Found,
    evidence_window,
    find_name,
    sentence_of,
    sentence_spans,
)
from papersift.extract.domain.wholeword import whole_word
from papersift.schemas import PaperDraft
from papersift.schemas.fields import CustomField
from papersift.schemas.numbers import number_spans, numbers_in

CustomItem = tuple[dict[str, Any], str, Found | None]  # column values, evidence, where


def _values(raw: Any) -> list[Any]:
    if raw is None:
        return []
    return list(raw) if isinstance(raw, (list, tuple)) else [raw]


def _at(text: str, spans: list[tuple[int, int]], start: int, end: int,
        status: str = "exact") -> tuple[str, Found]:
    sentence = sentence_of(spans, start, end)
    low, high = evidence_window(text, sentence, (start, end))
    return text[low:high], Found(status, start, end, (low, high))  # type: ignore[arg-type]


def _words_for(spec: CustomField, value: str) -> list[str]:
    """What evidences a value: a true flag's cue words (else its name's words), a
    choice's own words ('self-supervised', 'reinforcement'); a false flag nothing."""
    if spec.grounding == "choice":
        return [value.replace("_", " ")]
    if value != "true":
        return []
    return list(spec.cues) or [w for w in spec.name.split("_") if len(w) > 2]


def _by_words(spec: CustomField, value: str, text: str,
              spans: list[tuple[int, int]]) -> CustomItem:
    """A flag or choice, evidenced by the first sentence holding one of its words; kept
    with no evidence (alignment none, flagged) when no sentence does."""
    for word in _words_for(spec, value):
        match = whole_word(word, re.I).search(text)
        if match:
            evidence, found = _at(text, spans, match.start(), match.end())
            return {"value": value}, evidence, found
    return {"value": value}, "", None


def ground_custom(spec: CustomField, raw: Any, text: str) -> tuple[list[CustomItem], list[str]]:
    """The grounded items of one user field's value(s), and what was rejected."""
    spans = sentence_spans(text) or [(0, len(text))]
    items: list[CustomItem] = []
    rejected: list[str] = []
    used: set[int] = set()
    for value in _values(raw):
        if spec.grounding == "flag":
            flag = "true" if value is True or str(value).lower() == "true" else "false"
            items.append(_by_words(spec, flag, text, spans))
        elif spec.grounding == "choice":
            items.append(_by_words(spec, str(value), text, spans))
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
