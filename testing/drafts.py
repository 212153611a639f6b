"""Hand-written drafts the fakes answer with (NOT from a model): built by code from the
abstract a request carries, or hostile on purpose."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from papersift.schemas import PaperDraft

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
UNGROUNDED_QUOTE = "a sentence that this abstract does not contain anywhere"


def first_words(abstract: str) -> dict[str, Any]:
    """A draft naming the abstract's first six words as its task, and nothing else."""
    words = abstract.split()
    return {
        "tasks": [" ".join(words[:6])],
        "methods": [],
        "benchmarks": [],
        "gains": [],
        "types": ["method"],
    }


def first_sentence(abstract: str, limit: int = 380) -> str:
    """The abstract's first sentence, an exact slice of it, cut at a space past ``limit``."""
    text = abstract.strip()
    head = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(head) > limit:
        cut = head.rfind(" ", 0, limit)
        head = head[: cut if cut > 10 else limit]
    return head


def valid_answer(abstract: str) -> dict[str, Any]:
    """A hand-written draft whose task phrase is the abstract's first sentence."""
    return {
        "tasks": [first_sentence(abstract)],
        "methods": [],
        "benchmarks": [],
        "gains": [],
        "types": ["method"],
    }


def ungrounded_answer() -> dict[str, Any]:
    """A valid draft naming a method, a benchmark and a number the abstract never states:
    code drops them (listed in ``extractions.rejected``), keeping the answer's task."""
    return {
        "tasks": [UNGROUNDED_QUOTE],
        "methods": ["InventedNet"],
        "benchmarks": [{"name": "FabricatedBench", "new": True}],
        "gains": [{"value": "99.97", "metric": "accuracy"}],
        "types": ["method"],
    }


HOSTILE_DRAFTS = ("minimal", "empty_strings", "maximal", "unicode", "surrogate", "nul",
                  "duplicates")


def hostile_answer(kind: str, abstract: str) -> dict[str, Any]:
    """A draft that is valid JSON of the schema's shape but hostile: the least it allows,
    empty strings, every list at its longest with the longest names, unicode tricks, a
    lone surrogate, NUL characters, repeats. Code must store or refuse each cleanly."""
    words = abstract.split()
    if kind == "minimal":
        return {"tasks": [""], "methods": [], "benchmarks": [], "gains": [], "types": ["method"]}
    if kind == "empty_strings":
        return {"tasks": ["", " "], "methods": ["", "\t"], "benchmarks": [{"name": "",
                "new": False}], "gains": [{"value": "", "metric": ""}], "types": ["method"]}
    if kind == "maximal":
        long = ("x" * 119 + " ")[:120]
        return {"tasks": [first_sentence(abstract), long], "methods": [long, *words[:3]],
                "benchmarks": [{"name": (word + long)[:120], "new": True} for word in
                               (words * 8)[:8]],
                "gains": [{"value": "1" * 40, "metric": long, "vs": long, "on": long}] * 8,
                "types": ["method", "theory", "benchmark"]}
    if kind == "unicode":
        trick = "\u202e\u200b\u0301\ufeff\U0001f600 "
        return {"tasks": [trick + first_sentence(abstract)], "methods": [trick + words[0]],
                "benchmarks": [{"name": "\u2028" + words[-1], "new": False}],
                "gains": [{"value": "\u0661\u0662", "metric": "\u00e9\u0301"}],
                "types": ["method"]}
    if kind == "surrogate":
        return {"tasks": ["\ud800" + words[0]], "methods": ["\udfff"], "benchmarks": [],
                "gains": [], "types": ["method"]}
    if kind == "nul":
        return {"tasks": [first_sentence(abstract) + "\x00"], "methods": ["A\x00B"],
                "benchmarks": [], "gains": [], "types": ["method"]}
    return {"tasks": [words[0], words[0]], "methods": [words[1]] * 4,
            "benchmarks": [{"name": words[2], "new": True}] * 8, "gains": [],
            "types": ["method", "method"]}


def paper_draft(methods: Sequence[str] = (), benchmarks: Sequence[str] = (),
                gains: Sequence[tuple[str, str]] = (),
                task: str = "image retrieval") -> PaperDraft:
    """A hand-written PaperDraft for rule tests: names, (value, metric) gains, one task."""
    return PaperDraft.model_validate({
        "tasks": [task], "methods": list(methods),
        "benchmarks": [{"name": b, "new": False} for b in benchmarks],
        "gains": [{"value": v, "metric": m} for v, m in gains], "types": ["method"]})
