"""Named datasets and benchmarks that conference abstracts call datasets or benchmarks again
and again (known_benchmarks.txt), found where an abstract names one the model left out."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from papersift.extract.domain.lookup.assemble_spans import name_key

_LIST = Path(__file__).with_name("known_benchmarks.txt")


@functools.cache
def _names() -> tuple[str, ...]:
    return tuple(line.split("\t")[0] for line in _LIST.read_text(encoding="utf-8").splitlines()
                 if line.strip() and not line.startswith("#"))


@functools.cache
def _pattern() -> re.Pattern[str]:
    # the longest form first: 'ImageNet-1K' before 'ImageNet'
    names = sorted(_names(), key=len, reverse=True)
    return re.compile(rf"(?<![\w-])(?:{'|'.join(map(re.escape, names))})(?![\w-])", re.I)


def known_benchmarks_in(text: str, drafted: set[str]) -> list[str]:
    """Known benchmark names the abstract mentions that are not in ``drafted`` (normalised
    keys of the names the model gave), in text order, each once."""
    found: dict[str, None] = {}
    for match in _pattern().finditer(text):
        written = match.group(0)  # 'AlfWorld' for ALFWorld; never an all-lowercase word
        if written.islower() or written.isdigit():
            continue
        version = _VERSION_AFTER.match(text, match.end())
        if version and name_key(written + version.group(0)) in drafted:
            continue  # 'ScanNet V2', which the model gave: not also 'ScanNet'
        if name_key(written) not in drafted:
            found.setdefault(written, None)
    return list(found)


_VERSION_AFTER = re.compile(r"[\s-]?[Vv]?\d+(?:\.\d+)?\b")


def known_benchmark(name: str) -> bool:
    """Whether ``name`` is on the list (normalised comparison): an existing dataset or
    benchmark, which a paper introduces only when its own words say so."""
    return name_key(name) in _keys()


@functools.cache
def _keys() -> frozenset[str]:
    return frozenset(name_key(name) for name in _names())
