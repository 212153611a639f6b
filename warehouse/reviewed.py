"""Reviewed papers as they now stand (corrections applied), paper by paper: what the
few-shot pool (`papersift corrections pool`) and the gold file (`/api/gold`, `eval
--gold-from-corrections`) are made from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import duckdb

from papersift.warehouse.corrections import (
    ITEM_TYPES,
    CorrectionError,
    item_rows,
    reviewed_papers,
)
from papersift.warehouse.custom import declared_fields
from papersift.warehouse.review_state import contribution_types
from papersift.warehouse.rowdicts import query_dicts


def reviewed_extractions(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Each reviewed paper (one with a correction or a reviewed mark), in paper_id order:
    ``paper_id``, ``text``, ``types`` and its corrected items by type (``task``,
    ``method``, ``benchmark``, ``gain``: rows of the item views, rejected ones left out),
    and ``custom``: its user fields' corrected items, by field name."""
    ids = reviewed_papers(con)
    if not ids:
        return []
    texts = dict(con.execute("SELECT paper_id, text FROM papers WHERE list_contains(?, "
                             "paper_id)", [ids]).fetchall())
    types = contribution_types(con, ids)
    items = {kind: item_rows(con, kind, ids) for kind in ITEM_TYPES}
    custom = [row for spec in declared_fields(con) for row in item_rows(con, spec.item_type, ids)]
    papers = []
    for paper_id in ids:
        if paper_id not in texts:
            continue
        paper: dict[str, Any] = {"paper_id": paper_id, "text": texts[paper_id],
                                 "types": types.get(paper_id, [])}
        for kind in ITEM_TYPES:
            paper[kind] = [row for row in items[kind] if row["paper_id"] == paper_id]
        paper["custom"] = {}
        for row in custom:
            if row["paper_id"] == paper_id:
                paper["custom"].setdefault(row["field"], []).append(row)
        papers.append(paper)
    return papers


def _grounded(row: Mapping[str, Any]) -> bool:
    """A model's item, or a corrected one whose values were all found in the abstract."""
    columns = ("alignment", "metric_alignment", "baseline_alignment", "dataset_alignment")
    return row.get("origin") == "model" or all(row.get(c) != "none" for c in columns)


def gold_from_corrections(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """The reviewed papers as they now stand, in the gold file format (papersift-gold/1)."""
    ids = reviewed_papers(con)
    if not ids:
        raise CorrectionError("no corrections yet: review some papers first")
    # a reviewer's value the abstract lacks is flagged, not gold (as `corrections pool`)
    items = {kind: [row for row in item_rows(con, kind, ids) if _grounded(row)]
             for kind in ITEM_TYPES}
    types = query_dicts(con, "SELECT paper_id, type FROM contribution_types "
                       "WHERE list_contains(?, paper_id) ORDER BY idx", [ids])
    # a user field's reviewed values; a choice or flag is a classification, gold as it
    # stands even where no words of the abstract say it
    declared = declared_fields(con)
    custom = [row for spec in declared for row in item_rows(con, spec.item_type, ids)
              if spec.grounding in ("choice", "flag") or _grounded(row)]
    papers = []
    for paper_id in ids:
        def of(kind: str, pid: str = paper_id) -> list[dict[str, Any]]:
            return [row for row in items[kind] if row["paper_id"] == pid]
        papers.append({
            "paper_id": paper_id,
            "contribution_types": [r["type"] for r in types if r["paper_id"] == paper_id],
            "tasks": [row["name"] for row in of("task")],
            "methods": [{"name": row["name"],
                         "aliases": [row["expansion"]] if row.get("expansion") else []}
                        for row in of("method")],
            "benchmarks": [{"name": row["name"], "aliases": [],
                            "introduced": bool(row.get("introduced"))}
                           for row in of("benchmark")],
            "gains": [{"metric": row["metric"], "value": row["value"], "unit": row["unit"]}
                      for row in of("gain")],
            **({"custom": {spec.name: [row["value"] for row in custom
                                       if row["paper_id"] == paper_id
                                       and row["field"] == spec.name] for spec in declared}}
               if declared else {}),
        })
    return {"format": "papersift-gold/1", "source": "papersift corrections",
            "annotated_by": "reviewers, through papersift serve", "papers": papers}
