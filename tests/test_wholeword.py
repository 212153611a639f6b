"""whole_word answers as the regular expression it replaced: same first match, same
successive non-overlapping matches, with and without re.I."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from papersift.extract.domain.lookup.wholeword import FOLDS_INTO_ASCII, whole_word


def _reference(name: str, text: str, flags: int) -> list[tuple[int, int]]:
    pattern = re.compile(r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9])", flags)
    return [match.span() for match in pattern.finditer(text)]


def _spans(name: str, text: str, flags: int) -> list[tuple[int, int]]:
    return [(match.start(), match.end()) for match in whole_word(name, flags).finditer(text)]


# Few letters, so that names recur and touch each other; a few non-ASCII ones whose case
# folding changes length ('İ') or maps onto ASCII ('K', the Kelvin sign).
_ALPHABET = st.sampled_from(list("aAbB1 -_.()éiIıİ\u212aksſ–"))


@given(name=st.text(_ALPHABET, min_size=1, max_size=4),
       text=st.text(_ALPHABET, max_size=40),
       flags=st.sampled_from([0, re.I]))
def test_matches_the_pattern_it_replaced(name: str, text: str, flags: int) -> None:
    assert _spans(name, text, flags) == _reference(name, text, flags)
    first = whole_word(name, flags).search(text)
    expected = _reference(name, text, flags)[:1]
    assert ([(first.start(), first.end())] if first else []) == expected


@pytest.mark.parametrize(("name", "text", "flags", "spans"), [
    ("aa", "aaaa aa", 0, [(5, 7)]),             # glued runs are no mention
    ("GPT", "GPT-4 and GPT4", 0, [(0, 3)]),     # a hyphen separates, a digit glues
    ("bert", "BERT, RoBERTa", re.I, [(0, 4)]),  # inside a word is no mention
    ("k", "\u212a k", re.I, [(0, 1), (2, 3)]),  # the Kelvin sign folds to k
    ("", "a  b", 0, [(2, 2)]),                  # the empty name, as the pattern had it
])
def test_known_cases(name: str, text: str, flags: int, spans: list[tuple[int, int]]) -> None:
    assert _spans(name, text, flags) == spans == _reference(name, text, flags)
    assert whole_word(name, flags).search(text) is not None


def test_only_ignore_case_is_a_flag() -> None:
    with pytest.raises(ValueError, match=r"re\.I"):
        whole_word("x", re.M)


def test_the_characters_that_fold_into_ascii_are_all_listed() -> None:
    glue = re.compile("[A-Za-z0-9]", re.I)
    found = {char for char in map(chr, range(0x80, 0x110000))
             if glue.match(char) or len(char.lower()) != 1 or char.lower().isascii()}
    assert found == FOLDS_INTO_ASCII
