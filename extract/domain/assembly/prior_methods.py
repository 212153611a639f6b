"""Grounding the optional field prior_methods (`papersift run --with prior_methods`): the
earlier methods or models a paper compares against, as the model names them.

Each name is looked up in the abstract as a proper name (find_named: found as written,
ignoring case or normalised; a description such as "strong baselines" or a quantity is
refused); its evidence is the sentence around it. A name that is one of the paper's own
methods (its name, expansion or an alias, as grounded in the same answer) is refused, and
a name found twice is kept once. What is refused goes to the extraction's rejected items.
"""

from __future__ import annotations

from typing import Any

from papersift.extract.domain.assembly.assemble import Assembled
from papersift.extract.domain.assembly.custom import CustomItem
from papersift.extract.domain.lookup.assemble_spans import (
    Found,
    evidence_window,
    find_named,
    name_key,
    sentence_of,
    sentence_spans,
)

KIND = "prior method"  # as the rejected items name it
MAX_ITEMS = 6


def _own_names(assembled: Assembled) -> set[str]:
    own = set()
    for method in assembled.extraction.methods:
        own |= {name_key(name) for name in (method.name, method.expansion or "",
                                            *method.aliases) if name}
    return own


def ground(raw: Any, text: str, assembled: Assembled) -> tuple[list[CustomItem], list[str]]:
    """The grounded prior methods of one answer's list, and what was refused."""
    names = raw if isinstance(raw, list) else [] if raw is None else [raw]
    spans = sentence_spans(text) or [(0, len(text))]
    own = _own_names(assembled)
    items: list[CustomItem] = []
    rejected: list[str] = []
    seen: set[str] = set()
    for name in names[:MAX_ITEMS]:
        if not isinstance(name, str) or not name.strip():
            rejected.append(f"{KIND} {name!r}: not a name")
            continue
        found = find_named(KIND, name.strip(), text, rejected)
        if found is None:
            continue
        status, start, end = found
        key = name_key(text[start:end])
        if key in own or name_key(name) in own:
            rejected.append(f"{KIND} {name!r}: the paper's own method")
            continue
        if key in seen:
            continue
        seen.add(key)
        low, high = evidence_window(text, sentence_of(spans, start, end), (start, end))
        items.append(({"name": text[start:end]}, text[low:high],
                      Found(status, start, end, (low, high))))
    return items, rejected
