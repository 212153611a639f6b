"""The cosine below which `papersift search` says "no good match", from hand queries.

    python -m bench.search_threshold [--db indexed.duckdb]

The best cosine of each hand query in bench/search/queries.json (all about the corpus)
and of each off-topic query there (about nothing in it); then, per candidate threshold,
how many on-topic queries it would call off-topic and how many off-topic ones it would
let through. Without --db it replays the recorded run and indexes it, as
search_quality.py does.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from papersift.extract.access.embedding import Embedder, load_embedder
from papersift.extract.interface import discover

HERE = Path(__file__).resolve().parent / "search"


def _best(db: Path, query: str, embedder: Embedder) -> float:
    hits = discover.search(db, query, mode="vector", limit=1, embedder=embedder)
    return float(hits[0].cosine or 0.0) if hits else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="an indexed warehouse of the bundled corpus")
    args = parser.parse_args()
    db = args.db
    if db is None:
        from papersift.testing.corpus import replay_corpus

        db = Path(tempfile.mkdtemp()) / "corpus.duckdb"
        replay_corpus(db)
        discover.index_collection(db, areas=False)
    embedder = load_embedder()
    hand = json.loads((HERE / "queries.json").read_text(encoding="utf-8"))
    on = sorted((_best(db, q["q"], embedder), q["q"]) for q in hand["queries"])
    off = sorted((_best(db, q, embedder), q) for q in hand["off_topic"])
    print(f"{len(on)} on-topic queries, best cosine: min {on[0][0]:.3f} "
          f"median {on[len(on) // 2][0]:.3f} max {on[-1][0]:.3f}")
    for score, query in on[:3]:
        print(f"  lowest on-topic  {score:.3f}  {query}")
    print(f"{len(off)} off-topic queries, best cosine: min {off[0][0]:.3f} "
          f"median {off[len(off) // 2][0]:.3f} max {off[-1][0]:.3f}")
    for score, query in off[-3:]:
        print(f"  highest off-topic {score:.3f}  {query}")
    print("threshold  on-topic called off  off-topic let through")
    for step in range(10, 50, 2):
        cut = step / 100
        print(f"  {cut:.2f}     {sum(s < cut for s, _ in on):3}                "
              f"{sum(s >= cut for s, _ in off):3}")
    print(f"in use: GOOD_MATCH_COSINE = {discover.GOOD_MATCH_COSINE}")


if __name__ == "__main__":
    main()
