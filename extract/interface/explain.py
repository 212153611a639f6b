"""`papersift explain`: why each name that may be a paper's method, and each number that may
be one of its results, was kept, flagged or refused, from the decisions its latest
extraction stored (domain/rules/method_decision.py and gain_decision.py), and what code
stored that the model's answer did not give, with why."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from papersift.errors import PapersiftError
from papersift.extract.domain.rules import gain_decision
from papersift.extract.domain.rules.method_decision import load_weights, reasons_for


@dataclass(frozen=True)
class Explained:
    """One decision, in words."""

    paper_id: str
    title: str | None
    field: str  # "methods" or "gains"
    name: str  # a gain's value as written
    outcome: str
    score: float
    reasons: list[str]  # the features that pushed toward the outcome, strongest first
    weights_changed: bool  # decided by other weights than the shipped ones


def explain_paper(db: str | Path, paper: str, count: int = 3) -> list[Explained]:
    """The method and gain decisions of the papers that ``paper`` names (an id, its
    prefix, a source id or words of a title), methods first."""
    from papersift.warehouse import reads

    judged = {"methods": (load_weights(), None),
              "gains": (gain_decision.load_gain_weights(), gain_decision.EXPLAINED)}
    explained = []
    for field, (weights, words) in judged.items():
        for paper_id, title, name, outcome, score, features, version in reads.decisions(
                db, paper, field).rows:
            reasons = reasons_for(list(features or []), outcome, weights, count, words)
            explained.append(Explained(paper_id, title, field, name, outcome, float(score),
                                       reasons, version != weights.version))
    if not explained and not reads.code_additions(db, paper).rows:
        raise PapersiftError(
            f"no decisions for {paper!r} in {db}: no paper matches it, or its latest "
            "extraction predates the calibrated decisions (extract it again)")
    return explained


def added_by_code(db: str | Path, paper: str) -> dict[str, tuple[str | None, list[str]]]:
    """By paper_id: its title, and the benchmarks and gains code stored that the model
    did not give, each with its reason ("benchmark 'MMLU': a known dataset ...")."""
    from papersift.warehouse import reads

    added: dict[str, tuple[str | None, list[str]]] = {}
    for paper_id, title, line in reads.code_additions(db, paper).rows:
        added.setdefault(paper_id, (title, []))[1].append(line)
    return added
