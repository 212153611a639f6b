"""What an evaluation got wrong, paper by paper: false positives and negatives per field,
scores split by source, the papers that changed between two runs, and how a run's gain
attributes (metric, baseline, dataset) were grounded.

Matching is the evaluation's own (extract.domain.evaluation.evaluate): the same keys, the same
one-to-one pairing, so the errors listed here add up to its counts. The stored rows come
through runs.evaluation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from papersift.extract.domain.evaluation.evaluate import PredictedPaper, score
from papersift.extract.domain.evaluation.evaluate_gold import (
    Gold,
    GoldPaper,
    match_one_to_one,
    name_forms,
    names_match,
    value_agrees,
)

FIELDS = ("methods", "benchmarks", "gains")


@dataclass
class PaperErrors:
    """One paper's false positives (predicted, not in gold) and false negatives (in gold,
    missed), per field, as readable names; gains as their numbers."""

    paper_id: str
    opening: str
    false_positives: dict[str, list[str]] = field(default_factory=dict)
    false_negatives: dict[str, list[str]] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not any(self.false_positives.values()) and not any(self.false_negatives.values())

    def signature(self) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
        """What changes when the paper's errors change (for --compare)."""
        return tuple((f, tuple(sorted(self.false_positives.get(f, []))),
                      tuple(sorted(self.false_negatives.get(f, [])))) for f in FIELDS)


def _unmatched(count: int, pairs: list[tuple[int, int]], side: int) -> list[int]:
    used = {pair[side] for pair in pairs}
    return [index for index in range(count) if index not in used]


def _number(value: float | None) -> str:
    return "?" if value is None else f"{value:g}"


def paper_errors(gold: GoldPaper, pred: PredictedPaper, names: dict[str, list[str]]) -> \
        PaperErrors:
    """The paper's errors; ``names`` holds its predicted method and benchmark names, in the
    order of ``pred``'s lists."""
    errors = PaperErrors(gold.paper_id, " ".join(pred.text.split()[:8]))
    gold_methods = [name_forms(m.forms[0], m.forms[1:]) for m in gold.methods]
    pairs = match_one_to_one(pred.methods, gold_methods, names_match)
    errors.false_positives["methods"] = [names["methods"][i] for i in
                                         _unmatched(len(pred.methods), pairs, 0)]
    errors.false_negatives["methods"] = [gold.methods[j].forms[0] for j in
                                         _unmatched(len(gold.methods), pairs, 1)]
    gold_benches = [name_forms(b.forms[0], b.forms[1:]) for b in gold.benchmarks]
    predicted_benches = [forms for forms, _ in pred.benchmarks]
    pairs = match_one_to_one(predicted_benches, gold_benches, names_match)
    errors.false_positives["benchmarks"] = [names["benchmarks"][i] for i in
                                            _unmatched(len(predicted_benches), pairs, 0)]
    errors.false_negatives["benchmarks"] = [gold.benchmarks[j].forms[0] for j in
                                            _unmatched(len(gold.benchmarks), pairs, 1)]
    numeric = [g for g in pred.gains if g[0] is not None]
    gold_numeric = [g for g in gold.gains if g.value is not None]
    pairs = match_one_to_one(numeric, gold_numeric, lambda p, g: value_agrees(p[0], g))
    errors.false_positives["gains"] = [f"{_number(numeric[i][0])} ({numeric[i][1]})" for i in
                                       _unmatched(len(numeric), pairs, 0)]
    errors.false_negatives["gains"] = [
        f"{_number(gold_numeric[j].value)} ({gold_numeric[j].metric})"
        for j in _unmatched(len(gold_numeric), pairs, 1)]
    return errors


def all_errors(gold: Gold, predictions: Sequence[PredictedPaper],
               names: dict[str, dict[str, list[str]]]) -> list[PaperErrors]:
    """Every gold paper's errors, in gold order (a paper with no prediction misses all)."""
    by_id = {p.paper_id: p for p in predictions}
    out = []
    for paper in gold.papers:
        pred = by_id.get(paper.paper_id) or PredictedPaper(paper.paper_id, "", "missing")
        out.append(paper_errors(paper, pred, names.get(paper.paper_id)
                                or {"methods": [], "benchmarks": []}))
    return out


def by_source(gold: Gold, predictions: Sequence[PredictedPaper],
              sources: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The evaluation's figures for each source's papers alone."""
    groups: dict[str, list[GoldPaper]] = {}
    for paper in gold.papers:
        groups.setdefault(sources.get(paper.paper_id, "unknown"), []).append(paper)
    return {label: score(Gold(gold.path, gold.sha256, tuple(papers)), predictions, None)
            for label, papers in sorted(groups.items())}


def changed_papers(before: Sequence[PaperErrors], after: Sequence[PaperErrors]) -> list[
        tuple[PaperErrors, PaperErrors]]:
    """Papers whose errors differ between two runs, as (before, after) pairs."""
    earlier = {e.paper_id: e for e in before}
    return [(earlier[e.paper_id], e) for e in after
            if e.paper_id in earlier and earlier[e.paper_id].signature() != e.signature()]


@dataclass
class EvalDetails:
    """One run's errors on a gold file, and its figures per source."""

    run_id: str
    errors: list[PaperErrors]
    sources: dict[str, dict[str, Any]]
