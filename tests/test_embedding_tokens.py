"""Token ids of awkward texts, frozen from the hand-written WordPiece tokenizer.

tests/data/tokenizer_ids.json was written by ``extract/domain/wordpiece.py`` before the
embedder moved to the ``tokenizers`` library (its ``recorded_with`` names the commit). The
texts in ``same`` cover accents, CJK and Hangul, LaTeX, words split into ``##`` pieces,
words of 100 and 101 characters (the per-word limit), odd whitespace and control
characters, and a text cut at MAX_TOKENS; whatever tokenizer the embedder uses must give
exactly these ids, so cached vectors stay valid.
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
