"""How many papers of five recent conferences write a name (known_terms.txt, written by
tools/known_terms.py): a term of the field ('KL', 'CLT', 'Representational Similarity
Analysis') is written by many, a paper's own coined name by one. The method decision
weighs it as the feature ``common_in_field``."""

from __future__ import annotations

import functools
from pathlib import Path

_LIST = Path(__file__).with_name("known_terms.txt")
# Papers that must write a name for it to be a term of the field. Above the one paper
# that coins a name, with room for the paper itself when it is among the conferences.
COMMON_AT = 5


@functools.cache
def _counts() -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in _LIST.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, papers = line.rsplit("\t", 1)
            counts[name] = int(papers)
    return counts


def papers_writing(name: str) -> int:
    """Papers that write ``name``: a one-word name as written ('KL'), a longer one in any
    case and spacing; 0 for a name no list entry has."""
    words = name.split()
    key = name if len(words) == 1 else " ".join(words).lower()
    return _counts().get(key, 0)


def common_in_field(*names: str | None) -> bool:
    """Whether any of ``names`` (a name, its expansion) is a term of the field."""
    return any(papers_writing(name) >= COMMON_AT for name in names if name)
