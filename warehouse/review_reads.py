"""Reads of `papersift serve`'s pages and API that are not corrections themselves: one
page of corrected items, computed in SQL so that a page of 100 does not read them all."""

from __future__ import annotations

from typing import Any

import duckdb

from papersift.warehouse.corrections import VIEWS, CorrectionError


def item_page(con: duckdb.DuckDBPyConnection, item_type: str, *,
              paper_id: str | None = None, origin: str | None = None, limit: int = 100,
              offset: int = 0) -> tuple[int, list[dict[str, Any]]]:
    """(how many corrected items of this type match, one page of them in paper and item
    order), each row with ``item_type``."""
    if item_type not in VIEWS:
        raise CorrectionError(f"unknown item type {item_type!r}; one of {list(VIEWS)}")
    where = "($paper IS NULL OR paper_id = $paper) AND ($origin IS NULL OR origin = $origin)"
    params: dict[str, Any] = {"paper": paper_id, "origin": origin}
    total = con.execute(f"SELECT count(*) FROM {VIEWS[item_type]} WHERE {where}",
                        params).fetchone()
    cursor = con.execute(f"SELECT * FROM {VIEWS[item_type]} WHERE {where} "
                         "ORDER BY paper_id, idx LIMIT $limit OFFSET $offset",
                         {**params, "limit": int(limit), "offset": int(offset)})
    columns = [d[0] for d in cursor.description]
    rows = [dict(zip(columns, row, strict=True)) | {"item_type": item_type}
            for row in cursor.fetchall()]
    return (int(total[0]) if total else 0), rows
