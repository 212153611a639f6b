"""How `papersift eval` shows what went wrong: per-paper errors, per-source scores, and
the papers that changed between two runs (rich tables and JSON)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from papersift.extract.domain.evaluation.eval_errors import (
    FIELDS,
    EvalDetails,
    PaperErrors,
    changed_papers,
)

_SOURCE_FIGURES = (("methods", "methods"), ("benchmarks", "benchmarks"),
                   ("gains (value)", "gains_value"))


def source_table(found: EvalDetails) -> Table:
    """F1 (and paper count) of each source's papers, for one run."""
    table = Table(title=f"{found.run_id} · by source")
    table.add_column("source")
    table.add_column("papers", justify="right")
    for label, _ in _SOURCE_FIGURES:
        table.add_column(f"{label} F1", justify="right")
    for source, metrics in found.sources.items():
        table.add_row(source, str(metrics["papers"]),
                      *(f"{metrics[key]['f1']:.3f}" for _, key in _SOURCE_FIGURES))
    return table


def _line(errors: PaperErrors) -> list[str]:
    lines = []
    for name in FIELDS:
        fp, fn = errors.false_positives.get(name, []), errors.false_negatives.get(name, [])
        if fp or fn:
            lines.append(f"  {name}: " + "; ".join(
                [*(f"+{item}" for item in fp), *(f"-{item}" for item in fn)]))
    return lines


def print_errors(out: Console, found: EvalDetails) -> None:
    """Each paper with an error: '+name' predicted but not in gold, '-name' missed."""
    out.print(f"[bold]{found.run_id}[/bold]: errors per paper (+ false positive, "
              "- false negative)", highlight=False)
    for errors in found.errors:
        lines = _line(errors)
        if lines:
            out.print(f"{errors.paper_id[:19]} {errors.opening}", highlight=False, markup=False)
            for line in lines:
                out.print(line, highlight=False, markup=False)


def print_changes(out: Console, before: EvalDetails, after: EvalDetails) -> None:
    """The papers whose errors differ between run A and run B, with both error lists."""
    changed = changed_papers(before.errors, after.errors)
    out.print(f"{len(changed)} paper(s) changed between {before.run_id} and {after.run_id}",
              highlight=False)
    for was, now in changed:
        out.print(f"{now.paper_id[:19]} {now.opening}", highlight=False, markup=False)
        for label, errors in (("A", was), ("B", now)):
            lines = _line(errors) or ["  no errors"]
            for line in lines:
                out.print(f" {label}{line}", highlight=False, markup=False)


def details_json(found: EvalDetails, errors: bool, sources: bool) -> dict[str, Any]:
    """The details asked for, JSON-ready."""
    out: dict[str, Any] = {}
    if errors:
        out["errors"] = [{"paper_id": e.paper_id, "false_positives": e.false_positives,
                          "false_negatives": e.false_negatives}
                         for e in found.errors if not e.clean]
    if sources:
        out["by_source"] = found.sources
    return out
