"""Evaluating a stored run: its rows read through warehouse.evals, scored by the pure code
of domain.evaluation.evaluate and domain.evaluation.eval_errors, and the result stored back.

Moved out of the domain, which reads no warehouse (see the import contracts).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from papersift.extract.domain.evaluation.eval_errors import (
    EvalDetails,
    all_errors,
    by_source,
)
from papersift.extract.domain.evaluation.evaluate import (
    Evaluation,
    Gold,
    GoldError,
    PredictedPaper,
    predictions_from,
    score,
)
from papersift.extract.domain.evaluation.evaluate_fields import extra_predictions
from papersift.warehouse import Repository
from papersift.warehouse import evals as stored
from papersift.warehouse.custom import extra_items


def latest_run_for(warehouse: Repository, paper_ids: Sequence[str]) -> str:
    """The most recent run that handled any of these papers."""
    run_id = warehouse.run(stored.latest_run_handling, paper_ids)
    if run_id is None:
        raise GoldError("no run in this warehouse handled any of the gold papers")
    return run_id


def load_predictions(warehouse: Repository, run_id: str, paper_ids: Sequence[str]
                     ) -> list[PredictedPaper]:
    """The extraction a run produced or reused for each paper, with its call costs."""
    outcomes = warehouse.run(stored.run_outcomes, run_id, paper_ids)
    ids = [row[3] for row in {row[0]: row for row in outcomes}.values() if row[3]]
    return predictions_from(outcomes, warehouse.run(stored.stored_items, ids),
                            extra_predictions(warehouse.run(extra_items, ids)),
                            warehouse.run(stored.call_costs, ids), paper_ids)


def evaluate(warehouse: Repository, gold: Gold, run_id: str | None = None,
             *, store: bool = True) -> Evaluation:
    """Score one run (default: the latest that touched the gold papers) and store the result."""
    paper_ids = [p.paper_id for p in gold.papers]
    run_id = run_id or latest_run_for(warehouse, paper_ids)
    run = warehouse.run(stored.run_identity, run_id)
    if run is None:
        raise GoldError(f"no run {run_id!r} in this warehouse (see `papersift runs`)")
    if warehouse.run(stored.papers_known, paper_ids) == 0:
        raise GoldError(f"{gold.path}: none of its papers are in this warehouse; ingest the "
                        "corpus it was written for")
    local = str(run[3] or "").startswith("gguf:")  # the endpoint identity of a local model
    predictions = load_predictions(warehouse, run_id, paper_ids)
    metrics = score(gold, predictions, run[0], local=local, batch=bool(run[4]))
    metrics["gain_attributes"] = warehouse.run(
        stored.gain_attribute_counts, [p.extraction_id for p in predictions if p.extraction_id])
    created = datetime.now(UTC).replace(tzinfo=None)
    eval_id = f"eval_{created:%Y%m%dT%H%M%S%f}_{run_id[-6:]}"
    evaluation = Evaluation(eval_id, run_id, run[0], run[1], run[2], gold, metrics)
    if store:
        warehouse.run(
            stored.insert_eval, eval_id=eval_id, created=created, run_id=run_id,
            gold_file=gold.path, gold_sha256=gold.sha256, gold_papers=len(gold.papers),
            model=run[0], prompt_version=run[1], schema_version=run[2], metrics=metrics)
    return evaluation


def predicted_names(warehouse: Repository, predictions: Sequence[PredictedPaper]
                    ) -> dict[str, dict[str, list[str]]]:
    """Each prediction's method and benchmark names, in stored order, by paper id."""
    ids = [p.extraction_id for p in predictions if p.extraction_id]
    out: dict[str, dict[str, list[str]]] = {
        p.paper_id: {"methods": [], "benchmarks": []} for p in predictions}
    by_extraction = {p.extraction_id: p.paper_id for p in predictions if p.extraction_id}
    for key in ("methods", "benchmarks"):
        rows = warehouse.run(stored.item_names, key, ids)
        for extraction_id, name in rows:
            out[by_extraction[extraction_id]][key].append(str(name))
    return out


def paper_sources(warehouse: Repository, paper_ids: Sequence[str]) -> dict[str, str]:
    """Each paper's source label: the venue of its first occurrence, else its file name."""
    rows = warehouse.run(stored.source_labels, paper_ids)
    return {str(paper_id): str(label or "unknown") for paper_id, label in rows}


def details(warehouse: Repository, gold: Gold, run_id: str) -> EvalDetails:
    """A run's per-paper errors and per-source figures on ``gold`` (nothing is stored)."""
    paper_ids = [p.paper_id for p in gold.papers]
    predictions = load_predictions(warehouse, run_id, paper_ids)
    errors = all_errors(gold, predictions, predicted_names(warehouse, predictions))
    return EvalDetails(run_id, errors,
                       by_source(gold, predictions, paper_sources(warehouse, paper_ids)))
