"""Whole-word lookup of a literal name: a mention not glued to an ASCII letter or digit.

Grounding asks this for every drafted name, often with a name it has never seen, so a
regular expression per name meant a compilation per question (about half of the time
``assemble`` took). ``whole_word`` answers with ``str.find`` and a look at the two
neighbouring characters instead. It matches exactly what the pattern
``(?<![A-Za-z0-9])NAME(?![A-Za-z0-9])`` would, first match and successive non-overlapping
ones alike. A case-insensitive lookup compares lowercased strings when the name is ASCII
and the text holds none of the four characters that ``re.I`` lets match an ASCII letter or
whose lowercase changes length ('İ', 'ı', 'ſ' and the Kelvin sign); other lookups keep the
pattern, compiled once per name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

_GLUE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
# Every non-ASCII character that re.I matches with an ASCII letter, or whose str.lower()
# holds an ASCII letter or more than one character (checked over all code points in
# tests/test_wholeword.py).
FOLDS_INTO_ASCII = frozenset("\u0130\u0131\u017f\u212a")


@dataclass(frozen=True, slots=True)
class WordMatch:
    """One mention: the same three answers a ``re.Match`` gives for it."""

    text: str
    begin: int
    finish: int

    def start(self) -> int:
        return self.begin

    def end(self) -> int:
        return self.finish

    def group(self) -> str:
        return self.text[self.begin:self.finish]


@lru_cache(maxsize=2048)
def _pattern(name: str, flags: int) -> re.Pattern[str]:
    return re.compile(r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9])", flags)


class WholeWord:
    """``name`` as a whole word; ``search`` and ``finditer`` as on a compiled pattern."""

    __slots__ = ("ignore_case", "name")

    def __init__(self, name: str, flags: int = 0) -> None:
        if flags not in (0, re.I):
            raise ValueError(f"whole_word takes no flags but re.I, not {flags!r}")
        self.name = name
        self.ignore_case = flags == re.I

    def finditer(self, text: str) -> Iterator[WordMatch]:
        name = self.name
        if not name or (self.ignore_case and not _folds_safely(name, text)):
            for match in _pattern(name, re.I if self.ignore_case else 0).finditer(text):
                yield WordMatch(text, match.start(), match.end())
            return
        haystack, needle = (text.lower(), name.lower()) if self.ignore_case else (text, name)
        size, position = len(needle), haystack.find(needle)
        while position >= 0:
            end = position + size
            if (position == 0 or text[position - 1] not in _GLUE) and (
                    end == len(text) or text[end] not in _GLUE):
                yield WordMatch(text, position, end)
                position = haystack.find(needle, end)
            else:
                position = haystack.find(needle, position + 1)

    def search(self, text: str) -> WordMatch | None:
        return next(self.finditer(text), None)


def _folds_safely(name: str, text: str) -> bool:
    return name.isascii() and (text.isascii() or FOLDS_INTO_ASCII.isdisjoint(text))


def whole_word(name: str, flags: int = 0) -> WholeWord:
    """``name`` not glued to letters or digits on either side (flags: 0 or re.I)."""
    return WholeWord(name, flags)
