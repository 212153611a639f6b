"""Views over the items of user-defined fields: one per field, on the generic long table.

The items of every user field are rows of ``custom_items`` (migration 0005); a run that
declares fields gets a view per field, ``custom_NAME``, holding that field's items of each
paper's latest extraction, so it is queried like a built-in field's view.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import duckdb

from papersift.schemas.fields import CUSTOM_VIEW
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
