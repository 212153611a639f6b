"""Merges that change real counts: the bundled corpus, extracted by replaying the real
recording (tests/recordings/), before and after canonicalisation.

    python -m bench.canon_corpus [--embeddings] [--db /tmp/corpus.duckdb] [--keep-db]

With --keep-db the corpus is added to the warehouse at --db (say, one holding a run on
bench/gold/dev/) instead of a fresh one, so the tables count both collections.

"Before" groups by the spelling as stored (what the saved queries did until issue 15);
"after" groups by canonical entity. Prints how many groups merged and the top-10 tables.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from papersift.extract.interface.entities import build
from papersift.extract.runs.canon import CanonOptions
from papersift.testing.corpus import replay_corpus
from papersift.warehouse.query import run_sql

TABLES = {
    "benchmarks (papers)": (
        "SELECT name, count(DISTINCT paper_id) FROM benchmarks GROUP BY 1",
        "SELECT canonical, count(DISTINCT paper_id) FROM benchmarks "
        "GROUP BY coalesce(entity_id, name), canonical"),
    "benchmarks incl. gains' datasets (papers)": (
        "SELECT name, count(DISTINCT paper_id) FROM (SELECT name, paper_id FROM benchmarks "
        "UNION ALL SELECT dataset, paper_id FROM gains WHERE dataset IS NOT NULL) GROUP BY 1",
        "SELECT canonical, count(DISTINCT paper_id) FROM (SELECT canonical, entity_id, paper_id "
        "FROM benchmarks UNION ALL SELECT canonical_dataset, dataset_entity_id, paper_id "
        "FROM gains WHERE dataset IS NOT NULL) GROUP BY coalesce(entity_id, canonical), 1"),
    "metrics of claimed gains (claims)": (
        "SELECT lower(metric), count(*) FROM gains GROUP BY 1",
        "SELECT canonical_metric, count(*) FROM gains "
        "GROUP BY coalesce(metric_entity_id, metric), canonical_metric"),
    "methods (papers)": (
        "SELECT name, count(DISTINCT paper_id) FROM methods GROUP BY 1",
        "SELECT canonical, count(DISTINCT paper_id) FROM methods "
        "GROUP BY coalesce(entity_id, name), canonical"),
    "tasks (papers)": (
        "SELECT name, count(DISTINCT paper_id) FROM tasks GROUP BY 1",
        "SELECT canonical, count(DISTINCT paper_id) FROM tasks "
        "GROUP BY coalesce(entity_id, name), canonical"),
}


def _top(rows: list[tuple[Any, ...]]) -> list[tuple[str, int]]:
    ranked = sorted(((str(n), int(c)) for n, c in rows), key=lambda r: (-r[1], r[0]))
    return ranked[:10]


def main(argv: list[str] | None = None) -> int:
    """Replay the corpus, canonicalise, and print the before/after tables."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--db", type=Path, default=Path("/tmp/papersift-corpus-canon.duckdb"))
    parser.add_argument("--embeddings", action="store_true",
                        help="also run the embedding stage (`papersift entities build`)")
    parser.add_argument("--keep-db", action="store_true",
                        help="add the corpus to the warehouse at --db instead of a fresh one")
    args = parser.parse_args(argv)
    if not args.keep_db:
        args.db.unlink(missing_ok=True)
    replay_corpus(args.db)  # the run ends with the cheap stages
    if args.embeddings:
        started = time.perf_counter()
        summary = build(args.db, CanonOptions(embeddings=True))
        print(f"embedding pass: {summary.decisions} decisions, {summary.changed_keys} keys "
              f"changed, {time.perf_counter() - started:.1f}s ({summary.embedder})")
        stage = run_sql(args.db, "SELECT stage, verdict, a_key, b_key, score, detail FROM "
                                 "entity_decisions WHERE stage IN ('embedding', 'guard')")
        for row in stage.rows:
            print(f"  {row}")
    merges = run_sql(args.db, "SELECT stage, count(*) FROM entity_decisions "
                              "WHERE verdict = 'same' GROUP BY 1 ORDER BY 1").rows
    print("automatic 'same' decisions by stage: "
          + ", ".join(f"{stage} {n}" for stage, n in merges))
    for title, (before_sql, after_sql) in TABLES.items():
        before, after = run_sql(args.db, before_sql).rows, run_sql(args.db, after_sql).rows
        print(f"\n## {title}: {len(before)} groups before, {len(after)} after "
              f"({len(before) - len(after)} merged away)")
        left, right = _top(before), _top(after)
        print(f"{'before':44} {'n':>3}   {'after':44} {'n':>3}")
        for i in range(max(len(left), len(right))):
            a = left[i] if i < len(left) else ("", 0)
            b = right[i] if i < len(right) else ("", 0)
            print(f"{a[0][:44]:44} {a[1]:3}   {b[0][:44]:44} {b[1]:3}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
