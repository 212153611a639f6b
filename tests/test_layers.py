"""The warehouse owns the SQL: no shipped module outside warehouse/ (extract, report,
schemas, prompts, the papersift namespace itself) writes a query string. The test harness
(testing/), the tests and the benchmarks may read a warehouse with SQL of their own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SQL = re.compile(r"^\s*(SELECT\b.*\bFROM\b|SELECT \S|INSERT INTO|UPDATE \w+ SET|DELETE FROM|"
                 r"(CREATE|DROP|ALTER) (OR REPLACE )?(TEMP )?(TABLE|VIEW|INDEX|MACRO)|WITH \w+ AS)",
                 re.DOTALL)
OUTSIDE_THE_WAREHOUSE = ("extract", "report", "schemas", "prompts")


def _sql_strings(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and SQL.match(node.value):
            lines.append(node.lineno)
    return lines


def _shipped_outside_the_warehouse() -> list[Path]:
    paths = [path for folder in OUTSIDE_THE_WAREHOUSE for path in (ROOT / folder).rglob("*.py")]
    paths += [path for path in (ROOT / "papersift").glob("*.py")]  # not through its links
    return sorted(paths)


def test_no_sql_outside_the_warehouse() -> None:
    modules = _shipped_outside_the_warehouse()
    assert len(modules) > 50  # the walk really found the packages
    found = {str(path.relative_to(ROOT)): _sql_strings(path) for path in modules}
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_the_check_sees_sql() -> None:
    assert _sql_strings(ROOT / "warehouse" / "reads.py")  # the same check finds real queries


def _connection_uses(path: Path) -> list[int]:
    """Lines that reach for a warehouse's connection (``x.con``) or name DuckDB."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if (isinstance(node, ast.Attribute) and node.attr in ("con", "DuckDBPyConnection"))
            or (isinstance(node, ast.Name) and node.id == "duckdb")]


def test_no_connection_outside_the_warehouse() -> None:
    """Code outside warehouse/ holds a Repository (warehouse.repository), never the
    connection inside it; the import contract keeps ``import duckdb`` out, this check
    the connection itself (the test harness included)."""
    modules = _shipped_outside_the_warehouse() + sorted((ROOT / "testing").rglob("*.py"))
    found = {str(path.relative_to(ROOT)): _connection_uses(path) for path in modules}
    assert {name: lines for name, lines in found.items() if lines} == {}
    assert _connection_uses(ROOT / "warehouse" / "store.py")  # the check sees them

