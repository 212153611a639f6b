"""Deterministic normalisation of entity names and the guards that keep near-twins apart.

``name_key`` is the cheapest stage: two spellings with the same key are one entity
(case, markup, dashes, spacing, a leading "the", a trailing "dataset"/"benchmark").
``guard`` is the precision check every similarity-based merge must pass first: names
whose numbers, versions or suffixes differ (CIFAR-10/CIFAR-100, ImageNet/ImageNet-C,
MMLU/MMLU-Pro, SQuAD 1.1/2.0, GPT-4/GPT-4o) are never merged by similarity.
"""

from __future__ import annotations

import functools
import re
import unicodedata

KINDS = ("benchmark", "method", "metric", "task")

_DASHES = re.compile(r"[\u2010-\u2015\u2212\u2043\ufe58\ufe63\uff0d]")
_TEX_COMMAND = re.compile(r"\\[a-zA-Z]+\*?\s*")
_MARKUP = re.compile(r"[{}$*`\"'“”‘’]")
_SEPARATORS = re.compile(r"[\s\-_/:,;()\[\]|&]+")
_PLUS = re.compile(r"\+")
_VERSION_PREFIX = re.compile(r"^v(?=\d)")
_TRAILING_ZERO = re.compile(r"^(\d+)\.0$")
_DIGIT = re.compile(r"\d")
_PLURAL = re.compile(r"[a-z]{3}[^su]s$")
_METRIC_SCOPE = re.compile(r"\s+(?:on|across|over)\s+.*$")
# Words that name the kind of thing rather than the thing: dropped at either end of a key.
_NEUTRAL_EDGES = {
    "benchmark": {"the", "dataset", "datasets", "benchmark", "benchmarks", "data", "set",
                  "corpus", "suite", "challenge"},
    "method": {"the", "our", "method", "framework", "approach", "model", "algorithm"},
    "metric": {"the", "score", "metric", "rate"},
    "task": {"the", "task", "tasks", "problem", "problems"},
}
# Abbreviations that always mean the same word in a metric's name.
METRIC_WORDS = {"acc": "accuracy", "accu": "accuracy", "err": "error", "prec": "precision",
                "rec": "recall", "ppl": "perplexity", "sr": "success"}
# Words whose presence on one side only still means "the same thing" (for the guard).
_NEUTRAL_WORDS = {"the", "a", "an", "of", "on", "for", "in", "and", "dataset", "datasets",
                  "benchmark", "benchmarks", "data", "set", "corpus", "suite", "score",
                  "metric", "task", "tasks", "method", "model", "framework", "approach"}


def clean(name: str) -> str:
    """The name as a reader sees it: markup, odd dashes and extra spaces removed."""
    text = unicodedata.normalize("NFKC", name)
    text = _DASHES.sub("-", text)
    text = _TEX_COMMAND.sub("", text).replace("\\", "")
    text = _MARKUP.sub("", text)
    return " ".join(text.split()).strip(" .,;:")


# A pass asks for the tokens and key of the same names many times (every mention, every
# candidate pair's guard): both are pure, so they are remembered, up to this many names.
_CACHED_NAMES = 1 << 17


def tokens(name: str, kind: str = "benchmark") -> list[str]:
    """Lower-case word tokens of a cleaned name; version prefixes ("v2") and ".0" endings
    dropped; for metrics, abbreviations spelled out and a trailing "on/across X" (the
    dataset, stored apart) dropped. A new list each call (the caller may change it)."""
    return list(_tokens(name, kind))


@functools.lru_cache(maxsize=_CACHED_NAMES)
def _tokens(name: str, kind: str) -> tuple[str, ...]:
    found = []
    text = clean(name).casefold()
    if kind == "metric":
        text = _METRIC_SCOPE.sub("", text) or text
    text = _PLUS.sub(" plus ", text)  # HumanEval+ and ScanNet++ are other benchmarks
    for raw in _SEPARATORS.split(text):
        token = raw.strip(".")
        if not token:
            continue
        token = _VERSION_PREFIX.sub("", token)
        token = _TRAILING_ZERO.sub(r"\1", token)
        if kind == "metric":
            token = METRIC_WORDS.get(token, token)
        found.append(token)
    if kind in ("metric", "task") and found and _PLURAL.search(found[-1]):
        found[-1] = found[-1][:-1]  # "speedups", "success rates": one metric
    return tuple(found)


def _trim(found: tuple[str, ...], kind: str) -> list[str]:
    neutral = _NEUTRAL_EDGES.get(kind, set())
    trimmed = list(found)
    while len(trimmed) > 1 and trimmed[0] in neutral:
        trimmed.pop(0)
    while len(trimmed) > 1 and trimmed[-1] in neutral:
        trimmed.pop()
    return trimmed


@functools.lru_cache(maxsize=_CACHED_NAMES)
def name_key(name: str, kind: str = "benchmark") -> str:
    """The normalised key: tokens joined, with a '.' kept only between two numbers
    (so "Llama 2 7B" and "Llama 27B" stay apart while "ImageNet 1K" = "ImageNet-1K")."""
    parts = _trim(_tokens(name, kind), kind)
    key = ""
    for part in parts:
        if key and key[-1].isdigit() and part[0].isdigit():
            key += "."
        key += part
    return key


def _versions(found: tuple[str, ...]) -> list[str]:
    return sorted(token for token in found if _DIGIT.search(token))


def guard(a: str, b: str, kind: str = "benchmark") -> str | None:
    """Why two names must not be merged by similarity, or None when nothing forbids it.

    Blocks: different numbers or version tokens; one name being the other plus a
    distinguishing word (ImageNet-C, MMLU-Pro, COCO-Stuff); a letter glued to a shared
    version (GPT-4 / GPT-4o); names that differ only in short words (ViT-B/16 / ViT-L/16,
    WMT14 En-De / En-Fr)."""
    tokens_a, tokens_b = _tokens(a, kind), _tokens(b, kind)
    versions_a, versions_b = _versions(tokens_a), _versions(tokens_b)
    if versions_a != versions_b:
        return f"numbers or versions differ: {versions_a or '-'} vs {versions_b or '-'}"
    words_a = {t for t in tokens_a if t not in _NEUTRAL_WORDS}
    words_b = {t for t in tokens_b if t not in _NEUTRAL_WORDS}
    if words_a != words_b and (words_a < words_b or words_b < words_a):
        extra = sorted(words_a ^ words_b)
        return f"one name adds {', '.join(extra)}"
    differ = words_a ^ words_b
    if differ and all(len(word) <= 2 for word in differ):
        return f"short distinguishing words differ: {', '.join(sorted(differ))}"
    key_a, key_b = name_key(a, kind), name_key(b, kind)
    if key_a != key_b and (key_a.startswith(key_b) or key_b.startswith(key_a)):
        return "one name extends the other"
    return None
