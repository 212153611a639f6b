"""Quality on the development sets, each split alone and the held-out splits pooled.

    python -m bench.dev_quality DEV.duckdb DEV2.duckdb [DEV3.duckdb] [--label 1.5B]

DEV.duckdb holds a run over bench/gold/dev/abstracts.jsonl, DEV2.duckdb one over
bench/gold/dev2/abstracts.jsonl and DEV3.duckdb (optional) one over
bench/gold/dev3/abstracts.jsonl (papersift run ... --db). Scores the latest run on each
split's papers with `papersift eval`'s own scorer, then pools the true and false
positives and negatives of each split over the sets given (a micro average; the three
held-out splits hold 92 papers), so one small split does not decide a figure. Reads only
scores: no per-paper errors.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from papersift.extract.interface.app import evaluate_run

FIELDS = (("methods", "methods"), ("benchmarks", "benchmarks"), ("gains", "gains_value"))
SETS = ("dev", "dev2", "dev3")


def _f1(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _cell(tp: int, fp: int, fn: int) -> str:
    precision, recall, f1 = _f1(tp, fp, fn)
    return f"{precision:.3f}/{recall:.3f}/{f1:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dbs", type=Path, nargs="+", metavar="DB",
                        help="warehouses of runs over dev, dev2 (and dev3), in that order")
    parser.add_argument("--label", default="")
    parser.add_argument("--splits", default="tune,heldout",
                        help="which splits to score (tune, heldout)")
    args = parser.parse_args()
    wanted = set(args.splits.split(","))
    if not 2 <= len(args.dbs) <= len(SETS):
        parser.error(f"give 2 or {len(SETS)} warehouses, one per set in the order {SETS}")
    dbs = dict(zip(SETS, args.dbs, strict=False))
    pooled = {split: {field: [0, 0, 0] for field, _ in FIELDS} for split in wanted}
    print(f"{'set':6} {'split':8} {'papers':>6}  " + "  ".join(
        f"{field:>10} P/R/F1   " for field, _ in FIELDS) + f"  {args.label}")
    for corpus, split in ((c, s) for c in dbs for s in ("tune", "heldout")):
        if split not in wanted:
            continue
        gold = Path(f"bench/gold/{corpus}/{split}.gold.json")
        metrics = evaluate_run(dbs[corpus], gold).metrics
        cells = []
        for field, key in FIELDS:
            counts = [int(metrics[key][name]) for name in ("tp", "fp", "fn")]
            totals = pooled[split][field]
            pooled[split][field] = [a + b for a, b in zip(totals, counts, strict=True)]
            cells.append(_cell(*counts))
        print(f"{corpus:6} {split:8} {int(metrics['papers']):>6}  " + "  ".join(
            f"{cell:>21}" for cell in cells))
    for split in sorted(wanted):
        cells = [_cell(*pooled[split][field]) for field, _ in FIELDS]
        print(f"{'pooled':6} {split:8} {'':>6}  " + "  ".join(f"{cell:>21}" for cell in cells))


if __name__ == "__main__":
    main()
