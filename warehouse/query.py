"""Read-only SQL over a warehouse, and the saved queries users ask first."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from papersift.warehouse.db import WarehouseError, connect

QUERIES_DIR = Path(__file__).parent / "queries"


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]

    def as_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    def to_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(self.columns)
        writer.writerows([_plain(value) for value in row] for row in self.rows)
        return buffer.getvalue()

    def to_json(self) -> str:
        return json.dumps(self.as_dicts(), default=_json_default, ensure_ascii=False, indent=2)


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return "; ".join(str(item) for item in value)
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


# Statement types user SQL may contain: queries (SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE,
# FROM-first, table-valued PRAGMAs parse as SELECT) and EXPLAIN of them.
ALLOWED_STATEMENTS = frozenset({"SELECT", "EXPLAIN"})


def check_read_only(sql: str) -> None:
    """Refuse anything but queries, naming the statement: DDL, DML, ATTACH, COPY, INSTALL,
    LOAD, SET, EXPORT... (the sandboxed connection would refuse most of them too)."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as error:
        raise WarehouseError(f"query failed: {error}") from error
    for statement in statements:
        kind = statement.type.name
        if kind not in ALLOWED_STATEMENTS:
            raise WarehouseError(
                f"papersift sql is read-only: a {kind} statement is refused; only queries "
                "(SELECT, WITH, DESCRIBE, SHOW, EXPLAIN) run"
            )


def run_sql(db_path: str | Path, sql: str,
            params: list[Any] | dict[str, Any] | None = None) -> QueryResult:
    """Run queries on a sandboxed read-only connection: only SELECT-like statements, no
    file but the warehouse, no extensions, no settings changes; the file never changes."""
    check_read_only(sql)
    con = connect(db_path, read_only=True, sandbox=True)
    try:
        cursor = con.execute(sql, params or [])
        columns = [d[0] for d in cursor.description] if cursor.description else []
        rows = cursor.fetchall() if columns else []
    except duckdb.Error as error:
        raise WarehouseError(f"query failed: {error}") from error
    finally:
        con.close()
    return QueryResult(columns, rows)


@dataclass(frozen=True)
class SavedQuery:
    name: str
    description: str
    sql: str
    params: tuple[str, ...] = ()  # from a "-- params: a, b" line; used as $a, $b


def saved_queries(directory: Path = QUERIES_DIR) -> dict[str, SavedQuery]:
    """Saved queries by name; each file's leading ``--`` comment lines are its description,
    except a ``-- params: a, b`` line, which names its parameters."""
    found = {}
    for path in sorted(directory.glob("*.sql")):
        text = path.read_text(encoding="utf-8")
        comment: list[str] = []
        params: tuple[str, ...] = ()
        for line in text.splitlines():
            if not line.startswith("--"):
                break
            said = line.removeprefix("--").strip()
            if said.startswith("params:"):
                params = tuple(p.strip() for p in said.removeprefix("params:").split(",")
                               if p.strip())
            else:
                comment.append(said)
        name = re.sub(r"^\d+_", "", path.stem)
        found[name] = SavedQuery(name, " ".join(comment).strip(), text, params)
    return found
