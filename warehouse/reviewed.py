"""Reviewed papers as they now stand (corrections applied), paper by paper: what the
few-shot pool (`papersift corrections pool`) is made from."""

from __future__ import annotations

from typing import Any

import duckdb

from papersift.warehouse.corrections import ITEM_TYPES, item_rows, reviewed_papers
from papersift.warehouse.review_state import contribution_types


def reviewed_extractions(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Each reviewed paper (one with a correction or a reviewed mark), in paper_id order:
    ``paper_id``, ``text``, ``types`` and its corrected items by type (``task``,
    ``method``, ``benchmark``, ``gain``: rows of the item views, rejected ones left out)."""
    ids = reviewed_papers(con)
    if not ids:
        return []
    texts = dict(con.execute("SELECT paper_id, text FROM papers WHERE list_contains(?, "
                             "paper_id)", [ids]).fetchall())
    types = contribution_types(con, ids)
    items = {kind: item_rows(con, kind, ids) for kind in ITEM_TYPES}
    papers = []
    for paper_id in ids:
        if paper_id not in texts:
            continue
        paper: dict[str, Any] = {"paper_id": paper_id, "text": texts[paper_id],
                                 "types": types.get(paper_id, [])}
        for kind in ITEM_TYPES:
            paper[kind] = [row for row in items[kind] if row["paper_id"] == paper_id]
        papers.append(paper)
    return papers
