"""Speed and size of search and the topic map: embedding throughput, search latency at
1k/10k/100k synthetic papers, and the report with its map on 2,000 papers.

    python -m bench.search_speed [--embed 16] [--sizes 1000,10000,100000] [--report 2000]

Synthetic papers come from bench/synth.py. Their vectors are synthetic too (embedding
100,000 abstracts on a 2-core CPU would take hours): paper i gets the real vector of the
bundled abstract it derives from (tests/data/corpus_vectors.npz) plus Gaussian noise,
normalised. Queries are the 52 of bench/search/queries.json, embedded by the real model;
latency is the SQL of `papersift search` (BM25 + cosine, fused), after the query vector;
CPU is this process's (DuckDB's threads included), as the machine may be loaded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from bench.synth import source_abstracts, synth_papers
from papersift.extract.access.embedding import MODEL_ID, load_embedder, text_key
from papersift.extract.interface.discover import build_areas
from papersift.report.render import write_report
from papersift.warehouse import search
from papersift.warehouse.db import connect

ROOT = Path(__file__).resolve().parent.parent

QUERIES = ROOT / "bench" / "search" / "queries.json"
VECTORS = ROOT / "tests" / "data" / "corpus_vectors.npz"


def synthetic_warehouse(db: Path, count: int, noise: float = 0.05) -> None:
    """A warehouse of ``count`` synthetic papers with synthetic vectors (no extractions)."""
    recorded = np.load(VECTORS)
    by_key = dict(zip((str(k) for k in recorded["keys"]), recorded["vectors"], strict=True))
    bases = source_abstracts()
    base_vectors = np.stack([by_key[text_key(b)] for b in bases])
    rng = np.random.default_rng(0)
    con = connect(db)
    try:
        ids, texts, keys = [], [], []
        for paper in synth_papers(count, sources=bases):
            key = text_key(paper.abstract)
            ids.append(key)
            texts.append(paper.abstract)
            keys.append(key)
        now = datetime.now(UTC).replace(tzinfo=None)
        table = pa.table({"paper_id": ids, "text": texts, "text_sha256": keys,
                          "chars": [len(t) for t in texts], "first_seen": [now] * count})
        con.register("_synth", table)
        con.execute("INSERT INTO papers SELECT * FROM _synth")
        con.unregister("_synth")
        sources = np.arange(count) % len(bases)
        vectors = base_vectors[sources] + noise * rng.normal(size=(count, 384))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for start in range(0, count, 20_000):
            search.store_vectors(con, MODEL_ID, keys[start:start + 20_000],
                                 vectors[start:start + 20_000].astype(np.float32))
    finally:
        con.close()


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def embedding_throughput(count: int) -> None:
    embedder = load_embedder()
    texts = source_abstracts()[:count]
    wall, cpu = time.perf_counter(), time.process_time()
    embedder.embed(texts)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"embedding: {len(texts)} bundled abstracts in {wall:.1f}s wall "
          f"({len(texts) / wall:.2f} abstracts/s), {cpu:.1f}s CPU "
          f"({len(texts) / cpu:.2f} abstracts per CPU-second)")


def latency(sizes: list[int], query_vectors: list[tuple[str, list[float]]]) -> None:
    for size in sizes:
        db = Path(tempfile.mkdtemp()) / f"synth{size}.duckdb"
        started = time.perf_counter()
        synthetic_warehouse(db, size)
        built = time.perf_counter() - started
        con = connect(db)
        try:
            started = time.perf_counter()
            search.ensure_keyword_index(con)
            fts = time.perf_counter() - started
            figures = {}
            for mode in ("hybrid", "keyword", "vector", "vector-before"):
                figures[mode] = _timed(con, mode, query_vectors)
        finally:
            con.close()
        size_mb = db.stat().st_size / 1e6
        print(f"{size:>7,} papers: warehouse {built:.1f}s, fts index {fts:.1f}s, file "
              f"{size_mb:.0f} MB; latency ms median/p95 wall, median CPU: " + ", ".join(
                  f"{mode} {m:.0f}/{p:.0f} cpu {c:.0f}" for mode, (m, p, c) in figures.items()))


# main's vector ranking before this branch: the join to papers carried every vector
_VECTOR_RANKING_BEFORE = """
    SELECT paper_id, cosine, row_number() OVER (ORDER BY cosine DESC, paper_id) AS vec_rank
    FROM (SELECT a.paper_id, array_cosine_similarity(e.vector, $vector::FLOAT[384]) AS cosine
          FROM allowed a JOIN embeddings e ON e.text_sha256 = a.text_sha256
          AND e.model_id = $model_id)
    ORDER BY cosine DESC LIMIT $depth"""


def _timed(con: Any, mode: str, query_vectors: list[tuple[str, list[float]]]
           ) -> tuple[float, float, float]:
    """(median ms, p95 ms, median CPU ms) of one search mode over the queries; the mode
    ``vector-before`` runs the vector ranking as main wrote it."""
    current = search._VECTOR_RANKING
    if mode == "vector-before":
        search._VECTOR_RANKING = _VECTOR_RANKING_BEFORE
    try:
        times, cpus = [], []
        for query, vector in query_vectors:
            started, cpu = time.perf_counter(), time.process_time()
            search.rank(con, query, vector, MODEL_ID, mode=mode.partition("-")[0],
                        limit=10)
            times.append((time.perf_counter() - started) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
    finally:
        search._VECTOR_RANKING = current
    return statistics.median(times), _percentile(times, 0.95), statistics.median(cpus)


def report_figures(count: int) -> None:
    folder = Path(tempfile.mkdtemp())
    db = folder / "report.duckdb"
    synthetic_warehouse(db, count)
    con = connect(db)
    try:
        started = time.perf_counter()
        _, k, _ = build_areas(con, MODEL_ID)
        mapped = time.perf_counter() - started
    finally:
        con.close()
    written = write_report(db, folder / "report.html")
    print(f"report with map, {count} papers: topic map {mapped:.1f}s ({k} areas), report "
          f"{written.seconds:.1f}s, {written.bytes / 1e6:.2f} MB")
    from papersift.testing.browser import browser_problem, open_browser

    if browser_problem():
        print(f"  open time not measured: {browser_problem()}")
        return
    driver = open_browser(1280, 1000)
    try:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            driver.get(written.path.as_uri())
            driver.execute_script("return window.papersiftMap.data.datasets.length")
            times.append(time.perf_counter() - started)
        load = driver.execute_script(
            "const t = performance.getEntriesByType('navigation')[0]; return t.loadEventEnd")
        started = time.perf_counter()
        driver.execute_script("document.getElementById('search').value = 'causal bandits';"
                              "window.papersiftApplyFilters();")
        ranked = time.perf_counter() - started
    finally:
        driver.quit()
    print(f"  open in headless Chromium: {statistics.median(times):.2f}s median of 3 "
          f"(load event at {load / 1000:.2f}s); search box ranking {ranked * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embed", type=int, default=16, help="abstracts to embed (0: skip)")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--report", type=int, default=2000, help="papers (0: skip)")
    args = parser.parse_args()
    if args.embed:
        embedding_throughput(args.embed)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if sizes:
        embedder = load_embedder()
        queries = [q["q"] for q in json.loads(QUERIES.read_text(encoding="utf-8"))["queries"]]
        vectors = embedder.embed(queries)
        latency(sizes, [(q, v.tolist()) for q, v in zip(queries, vectors, strict=True)])
    if args.report:
        report_figures(args.report)


if __name__ == "__main__":
    main()
