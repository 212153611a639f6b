"""User-defined fields' views, and the reads eval makes of the fields beyond the first five.

The items of every user field are rows of ``custom_items`` (migration 0005); a run that
declares fields gets a view per field, ``custom_NAME``, holding that field's items of each
paper's latest extraction, so it is queried like a built-in field's view.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import duckdb

from papersift.schemas.fields import CUSTOM_TABLE, CUSTOM_VIEW, builtin
from papersift.warehouse.db import WarehouseError

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,40}$")


def create_custom_views(con: duckdb.DuckDBPyConnection, names: Iterable[str]) -> list[str]:
    """Create (or refresh) the view of each user field; returns the view names."""
    views = []
    for name in names:
        if not _NAME.match(name):
            raise WarehouseError(f"not a field name: {name!r}")
        view = f"{CUSTOM_VIEW}_{name}"
        con.execute(f"CREATE OR REPLACE VIEW {view} AS SELECT * FROM {CUSTOM_VIEW} "
                    f"WHERE field = '{name}'")
        views.append(view)
    return views


def extra_items(con: duckdb.DuckDBPyConnection,
                ids: list[str]) -> list[tuple[str, str, Any]]:
    """(extraction id, field, item) of these extractions' artifacts, as (kind, url), and
    user-field values (field ``custom.NAME``), in order."""
    artifacts = builtin("artifacts").table
    rows: list[tuple[str, str, Any]] = [
        (extraction_id, "artifacts", (kind, url)) for extraction_id, kind, url in con.execute(
            f"SELECT extraction_id, kind, url FROM {artifacts} "
            "WHERE list_contains(?, extraction_id) ORDER BY extraction_id, idx",
            [ids]).fetchall()]
    rows += [(extraction_id, f"custom.{name}", value)
             for extraction_id, name, value in con.execute(
                 f"SELECT extraction_id, field, value FROM {CUSTOM_TABLE} "
                 "WHERE list_contains(?, extraction_id) ORDER BY extraction_id, field, idx",
                 [ids]).fetchall()]
    return rows
