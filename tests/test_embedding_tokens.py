"""Token ids of awkward texts, frozen from the hand-written WordPiece tokenizer.

tests/data/tokenizer_ids.json was written by ``extract/domain/wordpiece.py`` before the
embedder moved to the ``tokenizers`` library (its ``recorded_with`` names the commit). The
texts in ``same`` cover accents, CJK and Hangul, LaTeX, words split into ``##`` pieces,
words of 100 and 101 characters (the per-word limit), odd whitespace and control
characters, special tokens written as text ("[MASK]", "[CLS]"), and a text cut at
MAX_TOKENS; whatever tokenizer the embedder uses must give exactly these ids, so cached
vectors stay valid.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("numpy")

from papersift.extract.access import embedding
from tests.searchtools import real_embedder

RECORDED = json.loads((Path(__file__).parent / "data" / "tokenizer_ids.json")
                      .read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def embedder() -> embedding.Embedder:
    return real_embedder()


def test_awkward_texts_keep_their_recorded_ids(embedder: embedding.Embedder) -> None:
    for case in RECORDED["same"]:
        ids = embedder.tokenizer.encode(case["text"], embedding.MAX_TOKENS)
        assert ids == case["ids"], case["text"][:60]


def test_the_recording_reaches_truncation_and_the_word_limit() -> None:
    lengths = [len(case["ids"]) for case in RECORDED["same"]]
    assert max(lengths) == embedding.MAX_TOKENS
    assert any(len(word) == 101 for case in RECORDED["same"] for word in case["text"].split())


# Where the hand-written tokenizer was not sentence-transformers' (which runs the same
# library with the same normaliser), the ids now follow sentence-transformers; no real
# abstract has either (0 of 35,030 conference titles and abstracts differ):
# - a private-use character (U+E000) is dropped as a control character (the old code
#   dropped only categories Cc and Cf), so "private\ue000use" is no longer [UNK];
# - a capital sigma ending a word lowercases to "σ", not Python's final "ς".
CHANGED_IDS = [
    [101, 2797, 8557, 1998, 100, 3642, 2685, 102],
    [101, 1169, 29722, 29730, 29733, 1998, 1037, 29733, 1024, 1037, 3007, 13201, 4566, 1037,
     2773, 102],
]


def test_where_the_old_tokenizer_differed_the_ids_are_sentence_transformers(
        embedder: embedding.Embedder) -> None:
    for case, expected in zip(RECORDED["changed"], CHANGED_IDS, strict=True):
        ids = embedder.tokenizer.encode(case["text"], embedding.MAX_TOKENS)
        assert ids == expected != case["old_ids"], case["text"]
