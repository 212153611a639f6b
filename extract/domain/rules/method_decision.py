"""One calibrated decision per method candidate, instead of a chain of vetoes.

Every name that could be the paper's own method (the model's, or one code found after a
proposal verb or in an acronym definition) gets features: where it came from, how the
abstract presents it, how it reads, and which of the wording rules of name_rules.py speak
against it. A logistic model, trained on hand-annotated gold by bench/decision/train.py,
weighs them into a probability. Above ``keep_at`` the name is stored; between ``flag_at``
and ``keep_at`` it is kept aside as flagged, for a person to accept; below, it is refused.
Every decision carries its score and the features that drove it, so `papersift explain`
can show why. The weights are data (method_decision.json), versioned by content hash.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Protocol

from papersift.extract.domain.rules.name_rules import METHOD_RULES

WEIGHTS_FILE = Path(__file__).with_name("method_decision.json")

Outcome = Literal["kept", "flagged", "refused"]

# Features besides the rules, by group; what each says, for explanations.
FEATURE_GROUPS: dict[str, dict[str, str]] = {
    "source": {
        "from_model": "the model proposed it",
        "from_code": "code found it after a proposal verb or in a definition",
    },
    "presentation": {
        "strictly_proposed": "a proposal verb introduces it ('we propose X')",
        "proposal_sentence": "it sits in a sentence about the paper's own work",
        "named_in_title": "the title names it",
        "in_title_words": "its name appears in the title",
        "coined_after_verb": "code found it as a coined name right after a proposal verb",
        "defined_in_proposal": "a proposal sentence defines it as an acronym",
        "defined_in_passing": "code found it only as an acronym a proposal sentence defines, "
                              "and no proposal verb introduces it ('X, a framework grounded "
                              "in Pearl's Causal Hierarchy (PCH)')",
        "presented_as_new": "a novelty word comes right before it ('a novel mechanism, X')",
        "coined_for_lowercase_words": "it is an acronym coined for lowercase words that a "
                                      "creation verb introduces ('introduces a ... (ACR)')",
        "part_of_own": "a sentence lists it as a part of the paper's method",
        "listed_part": "code found it as a named part of the paper's method (in a list of "
                       "its parts, or defined after the sentence that presents it)",
        "variant_of_own": "a size or variant of the paper's own method ('X-7B')",
        "weaker_than_own": "other names are presented as the paper's own and this one is not",
        "background_only": "every mention sits in the background sentences",
        "repeated": "the abstract names it more than once",
    },
    "shape": {
        "reads_as_name": "it reads as a coined name (inner capitals, digits or markup)",
        "one_word": "one capitalised word",
        "description": "plain words, a description",
        "acronym": "an acronym",
        "long": "more than four words",
        "inside_a_phrase": "one word inside a lowercase phrase ('counterfactual X values')",
    },
    "field": {"common_in_field": "many papers of five recent conferences write it: a "
                                 "term of the field, not a coinage"},
    "rules": {"no_objection": "no wording rule speaks against it",
              "rules_keep": "the hand-written rules alone would keep it",
              **{f"rule:{rule}": reason for rule, reason in METHOD_RULES.items()}},
}
FEATURES: tuple[str, ...] = tuple(name for group in FEATURE_GROUPS.values() for name in group)
# The direction a feature may push, where it is known before any data: a rule that speaks
# against a name never counts for it. Training keeps these signs (a few hundred labelled
# candidates would otherwise give a rare feature whichever sign its few examples happen to
# have); the others are free.
FOR: frozenset[str] = frozenset({
    "strictly_proposed", "named_in_title", "in_title_words", "coined_after_verb",
    "defined_in_proposal", "presented_as_new", "coined_for_lowercase_words", "part_of_own",
    "listed_part", "variant_of_own", "repeated",
    "reads_as_name", "no_objection", "rules_keep"})
AGAINST: frozenset[str] = frozenset({
    "weaker_than_own", "background_only", "description", "inside_a_phrase", "common_in_field",
    *(name for name in FEATURE_GROUPS["rules"] if name.startswith("rule:"))})
EXPLAINED: dict[str, str] = {name: text for group in FEATURE_GROUPS.values()
                             for name, text in group.items()}


@dataclass(frozen=True)
class Weights:
    """A trained decision: a logistic model's weights and the two thresholds."""

    bias: float
    weights: dict[str, float]
    keep_at: float
    flag_at: float
    version: str  # the content hash of the weights file
    trained: dict[str, Any] = field(default_factory=dict)

    def score(self, features: dict[str, float]) -> float:
        total = self.bias + sum(self.weights.get(name, 0.0) * value
                                for name, value in features.items())
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, total))))


def load_weights(path: Path | None = None) -> Weights:
    """The decision's weights: the shipped file unless another is named."""
    return weights_from(path or WEIGHTS_FILE, FEATURES)


@lru_cache(maxsize=16)
def weights_from(path: Path, features: tuple[str, ...]) -> Weights:
    """A calibrated decision's weights file, every weight naming one of ``features``
    (the method decision's here, the gain decision's in gain_decision.py)."""
    raw = path.read_bytes()
    data = json.loads(raw)
    unknown = set(data["weights"]) - set(features)
    if unknown:
        raise ValueError(f"{path}: weights for unknown features {sorted(unknown)}")
    return Weights(bias=float(data["bias"]),
                   weights={k: float(v) for k, v in data["weights"].items()},
                   keep_at=float(data["keep_at"]), flag_at=float(data["flag_at"]),
                   version="sha256:" + hashlib.sha256(raw).hexdigest(),
                   trained=data.get("trained", {}))


@dataclass
class Decision:
    """What the decision made of one candidate, and why."""

    name: str
    start: int
    end: int
    features: dict[str, float]
    score: float
    outcome: Outcome
    forms: tuple[str, ...] = ()  # its expansion and aliases

    def reasons(self, weights: Weights, count: int = 3) -> list[str]:
        return reasons_for(self.features, self.outcome, weights, count)

    def note(self, weights: Weights) -> str:
        """One line for `rejected` and `papersift explain`."""
        why = "; ".join(self.reasons(weights)) or "no feature for it"
        return f"method {self.name!r}: {self.outcome} (score {self.score:.2f}): {why}"

    def as_json(self) -> dict[str, Any]:
        return {"field": "methods", "name": self.name, "start": self.start, "end": self.end,
                "score": round(self.score, 4), "outcome": self.outcome,
                "features": sorted(name for name, value in self.features.items() if value)}


def reasons_for(features: dict[str, float] | list[str], outcome: str, weights: Weights,
                count: int = 3, explained: dict[str, str] | None = None) -> list[str]:
    """The features that pushed hardest toward the outcome, in words (``explained``: what
    each feature says; the method decision's unless another is given)."""
    values = features if isinstance(features, dict) else dict.fromkeys(features, 1.0)
    words = EXPLAINED if explained is None else explained
    sign = 1.0 if outcome == "kept" else -1.0
    pushes = sorted(((weights.weights.get(name, 0.0) * value * sign, name)
                     for name, value in values.items() if value), reverse=True)
    return [words.get(name, name) for push, name in pushes[:count] if push > 0]


def decide(name: str, start: int, end: int, features: dict[str, float],
           weights: Weights | None = None, forms: tuple[str, ...] = ()) -> Decision:
    weights = weights or load_weights()
    score = weights.score(features)
    outcome: Outcome = "kept" if score >= weights.keep_at else (
        "flagged" if score >= weights.flag_at else "refused")
    return Decision(name, start, end, features, score, outcome, forms)


class _Decided(Protocol):
    def as_json(self) -> dict[str, Any]: ...


def decisions_json(decisions: list[Decision], weights: Weights | None = None,
                   gains: Sequence[_Decided] = (), gain_weights: Weights | None = None) -> str:
    """What extractions.decisions stores for one paper: the method decisions (migration
    0012) and the gain decisions (0016), each with the content hash of its weights."""
    weights = weights or load_weights()
    stored: dict[str, Any] = {"weights": weights.version,
                              "methods": [d.as_json() for d in decisions]}
    if gain_weights is not None:
        stored.update(gain_weights=gain_weights.version, gains=[d.as_json() for d in gains])
    return json.dumps(stored)
