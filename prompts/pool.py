"""A few-shot pool: worked examples, taken from reviewed papers, that a run may send with
each abstract (``--fewshot-pool FILE``; ``papersift corrections pool`` writes one).

The file has the shape of a prompt's ``NAME.examples.json`` plus a format tag and a
version::

    {"format": "papersift-fewshot-pool/1", "version": "sha256:...",
     "_comment": "...", "examples": [{"abstract": ..., "answer": {...}}]}

The version is a hash of the examples alone (canonical JSON), so a pool written twice
from the same reviews has the same version, and a prompt with a pool has a version (and
so cache keys) of its own. A file whose examples no longer match its version was edited by
hand: it is refused, and deleting its ``version`` accepts the edit.

Which examples go with an abstract: the ``k`` whose words overlap the abstract's most
(Jaccard overlap of their sets of words of 4+ letters, case-folded; ties go to the earlier
example), never the abstract itself (a reviewed paper extracted again must not be shown
its own answer). The choice depends only on the pool and the abstract's text, so it is
covered by the cache key. Nothing measures yet whether this beats the first ``k``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papersift.prompts import Example, Prompt, PromptError

POOL_FORMAT = "papersift-fewshot-pool/1"
DEFAULT_K = 2  # examples sent with each abstract
SELECTION = "jaccard-words4"  # names the choice rule; part of the prompt's version
_WORD = re.compile(r"[^\W\d_]{4,}")


def _words(text: str) -> frozenset[str]:
    return frozenset(word.casefold() for word in _WORD.findall(text))


def examples_version(examples: list[dict[str, Any]]) -> str:
    """The content hash of a pool's examples (canonical JSON)."""
    canonical = json.dumps(examples, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class FewshotPool:
    """Examples to choose from, and how many go with each abstract."""

    examples: tuple[Example, ...]
    version: str
    k: int = DEFAULT_K
    word_sets: tuple[frozenset[str], ...] = dataclasses.field(default=(), compare=False,
                                                              repr=False)

    def __post_init__(self) -> None:
        if not self.word_sets:
            object.__setattr__(self, "word_sets", tuple(_words(e.abstract) for e in self.examples))

    def choose(self, abstract: str) -> tuple[Example, ...]:
        """The ``k`` examples most like the abstract by word overlap (never itself)."""
        mine = _words(abstract)
        scored = []
        for index, (example, theirs) in enumerate(zip(self.examples, self.word_sets,
                                                      strict=True)):
            if example.abstract.strip() == abstract.strip():
                continue
            union = len(mine | theirs)
            overlap = len(mine & theirs) / union if union else 0.0
            scored.append((-overlap, index, example))
        scored.sort(key=lambda item: (item[0], item[1]))
        return tuple(example for _, _, example in scored[:self.k])


def pool_document(examples: list[dict[str, Any]], comment: str) -> dict[str, Any]:
    """A pool file's content, its version computed from the examples."""
    return {"format": POOL_FORMAT, "version": examples_version(examples), "_comment": comment,
            "examples": examples}


def load_pool(path: Path, k: int = DEFAULT_K) -> FewshotPool:
    """Read and check a pool file; errors name the file and the example."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise PromptError(f"few-shot pool not found: {path}") from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PromptError(f"{path}: not a JSON few-shot pool ({error})") from error
    if not isinstance(data, dict) or data.get("format") != POOL_FORMAT:
        raise PromptError(f"{path}: not a few-shot pool (expected \"format\": "
                          f"\"{POOL_FORMAT}\"; `papersift corrections pool` writes one)")
    unknown = set(data) - {"format", "version", "_comment", "examples"}
    if unknown:
        raise PromptError(f"{path}: unknown key(s) {sorted(unknown)}")
    raw = data.get("examples")
    if not isinstance(raw, list) or not raw:
        raise PromptError(f"{path}: the pool has no examples")
    for index, item in enumerate(raw, start=1):
        if (not isinstance(item, dict) or set(item) != {"abstract", "answer"}
                or not isinstance(item["abstract"], str) or not isinstance(item["answer"], dict)):
            raise PromptError(f"{path}: example {index} needs exactly 'abstract' (text) and "
                              "'answer' (an object)")
    version = examples_version(raw)
    stored = data.get("version")
    if stored is not None and stored != version:
        raise PromptError(f"{path}: its examples do not match its version {stored} (edited "
                          "by hand?); write it again, or delete its \"version\" to accept "
                          "the edit")
    examples = tuple(Example(abstract=item["abstract"], answer=item["answer"]) for item in raw)
    return FewshotPool(examples=examples, version=version, k=k)


def answering(pool: FewshotPool, keys: Collection[str]) -> FewshotPool:
    """The pool with each example's answer cut to ``keys`` (the run's draft fields): a
    pool written with user fields serves a run without them, or with others; a pool that
    loses nothing is the same pool (the same version)."""
    examples = tuple(Example(e.abstract, {k: v for k, v in e.answer.items() if k in keys})
                     for e in pool.examples)
    if examples == pool.examples:
        return pool
    raw = [{"abstract": e.abstract, "answer": e.answer} for e in examples]
    return FewshotPool(examples=examples, version=examples_version(raw), k=pool.k)


def with_pool(prompt: Prompt, pool: FewshotPool) -> Prompt:
    """The prompt that sends the pool's chosen examples before each abstract; its version
    covers the prompt's, the pool's, ``k`` and the choice rule."""
    material = json.dumps({"prompt": prompt.version, "pool": pool.version, "k": pool.k,
                           "selection": SELECTION}, sort_keys=True)
    version = "sha256:" + hashlib.sha256(material.encode("utf-8")).hexdigest()
    return dataclasses.replace(prompt, pool=pool, version=version)
