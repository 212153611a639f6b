"""How the words around a name present it as something the paper makes: two cues the
method decision weighs (they are features, never refusals).

- A novelty word in the noun phrase right before the name ('a novel agent reasoning
  mechanism, InfoNav', 'a simple but effective RNC strategy', 'our proposed X').
- An acronym the paper coins for lowercase words, with a creation verb in front of them or
  a passive proposal after ('introduces connectionist subsequence aligner (CSA)',
  'a document relation graph generator (DRGG) is proposed').
"""

from __future__ import annotations

import re

# The phrase before a name, read back to the last sentence or clause break.
_CLAUSE_BREAK = re.compile(r"[.;:!?]\s")
# 'novel', 'new', 'our', 'proposed' or 'simple but effective', then at most four words, then
# the name, or an apposition ('a novel mechanism, X') or '(i.e., X'.
_NOVELTY_BEFORE = re.compile(
    r"\b(?:novel|new|our|proposed|simple (?:but|yet) effective)\s+(?:[\w-]+\s+){0,4}"
    r"(?:[\w-]+,\s+|\(i\.e\.,\s+)?$", re.I)
# A creation verb right before the coined words, allowing articles and a few adjectives.
_CREATION_BEFORE = re.compile(
    r"(?:\b(?:propos\w*|introduc\w*|present\w*|devis\w*|design\w*|develop\w*|incorporat\w*|"
    r"refer(?:red)? to as|call(?:ed)?|named?|dubbed|termed)|\bour \w+(?: \w+)? is)\s+"
    r"(?:(?:a|an|the|our|two|three|new|novel|simple|effective|lightweight)\s+)*$", re.I)
# '(ACR) is proposed', '(ACR) module is introduced'.
_PROPOSED_AFTER = re.compile(
    r"^\)\s*(?:[a-z-]+\s+)?(?:is|are|was|were)\s+(?:then\s+|further\s+|also\s+)?"
    r"(?:proposed|introduced|devised|designed|developed)\b")
_LOWER_WORDS_BEFORE = re.compile(r"((?:[a-z][\w-]*\s+){1,8})\($")


def _phrase_before(text: str, start: int, reach: int = 90) -> str:
    before = text[max(0, start - reach):start]
    return _CLAUSE_BREAK.split(before)[-1]


def presented_as_new(text: str, start: int) -> bool:
    """A novelty word in the phrase right before the name at ``start``."""
    return _NOVELTY_BEFORE.search(_phrase_before(text, start)) is not None


def acronym_letters(acronym: str) -> str:
    """The letters an acronym spells, lowercased ('3D-NOD': 'dnod')."""
    return "".join(c for c in acronym if c.isalpha()).lower()


def spelled_by_lowercase_words(words: str, acronym: str) -> int | None:
    """Where, in ``words`` (lowercase words ending before the acronym's parenthesis), the
    shortest tail whose initials spell ``acronym`` begins; None when none does."""
    letters = acronym_letters(acronym)
    found = list(re.finditer(r"[a-z][\w-]*", words))
    for count in range(1, len(found) + 1):
        tail = found[-count:]
        initials = "".join(part[0] for w in tail for part in w.group().split("-") if part)
        if initials == letters:
            return tail[0].start()
    return None


def coined_for_lowercase_words(text: str, start: int, end: int) -> bool:
    """The name at start:end is '(ACR)' after lowercase words that spell it, and a creation
    verb comes just before those words or a passive proposal just after."""
    if start < 2 or text[start - 1] != "(" or not text.startswith(")", end):
        return False
    words = _LOWER_WORDS_BEFORE.search(text[max(0, start - 120):start])
    if words is None:
        return False
    tail = spelled_by_lowercase_words(words.group(1), text[start:end])
    if tail is None:
        return False
    expansion_start = start - len(words.group(0)) + tail
    return (_CREATION_BEFORE.search(_phrase_before(text, expansion_start)) is not None
            or _PROPOSED_AFTER.match(text[end:end + 60]) is not None)
