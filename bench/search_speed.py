"""Speed and size of search and the topic map: embedding throughput, search latency at
1k/10k/100k synthetic papers, and the report with its map on 2,000 papers.

    python -m bench.search_speed [--embed 16] [--sizes 1000,10000,100000] [--report 2000]

Synthetic papers come from bench/synth.py. Their vectors are synthetic too (embedding
100,000 abstracts on a 2-core CPU would take hours): paper i gets the real vector of the
bundled abstract it derives from (tests/data/corpus_vectors.npz) plus Gaussian noise,
normalised. Queries are the 52 of bench/search/queries.json, embedded by the real model;
latency is the SQL of `papersift search` (BM25 + cosine, fused), after the query vector;
CPU is this process's (DuckDB's threads included), as the machine may be loaded. Modes
ending ``-before`` time main's SQL from before the postings table (match_bm25 on every
paper; every match numbered before the top 100 were kept), on the same warehouse.
"""

from __future__ import annotations

import argparse
import json
import resource
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
from papersift.warehouse.repository import Repository

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


def latency(sizes: list[int], query_vectors: list[tuple[str, list[float]]],
            keep: Path | None = None) -> None:
    """Per size: build (or, with ``keep``, reuse) the warehouse and its keyword index,
    then time every mode over the queries."""
    for size in sizes:
        db = (keep or Path(tempfile.mkdtemp())) / f"synth{size}.duckdb"
        wall, cpu = time.perf_counter(), _cpu_seconds()
        reused = db.exists()
        if not reused:
            db.parent.mkdir(parents=True, exist_ok=True)
            synthetic_warehouse(db, size)
        built, built_cpu = time.perf_counter() - wall, _cpu_seconds() - cpu
        before_index = db.stat().st_size
        con = connect(db)
        try:
            wall, cpu = time.perf_counter(), _cpu_seconds()
            search.ensure_keyword_index(con)
            fts, fts_cpu = time.perf_counter() - wall, _cpu_seconds() - cpu
            index_mb = (db.stat().st_size - before_index) / 1e6
            rows = {t: search._count(con, f"SELECT count(*) FROM fts_main_papers.{t}")
                    for t in ("terms", "postings")}
            figures = {mode: _timed(con, mode, query_vectors) for mode in MODES}
        finally:
            con.close()
        print(f"{size:>7,} papers: warehouse {'reused, ' if reused else ''}"
              f"{built:.1f}s wall / {built_cpu:.1f}s CPU, "
              f"keyword index {fts:.1f}s wall / {fts_cpu:.1f}s CPU, +{index_mb:.0f} MB "
              f"({rows['terms']:,} tokens, {rows['postings']:,} postings), file "
              f"{db.stat().st_size / 1e6:.0f} MB")
        for mode, (median, p95, cpu_median, cpu_p95) in figures.items():
            print(f"    {mode:<15} median/p95 {median:6.0f}/{p95:6.0f} ms wall, "
                  f"CPU {cpu_median:6.0f}/{cpu_p95:6.0f} ms")
        if keep is None:
            db.unlink()


MODES = ("hybrid", "keyword", "vector", "hybrid-before", "keyword-before", "vector-before")
# main's rankings before this branch (cbb1f16): the extension's match_bm25 on every
# allowed paper, and each ranking numbered in full before its top $depth were kept
_BEFORE = {
    "_KEYWORD_RANKING": """
    SELECT paper_id, bm25, row_number() OVER (ORDER BY bm25 DESC, paper_id) AS kw_rank
    FROM (SELECT paper_id, fts_main_papers.match_bm25(paper_id, $query) AS bm25 FROM allowed)
    WHERE bm25 IS NOT NULL ORDER BY bm25 DESC LIMIT $depth""",
    "_VECTOR_RANKING": """
    SELECT paper_id, cosine, row_number() OVER (ORDER BY cosine DESC, paper_id) AS vec_rank
    FROM (SELECT a.paper_id, s.cosine FROM allowed a JOIN """ + search._SCORED.format(
        vector="$vector", model="$model_id") + """ s ON s.text_sha256 = a.text_sha256)
    ORDER BY cosine DESC LIMIT $depth"""}
_BEFORE["_KEYWORD_RANKING_ALL"] = _BEFORE["_KEYWORD_RANKING"]


def _cpu_seconds() -> float:
    """User + system CPU of this process, DuckDB's threads included."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(con: Any, mode: str, query_vectors: list[tuple[str, list[float]]]
           ) -> tuple[float, float, float, float]:
    """(median ms, p95 ms, median CPU ms, p95 CPU ms) of one search mode over the queries;
    a mode ending ``-before`` runs main's SQL from before this branch."""
    current = {name: getattr(search, name) for name in _BEFORE}
    if mode.endswith("-before"):
        for name, sql in _BEFORE.items():
            setattr(search, name, sql)
    try:
        times, cpus = [], []
        for query, vector in query_vectors:
            started, cpu = time.perf_counter(), _cpu_seconds()
            search.rank(con, query, vector, MODEL_ID, mode=mode.partition("-")[0],
                        limit=10)
            times.append((time.perf_counter() - started) * 1000)
            cpus.append((_cpu_seconds() - cpu) * 1000)
    finally:
        for name, sql in current.items():
            setattr(search, name, sql)
    return (statistics.median(times), _percentile(times, 0.95), statistics.median(cpus),
            _percentile(cpus, 0.95))


def report_figures(count: int) -> None:
    folder = Path(tempfile.mkdtemp())
    db = folder / "report.duckdb"
    synthetic_warehouse(db, count)
    con = connect(db)
    try:
        started = time.perf_counter()
        _, k, _ = build_areas(Repository(con), MODEL_ID)
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
    parser.add_argument("--keep", type=Path, help="keep the warehouses in this folder, "
                        "and reuse those already there (their build is not timed again)")
    parser.add_argument("--queries", type=int, default=0,
                        help="time only the first N of the 52 queries (0: all)")
    args = parser.parse_args()
    if args.embed:
        embedding_throughput(args.embed)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if sizes:
        embedder = load_embedder()
        queries = [q["q"] for q in json.loads(QUERIES.read_text(encoding="utf-8"))["queries"]]
        queries = queries[:args.queries or None]
        vectors = embedder.embed(queries)
        latency(sizes, [(q, v.tolist()) for q, v in zip(queries, vectors, strict=True)],
                args.keep)
    if args.report:
        report_figures(args.report)


if __name__ == "__main__":
    main()
