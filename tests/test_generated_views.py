"""The per-field views are generated from the field registry (warehouse/views.py): every
declared field has its view, a correctable one its corrected view and model_items rows,
a summarised one its paper_summary column; they are re-created when their SQL changes."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from papersift.schemas.fields import BUILTIN_FIELDS
from papersift.warehouse import connect
from papersift.warehouse.db import MIGRATIONS_DIR
from papersift.warehouse.views import edit_columns, generated_names, views_hash


def _views(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}


def _columns(con: duckdb.DuckDBPyConnection, relation: str) -> list[str]:
    return [row[0] for row in con.execute(f"DESCRIBE {relation}").fetchall()]


def test_every_declared_field_has_its_generated_views(tmp_path: Path) -> None:
    con = connect(tmp_path / "w.duckdb")
    assert generated_names() <= _views(con)
    summary = _columns(con, "paper_summary")
    edits = _columns(con, "correction_edits")
    for spec in BUILTIN_FIELDS:
        assert _columns(con, spec.view) == \
            [name for name, _ in spec.table_columns()] + list(spec.view_columns)
        if spec.correctable:
            assert spec.corrected_view in _views(con)
            assert {f"set_{c}" for c in (*spec.editable, *spec.derived)} <= set(edits)
        assert (spec.name in summary) == (spec.in_summary and not spec.optional), spec.name
    assert [c for c in edits if c.startswith("set_")] == [f"set_{c}" for c in edit_columns()]


def test_model_items_name_every_correctable_field(tmp_path: Path) -> None:
    con = connect(tmp_path / "w.duckdb")
    sql = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'model_items'"
                      ).fetchone()
    assert sql is not None
    for spec in BUILTIN_FIELDS:
        assert (f"'{spec.item}' AS item_type" in sql[0]) == spec.correctable, spec.item


def test_views_are_recreated_when_their_sql_changed(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    con = connect(path)
    assert con.execute("SELECT hash FROM _generated_views").fetchall() == [(views_hash(),)]
    # a database whose views an older papersift wrote: another hash, another definition
    con.execute("CREATE OR REPLACE VIEW tasks AS SELECT 1 AS stale")
    con.execute("UPDATE _generated_views SET hash = 'older'")
    con.close()
    con = connect(path)
    assert "stale" not in _columns(con, "tasks")
    assert con.execute("SELECT hash FROM _generated_views").fetchall() == [(views_hash(),)]
    con.close()
    reader = connect(path, read_only=True)  # read-only: nothing to write, views as stored
    assert "canonical" in _columns(reader, "tasks")


def test_a_database_of_the_older_migrations_upgrades(tmp_path: Path) -> None:
    """A warehouse made before views were generated (its migrations only) gets them."""
    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    con.execute("CREATE TABLE _migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT "
                "NULL, applied TIMESTAMP NOT NULL)")
    for number, path in enumerate(sorted(MIGRATIONS_DIR.glob("*.sql"))[:13], start=1):
        con.execute(path.read_text(encoding="utf-8"))
        con.execute("INSERT INTO _migrations VALUES (?, ?, now())", [number, path.stem[5:]])
    con.close()
    upgraded = connect(tmp_path / "old.duckdb")
    assert generated_names() <= _views(upgraded)
    assert upgraded.execute("SELECT count(*) FROM _generated_views").fetchone() == (1,)


def test_a_reader_of_an_older_warehouse_upgrades_it_first(tmp_path: Path) -> None:
    """`export`, `report` and `sql` open read-only: a warehouse an older papersift wrote
    (a migration and the generated views missing) is brought up to date before, so they
    find every table and view they read."""
    path = tmp_path / "w.duckdb"
    con = connect(path)
    last = max(int(p.name[:4]) for p in MIGRATIONS_DIR.glob("*.sql"))
    newest = next(MIGRATIONS_DIR.glob(f"{last:04d}_*.sql")).read_text(encoding="utf-8")
    created = re.findall(r"CREATE TABLE (\w+)", newest)
    con.execute("DROP VIEW IF EXISTS prior_methods")
    con.execute("DROP VIEW IF EXISTS corrected_prior_methods")
    for table in created:
        con.execute(f"DROP TABLE {table}")
    con.execute(f"DELETE FROM _migrations WHERE version = {last}")
    con.execute("UPDATE _generated_views SET hash = 'older'")
    con.close()
    reader = connect(path, read_only=True)
    tables = {row[0] for row in reader.execute("SELECT table_name FROM duckdb_tables()")
              .fetchall()}
    assert set(created) <= tables
    assert generated_names() <= _views(reader)
