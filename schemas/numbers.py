"""Finding the numbers a piece of text states, for checking claimed values against quotes."""

from __future__ import annotations

import math
import re

# 1,234.5 or 12.5 or .5 ; a thousands separator only in groups of three.
_NUMBER = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)")

_WORDS = {
    "zero": 0.0, "one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0,
    "seven": 7.0, "eight": 8.0, "nine": 9.0, "ten": 10.0, "eleven": 11.0, "twelve": 12.0,
    "fifteen": 15.0, "twenty": 20.0, "thirty": 30.0, "fifty": 50.0, "hundred": 100.0,
    "thousand": 1000.0, "million": 1e6, "billion": 1e9,
    "twice": 2.0, "double": 2.0, "doubles": 2.0, "doubling": 2.0, "triple": 3.0,
    "triples": 3.0, "tripling": 3.0, "half": 0.5, "halves": 0.5, "halving": 0.5,
}
_WORD = re.compile(r"[a-z]+")


def numbers_in(text: str) -> list[float]:
    """Every number the text states, in digits or as a common number word (unsigned)."""
    found = [float(match.replace(",", "")) for match in _NUMBER.findall(text)]
    found.extend(_WORDS[word] for word in _WORD.findall(text.lower()) if word in _WORDS)
    return found


def value_matches(value: float, candidates: list[float]) -> bool:
    """True when |value| equals one of the candidates (to floating-point tolerance)."""
    target = abs(value)
    return any(math.isclose(target, c, rel_tol=1e-9, abs_tol=1e-12) for c in candidates)


def number_spans(text: str) -> list[tuple[float, int, int]]:
    """(value, start, end) of every number written in digits, in order of appearance."""
    return [
        (float(match.group(1).replace(",", "")), match.start(1), match.end(1))
        for match in _NUMBER.finditer(text)
    ]
