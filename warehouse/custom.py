"""User-defined fields' declarations and views, their columns of the wide paper table,
and the reads eval makes of the fields beyond the first five.

The items of every user field are rows of ``custom_items`` (migration 0005); a run that
declares fields stores their declarations in ``custom_fields`` (0013) and gets a view per
field, ``custom_NAME``, holding that field's items of each paper's latest extraction, so
it is queried like a built-in field's view. Every reader that lists fields (exports, the
workbook, the report, ``serve``, search) takes the user's from :func:`declared_fields`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import duckdb

from papersift.schemas.fields import CUSTOM_TABLE, CUSTOM_VIEW, CustomField, extra_scored_fields
from papersift.warehouse.db import WarehouseError
from papersift.warehouse.views import stored_fields, summary_column

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,40}$")
# The long export of every user field's items (custom.csv, the workbook's custom sheet).
CUSTOM_LONG = (f"SELECT paper_id, field, idx, value, unit, evidence, char_start, char_end, "
               f"alignment, align_score FROM {CUSTOM_VIEW}")


def has_custom_items(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute(f"SELECT count(*) FROM {CUSTOM_VIEW}").fetchone()
    return bool(row and row[0])


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


def record_custom_fields(con: duckdb.DuckDBPyConnection,
                         fields: Iterable[CustomField]) -> list[str]:
    """Store a run's field declarations (the latest run's declaration of a name wins) and
    create each field's view; returns the view names."""
    fields = list(fields)
    now = datetime.now(UTC).replace(tzinfo=None)
    for position, spec in enumerate(fields):
        create_custom_views(con, [spec.name])  # checks the name first
        con.execute("INSERT OR REPLACE INTO custom_fields VALUES (?, ?, ?, ?, ?)",
                    [spec.name, spec.grounding, position, json.dumps(spec.as_data()), now])
    return [spec.view for spec in fields]


def declared_fields(con: duckdb.DuckDBPyConnection) -> list[CustomField]:
    """Every user field the warehouse holds, in the order of its fields file (a field
    stored before declarations were kept reads as a list of names)."""
    rows = con.execute("SELECT name, declaration FROM custom_fields "
                       "ORDER BY declared DESC NULLS LAST, position, name").fetchall()
    return [CustomField.from_data(json.loads(data)) if data
            else CustomField(name, "name", True) for name, data in rows]


def summary_columns(con: duckdb.DuckDBPyConnection, alias: str = "s") -> list[str]:
    """The wide paper table's columns beyond paper_summary's: one per optional built-in
    field a run stored (named like the field), then one per user field, ``custom_NAME``:
    its items of the paper's latest extraction, joined with '; ' (a number with its
    unit)."""
    optional = [summary_column(spec, f"{alias}.extraction_id")
                for spec in stored_fields(con) if spec.optional and spec.in_summary]
    return optional + [
            f"(SELECT string_agg(c.value || CASE WHEN c.unit IS NULL OR c.unit = 'absolute' "
            f"THEN '' ELSE ' ' || c.unit END, '; ' ORDER BY c.idx) FROM {CUSTOM_VIEW} c "
            f"WHERE c.extraction_id = {alias}.extraction_id AND c.field = '{spec.name}') "
            f"AS {spec.summary_column}"
            for spec in declared_fields(con) if _NAME.match(spec.name)]


def wide_papers(con: duckdb.DuckDBPyConnection, text_as: str = "text") -> str:
    """The wide paper table: paper_summary with a column per stored optional field and
    per user field before the abstract (``text_as`` names the abstract's column)."""
    own = "".join(f", {column}" for column in summary_columns(con))
    return (f"SELECT s.* EXCLUDE (text){own}, s.text AS {text_as} FROM paper_summary s "
            "ORDER BY s.paper_id")


def extra_items(con: duckdb.DuckDBPyConnection,
                ids: list[str]) -> list[tuple[str, str, Any]]:
    """(extraction id, field, item) of these extractions' items of the built-in fields
    eval scores as listed in gold (artifacts as (kind, url); a field's label, with its
    details as a tuple when it declares some), then user-field values (field
    ``custom.NAME``), in order."""
    rows: list[tuple[str, str, Any]] = []
    for spec in extra_scored_fields():
        columns = ", ".join((spec.label, *spec.details))
        rows += [(found[0], spec.name, tuple(found[1:]) if spec.details else found[1])
                 for found in con.execute(
                     f"SELECT extraction_id, {columns} FROM {spec.table} "
                     "WHERE list_contains(?, extraction_id) ORDER BY extraction_id, idx",
                     [ids]).fetchall()]
    rows += [(extraction_id, f"custom.{name}", value)
             for extraction_id, name, value in con.execute(
                 f"SELECT extraction_id, field, value FROM {CUSTOM_TABLE} "
                 "WHERE list_contains(?, extraction_id) ORDER BY extraction_id, field, idx",
                 [ids]).fetchall()]
    return rows
