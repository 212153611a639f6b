"""`papersift explain`: why each name that may be a paper's method was kept, flagged or
refused, from the decisions its latest extraction stored (see domain/rules/method_decision.py),
and what code stored that the model's answer did not give, with why."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from papersift.errors import PapersiftError
from papersift.extract.domain.rules.method_decision import load_weights, reasons_for


@dataclass(frozen=True)
class Explained:
    """One decision, in words."""

    paper_id: str
    title: str | None
    name: str
    outcome: str
    score: float
    reasons: list[str]  # the features that pushed toward the outcome, strongest first
    weights_changed: bool  # decided by other weights than the shipped ones


def explain_paper(db: str | Path, paper: str, count: int = 3) -> list[Explained]:
    """The method decisions of the papers that ``paper`` names (an id, its prefix, a
    source id or words of a title)."""
    from papersift.warehouse import reads

    rows = reads.method_decisions(db, paper).rows
    if not rows and not reads.code_additions(db, paper).rows:
        raise PapersiftError(
            f"no method decisions for {paper!r} in {db}: no paper matches it, or its latest "
            "extraction predates the calibrated decision (extract it again)")
    weights = load_weights()
    explained = []
    for paper_id, title, name, outcome, score, features, version in rows:
        reasons = reasons_for(list(features or []), outcome, weights, count)
        explained.append(Explained(paper_id, title, name, outcome, float(score), reasons,
                                   version != weights.version))
    return explained


def added_by_code(db: str | Path, paper: str) -> dict[str, tuple[str | None, list[str]]]:
    """By paper_id: its title, and the benchmarks and gains code stored that the model
    did not give, each with its reason ("benchmark 'MMLU': a known dataset ...")."""
    from papersift.warehouse import reads

    added: dict[str, tuple[str | None, list[str]]] = {}
    for paper_id, title, line in reads.code_additions(db, paper).rows:
        added.setdefault(paper_id, (title, []))[1].append(line)
    return added
