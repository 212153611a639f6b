"""CSV cells a spreadsheet cannot run: a text cell that starts with =, +, -, @, a tab or a
carriage return (and is not a plain number such as -3.5 or +12%) gets a leading
apostrophe, so Excel, LibreOffice and Google Sheets show it as text instead of evaluating
it as a formula. Only CSV is escaped; Parquet, JSONL and the xlsx keep values as stored
(the xlsx writes every string as a string cell)."""

from __future__ import annotations

import re
from typing import Any

_STARTS_LIKE_FORMULA = r"^[=+\-@\t\r]"
_PLAIN_NUMBER = r"^[+-]?[0-9][0-9.,]*([eE][+-]?[0-9]+)?%?$"
_FORMULA = re.compile(_STARTS_LIKE_FORMULA)
_NUMBER = re.compile(_PLAIN_NUMBER)

# The same rule as a DuckDB macro, for COPY ... TO csv (see export.py).
SHEET_SAFE_MACRO = (
    "CREATE OR REPLACE TEMP MACRO sheet_safe(x) AS CASE "
    f"WHEN regexp_matches(CAST(x AS VARCHAR), '{_STARTS_LIKE_FORMULA}') "
    f"AND NOT regexp_matches(CAST(x AS VARCHAR), '{_PLAIN_NUMBER}') "
    "THEN '''' || CAST(x AS VARCHAR) ELSE CAST(x AS VARCHAR) END"
)


def sheet_safe(value: Any) -> Any:
    """A CSV cell's value with a formula-like text neutralised (others unchanged)."""
    if isinstance(value, str) and _FORMULA.match(value) and not _NUMBER.match(value):
        return "'" + value
    return value


def sheet_safe_query(query: str) -> str:
    """A query whose every column goes through sheet_safe (SHEET_SAFE_MACRO must exist)."""
    return f"SELECT sheet_safe(COLUMNS(*)) FROM ({query})"
