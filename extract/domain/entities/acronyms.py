"""Aliases an abstract states itself: "Direct Preference Optimization (DPO)" or
"DPO (Direct Preference Optimization)". Found with the Schwartz-Hearst rule: every letter
of the short form occurs in order in the long form, its first letter starting a word, and
the long form has at least as many words as the short form has capitals (so "IIA" is not
"intervention accuracy")."""

from __future__ import annotations

import re

from papersift.extract.domain.entities.normalise import clean

_PAREN = re.compile(r"\(([^()]{1,80})\)")
_WORD = re.compile(r"\S+")
_STOP = {"of", "the", "a", "an", "and", "for", "via", "in", "on", "to", "with", "by"}


def looks_like_acronym(text: str) -> bool:
    """Short, one word, starts with a letter, has at least two capitals (DPO, ViT, GSM8K)."""
    text = text.strip()
    return (1 < len(text) <= 12 and " " not in text and text[0].isalpha()
            and sum(ch.isupper() for ch in text) >= 2)


def long_form(short: str, candidate: str) -> str | None:
    """The shortest tail of ``candidate`` that ``short`` abbreviates, or None."""
    letters = [ch.lower() for ch in short if ch.isalnum()]
    if not letters or not letters[0].isalpha():
        return None
    text = candidate.rstrip(" ,;:")
    position = len(text) - 1
    for index in range(len(letters) - 1, -1, -1):
        wanted = letters[index]
        while position >= 0:
            at_word_start = position == 0 or not text[position - 1].isalnum()
            if text[position].lower() == wanted and (index > 0 or at_word_start):
                break
            position -= 1
        if position < 0:
            return None
        position -= 1
    start = text.rfind(" ", 0, position + 1) + 1
    found = text[start:].strip()
    words = [w for w in re.split(r"[\s\-]+", found) if w and w.lower() not in _STOP]
    capitals = sum(ch.isupper() for ch in short)
    if (len(words) < 2 or len(words) < capitals or len(words) > len(letters) + 3
            or found.lower() == short.lower()):
        return None
    return clean(found)


def abbreviates(short: str, long: str) -> bool:
    """Whether ``short`` abbreviates the whole of ``long`` by the rule above (leading
    articles aside): not a name that starts earlier, like "Existing Self-Supervised
    Learning (SSL)", or one that covers only part of it, like "GFlowNets (OP-GFNs)"."""
    found = long_form(short, long)
    if found is None:
        return False
    whole = clean(long).split()
    while whole and whole[0].lower() in ("a", "an", "the"):
        whole = whole[1:]
    return found.lower() == " ".join(whole).lower()


def stated_pairs(text: str) -> list[tuple[str, str]]:
    """(short, long) pairs the text defines, in order of appearance, each once."""
    pairs: list[tuple[str, str]] = []
    for match in _PAREN.finditer(text):
        inside = match.group(1).strip()
        before = text[max(0, match.start() - 160):match.start()].rstrip()
        pair: tuple[str, str] | None = None
        if looks_like_acronym(inside):
            words = _WORD.findall(before)
            window = " ".join(words[-(len(inside) + 3):])
            long = long_form(inside, window)
            if long:
                pair = (clean(inside), long)
        elif " " in inside:
            words = _WORD.findall(before)
            if words and looks_like_acronym(words[-1].strip(",;:")):
                short = words[-1].strip(",;:")
                long = long_form(short, inside)
                if long and long.lower() == clean(inside).lower():
                    pair = (clean(short), long)
        if pair and pair not in pairs:
            pairs.append(pair)
    return pairs
