"""Named parts of a method that the model left out, found by the abstract's own wording.

Abstracts name the parts of their method in title case right after "a novel" and before
a part noun: "a novel Masked Bidirectional Structured State Space Duality block", "a new
Cross-Scale Gating module". The title-case words are the part's name; the name with its
noun is kept as an alias.
"""

from __future__ import annotations

import re

_NOVEL_PART = re.compile(
    r"\b(?:a|an|the|our)\s+(?:novel|new|proposed)\s+((?:[A-Z][\w-]*\s+){1,7}?)"
    r"(block|module|layer|mechanism|component|unit|head|encoder|decoder|loss|attention|"
    r"regularizer|regulariser|adapter|router|sampler|scheduler|tokenizer)\b")


def novel_named_parts(text: str) -> list[tuple[str, int, int, str]]:
    """(name, start, end, name with its part noun) for each 'a novel Title Case noun'."""
    found = []
    for match in _NOVEL_PART.finditer(text):
        words = match.group(1).split()
        if len(words) < 2 and not any(c.isupper() for c in words[0][1:]):
            continue  # 'a novel Attention module': one plain word is not a name
        start, end = match.start(1), match.start(1) + len(match.group(1).rstrip())
        found.append((text[start:end], start, end, f"{text[start:end]} {match.group(2)}"))
    return found
