"""Gold files and the matching rules an evaluation scores by.

Names (methods, benchmarks) match after normalising case, punctuation, markup and generic
words ("framework", "benchmark"...), against any of the gold item's surface forms, and an
acronym matches its expansion when either side gives both ("Nested Causal Thompson Sampling
(NCTS)"). Gains match by numeric value, and by value plus metric. Matching is one-to-one,
so a repeated prediction counts as a false positive. Tasks get a soft token-overlap score.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from papersift.errors import PapersiftError
from papersift.extract.domain.evaluation.evaluate_fields import (
    ExtraGold,
    ExtraGoldError,
    read_extra_gold,
)
from papersift.extract.domain.lookup.grounding import normalize

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


def name_forms(name: str, extra: Iterable[str] = ()) -> set[str]:
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


def value_agrees(value: float | None, gold: GoldGain) -> bool:
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
