"""Locating evidence quotes in an abstract, by code rather than by the model.

``align`` tries, in order: the quote as an exact substring; the quote in a normalised view
of the abstract (case, whitespace, markup, dashes, quotes and unicode forms ironed out);
a fuzzy match (rapidfuzz) for quotes long enough not to match by chance. Offsets always
refer to the original abstract text, end exclusive.

The normalised view keeps, for every character it holds, the span of original characters
it came from, so any match in the view maps back to an exact slice of the abstract.

A fuzzy match must clear two bars: a similarity score (``FUZZY_THRESHOLD``) and a word
check (numbers exact, content words present up to a typo and in order, see
``_words_agree``). The score alone cannot tell a typo from a changed number or a replaced
word; bench/grounding_threshold.py measures both.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Literal

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

AlignmentStatus = Literal["exact", "normalized", "fuzzy", "none"]

# Chosen with bench/grounding_threshold.py (table in its docstring): with the word check,
# precision is ~1.0 at every threshold from 0.70 to 0.98, so this is the strictest one that
# still accepts at least 98.5% of the misquotes there.
FUZZY_THRESHOLD = 0.86

# Below this many normalised characters a quote is only matched exactly or normalised:
# short strings reach high fuzzy scores against almost any abstract.
MIN_FUZZY_CHARS = 12

# How many content words of the text a fuzzy quote may leave out between two of its words.
MAX_SKIPPED_WORDS = 1


@dataclass(frozen=True)
class Alignment:
    """Where a quote sits in the abstract, and how it was found."""

    status: AlignmentStatus
    char_start: int | None
    char_end: int | None
    score: float


# --------------------------------------------------------------------------- normalising

# LaTeX commands whose name is pure formatting: drop the name, keep the argument's text.
_FORMATTING_COMMANDS = frozenset({
    "textbf", "textit", "textsl", "textsc", "textup", "textmd", "textrm", "textsf", "texttt",
    "textnormal", "text", "emph", "mathrm", "mathbf", "mathit", "mathcal", "mathbb", "mathsf",
    "mathtt", "mathscr", "mathfrak", "mathnormal", "boldsymbol", "bm", "underline", "mbox",
    "hbox", "operatorname", "displaystyle", "textstyle", "scriptstyle", "left", "right",
    "big", "Big", "bigg", "Bigg", "bigl", "bigr", "Bigl", "Bigr", "hat", "tilde", "bar", "vec",
    "dot", "ddot", "widehat", "widetilde", "overline",
})
_SPACING_COMMANDS = frozenset({"quad", "qquad", "enspace", "thinspace", "medspace"})
_GREEK_NAMES = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta",
    "η": "eta", "θ": "theta", "ι": "iota", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu",
    "ξ": "xi", "ο": "omicron", "π": "pi", "ρ": "rho", "σ": "sigma", "τ": "tau",
    "υ": "upsilon", "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
}
_GREEK_VARIANT_COMMANDS = {
    "varepsilon": "epsilon", "vartheta": "theta", "varphi": "phi", "varrho": "rho",
    "varsigma": "sigma", "varpi": "pi",
}
_SYMBOL_COMMANDS = {
    "times": "x", "le": "<=", "leq": "<=", "ge": ">=", "geq": ">=", "ne": "!=", "neq": "!=",
    "approx": "≈", "sim": "~", "pm": "±", "infty": "∞", "cdot": "·", "to": "→",
    "rightarrow": "→", "leftarrow": "←", "ldots": "...", "dots": "...", "cdots": "...",
    "ell": "l",
}
# Characters mapped after NFKC and casefolding.
_CHAR_MAP = {
    **{dash: "-" for dash in "‐‑‒–—―−﹘﹣－"},
    **{quote: "'" for quote in "‘’‚‛′"},
    **{mark: "" for mark in '*_${}^`"“”„‟«»'},
    "×": "x",
    "≤": "<=",
    "≥": ">=",
    "≠": "!=",
    **_GREEK_NAMES,
}
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_TOKEN = re.compile(r"\w+")
# Function words a fuzzy quote may get wrong (a/the, of/in, is/are); every other word of
# the quote must occur in the match, up to a typo. "and", "or", "not", "no" are not loose.
_LOOSE_WORDS = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "into", "as", "is",
    "are", "was", "were", "be", "been", "it", "its", "we", "our", "this", "that", "these",
    "those", "which",
})
_QUOTE_END_JUNK = " .,;:"
_SENTENCE_BREAK = re.compile(r"[.!?] ")


@dataclass(frozen=True)
class _View:
    """A normalised text with, per character, the original span [start, end) it came from."""

    norm: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def original_span(self, first: int, stop: int) -> tuple[int, int]:
        """Original offsets of the normalised slice ``norm[first:stop]`` (non-empty)."""
        return self.starts[first], self.ends[stop - 1]


def _command_replacement(name: str) -> str:
    if name in _FORMATTING_COMMANDS:
        return ""
    if name in _SPACING_COMMANDS:
        return " "
    if name in _SYMBOL_COMMANDS:
        return _SYMBOL_COMMANDS[name]
    if name in _GREEK_VARIANT_COMMANDS:
        return _GREEK_VARIANT_COMMANDS[name]
    return name  # Greek letters (\lambda -> "lambda") and unknown macros keep their word


def _markup_pieces(text: str) -> Iterator[tuple[str, int, int]]:
    """Split ``text`` into (replacement, start, end) pieces with LaTeX commands resolved.

    Plain characters come out one cluster at a time (a base character with its combining
    marks) so that unicode normalisation can compose them.
    """
    i = 0
    length = len(text)
    while i < length:
        char = text[i]
        if char == "\\" and i + 1 < length:
            command = _COMMAND.match(text, i)
            if command is not None:
                yield _command_replacement(command.group(1)), i, command.end()
                i = command.end()
                continue
            following = text[i + 1]
            if following in ",;:! \\":
                yield " ", i, i + 2
            elif following in "()[]":
                yield "", i, i + 2  # inline/display math delimiters \( \) \[ \]
            else:
                yield following, i, i + 2  # an escaped character such as \% or \_
            i += 2
            continue
        if text.startswith(("''", "``"), i):
            yield "", i, i + 2  # LaTeX double quotes
            i += 2
            continue
        end = i + 1
        while end < length and unicodedata.combining(text[end]):
            end += 1
        yield text[i:end], i, end
        i = end


@lru_cache(maxsize=4096)  # pieces are mostly single characters: few distinct
def _normal_chars(piece: str) -> str:
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", piece).casefold())
    out = []
    for char in folded:
        if char.isspace():
            out.append(" ")
        else:
            out.append(_CHAR_MAP.get(char, char))
    return "".join(out)


def _build_view(text: str) -> _View:
    """The normalised view of ``text``."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for piece, start, end in _markup_pieces(text):
        for char in _normal_chars(piece):
            if char == " ":
                # one space per run, none at the start or next to a dash
                if not chars or chars[-1] in " -":
                    continue
            elif char == "-":
                if chars and chars[-1] == " ":
                    chars.pop()
                    starts.pop()
                    ends.pop()
                if chars and chars[-1] == "-":
                    ends[-1] = end  # a run of dashes ("--", "---") is one dash
                    continue
            chars.append(char)
            starts.append(start)
            ends.append(end)
    if chars and chars[-1] == " ":
        chars.pop()
        starts.pop()
        ends.pop()
    return _View("".join(chars), tuple(starts), tuple(ends))


@lru_cache(maxsize=256)
def _view(text: str) -> _View:
    """The normalised view of an abstract (cached: each abstract is aligned many times)."""
    return _build_view(text)


@lru_cache(maxsize=4096)  # the same names and abstracts are normalised again and again
def normalize(text: str) -> str:
    """The normalised form used for matching (casefolded, markup and spacing removed)."""
    return _build_view(text).norm


def _needle(quote: str) -> str:
    """The normalised quote, without ellipses or stray punctuation at its ends."""
    return normalize(quote).strip(_QUOTE_END_JUNK)


# --------------------------------------------------------------------------- aligning


def _near_miss(word: str, other: str) -> bool:
    """Whether ``word`` is ``other`` with a typo (optimal string alignment distance).

    Words of up to five letters may only have two neighbouring letters swapped ('teh'),
    longer ones one edit, and words over nine letters two; numbers must be exact. A short
    name that lost or gained a letter ('CAE' for 'CATE', 'MLLMs' for 'LLMs') is a
    different name.
    """
    if any(char.isdigit() for char in word):
        return False
    if len(word) <= 5:
        return sorted(word) == sorted(other) and OSA.distance(word, other) == 1
    allowance = 1 if len(word) <= 9 else 2
    return OSA.distance(word, other, score_cutoff=allowance) <= allowance


@dataclass(frozen=True)
class _Words:
    """The word tokens of a text, each with the index of the space-separated chunk holding it
    ('meta-learning' is one chunk of two tokens)."""

    tokens: list[str]
    chunks: list[int]

    @classmethod
    def of(cls, text: str) -> _Words:
        tokens: list[str] = []
        chunks: list[int] = []
        for chunk, piece in enumerate(text.split(" ")):
            for token in _TOKEN.findall(piece):
                tokens.append(token)
                chunks.append(chunk)
        return cls(tokens, chunks)


def _words_agree(needle: str, window: str) -> bool:
    """The quote says what the window says, up to the slips of a misquote.

    The window may not span more sentences than the quote; every number of the quote
    must occur in the window; every content word (not one of
    ``_LOOSE_WORDS``) must occur as often as quoted, up to a typo; and those words must come
    in the window's order, up to one swap of neighbouring words, leaving out at most one
    word at a time. This is what tells a misquote (typo, spelling variant, dropped or
    swapped word) from a different statement (a changed number, a replaced or negated word,
    two terms trading places), which the overall similarity score cannot, as
    bench/grounding_threshold.py shows.
    """
    if len(_SENTENCE_BREAK.findall(window)) > len(_SENTENCE_BREAK.findall(needle)):
        return False  # the window reaches into a sentence the quote does not
    numbers = set(_NUMBER.findall(window))
    if not all(number in numbers for number in _NUMBER.findall(needle)):
        return False
    words = _Words.of(window)
    available = Counter(words.tokens)
    quoted = [word for word in _TOKEN.findall(needle) if word not in _LOOSE_WORDS]
    matched: list[str | None] = []
    for word in quoted:
        if available[word] > 0:
            available[word] -= 1
            matched.append(word)
        else:
            matched.append(None)
    for index, word in enumerate(quoted):
        if matched[index] is not None:
            continue
        close = next(
            (
                other
                for other, count in available.items()
                if count > 0 and other not in _LOOSE_WORDS and _near_miss(word, other)
            ),
            None,
        )
        if close is None:
            return False
        available[close] -= 1
        matched[index] = close
    placed = _positions([word for word in matched if word], words.tokens)
    return _skips_little(placed, words) and _sorted_but_one_swap(placed, words.chunks)


def _positions(quoted: list[str], tokens: list[str]) -> list[int]:
    """Where each quoted word sits among the window's tokens: the free occurrence nearest to
    the previous quoted word (so a word that also occurs further on is not taken from there).
    """
    free: dict[str, list[int]] = {}
    for index, token in enumerate(tokens):
        free.setdefault(token, []).append(index)
    placed: list[int] = []
    previous = -1
    for word in quoted:
        options = free[word]
        chosen = min(options, key=lambda index: (abs(index - previous), -index))
        options.remove(chosen)
        placed.append(chosen)
        previous = chosen
    return placed


def _sorted_but_one_swap(placed: list[int], chunks: list[int]) -> bool:
    """True if ``placed`` is increasing, or becomes so by exchanging two neighbouring words.

    The two runs of positions exchanged must each lie in one chunk of the window and be
    next to each other there. Swapping neighbours ('meta-learning new' for 'new
    meta-learning') is such an exchange; 'our identification is the work' for 'our work is
    the identification' is not (other words lie between), nor is 'B beats A' for 'A beats B'.
    """
    descents = [d for d in range(1, len(placed)) if placed[d - 1] > placed[d]]
    if not descents:
        return True
    if len(descents) > 1:
        return False
    middle = descents[0]  # the runs are placed[first:middle] and placed[middle:stop]
    size = len(placed)
    for first in range(middle):
        if first > 0 and placed[first - 1] > placed[middle]:
            continue
        if len({chunks[index] for index in placed[first:middle]}) > 1:
            continue
        for stop in range(middle + 1, size + 1):
            sorted_after = placed[stop - 1] < placed[first] and (
                stop == size or placed[middle - 1] < placed[stop]
            )
            neighbours = placed[middle - 1] - placed[middle] + 1 == stop - first
            one_chunk = len({chunks[index] for index in placed[middle:stop]}) == 1
            if sorted_after and neighbours and one_chunk:
                return True
    return False


def _skips_little(placed: list[int], words: _Words) -> bool:
    """At most ``MAX_SKIPPED_WORDS`` words of the window (space-separated, not loose) left out
    between two consecutive quoted words.

    A quote may drop a word; one that skips more leaves out a stretch of the text, or
    borrows a word from a neighbouring sentence to stand in for a replaced one.
    """
    for before, after in pairwise(sorted(placed)):
        ends = {words.chunks[before], words.chunks[after]}
        skipped = {
            words.chunks[index]
            for index in range(before + 1, after)
            if words.tokens[index] not in _LOOSE_WORDS and words.chunks[index] not in ends
        }
        if len(skipped) > MAX_SKIPPED_WORDS:
            return False
    return True


def _word_start(norm: str, i: int) -> bool:
    return norm[i].isalnum() and not norm[i - 1].isalnum()


def _word_end(norm: str, j: int) -> bool:
    return norm[j - 1].isalnum() and not norm[j].isalnum()


def _word_bounds(norm: str, low: int, high: int) -> tuple[list[int], list[int]]:
    """Offsets in [low, high] where a word starts, and where one ends."""
    low, high = max(low, 0), min(high, len(norm))
    starts = [
        i for i in range(low, high)
        if norm[i] != " " and (i == 0 or norm[i - 1] == " " or _word_start(norm, i))
    ]
    ends = [
        j for j in range(max(low, 1), high + 1)
        if norm[j - 1] != " " and (j == len(norm) or norm[j] == " " or _word_end(norm, j))
    ]
    return starts, ends


def _candidate_windows(needle: str, norm: str) -> list[tuple[float, int, int]]:
    """Whole-word windows of ``norm`` around the best partial match, best first.

    partial_ratio compares windows exactly as long as the quote, so for a quote that lost
    or gained words its window cuts into the neighbours; trying nearby word boundaries at
    each end recovers the span the quote came from. Scores are plain similarity in [0, 1].
    """
    if len(needle) > len(norm):
        # partial matching would score the abstract inside a longer quote; compare whole
        return [(fuzz.ratio(needle, norm) / 100.0, 0, len(norm))]
    found = fuzz.partial_ratio_alignment(needle, norm)
    if found is None:  # only happens with a score_cutoff; kept for the type checker
        return []
    margin = max(24, len(needle) // 3)
    starts, _ = _word_bounds(norm, found.dest_start - margin, found.dest_start + margin)
    _, ends = _word_bounds(norm, found.dest_end - margin, found.dest_end + margin)
    windows = [
        (fuzz.ratio(needle, norm[begin:end]) / 100.0, begin, end)
        for begin in starts
        for end in ends
        if end > begin
    ]
    windows.sort(key=lambda window: (-window[0], window[1], window[2]))
    return windows


def _fuzzy(needle: str, view: _View, threshold: float) -> tuple[float, tuple[int, int] | None]:
    """Best score seen, and the best-scoring window at or above ``threshold`` whose words
    agree with the quote (None if there is none)."""
    windows = _candidate_windows(needle, view.norm) if needle and view.norm else []
    best = windows[0][0] if windows else 0.0
    if len(needle) < MIN_FUZZY_CHARS:
        return best, None
    for score, begin, end in windows:
        if score < threshold:
            break
        if _words_agree(needle, view.norm[begin:end]):
            return score, (begin, end)
    return best, None


def align(quote: str, text: str, threshold: float = FUZZY_THRESHOLD) -> Alignment:
    """Find ``quote`` in ``text``: exact, then normalised, then fuzzy (see the module doc).

    A fuzzy match needs a quote of at least ``MIN_FUZZY_CHARS`` normalised characters, a
    score of at least ``threshold``, and every number and content word of the quote present
    in the match, words up to a typo (a changed number or word must not pass as a typo).
    """
    if not quote.strip():
        return Alignment("none", None, None, 0.0)
    start = text.find(quote)
    if start >= 0:
        return Alignment("exact", start, start + len(quote), 1.0)
    needle = _needle(quote)
    if not needle:
        return Alignment("none", None, None, 0.0)
    view = _view(text)
    found = view.norm.find(needle)
    if found >= 0:
        begin, end = view.original_span(found, found + len(needle))
        return Alignment("normalized", begin, end, 1.0)
    score, window = _fuzzy(needle, view, threshold)
    if window is None:
        return Alignment("none", None, None, score)
    begin, end = view.original_span(*window)
    return Alignment("fuzzy", begin, end, score)
