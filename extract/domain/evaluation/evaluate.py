"""Scoring a run's stored extractions against a hand-written gold file.

The gold file and the matching rules are evaluate_gold's; the rows a run stored are read
by runs.evaluation (through warehouse.evals) and handed in as plain rows. Besides accuracy,
a run's grounding, re-asks, failures, tokens, latency and cost are scored, so runs of
different models, prompts and schemas compare like for like.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from papersift.extract.domain.evaluation.evaluate_fields import score_extra
from papersift.extract.domain.evaluation.evaluate_gold import (
    Counts,
    Gold,
    GoldError,
    load_gold,
    match_one_to_one,
    metrics_agree,
    name_forms,
    names_match,
    task_overlap,
    value_agrees,
)
from papersift.extract.domain.prices import pricing_for
from papersift.schemas.numbers import numbers_in, value_matches

__all__ = ["Evaluation", "Gold", "GoldError", "PredictedPaper", "headline", "load_gold",
           "predictions_from", "score"]


# --------------------------------------------------------------------------- predictions


@dataclass
class PredictedPaper:
    """One paper's stored extraction, as the evaluation sees it."""

    paper_id: str
    text: str
    outcome: str  # extracted / cached / failed / missing
    extraction_id: str | None = None
    contribution_types: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    methods: list[set[str]] = field(default_factory=list)
    benchmarks: list[tuple[set[str], bool | None]] = field(default_factory=list)
    gains: list[tuple[float | None, str]] = field(default_factory=list)
    items: int = 0
    aligned: int = 0
    gains_with_foreign_numbers: int = 0
    asks: int | None = None
    latency_s: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    extra: dict[str, list[Any]] = field(default_factory=dict)  # artifacts, user fields


def predictions_from(outcomes: Sequence[tuple[Any, ...]], items: dict[str, dict[str, list[Any]]],
                     extra: dict[str, dict[str, list[Any]]],
                     calls: Sequence[tuple[Any, ...]], paper_ids: Sequence[str]
                     ) -> list[PredictedPaper]:
    """Each paper's prediction from a run's stored rows (see runs.evaluation): its outcome,
    items by field, extra fields and call costs, keyed by extraction id."""
    papers = {
        row[0]: PredictedPaper(paper_id=row[0], text=row[1], outcome=row[2] or "missing",
                               extraction_id=row[3], asks=row[4])
        for row in outcomes
    }
    types, tasks, methods = items["types"], items["tasks"], items["methods"]
    benches, gains = items["benchmarks"], items["gains"]
    for paper in papers.values():
        key = paper.extraction_id
        if key is None:
            continue
        paper.extra = extra.get(key, {})
        paper.contribution_types = [t for (t,) in types.get(key, [])]
        alignments: list[bool] = []
        for name, alignment in tasks.get(key, []):
            paper.tasks.append(name)
            alignments.append(alignment != "none")
        for name, expansion, aliases, alignment in methods.get(key, []):
            paper.methods.append(name_forms(name, [expansion or "", *(aliases or [])]))
            alignments.append(alignment != "none")
        for name, introduced, alignment in benches.get(key, []):
            paper.benchmarks.append((name_forms(name), introduced))
            alignments.append(alignment != "none")
        stated = numbers_in(paper.text)
        for value, metric, alignment, in_evidence in gains.get(key, []):
            paper.gains.append((value, metric))
            alignments.append(alignment != "none" and in_evidence is not False)
            if value is not None and not value_matches(value, stated):
                paper.gains_with_foreign_numbers += 1
        paper.items = len(alignments)
        paper.aligned = sum(alignments)
    for paper_id, latency_ms, prompt, completion in calls:  # the cost of the original ask
        timed = papers.get(paper_id)
        if timed is not None:
            timed.latency_s = (latency_ms or 0.0) / 1000.0
            timed.prompt_tokens = int(prompt or 0)
            timed.completion_tokens = int(completion or 0)
    return [papers[pid] for pid in paper_ids if pid in papers]


# --------------------------------------------------------------------------- scoring


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return round(ordered[index], 3)


def score(gold: Gold, predictions: Sequence[PredictedPaper], model: str | None,
          *, local: bool = False, batch: bool = False) -> dict[str, Any]:
    """Every figure of an evaluation, as a JSON-ready dict. Cost comes from the price table
    for ``model``; a local model costs nothing; any other model's cost is unknown (None)."""
    by_id = {p.paper_id: p for p in predictions}
    methods, benchmarks, gains_value, gains_metric, types = (Counts() for _ in range(5))
    introduced_right = introduced_total = primary_right = 0
    task_scores: list[float] = []
    type_jaccard: list[float] = []
    missing = 0
    for paper in gold.papers:
        found = by_id.get(paper.paper_id)
        if found is None:
            missing += 1
        pred = found or PredictedPaper(paper.paper_id, "", "missing")
        gold_method_forms = [name_forms(m.forms[0], m.forms[1:]) for m in paper.methods]
        pairs = match_one_to_one(pred.methods, gold_method_forms, names_match)
        methods.add(len(pairs), len(pred.methods), len(paper.methods))

        gold_bench_forms = [name_forms(b.forms[0], b.forms[1:]) for b in paper.benchmarks]
        pairs = match_one_to_one([forms for forms, _ in pred.benchmarks], gold_bench_forms,
                                 names_match)
        benchmarks.add(len(pairs), len(pred.benchmarks), len(paper.benchmarks))
        for i, j in pairs:
            wanted = paper.benchmarks[j].introduced
            if wanted is not None:
                introduced_total += 1
                introduced_right += pred.benchmarks[i][1] is wanted

        numeric = [g for g in pred.gains if g[0] is not None]
        gold_numeric = [g for g in paper.gains if g.value is not None]
        pairs = match_one_to_one(numeric, gold_numeric, lambda p, g: value_agrees(p[0], g))
        gains_value.add(len(pairs), len(numeric), len(gold_numeric))
        pairs = match_one_to_one(
            numeric, gold_numeric,
            lambda p, g: value_agrees(p[0], g) and metrics_agree(p[1], g.metric))
        gains_metric.add(len(pairs), len(numeric), len(gold_numeric))

        pred_types, gold_types = set(pred.contribution_types), set(paper.contribution_types)
        types.add(len(pred_types & gold_types), len(pred_types), len(gold_types))
        if pred_types | gold_types:
            type_jaccard.append(len(pred_types & gold_types) / len(pred_types | gold_types))
        if pred.contribution_types and paper.contribution_types:
            primary_right += pred.contribution_types[0] == paper.contribution_types[0]

        task_scores.append(_soft_task_f1(pred.tasks, list(paper.tasks)))

    scored = [by_id[p.paper_id] for p in gold.papers if p.paper_id in by_id]
    latencies = [p.latency_s for p in scored if p.latency_s is not None]
    items = sum(p.items for p in scored)
    prompt_tokens = sum(p.prompt_tokens for p in scored)
    completion_tokens = sum(p.completion_tokens for p in scored)
    n = len(gold.papers)
    with_asks = [p for p in scored if p.asks is not None]
    pricing = pricing_for(model or "", batch=batch)
    cost_per_1000: float | None = None
    if pricing is not None and scored:
        cost = pricing.cost(prompt_tokens, completion_tokens)
        cost_per_1000 = round(cost / len(scored) * 1000, 4)
    elif local:
        cost_per_1000 = 0.0
    return {
        "papers": n,
        "papers_scored": len(scored) - sum(p.outcome in ("failed", "missing") for p in scored),
        "failures": sum(p.outcome == "failed" for p in scored),
        "missing": missing + sum(p.outcome == "missing" for p in scored),
        "methods": methods.scores(),
        "benchmarks": benchmarks.scores(),
        "gains_value": gains_value.scores(),
        "gains_value_metric": gains_metric.scores(),
        "contribution_types": {
            **types.scores(),
            "primary_accuracy": round(primary_right / n, 4),
            "mean_jaccard": round(statistics.fmean(type_jaccard), 4) if type_jaccard else None,
        },
        "benchmark_introduced_accuracy": (
            round(introduced_right / introduced_total, 4) if introduced_total else None),
        "tasks_soft_f1": round(statistics.fmean(task_scores), 4) if task_scores else None,
        "grounding_rate": round(sum(p.aligned for p in scored) / items, 4) if items else None,
        "items": items,
        "gains_with_numbers_not_in_abstract": sum(p.gains_with_foreign_numbers for p in scored),
        "reask_rate": (round(sum((p.asks or 0) > 1 for p in with_asks) / len(with_asks), 4)
                       if with_asks else None),
        "latency_s": {
            "median": _percentile(latencies, 0.5),
            "p90": _percentile(latencies, 0.9),
            "mean": round(statistics.fmean(latencies), 3) if latencies else None,
            "papers_timed": len(latencies),
        },
        "tokens_per_paper": {
            "prompt": round(prompt_tokens / len(scored), 1) if scored else None,
            "completion": round(completion_tokens / len(scored), 1) if scored else None,
        },
        "cost_usd_per_1000_papers": cost_per_1000,
        **score_extra([(paper.extra, by_id[paper.paper_id].extra if paper.paper_id in by_id
                        else {}) for paper in gold.papers], match_one_to_one, Counts),
    }


def _soft_task_f1(predicted: list[str], gold: list[str]) -> float:
    if not predicted and not gold:
        return 1.0
    if not predicted or not gold:
        return 0.0
    recall = statistics.fmean(max(task_overlap(p, g) for p in predicted) for g in gold)
    precision = statistics.fmean(max(task_overlap(p, g) for g in gold) for p in predicted)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


# --------------------------------------------------------------------------- the job


@dataclass
class Evaluation:
    eval_id: str
    run_id: str
    model: str | None
    prompt_version: str | None
    schema_version: str | None
    gold: Gold
    metrics: dict[str, Any]


def _attribute_share(status: str) -> Callable[[dict[str, Any]], Any]:
    def share(metrics: dict[str, Any]) -> Any:
        counts = metrics.get("gain_attributes") or {}
        given = {k: v for k, v in counts.get(status, {}).items() if k != "not given"}
        total = sum(given.values())
        return f"{total - given.get('none', 0)}/{total}" if total else None
    return share


Figure = tuple[str, tuple[str, ...] | Callable[[dict[str, Any]], Any]]


def _f1_p_r(label: str, key: str) -> tuple[Figure, ...]:
    """The F1, precision and recall rows of one field; ``label`` has a {} for the letter."""
    return tuple((label.format(letter), (key, name))
                 for letter, name in (("F1", "f1"), ("P", "precision"), ("R", "recall")))


HEADLINE: tuple[Figure, ...] = (
    *_f1_p_r("methods {}", "methods"),
    *_f1_p_r("benchmarks {}", "benchmarks"),
    *_f1_p_r("gains {} (value)", "gains_value"),
    ("gains F1 (value+metric)", ("gains_value_metric", "f1")),
    ("contribution types F1", ("contribution_types", "f1")),
    ("primary type accuracy", ("contribution_types", "primary_accuracy")),
    ("benchmark introduced acc.", ("benchmark_introduced_accuracy",)),
    ("tasks soft F1", ("tasks_soft_f1",)),
    ("grounding rate", ("grounding_rate",)),
    ("gain numbers not in abstract", ("gains_with_numbers_not_in_abstract",)),
    ("re-ask rate", ("reask_rate",)),
    ("gain metrics in abstract", _attribute_share("metric")),
    ("gain baselines in abstract", _attribute_share("baseline")),
    ("gain datasets in abstract", _attribute_share("dataset")),
    ("failures", ("failures",)),
    ("median s/paper", ("latency_s", "median")),
    ("p90 s/paper", ("latency_s", "p90")),
    ("prompt tok/paper", ("tokens_per_paper", "prompt")),
    ("completion tok/paper", ("tokens_per_paper", "completion")),
    ("$ per 1000 papers", ("cost_usd_per_1000_papers",)),
)


def headline(metrics: dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, value) rows of the figures people compare first."""
    rows = []
    for label, path in HEADLINE:
        if callable(path):
            rows.append((label, path(metrics)))
            continue
        value: Any = metrics
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        rows.append((label, value))
    if "artifacts" in metrics:  # scored only when the gold annotates them
        rows.append(("artifacts F1", metrics["artifacts"]["f1"]))
    for name, scores in sorted(metrics.get("custom", {}).items()):
        rows.append((f"{name} F1", scores["f1"]))
    return rows
