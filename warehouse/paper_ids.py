"""Small lookups over the papers table that the search commands need: how many distinct
texts there are, and which paper an id prefix names."""

from __future__ import annotations

import duckdb


def distinct_texts(con: duckdb.DuckDBPyConnection) -> int:
    """How many different abstract texts the warehouse holds (what embedding covers)."""
    row = con.execute("SELECT count(DISTINCT text_sha256) FROM papers").fetchone()
    return int(row[0]) if row else 0


def paper_id_from_prefix(con: duckdb.DuckDBPyConnection, prefix: str) -> str | None:
    """The first paper whose id starts with ``prefix``, with or without ``sha256:``."""
    row = con.execute("SELECT paper_id FROM papers WHERE paper_id LIKE ? || '%' OR "
                      "paper_id LIKE 'sha256:' || ? || '%'", [prefix, prefix]).fetchone()
    return None if row is None else str(row[0])
