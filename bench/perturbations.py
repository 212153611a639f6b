"""The perturbations bench/grounding_threshold.py applies to quotes: near-misses a
reader would accept (a dropped word, a typo, other markup or spelling) and changes of
meaning that must not ground (another number, a flipped polarity, another abstract's
words). Split out of grounding_threshold.py to keep each module under 500 lines."""

from __future__ import annotations

import random
import re
from collections.abc import Callable

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z$\\*_(\"'])")
_WORD = re.compile(r"\S+")
_LETTERS = re.compile(r"[A-Za-z]{4,}")
_DIGITS = re.compile(r"\d+(?:\.\d+)?")
_ACRONYM = re.compile(r"\b[A-Z][A-Za-z]*[A-Z][A-Za-z-]*\b")
_ARTICLE = re.compile(r"\b(the|a|an|The|A|An)\b")
_MARKUP = re.compile(
    r"\\text(?:bf|it|sc)\{([^{}]*)\}|\\emph\{([^{}]*)\}|\*\*|\*|\$|(?<!\w)_|_(?!\w)"
)
_SPELLINGS = (
    ("ize", "ise"), ("ise", "ize"), ("yze", "yse"), ("yse", "yze"), ("our\\b", "or"),
    ("modeling", "modelling"), ("modelling", "modeling"), ("center", "centre"),
    ("labeled", "labelled"), ("labelled", "labeled"), ("behavior", "behaviour"),
    ("generaliz", "generalis"), ("optimiz", "optimis"),
)
_POLARITY = (
    ("improves", "degrades"), ("improve", "degrade"), ("outperforms", "underperforms"),
    ("increases", "decreases"), ("increase", "decrease"), ("higher", "lower"),
    ("better", "worse"), ("more", "less"), ("can", "cannot"), ("reduces", "raises"),
    ("reduce", "raise"), ("faster", "slower"), ("without", "with"), ("fails", "succeeds"),
)
_STOPWORDS = frozenset({
    "that", "this", "with", "from", "which", "their", "these", "those", "into", "over",
    "under", "while", "where", "when", "than", "such", "both", "also", "have", "been", "more",
    "most", "only", "other", "each", "many", "show", "shows", "using", "used",
})


def sentences(abstract: str) -> list[str]:
    """Sentences of a usable length for quoting (30 to 300 characters)."""
    parts = [part.strip() for part in _SENTENCE_END.split(abstract)]
    return [part for part in parts if 30 <= len(part) <= 300]


def clauses(sentence: str) -> list[str]:
    """Comma/semicolon clauses of a sentence long enough to be quoted alone."""
    return [part.strip() for part in re.split(r"[,;:]\s", sentence) if len(part.strip()) >= 25]


def _pick_word(words: list[str], rng: random.Random, minimum: int = 4) -> int | None:
    options = [i for i, word in enumerate(words) if _LETTERS.fullmatch(word.strip(".,;:()"))
               and len(word) >= minimum and word.lower() not in _STOPWORDS]
    return rng.choice(options) if options else None


# --------------------------------------------------------------------------- positives


def drop_word(segment: str, rng: random.Random) -> str | None:
    words = segment.split()
    if len(words) < 6:
        return None
    del words[rng.randrange(1, len(words) - 1)]
    return " ".join(words)


def change_article(segment: str, rng: random.Random) -> str | None:
    matches = list(_ARTICLE.finditer(segment))
    if not matches:
        return None
    match = rng.choice(matches)
    swap = {"the": "a", "a": "the", "an": "the", "The": "A", "A": "The", "An": "The"}
    return segment[: match.start()] + swap[match.group(0)] + segment[match.end():]


def change_markup(segment: str, rng: random.Random) -> str | None:
    if _MARKUP.search(segment):
        stripped = _MARKUP.sub(lambda m: m.group(1) or m.group(2) or "", segment)
        return stripped if stripped != segment else None
    words = segment.split()
    index = rng.randrange(len(words))
    words[index] = f"**{words[index]}**"
    return " ".join(words)


def change_spelling(segment: str, rng: random.Random) -> str | None:
    """British/American variants, inside longer words only ('behaviour', not 'our' or
    'noise')."""
    options = [
        (pattern, new)
        for old, new in _SPELLINGS
        if (pattern := re.compile(rf"(?<=[a-z]{{4}}){old}")).search(segment)
    ]
    if not options:
        return None
    pattern, new = rng.choice(options)
    return pattern.sub(new, segment, count=1)


def typo(segment: str, rng: random.Random) -> str | None:
    words = segment.split()
    index = _pick_word(words, rng)
    if index is None:
        return None
    word = words[index]
    at = rng.randrange(1, len(word) - 2)
    words[index] = word[:at] + word[at + 1] + word[at] + word[at + 2:]
    return " ".join(words)


def truncate(segment: str, rng: random.Random) -> str | None:
    words = segment.split()
    if len(words) < 6:
        return None
    keep = rng.randrange(len(words) // 2, len(words) - 1)
    return " ".join(words[:keep]) + "..."


def swap_words(segment: str, rng: random.Random) -> str | None:
    words = segment.split()
    if len(words) < 4:
        return None
    index = rng.randrange(len(words) - 1)
    words[index], words[index + 1] = words[index + 1], words[index]
    return " ".join(words)


def case_and_space(segment: str, rng: random.Random) -> str | None:
    del rng
    return "  ".join(segment.lower().split())


def typo_and_drop(segment: str, rng: random.Random) -> str | None:
    first = typo(segment, rng)
    return drop_word(first, rng) if first else None


POSITIVE_MAKERS: dict[str, Callable[[str, random.Random], str | None]] = {
    "drop_word": drop_word,
    "article": change_article,
    "markup": change_markup,
    "spelling": change_spelling,
    "typo": typo,
    "truncated": truncate,
    "swap_words": swap_words,
    "case_space": case_and_space,
    "typo_and_drop": typo_and_drop,
}


# --------------------------------------------------------------------------- negatives


def change_number(segment: str, rng: random.Random) -> str | None:
    matches = list(_DIGITS.finditer(segment))
    if not matches:
        return None
    match = rng.choice(matches)
    digits = list(match.group(0))
    spots = [i for i, char in enumerate(digits) if char.isdigit()]
    spot = rng.choice(spots)
    digits[spot] = str((int(digits[spot]) + rng.randrange(1, 9)) % 10)
    return segment[: match.start()] + "".join(digits) + segment[match.end():]


def replace_word(segment: str, donor: str, rng: random.Random) -> str | None:
    words = segment.split()
    index = _pick_word(words, rng, minimum=6)
    if index is None:
        return None
    own = words[index].strip(".,;:()").lower()
    donors = [
        w.strip(".,;:()")
        for w in donor.split()
        if len(w) >= 6 and w.isalpha() and own not in w.lower() and w.lower() not in own
    ]
    if not donors:
        return None
    words[index] = rng.choice(donors)
    return " ".join(words)


def flip_polarity(segment: str, rng: random.Random) -> str | None:
    options = [(old, new) for old, new in _POLARITY if re.search(rf"\b{old}\b", segment)]
    if not options:
        return None
    old, new = rng.choice(options)
    return re.sub(rf"\b{old}\b", new, segment, count=1)


def swap_name(segment: str, donor: str, rng: random.Random) -> str | None:
    own = _ACRONYM.findall(segment)
    others = [
        name
        for name in _ACRONYM.findall(donor)
        if not any(name.lower() in mine.lower() or mine.lower() in name.lower() for mine in own)
    ]
    if not own or not others:
        return None
    return segment.replace(rng.choice(own), rng.choice(others), 1)


def exchange_roles(segment: str, rng: random.Random) -> str | None:
    """Two content words at least three words apart trade places ('A beats B' -> 'B beats A')."""
    words = segment.split()
    content = [i for i, word in enumerate(words)
               if len(word.strip(".,;:()")) >= 4 and word.lower() not in _STOPWORDS]
    pairs = [(i, j) for i in content for j in content
             if j - i >= 3 and words[i].strip(".,;:()").lower() != words[j].strip(".,;:()").lower()]
    if not pairs:
        return None
    i, j = rng.choice(pairs)
    words[i], words[j] = words[j], words[i]
    return " ".join(words)


def splice(segment: str, donor_sentence: str) -> str:
    head = segment.split()
    tail = donor_sentence.split()
    return " ".join(head[: max(3, len(head) // 2)] + tail[len(tail) // 2:])
