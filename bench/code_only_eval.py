"""What the grounding code finds on its own: an empty draft (no model at all), then the
names and results code adds (title names, coined names after proposal verbs, results
written with a unit), scored against a gold file. A floor for the extractor, and a check
of the added candidates' precision on abstracts nobody tuned on.

    python -m bench.code_only_eval bench/gold/dev/abstracts.jsonl bench/gold/dev/tune.gold.json
        [--no-title] [-v]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from papersift.extract.domain.assembly.assemble import assemble
from papersift.extract.domain.evaluation.evaluate_gold import (
    Counts,
    load_gold,
    match_one_to_one,
    name_forms,
    names_match,
    value_agrees,
)
from papersift.extract.domain.reading.ingest import paper_id_for
from papersift.schemas import PaperDraft

REPO = Path(__file__).resolve().parents[1]

EMPTY = {"tasks": ["-"], "methods": [], "benchmarks": [], "gains": [], "types": ["method"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("jsonl", type=Path, help="abstracts with 'abstract' (and 'title')")
    parser.add_argument("gold", type=Path)
    parser.add_argument("--no-title", action="store_true", help="ignore the titles")
    parser.add_argument("-v", action="store_true", help="print what code found per paper")
    args = parser.parse_args()
    gold = {p.paper_id: p for p in load_gold(args.gold).papers}
    counts = {"methods": Counts(), "benchmarks": Counts(), "gains (value)": Counts()}
    for line in args.jsonl.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        paper = gold.get(paper_id_for(row["abstract"]))
        if paper is None:
            continue
        title = None if args.no_title else row.get("title")
        found = assemble(PaperDraft.model_validate(EMPTY), row["abstract"], title).extraction
        methods = [name_forms(m.name, [m.expansion or "", *m.aliases]) for m in found.methods]
        gold_methods = [name_forms(m.forms[0], m.forms[1:]) for m in paper.methods]
        counts["methods"].add(len(match_one_to_one(methods, gold_methods, names_match)),
                              len(methods), len(gold_methods))
        benches = [name_forms(b.name) for b in found.benchmarks]
        gold_benches = [name_forms(b.forms[0], b.forms[1:]) for b in paper.benchmarks]
        counts["benchmarks"].add(len(match_one_to_one(benches, gold_benches, names_match)),
                                 len(benches), len(gold_benches))
        values = [g.value for g in found.claimed_gains]
        gold_gains = [g for g in paper.gains if g.value is not None]
        pairs = match_one_to_one(values, gold_gains, value_agrees)
        counts["gains (value)"].add(len(pairs), len(values), len(gold_gains))
        if args.v:
            print(row.get("id", paper.paper_id[:16]), [m.name for m in found.methods],
                  [b.name for b in found.benchmarks], values)
    print(f"{len(gold)} gold papers, {'no titles' if args.no_title else 'titles used'}")
    for name, count in counts.items():
        score = count.scores()
        print(f"{name:14} P {score['precision']:.3f}  R {score['recall']:.3f}  "
              f"F1 {score['f1']:.3f}  (tp {score['tp']}, fp {score['fp']}, fn {score['fn']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
