"""Query results as rows keyed by column name, the shape every warehouse read returns."""

from __future__ import annotations

from typing import Any

import duckdb


def cursor_dicts(cursor: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """The remaining rows of an executed query, each a dict keyed by column name."""
    columns = [d[0] for d in cursor.description or []]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def query_dicts(con: duckdb.DuckDBPyConnection, sql: str,
                params: Any = None) -> list[dict[str, Any]]:
    """Run ``sql`` with ``params`` and return its rows keyed by column name."""
    return cursor_dicts(con.execute(sql, params or []))


def first_row(con: duckdb.DuckDBPyConnection, sql: str,
              params: Any = None) -> tuple[Any, ...] | None:
    """The first row of ``sql``, or None. The result is read whole, so no scan stays open
    behind it (a half-read result would hold up a CHECKPOINT; see store.WRITE_LOCK)."""
    rows = con.execute(sql, params or []).fetchall()
    return tuple(rows[0]) if rows else None
