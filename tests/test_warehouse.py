"""Migrations, bulk writes that never duplicate, read-only SQL."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from papersift.warehouse import Warehouse, WarehouseError, connect, migrate
from papersift.warehouse.db import MIGRATIONS_DIR, applied_migrations, migration_files
from papersift.warehouse.query import run_sql, saved_queries
from papersift.warehouse.store import Batch

NOW = datetime.datetime(2026, 11, 29, 12, 0, 0)


def _paper(paper_id: str = "sha256:abc") -> dict[str, object]:
    return {"paper_id": paper_id, "text": "Some text.", "text_sha256": "sha256:x", "chars": 10,
            "first_seen": NOW}


def test_migrations_from_empty_are_recorded(tmp_path: Path) -> None:
    con = connect(tmp_path / "w.duckdb")
    numbers = [n for n, _, _ in migration_files()]
    assert applied_migrations(con) == numbers
    listed = con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    tables = {r[0] for r in listed}
    assert {"papers", "sources", "runs", "calls", "extractions", "failures", "llm_cache",
            "tasks", "methods", "benchmarks", "gains", "paper_summary"} <= tables
    assert migrate(con) == []


def test_an_old_database_gets_only_the_new_migrations(tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    first = next(MIGRATIONS_DIR.glob("0001_*.sql"))
    (folder / first.name).write_text(first.read_text(encoding="utf-8"), encoding="utf-8")
    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    assert migrate(con, folder) == [1]
    con.execute("INSERT INTO papers VALUES ('sha256:keep', 't', 'h', 1, now())")
    (folder / "0002_add_note.sql").write_text(
        "ALTER TABLE papers ADD COLUMN note VARCHAR;", encoding="utf-8")
    assert migrate(con, folder) == [2]
    assert con.execute("SELECT paper_id, note FROM papers").fetchall() == [("sha256:keep", None)]


def test_a_failing_migration_rolls_back(tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "0001_ok.sql").write_text("CREATE TABLE a (x INTEGER);", encoding="utf-8")
    (folder / "0002_bad.sql").write_text(
        "CREATE TABLE b (x INTEGER); SELECT * FROM missing_table;", encoding="utf-8")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    with pytest.raises(WarehouseError, match=r"0002_bad\.sql"):
        migrate(con, folder)
    assert applied_migrations(con) == [1]
    listed = con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    tables = {r[0] for r in listed}
    assert "b" not in tables


def test_migration_numbers_must_not_have_gaps(tmp_path: Path) -> None:
    (tmp_path / "0001_a.sql").write_text("SELECT 1;", encoding="utf-8")
    (tmp_path / "0003_c.sql").write_text("SELECT 1;", encoding="utf-8")
    with pytest.raises(WarehouseError, match="without gaps"):
        migration_files(tmp_path)


def test_keyed_rows_are_never_duplicated(tmp_path: Path) -> None:
    with Warehouse(tmp_path / "w.duckdb") as wh:
        batch = Batch()
        batch.add("papers", _paper(), _paper())
        batch.add("sources", {"paper_id": "sha256:abc", "file": "f.txt", "position": 1,
                              "first_seen": NOW})
        wh.write(batch)
        wh.write(batch)
        assert wh.con.execute("SELECT count(*) FROM papers").fetchone() == (1,)
        assert wh.con.execute("SELECT count(*) FROM sources").fetchone() == (1,)


def test_a_failed_batch_writes_nothing(tmp_path: Path) -> None:
    with Warehouse(tmp_path / "w.duckdb") as wh:
        batch = Batch()
        batch.add("papers", _paper("sha256:one"))
        batch.add("sources", {"paper_id": "sha256:one", "file": None, "position": 1,
                              "first_seen": NOW})  # file is NOT NULL
        with pytest.raises(duckdb.Error):
            wh.write(batch)
        assert wh.con.execute("SELECT count(*) FROM papers").fetchone() == (0,)


def test_unknown_tables_and_columns_are_refused(tmp_path: Path) -> None:
    batch = Batch()
    with pytest.raises(WarehouseError, match="not a writable table"):
        batch.add("_migrations", {"version": 9})
    batch.add("papers", {**_paper(), "colour": "blue"})
    with Warehouse(tmp_path / "w.duckdb") as wh, pytest.raises(WarehouseError, match="colour"):
        wh.write(batch)


def test_sql_is_read_only(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as wh:
        batch = Batch()
        batch.add("papers", _paper())
        wh.write(batch)
    assert run_sql(db, "SELECT count(*) AS n FROM papers").rows == [(1,)]
    for statement in ("DROP TABLE papers", "DELETE FROM papers", "CREATE TABLE x (a INT)"):
        with pytest.raises(WarehouseError, match="read-only"):
            run_sql(db, statement)
    assert run_sql(db, "SELECT count(*) FROM papers").rows == [(1,)]


def test_sql_on_a_missing_file_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(WarehouseError, match="papersift run"):
        run_sql(tmp_path / "nothing.duckdb", "SELECT 1")
    assert not (tmp_path / "nothing.duckdb").exists()


def test_saved_queries_run_on_an_empty_warehouse(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    Warehouse(db).close()
    saved = saved_queries()
    assert {"most_used_benchmarks", "methods_per_task", "gains_by_metric",
            "papers_without_numbers"} <= set(saved)
    for query in saved.values():
        assert query.description
        # a query's declared parameters (leaderboard's benchmark) left NULL: no filter
        params: dict[str, Any] = dict.fromkeys(query.params)
        params.update(dict.fromkeys(f"{name}_key" for name in query.params
                                    if f"${name}_key" in query.sql))
        run_sql(db, query.sql, params or None)


def test_cache_clear_and_stats(tmp_path: Path) -> None:
    with Warehouse(tmp_path / "w.duckdb") as wh:
        batch = Batch()
        for key, model in (("k1", "a"), ("k2", "a"), ("k3", "b")):
            batch.add("llm_cache", {"cache_key": key, "response_json": {"x": 1},
                                    "lenient": False, "model": model, "created": NOW})
        wh.write(batch)
        assert wh.cache_stats()["by_model"] == {"a": 2, "b": 1}
        assert set(wh.cache_lookup(["k1", "k3", "nope"])) == {"k1", "k3"}
        assert wh.cache_clear("a") == 2
        assert wh.cache_clear() == 1
        assert wh.cache_stats()["entries"] == 0
