"""BERT's uncased WordPiece tokenizer, in plain Python, from a ``vocab.txt``.

It does what BERT's reference tokenizer does for an uncased model: clean the text (drop
control characters, map whitespace to spaces), put spaces around CJK ideographs,
lowercase, strip accents, split on whitespace and punctuation, then cut each word into
the longest vocabulary pieces from the left (``##`` marks a continuation). A word with
no such cut, or longer than 100 characters, becomes ``[UNK]``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

MAX_WORD_CHARS = 100
_CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)


def _is_cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_control(char: str) -> bool:
    if char in "\t\n\r":
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def _cleaned_char(char: str) -> str:
    """What BERT's cleaning makes of one character: nothing, a space, or itself (CJK
    ideographs get spaces around them)."""
    code = ord(char)
    if code in (0, 0xFFFD) or _is_control(char):
        return ""
    if char.isspace() or unicodedata.category(char) == "Zs":
        return " "
    return f" {char} " if _is_cjk(code) else char


def _clean(text: str) -> str:
    return "".join(_cleaned_char(char) for char in text)


class _CleanTable(dict[int, str]):
    """A ``str.translate`` table that works out each code point once, then remembers it."""

    def __missing__(self, code: int) -> str:
        cleaned = self[code] = _cleaned_char(chr(code))
        return cleaned


_CLEAN_TABLE = _CleanTable()


def _strip_accents(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")


def _split_punctuation(chunk: str, words: list[str]) -> None:
    current: list[str] = []
    for char in chunk:
        if _is_punctuation(char):
            if current:
                words.append("".join(current))
                current = []
            words.append(char)
        else:
            current.append(char)
    if current:
        words.append("".join(current))


# ASCII takes a fast path with the same result: in ASCII, BERT's punctuation is exactly
# the four ranges _is_punctuation tests, and there are no accents to strip.
_ASCII_WORDS = re.compile(r"[^ !-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")


def basic_words(text: str) -> list[str]:
    """The words and punctuation marks of ``text``, lowercased and without accents."""
    cleaned = text.translate(_CLEAN_TABLE)
    if cleaned.isascii():
        return _ASCII_WORDS.findall(cleaned.lower())
    words: list[str] = []
    for chunk in cleaned.split():
        lowered = chunk.lower()
        if lowered.isascii():
            words.extend(_ASCII_WORDS.findall(lowered))
        else:
            _split_punctuation(_strip_accents(lowered), words)
    return words


def unicode_words(text: str) -> list[str]:
    """basic_words character by character, without its fast paths (the reference the
    tests hold the fast paths to)."""
    words: list[str] = []
    for chunk in _clean(text).split():
        _split_punctuation(_strip_accents(chunk.lower()), words)
    return words


class WordPiece:
    """Maps text to the token ids of one BERT vocabulary."""

    def __init__(self, vocabulary: Iterable[str]) -> None:
        self.ids: dict[str, int] = {}
        for index, line in enumerate(vocabulary):
            token = line.rstrip("\n")
            if token and token not in self.ids:
                self.ids[token] = index
        for special in ("[UNK]", "[CLS]", "[SEP]", "[PAD]"):
            if special not in self.ids:
                raise ValueError(f"the vocabulary has no {special} token")
        self.unk = self.ids["[UNK]"]
        self.cls = self.ids["[CLS]"]
        self.sep = self.ids["[SEP]"]
        self.pad = self.ids["[PAD]"]
        self._pieces = lru_cache(maxsize=65536)(self._word_pieces)

    def _word_pieces(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD_CHARS:
            return (self.unk,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = -1
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                found = self.ids.get(piece, -1)
                if found >= 0:
                    break
                end -= 1
            if found < 0:
                return (self.unk,)
            pieces.append(found)
            start = end
        return tuple(pieces)

    def encode(self, text: str, max_length: int) -> list[int]:
        """``[CLS]`` + the pieces of ``text`` (cut to fit) + ``[SEP]``: at most max_length ids."""
        budget = max_length - 2
        ids: list[int] = [self.cls]
        for word in basic_words(text):
            ids.extend(self._pieces(word))
            if len(ids) - 1 >= budget:
                break
        del ids[budget + 1:]
        ids.append(self.sep)
        return ids
