"""Reads of `papersift serve`'s pages and API that are not corrections themselves: one
page of corrected items (paged in SQL, so a page of 100 does not read them all), the
latest runs, and whether a warehouse has the corrections table."""

from __future__ import annotations

from typing import Any

import duckdb

from papersift.warehouse.corrections import relation
from papersift.warehouse.rowdicts import cursor_dicts, first_row, query_dicts


def item_page(con: duckdb.DuckDBPyConnection, item_type: str, *,
              paper_id: str | None = None, origin: str | None = None, limit: int = 100,
              offset: int = 0) -> tuple[int, list[dict[str, Any]]]:
    """(how many corrected items of this type match, one page of them in paper and item
    order), each row with ``item_type``."""
    source = relation(item_type)
    where = "($paper IS NULL OR paper_id = $paper) AND ($origin IS NULL OR origin = $origin)"
    params: dict[str, Any] = {"paper": paper_id, "origin": origin}
    total = first_row(con, f"SELECT count(*) FROM {source} WHERE {where}",
                        params)
    cursor = con.execute(f"SELECT * FROM {source} WHERE {where} "
                         "ORDER BY paper_id, idx LIMIT $limit OFFSET $offset",
                         {**params, "limit": int(limit), "offset": int(offset)})
    rows = [row | {"item_type": item_type} for row in cursor_dicts(cursor)]
    return (int(total[0]) if total else 0), rows


def recent_runs(con: duckdb.DuckDBPyConnection, limit: int = 100) -> list[dict[str, Any]]:
    """The latest runs, newest first, without their (long) params and inputs."""
    return query_dicts(con, "SELECT * EXCLUDE (params, inputs) FROM runs "
                            "ORDER BY started DESC LIMIT ?", [int(limit)])


def has_corrections(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the warehouse has the corrections table (migration 0009)."""
    try:
        con.execute("SELECT 1 FROM corrections LIMIT 0").fetchall()
    except duckdb.CatalogException:
        return False
    return True


def one_run(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, Any] | None:
    """One stored run without its params and inputs (None: no such run)."""
    rows = query_dicts(con, "SELECT * EXCLUDE (params, inputs) FROM runs WHERE run_id = ?",
                       [run_id])
    return rows[0] if rows else None


def paper_text(con: duckdb.DuckDBPyConnection, paper_id: str) -> str | None:
    row = first_row(con, "SELECT text FROM papers WHERE paper_id = ?", [paper_id])
    return None if row is None else str(row[0])


def paper_outcome(con: duckdb.DuckDBPyConnection, run_id: str | None,
                  paper_id: str) -> tuple[str | None, dict[str, Any] | None]:
    """A paper's outcome in one run, and its failure (stage, reason, detail) if any."""
    outcome = first_row(con, "SELECT outcome FROM run_papers WHERE run_id = ? AND paper_id = ?",
                          [run_id, paper_id])
    failure = first_row(con, "SELECT stage, reason, detail FROM failures WHERE run_id = ? AND "
                          "paper_id = ?", [run_id, paper_id])
    return (None if outcome is None else outcome[0],
            None if failure is None else dict(zip(("stage", "reason", "detail"), failure,
                                                  strict=True)))
