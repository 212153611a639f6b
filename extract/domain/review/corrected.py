"""Grounding a reviewer's values again, as a model's are (issue 28).

A reviewer may rename a task, method or benchmark, or change a gain's metric, baseline
or dataset. The new value is looked up in the abstract with the same code that grounds a
model's answer (assemble_spans.find_name, grounding.align, attributes.ground_phrase); what
it finds is stored with the edit, so the item points at the text that now holds its name.
A value the abstract lacks is flagged: alignment 'none' and no offsets, never the model's
old offsets with 'exact'.

A user field's edited value is grounded by its own declaration (extract.domain.assembly.custom):
checked and normalised first (a choice must be one of its values), then found as the
model's answer would be; the normalised value is stored with the grounding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from papersift.extract.domain.assembly.attributes import ground_phrase
from papersift.extract.domain.assembly.custom import coerce, ground_custom
from papersift.extract.domain.lookup.assemble_spans import (
    evidence_window,
    find_name,
    sentence_of,
    sentence_spans,
)
from papersift.extract.domain.lookup.grounding import align
from papersift.schemas.fields import CustomField, correctable_fields

# The item types whose name a reviewer may edit: it is looked up again (the registry).
NAMED = tuple(spec.item for spec in correctable_fields() if "name" in spec.editable)
# A gain's free phrases and the column that says how each was found.
GAIN_PHRASES = {"metric": "metric_alignment", "baseline": "baseline_alignment",
                "dataset": "dataset_alignment"}
# An item's location, as the corrected views replace it (all together).
UNGROUNDED: dict[str, Any] = {"alignment": "none", "align_score": 0.0, "mention_start": None,
                              "mention_end": None, "char_start": None, "char_end": None}


def name_location(name: str, text: str) -> dict[str, Any]:
    """Where a name sits in the abstract, as the item's location fields: its mention, the
    sentence around it as evidence, and how it was found; UNGROUNDED when it is not there."""
    spot = find_name(name, text)
    if spot is not None:
        status, start, end, score = *spot, 1.0
    else:
        found = align(name, text)
        if found.status == "none" or found.char_start is None or found.char_end is None:
            return dict(UNGROUNDED)
        status, start, end, score = found.status, found.char_start, found.char_end, found.score
    sentence = sentence_of(sentence_spans(text), start, end)
    low, high = evidence_window(text, sentence, (start, end))
    return {"alignment": status, "align_score": score, "mention_start": start,
            "mention_end": end, "char_start": low, "char_end": high,
            "evidence": text[low:high]}


def regrounded(item_type: str, item: Mapping[str, Any], changes: Mapping[str, Any],
               text: str) -> dict[str, Any]:
    """The grounding fields to store beside a reviewer's ``changes`` to ``item`` (its
    fields as shown now, with its offsets): empty when no grounded value changes. For a
    gain, every phrase's status; its location only when one is not in the abstract (a
    gain whose phrases are all found again keeps the model's location)."""
    if item_type in NAMED:
        name = changes.get("name")
        return name_location(str(name), text) if name else {}
    if item_type != "gain" or not GAIN_PHRASES.keys() & changes.keys():
        return {}
    start, end = item.get("char_start"), item.get("char_end")
    sentence = (start, end) if start is not None and end is not None else (0, len(text))
    fields: dict[str, Any] = {}
    flagged = False
    for phrase, column in GAIN_PHRASES.items():
        value = changes[phrase] if phrase in changes else item.get(phrase)
        if value is None or not str(value).strip():
            if phrase in changes:
                fields[column] = None
            continue
        status = ground_phrase(str(value), text, sentence).status
        fields[column] = status  # every phrase: this grounding replaces the last whole
        flagged = flagged or status == "none"
    if flagged:  # the claim as corrected is not the abstract's: shown flagged
        fields.update(UNGROUNDED)
    return fields


Regrounder = Callable[[str, Mapping[str, Any], Mapping[str, Any], str], dict[str, Any]]


def review_grounder(fields: Iterable[CustomField]) -> Regrounder:
    """:func:`regrounded` for built-in items, and for items of these user fields their
    own grounding; a value a field cannot hold is a ValueError saying why."""
    declared = {spec.item_type: spec for spec in fields}

    def ground(item_type: str, item: Mapping[str, Any], changes: Mapping[str, Any],
               text: str) -> dict[str, Any]:
        spec = declared.get(item_type)
        if spec is None:
            return regrounded(item_type, item, changes, text)
        return custom_location(spec, changes["value"], text) if "value" in changes else {}

    return ground


def custom_location(spec: CustomField, value: Any, text: str) -> dict[str, Any]:
    """A user field's value as grounding finds it: the value normalised (as the abstract
    writes a name; a choice's declared spelling) and its location, flagged when nothing
    in the abstract says it."""
    checked, refused = coerce(spec, value)
    if refused is not None:
        raise ValueError(refused)
    items, _ = ground_custom(spec, checked, text)
    values, evidence, found = items[0] if items else ({"value": checked}, "", None)
    if found is None:
        return {**UNGROUNDED, "value": checked, "evidence": ""}
    low, high = found.sentence
    return {"alignment": found.status, "align_score": 1.0, "mention_start": found.start,
            "mention_end": found.end, "char_start": low, "char_end": high,
            "evidence": evidence, **values}
