"""Grounding a gain's attributes: its metric, its baseline (``vs``) and its dataset (``on``).

The model writes these as free phrases. Code checks each one against the abstract, as it
does names: a phrase the abstract contains (exactly, or after normalising case and markup)
is stored in the abstract's own spelling; a phrase whose every content word (up to its
ending) occurs in the gain's sentence is stored with alignment ``fuzzy``; anything else is
not the abstract's. An unfound baseline or dataset is not stored (it is listed in the
extraction's ``rejected``); an unfound metric is kept, since every gain needs one, but
with alignment ``none`` so that it shows as flagged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from papersift.extract.domain.lookup.grounding import AlignmentStatus, normalize
from papersift.extract.domain.lookup.wholeword import whole_word

_WORD = re.compile(r"[a-z0-9]+")
_FILLER = frozenset({
    "a", "an", "the", "of", "for", "and", "or", "in", "on", "with", "to", "via", "by", "from",
    "at", "as", "is", "are", "its", "their", "than", "over", "vs", "versus", "compared",
})
_STEM_CHARS = 5  # 'solved' and 'solves', 'improvement' and 'improves' share a stem


@dataclass(frozen=True)
class AttributeFound:
    """How one attribute was grounded: its status and the text to store (None: rejected)."""

    status: AlignmentStatus
    value: str | None


def _stems(phrase: str) -> set[str]:
    return {word[:_STEM_CHARS] for word in _WORD.findall(normalize(phrase))
            if word not in _FILLER}


def ground_phrase(phrase: str, text: str, sentence: tuple[int, int]) -> AttributeFound:
    """Where ``phrase`` sits in the abstract: exact or case-insensitive anywhere (stored
    as the abstract writes it), else all its content words in the gain's sentence (fuzzy),
    else ``none``."""
    phrase = phrase.strip()
    if not phrase:
        return AttributeFound("none", None)
    for status, flags in (("exact", 0), ("normalized", re.I)):
        match = whole_word(phrase, flags).search(text)
        if match:
            return AttributeFound(status, match.group())  # type: ignore[arg-type]
    wanted = normalize(phrase)
    if wanted and wanted in normalize(text):
        return AttributeFound("normalized", phrase)
    stems = _stems(phrase)
    if stems and stems <= _stems(text[sentence[0]:sentence[1]]):
        return AttributeFound("fuzzy", phrase)
    return AttributeFound("none", None)


@dataclass(frozen=True)
class GainAttributes:
    """A gain's grounded attributes: the text to store and how each was found."""

    metric: str
    metric_alignment: AlignmentStatus
    baseline: str | None
    baseline_alignment: AlignmentStatus | None  # None: no baseline given; none: rejected
    dataset: str | None
    dataset_alignment: AlignmentStatus | None

    def columns(self) -> dict[str, str | None]:
        """The alignment columns stored beside the gain."""
        return {"metric_alignment": self.metric_alignment,
                "baseline_alignment": self.baseline_alignment,
                "dataset_alignment": self.dataset_alignment}


def ground_gain_attributes(value: str, metric: str, vs: str | None, on: str | None,
                           text: str, sentence: tuple[int, int],
                           rejected: list[str]) -> GainAttributes:
    """Ground a gain's metric, baseline and dataset in its abstract; what is not there is
    noted in ``rejected`` (baseline and dataset are then not stored)."""
    found_metric = ground_phrase(metric, text, sentence)
    if found_metric.status == "none":
        rejected.append(f"gain {value!r} metric {metric!r}: not in the abstract (kept, flagged)")
    attributes: dict[str, tuple[str | None, AlignmentStatus | None]] = {}
    for label, phrase in (("vs", vs), ("on", on)):
        if phrase is None or not phrase.strip():
            attributes[label] = (None, None)
            continue
        found = ground_phrase(phrase, text, sentence)
        if found.value is None:
            rejected.append(f"gain {value!r} {label} {phrase!r}: not in the abstract")
            attributes[label] = (None, "none")  # rejected: not stored, said so
        else:
            attributes[label] = (found.value, found.status)
    return GainAttributes(
        metric=found_metric.value or metric,
        metric_alignment=found_metric.status,
        baseline=attributes["vs"][0], baseline_alignment=attributes["vs"][1],
        dataset=attributes["on"][0], dataset_alignment=attributes["on"][1],
    )
