"""Scoring a run's stored extractions against a hand-written gold file.

Names (methods, benchmarks) match after normalising case, punctuation, markup and generic
words ("framework", "benchmark"...), against any of the gold item's surface forms, and an
acronym matches its expansion when either side gives both ("Nested Causal Thompson Sampling
(NCTS)"). Gains match by numeric value, and by value plus metric. Matching is one-to-one,
so a repeated prediction counts as a false positive. Tasks get a soft token-overlap score.
Besides accuracy, a run's grounding, re-asks, failures, tokens, latency and cost are read
from the warehouse, so runs of different models, prompts and schemas compare like for like.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from papersift.errors import PapersiftError
from papersift.extract.domain.evaluate_fields import (
    ExtraGold,
    ExtraGoldError,
    load_extra_predictions,
    read_extra_gold,
    score_extra,
)
from papersift.extract.domain.grounding import normalize
from papersift.extract.domain.prices import pricing_for
from papersift.schemas.numbers import numbers_in, value_matches

GOLD_FORMAT = "papersift-gold/1"

# Words that say what kind of thing a name is, not which one.
_GENERIC_WORDS = frozenset({
    "the", "a", "an", "our", "framework", "method", "methods", "model", "models", "algorithm",
    "approach", "benchmark", "benchmarks", "dataset", "datasets", "suite", "environment",
    "environments", "system", "systems", "architecture", "technique", "pipeline", "task",
    "tasks", "frameworks", "algorithms", "techniques", "suites",
})
_TOKEN = re.compile(r"[a-z0-9]+")
_PAREN = re.compile(r"^(.*?)\s*\(([^()]*)\)\s*$")
_STOP_WORDS = frozenset({"of", "for", "and", "in", "on", "with", "to", "via", "by", "from"})

class GoldError(PapersiftError):
    """The gold file cannot be used: missing, malformed, or for other texts."""


# --------------------------------------------------------------------------- gold


@dataclass(frozen=True)
class GoldName:
    forms: tuple[str, ...]  # the name and its aliases
    introduced: bool | None = None


@dataclass(frozen=True)
class GoldGain:
    value: float | None
    value_high: float | None
    metric: str
    unit: str | None


@dataclass(frozen=True)
class GoldPaper:
    paper_id: str
    contribution_types: tuple[str, ...]
    tasks: tuple[str, ...]
    methods: tuple[GoldName, ...]
    benchmarks: tuple[GoldName, ...]
    gains: tuple[GoldGain, ...]
    extra: ExtraGold = field(default_factory=dict)  # artifacts and user fields, if annotated


@dataclass(frozen=True)
class Gold:
    path: str
    sha256: str
    papers: tuple[GoldPaper, ...]


def _names(items: Any, where: str, with_introduced: bool) -> tuple[GoldName, ...]:
    out = []
    for n, item in enumerate(items or []):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise GoldError(f"{where}[{n}]: an item needs a string 'name'")
        forms = (item["name"], *[a for a in item.get("aliases") or [] if isinstance(a, str)])
        introduced = item.get("introduced") if with_introduced else None
        out.append(GoldName(forms, introduced if isinstance(introduced, bool) else None))
    return tuple(out)


def load_gold(path: str | Path, only: Sequence[str] | None = None) -> Gold:
    """Read and check a gold file (format ``papersift-gold/1``); ``only`` keeps just those
    paper ids (each must be in the file)."""
    path = Path(path)
    try:
        raw_bytes = path.read_bytes()
        data = json.loads(raw_bytes)
    except FileNotFoundError as error:
        raise GoldError(f"no gold file at {path}") from error
    except (ValueError, UnicodeDecodeError) as error:
        raise GoldError(f"{path}: not valid JSON: {error}") from error
    if not isinstance(data, dict) or data.get("format") != GOLD_FORMAT:
        raise GoldError(f"{path}: expected a JSON object with format {GOLD_FORMAT!r}")
    papers = []
    seen: set[str] = set()
    for n, item in enumerate(data.get("papers") or []):
        where = f"{path}: papers[{n}]"
        paper_id = item.get("paper_id") if isinstance(item, dict) else None
        if not isinstance(paper_id, str) or not paper_id.startswith("sha256:"):
            raise GoldError(f"{where}: needs a 'paper_id' starting with 'sha256:'")
        if paper_id in seen:
            raise GoldError(f"{where}: paper {paper_id} appears twice")
        seen.add(paper_id)
        gains = []
        for g, gain in enumerate(item.get("gains") or []):
            if not isinstance(gain, dict) or not isinstance(gain.get("metric"), str):
                raise GoldError(f"{where}.gains[{g}]: a gain needs a string 'metric'")
            gains.append(GoldGain(_float(gain.get("value")), _float(gain.get("value_high")),
                                  gain["metric"], gain.get("unit")))
        try:
            extra = read_extra_gold(item, where)
        except ExtraGoldError as error:
            raise GoldError(str(error)) from error
        papers.append(GoldPaper(
            paper_id=paper_id,
            contribution_types=tuple(item.get("contribution_types") or ()),
            tasks=tuple(t for t in item.get("tasks") or () if isinstance(t, str)),
            methods=_names(item.get("methods"), f"{where}.methods", with_introduced=False),
            benchmarks=_names(item.get("benchmarks"), f"{where}.benchmarks",
                              with_introduced=True),
            gains=tuple(gains),
            extra=extra,
        ))
    if not papers:
        raise GoldError(f"{path}: no papers")
    digest = hashlib.sha256(raw_bytes)
    if only is not None:
        absent = set(only) - seen
        if absent:
            raise GoldError(f"{path}: has no paper {sorted(absent)[0]}")
        papers = [paper for paper in papers if paper.paper_id in set(only)]
        digest.update("\n".join(sorted(only)).encode())
    return Gold(str(path), "sha256:" + digest.hexdigest(), tuple(papers))


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


# --------------------------------------------------------------------------- matching


def name_key(name: str) -> str:
    """A name reduced to what identifies it: lowercase alphanumeric words, generic words out."""
    tokens = _TOKEN.findall(normalize(name))
    kept = [t for t in tokens if t not in _GENERIC_WORDS]
    return " ".join(kept or tokens)


def _forms(name: str, extra: Iterable[str] = ()) -> set[str]:
    """Keys for a name and its other surface forms ("Long Name (LN)" gives both parts)."""
    keys = set()
    for form in (name, *extra):
        if not form:
            continue
        keys.add(name_key(form))
        match = _PAREN.match(form.strip())
        if match:
            keys.update({name_key(match.group(1)), name_key(match.group(2))})
    keys.discard("")
    return keys | {k.replace(" ", "") for k in keys}


def names_match(predicted: set[str], gold: set[str]) -> bool:
    return bool(predicted & gold)


T = TypeVar("T")
U = TypeVar("U")


def match_one_to_one(
    predicted: Sequence[T], gold: Sequence[U], same: Callable[[T, U], bool]
) -> list[tuple[int, int]]:
    """Greedy one-to-one pairs (predicted index, gold index), in predicted order."""
    used: set[int] = set()
    pairs = []
    for i, pred in enumerate(predicted):
        for j, item in enumerate(gold):
            if j not in used and same(pred, item):
                used.add(j)
                pairs.append((i, j))
                break
    return pairs


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, matched: int, predicted: int, gold: int) -> None:
        self.tp += matched
        self.fp += predicted - matched
        self.fn += gold - matched

    def scores(self) -> dict[str, float | int]:
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {"precision": round(precision, 4), "recall": round(recall, 4),
                "f1": round(f1, 4), "tp": self.tp, "fp": self.fp, "fn": self.fn}


def _content_tokens(phrase: str) -> set[str]:
    """The words of a metric or task phrase that carry meaning."""
    return {t for t in _TOKEN.findall(normalize(phrase)) if t not in _STOP_WORDS}


def metrics_agree(predicted: str, gold: str) -> bool:
    """Soft metric match: one's words contain the other's, or they share half their words."""
    a, b = _content_tokens(predicted), _content_tokens(gold)
    if not a or not b:
        return False
    if a <= b or b <= a:
        return True
    return len(a & b) / len(a | b) >= 0.5


def _value_agrees(value: float | None, gold: GoldGain) -> bool:
    if value is None or gold.value is None:
        return False
    return any(
        target is not None and math.isclose(abs(value), abs(target), rel_tol=1e-6, abs_tol=1e-9)
        for target in (gold.value, gold.value_high)
    )


def task_overlap(predicted: str, gold: str) -> float:
    """Token F1 between two task phrases."""
    a, b = _content_tokens(predicted), _content_tokens(gold)
    if not a or not b:
        return 0.0
    common = len(a & b)
    if not common:
        return 0.0
    precision, recall = common / len(a), common / len(b)
    return 2 * precision * recall / (precision + recall)


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


def latest_run_for(con: duckdb.DuckDBPyConnection, paper_ids: Sequence[str]) -> str:
    """The most recent run that handled any of these papers."""
    row = con.execute(
        "SELECT r.run_id FROM runs r WHERE EXISTS (SELECT 1 FROM run_papers p "
        "WHERE p.run_id = r.run_id AND list_contains(?, p.paper_id)) "
        "ORDER BY r.started DESC LIMIT 1",
        [list(paper_ids)],
    ).fetchone()
    if row is None:
        raise GoldError("no run in this warehouse handled any of the gold papers")
    return str(row[0])


def _by_extraction(con: duckdb.DuckDBPyConnection, sql: str, ids: list[str]) -> dict[str, list[
        tuple[Any, ...]]]:
    out: dict[str, list[tuple[Any, ...]]] = {}
    for row in con.execute(sql, [ids]).fetchall():
        out.setdefault(row[0], []).append(row[1:])
    return out


def load_predictions(
    con: duckdb.DuckDBPyConnection, run_id: str, paper_ids: Sequence[str]
) -> list[PredictedPaper]:
    """The extraction a run produced or reused for each paper, with its call costs."""
    rows = con.execute(
        "SELECT p.paper_id, p.text, rp.outcome, rp.extraction_id, e.asks "
        "FROM papers p LEFT JOIN run_papers rp ON rp.paper_id = p.paper_id AND rp.run_id = ? "
        "LEFT JOIN extractions e ON e.extraction_id = rp.extraction_id "
        "WHERE list_contains(?, p.paper_id)",
        [run_id, list(paper_ids)],
    ).fetchall()
    papers = {
        row[0]: PredictedPaper(paper_id=row[0], text=row[1], outcome=row[2] or "missing",
                               extraction_id=row[3], asks=row[4])
        for row in rows
    }
    ids = [p.extraction_id for p in papers.values() if p.extraction_id]
    order = " ORDER BY extraction_id, idx"
    types = _by_extraction(con, "SELECT extraction_id, type FROM extraction_contribution_types "
                                "WHERE list_contains(?, extraction_id)" + order, ids)
    tasks = _by_extraction(con, "SELECT extraction_id, name, alignment FROM extraction_tasks "
                                "WHERE list_contains(?, extraction_id)" + order, ids)
    methods = _by_extraction(
        con, "SELECT extraction_id, name, expansion, aliases, alignment FROM extraction_methods "
             "WHERE list_contains(?, extraction_id)" + order, ids)
    benches = _by_extraction(
        con, "SELECT extraction_id, name, introduced, alignment FROM extraction_benchmarks "
             "WHERE list_contains(?, extraction_id)" + order, ids)
    gains = _by_extraction(
        con, "SELECT extraction_id, value, metric, alignment, value_in_evidence "
             "FROM extraction_gains WHERE list_contains(?, extraction_id)" + order, ids)
    extra = load_extra_predictions(con, ids)
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
            paper.methods.append(_forms(name, [expansion or "", *(aliases or [])]))
            alignments.append(alignment != "none")
        for name, introduced, alignment in benches.get(key, []):
            paper.benchmarks.append((_forms(name), introduced))
            alignments.append(alignment != "none")
        stated = numbers_in(paper.text)
        for value, metric, alignment, in_evidence in gains.get(key, []):
            paper.gains.append((value, metric))
            alignments.append(alignment != "none" and in_evidence is not False)
            if value is not None and not value_matches(value, stated):
                paper.gains_with_foreign_numbers += 1
        paper.items = len(alignments)
        paper.aligned = sum(alignments)
    # What the answer cost when it was asked for: the calls of the latest run that sent
    # this cache key (a cached or re-grounded answer keeps the cost of the original ask).
    calls = con.execute(
        "SELECT e.paper_id, sum(c.latency_ms), sum(c.prompt_tokens), sum(c.completion_tokens) "
        "FROM extractions e JOIN calls c ON c.cache_key = e.cache_key AND c.run_id = ("
        "  SELECT max(c2.run_id) FROM calls c2 WHERE c2.cache_key = e.cache_key) "
        "WHERE list_contains(?, e.extraction_id) GROUP BY e.paper_id",
        [ids],
    ).fetchall()
    for paper_id, latency_ms, prompt, completion in calls:
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
        gold_method_forms = [_forms(m.forms[0], m.forms[1:]) for m in paper.methods]
        pairs = match_one_to_one(pred.methods, gold_method_forms, names_match)
        methods.add(len(pairs), len(pred.methods), len(paper.methods))

        gold_bench_forms = [_forms(b.forms[0], b.forms[1:]) for b in paper.benchmarks]
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
        pairs = match_one_to_one(numeric, gold_numeric, lambda p, g: _value_agrees(p[0], g))
        gains_value.add(len(pairs), len(numeric), len(gold_numeric))
        pairs = match_one_to_one(
            numeric, gold_numeric,
            lambda p, g: _value_agrees(p[0], g) and metrics_agree(p[1], g.metric))
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


def evaluate(con: duckdb.DuckDBPyConnection, gold: Gold, run_id: str | None = None,
             *, store: bool = True) -> Evaluation:
    """Score one run (default: the latest that touched the gold papers) and store the result."""
    paper_ids = [p.paper_id for p in gold.papers]
    run_id = run_id or latest_run_for(con, paper_ids)
    run = con.execute("SELECT model, prompt_version, schema_version, endpoint, "
                      "coalesce(json_extract(params, '$.batch')::BOOLEAN, false) FROM runs "
                      "WHERE run_id = ?", [run_id]).fetchone()
    if run is None:
        raise GoldError(f"no run {run_id!r} in this warehouse (see `papersift runs`)")
    known = con.execute("SELECT count(*) FROM papers WHERE list_contains(?, paper_id)",
                        [paper_ids]).fetchone()
    if not known or known[0] == 0:
        raise GoldError(f"{gold.path}: none of its papers are in this warehouse; ingest the "
                        "corpus it was written for")
    local = str(run[3] or "").startswith("gguf:")  # the endpoint identity of a local model
    metrics = score(gold, load_predictions(con, run_id, paper_ids), run[0], local=local,
                    batch=bool(run[4]))
    created = datetime.now(UTC).replace(tzinfo=None)
    eval_id = f"eval_{created:%Y%m%dT%H%M%S%f}_{run_id[-6:]}"
    evaluation = Evaluation(eval_id, run_id, run[0], run[1], run[2], gold, metrics)
    if store:
        con.execute(
            "INSERT INTO evals VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [eval_id, created, run_id, gold.path, gold.sha256, len(gold.papers), run[0],
             run[1], run[2], json.dumps(metrics)],
        )
    return evaluation


HEADLINE = (
    ("methods F1", ("methods", "f1")),
    ("methods P", ("methods", "precision")),
    ("methods R", ("methods", "recall")),
    ("benchmarks F1", ("benchmarks", "f1")),
    ("benchmarks P", ("benchmarks", "precision")),
    ("benchmarks R", ("benchmarks", "recall")),
    ("gains F1 (value)", ("gains_value", "f1")),
    ("gains P (value)", ("gains_value", "precision")),
    ("gains R (value)", ("gains_value", "recall")),
    ("gains F1 (value+metric)", ("gains_value_metric", "f1")),
    ("contribution types F1", ("contribution_types", "f1")),
    ("primary type accuracy", ("contribution_types", "primary_accuracy")),
    ("benchmark introduced acc.", ("benchmark_introduced_accuracy",)),
    ("tasks soft F1", ("tasks_soft_f1",)),
    ("grounding rate", ("grounding_rate",)),
    ("gain numbers not in abstract", ("gains_with_numbers_not_in_abstract",)),
    ("re-ask rate", ("reask_rate",)),
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
        value: Any = metrics
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        rows.append((label, value))
    if "artifacts" in metrics:  # scored only when the gold annotates them
        rows.append(("artifacts F1", metrics["artifacts"]["f1"]))
    for name, scores in sorted(metrics.get("custom", {}).items()):
        rows.append((f"{name} F1", scores["f1"]))
    return rows
