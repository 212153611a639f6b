"""Score today's grounding code on saved drafts, with the scoring code of `papersift eval`.

    python -m bench.decision.regrade --drafts DRAFTS.jsonl --gold GOLD.json [--json] [--errors]

Each draft goes through `assemble` (what a run does after the answer) and the result is
scored by `evaluate.score`, so a change to grounding or to the decision is measured in
seconds on the recorded answers of the real model (see bench/decision/drafts.py).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from papersift.extract.domain.assembly.assemble import Assembled, assemble
from papersift.extract.domain.evaluation.evaluate import PredictedPaper, score
from papersift.extract.domain.evaluation.evaluate_gold import load_gold, name_forms
from papersift.extract.domain.rules.method_decision import Weights, load_weights
from papersift.schemas import PaperDraft


def read_drafts(path: Path) -> Iterator[dict[str, Any]]:
    """The papers of a drafts file (its first line is the header)."""
    with path.open(encoding="utf-8") as lines:
        next(lines)
        for line in lines:
            yield json.loads(line)


def assembled(paper: dict[str, Any], weights: Weights | None = None,
              with_title: bool = True, gain_weights: Weights | None = None) -> Assembled:
    draft = PaperDraft.model_validate(paper["draft"])
    return assemble(draft, paper["text"], paper.get("title") if with_title else None, weights,
                    gain_weights)


def predicted(paper: dict[str, Any], result: Assembled) -> PredictedPaper:
    """One paper's extraction as `papersift eval` reads it from the warehouse."""
    extraction = result.extraction
    return PredictedPaper(
        paper_id=paper["paper_id"], text=paper["text"], outcome="extracted",
        contribution_types=[str(t) for t in extraction.contribution_types],
        tasks=[t.name for t in extraction.tasks],
        methods=[name_forms(m.name, [m.expansion or "", *m.aliases]) for m in extraction.methods],
        benchmarks=[(name_forms(b.name), b.introduced) for b in extraction.benchmarks],
        gains=[(g.value, g.metric) for g in extraction.claimed_gains])


def regrade(drafts: Path, gold_path: Path, weights: Weights | None = None,
            with_title: bool = True, gain_weights: Weights | None = None) -> dict[str, Any]:
    gold = load_gold(gold_path)
    wanted = {p.paper_id for p in gold.papers}
    papers = [p for p in read_drafts(drafts) if p["paper_id"] in wanted]
    return score(gold, [predicted(p, assembled(p, weights, with_title, gain_weights))
                        for p in papers], None, local=True)


def headline(metrics: dict[str, Any]) -> dict[str, float]:
    """P/R/F1 of methods and benchmarks and the F1 of gains, as `papersift eval` prints them."""
    return {f"{field} {figure}": metrics[key][figure]
            for field, key in (("methods", "methods"), ("benchmarks", "benchmarks"),
                               ("gains", "gains_value"))
            for figure in ("precision", "recall", "f1")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drafts", type=Path, required=True)
    parser.add_argument("--gold", type=Path, required=True)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--weights", type=Path, help="the method decision's weights file")
    parser.add_argument("--no-title", action="store_true", help="ground without the titles")
    args = parser.parse_args()
    weights = load_weights(args.weights) if args.weights else None
    metrics = regrade(args.drafts, args.gold, weights, not args.no_title)
    print(json.dumps(metrics if args.json else headline(metrics), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
