"""Search and topic quality on the bundled corpus against hand-written expectations.

    python -m bench.search_quality [--db indexed.duckdb]

Without --db it builds a warehouse from the recorded extraction run (tests/recordings/)
and indexes it (embeds the 63 abstracts). Prints recall@10 and MRR of the queries in
bench/search/queries.json for keyword only, vectors only and hybrid, then the topic map's
agreement (NMI, ARI) with the hand labels in bench/search/areas.json, and the area table.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections import Counter
from pathlib import Path

from papersift.extract.access.embedding import load_embedder
from papersift.extract.interface import discover
from papersift.warehouse.db import connect

ROOT = Path(__file__).resolve().parent.parent

HERE = Path(__file__).resolve().parent / "search"


def _prefix(paper_id: str) -> str:
    return paper_id.removeprefix("sha256:")[:12]


def nmi(a: list[str], b: list[str]) -> float:
    """Normalised mutual information (arithmetic mean of the entropies)."""
    n = len(a)
    ca, cb, cab = Counter(a), Counter(b), Counter(zip(a, b, strict=True))
    mi = sum(c / n * math.log(c * n / (ca[x] * cb[y])) for (x, y), c in cab.items())
    ha = -sum(c / n * math.log(c / n) for c in ca.values())
    hb = -sum(c / n * math.log(c / n) for c in cb.values())
    return 2 * mi / (ha + hb) if ha + hb else 1.0


def ari(a: list[str], b: list[str]) -> float:
    """Adjusted Rand index."""
    def pairs(x: int) -> float:
        return x * (x - 1) / 2
    n = len(a)
    index = sum(pairs(c) for c in Counter(zip(a, b, strict=True)).values())
    sa = sum(pairs(c) for c in Counter(a).values())
    sb = sum(pairs(c) for c in Counter(b).values())
    expected = sa * sb / pairs(n)
    top = (sa + sb) / 2
    return (index - expected) / (top - expected) if top != expected else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="an indexed warehouse of the bundled corpus")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    db = args.db
    if db is None:
        from papersift.testing.corpus import replay_corpus

        db = Path(tempfile.mkdtemp()) / "corpus.duckdb"
        replay_corpus(db)
        started = time.perf_counter()
        discover.index_collection(db)
        print(f"indexed in {time.perf_counter() - started:.1f}s")
    embedder = load_embedder()
    queries = json.loads((HERE / "queries.json").read_text(encoding="utf-8"))["queries"]
    print(f"{len(queries)} queries, recall@{args.k} and MRR (first expected paper's rank)")
    for mode in ("keyword", "vector", "hybrid"):
        recalls, reciprocal = [], []
        misses = []
        for query in queries:
            hits = discover.search(db, query["q"], mode=mode, limit=args.k, embedder=embedder)
            found = [_prefix(h.paper_id) for h in hits]
            expected = set(query["expect"])
            recalls.append(len(expected & set(found)) / len(expected))
            ranks = [found.index(p) + 1 for p in expected if p in found]
            reciprocal.append(1 / min(ranks) if ranks else 0.0)
            if recalls[-1] < 1:
                misses.append(query["q"])
        print(f"  {mode:8} recall@{args.k} {sum(recalls) / len(recalls):.3f}  "
              f"MRR {sum(reciprocal) / len(reciprocal):.3f}  ({len(misses)} queries missing "
              "a paper)")
        for missed in misses:
            print(f"           missed: {missed}")
    hand = json.loads((HERE / "areas.json").read_text(encoding="utf-8"))["areas"]
    label = {p: area for area, papers in hand.items() for p in papers}
    con = connect(db, read_only=True)
    try:
        rows = con.execute("SELECT paper_id, area_id FROM paper_areas ORDER BY 1").fetchall()
        table = con.execute("SELECT area_id, size, label FROM areas ORDER BY size DESC").fetchall()
        scores = con.execute("SELECT scores FROM latest_topic_run").fetchone()
    finally:
        con.close()
    truth = [label[_prefix(p)] for p, _ in rows]
    found_areas = [str(a) for _, a in rows]
    print(f"topic map: {len(table)} areas vs {len(hand)} hand areas; NMI "
          f"{nmi(truth, found_areas):.3f}, ARI {ari(truth, found_areas):.3f}")
    print(f"  silhouette per k: {scores[0] if scores else '-'}")
    for area_id, size, area_label in table:
        print(f"  area {area_id:3} {size:4} papers  {area_label}")


if __name__ == "__main__":
    main()
