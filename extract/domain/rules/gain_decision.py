"""One calibrated decision per grounded gain: is this number a result the paper reports?

The checks of gain_numbers.py and assemble_gains.py say what a number *is* (a year, a
citation, a model size, a count, a range's high end); a number that passes them stands in
the abstract, but may still be an operating condition ("from 20 Hz to 90 Hz"), a design
size ("6-15 dimensions") or a training budget ("about 20 hours") rather than a result.
Each grounded gain gets features of how the abstract states it: its unit, how it is
written, the words of its sentence, whether a baseline or dataset was found beside it,
where it stands, and whether the model gave it or code added it. A logistic model trained
on hand-annotated gold by bench/decision/train_gains.py weighs them. At or above
``keep_at`` the gain is stored; between ``flag_at`` and ``keep_at`` it is kept aside,
flagged, for a person to accept; below, it is refused. Each decision is stored with its
score and features (extractions.decisions, under "gains"), and `papersift explain`
prints why. The weights are data (gain_decision.json), versioned by content hash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papersift.extract.domain.rules.gain_candidates import METRIC_NAME_AFTER
from papersift.extract.domain.rules.gain_numbers import RESULT_SENTENCE
from papersift.extract.domain.rules.method_decision import (
    Outcome,
    Weights,
    reasons_for,
    weights_from,
)

WEIGHTS_FILE = Path(__file__).with_name("gain_decision.json")

FEATURE_GROUPS: dict[str, dict[str, str]] = {
    "source": {
        "added_by_code": "code found it in a results sentence; the model did not give it",
    },
    "unit": {
        "unit_percent": "a percentage",
        "unit_pp": "percentage points",
        "unit_x": "a factor ('3x')",
        "unit_points": "points on a score",
        "unit_absolute": "a bare quantity, with no unit of change",
    },
    "writing": {
        "decimal": "written with a decimal point, as measurements are",
        "large_quantity": "a bare quantity of 100 or more",
        "qualified": "'up to', 'over' or 'about' stands before it",
        "by_before": "a change 'by' it ('improves by 5%')",
        "metric_after": "a metric's name follows it ('61.2 F1', '27.3 BLEU')",
    },
    "sentence": {
        "result_words": "its sentence reports results ('outperforms', 'achieves', 'accuracy')",
        "comparison": "its sentence compares with something ('than', 'over', 'baseline')",
        "many_numbers": "its sentence states three numbers or more",
        "late": "how far into the abstract it stands",
    },
    "attributes": {
        "baseline_found": "a baseline was found beside it",
        "dataset_found": "a dataset was found beside it",
    },
}
FEATURES: tuple[str, ...] = tuple(name for group in FEATURE_GROUPS.values() for name in group)
# Directions known before any data: what makes a sentence read as a result never counts
# against a number in it.
FOR: frozenset[str] = frozenset({"result_words", "comparison", "by_before", "metric_after",
                                 "baseline_found", "dataset_found"})
AGAINST: frozenset[str] = frozenset()
EXPLAINED: dict[str, str] = {name: text for group in FEATURE_GROUPS.values()
                             for name, text in group.items()}

_UNIT_FEATURE = {"%": "unit_percent", "pp": "unit_pp", "x": "unit_x", "points": "unit_points",
                 "absolute": "unit_absolute"}
_COMPARISON = re.compile(
    r"\b(than|over|compared|relative|versus|vs\.?|baselines?|state[- ]of[- ]the[- ]art|"
    r"SOTA|prior|previous|existing)\b", re.I)
_QUALIFIER_BEFORE = re.compile(
    r"\b(up\s+to|as\s+(?:much|many|few|low|high)\s+as|over|more\s+than|at\s+least|about|"
    r"nearly|approximately|around|roughly)\s*\$?\s*$|~\s*\$?$", re.I)
_BY_BEFORE = re.compile(r"\bby\s*\$?\s*$", re.I)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def load_gain_weights(path: Path | None = None) -> Weights:
    """The gain decision's weights: the shipped file unless another is named."""
    return weights_from(path or WEIGHTS_FILE, FEATURES)


def gain_features(text: str, spot: tuple[int, int], sentence: tuple[int, int], unit: str,
                  value: float, *, added: bool, baseline: bool, dataset: bool
                  ) -> dict[str, float]:
    """What the abstract says around a grounded gain's number at ``spot`` (start, end)."""
    start, end = spot
    words = text[sentence[0]:sentence[1]]
    before = text[max(0, start - 24):start]
    flags = {
        "added_by_code": added,
        _UNIT_FEATURE.get(unit, "unit_absolute"): True,
        "decimal": not float(value).is_integer(),
        "large_quantity": unit == "absolute" and abs(value) >= 100,
        "qualified": _QUALIFIER_BEFORE.search(before) is not None,
        "by_before": _BY_BEFORE.search(before) is not None,
        "metric_after": METRIC_NAME_AFTER.match(text[end:end + 12]) is not None,
        "result_words": RESULT_SENTENCE.search(words) is not None,
        "comparison": _COMPARISON.search(words) is not None,
        "many_numbers": len(_NUMBER.findall(words)) >= 3,
        "baseline_found": baseline,
        "dataset_found": dataset,
    }
    features = {name: 1.0 for name, on in flags.items() if on}
    features["late"] = round(start / max(1, len(text)), 3)
    return features


@dataclass
class GainDecision:
    """What the decision made of one grounded gain, and why."""

    value: float
    start: int
    end: int
    features: dict[str, float]
    score: float
    outcome: Outcome

    def note(self, weights: Weights) -> str:
        """One line for `rejected` and `papersift explain`."""
        why = "; ".join(reasons_for(self.features, self.outcome, weights,
                                    explained=EXPLAINED)) or "no feature for it"
        return f"gain {self.value:g}: {self.outcome} (score {self.score:.2f}): {why}"

    def as_json(self) -> dict[str, Any]:
        return {"field": "gains", "name": f"{self.value:g}", "start": self.start,
                "end": self.end, "score": round(self.score, 4), "outcome": self.outcome,
                "features": sorted(name for name, value in self.features.items() if value
                                   and name != "late")}


def decide_gain(value: float, start: int, end: int, features: dict[str, float],
                weights: Weights | None = None) -> GainDecision:
    weights = weights or load_gain_weights()
    score = weights.score(features)
    outcome: Outcome = "kept" if score >= weights.keep_at else (
        "flagged" if score >= weights.flag_at else "refused")
    return GainDecision(value, start, end, features, score, outcome)
