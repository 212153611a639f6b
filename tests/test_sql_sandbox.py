"""`papersift sql` is read-only and sandboxed: DDL, DML, ATTACH, COPY, INSTALL/LOAD, SET
and every way of reading or writing another file are refused, each with a clear message;
queries still run and the warehouse file never changes."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from papersift.extract.interface.cli import cli
from papersift.warehouse import Warehouse, WarehouseError
from papersift.warehouse.query import run_sql
from papersift.warehouse.store import Batch

SECRET_LINE = "root-password-that-must-never-print"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sandbox")


@pytest.fixture(scope="module")
def db(folder: Path) -> Path:
    path = folder / "w.duckdb"
    with Warehouse(path) as warehouse:
        batch = Batch()
        batch.add("papers", {"paper_id": "sha256:p", "text": "An abstract.", "chars": 12,
                             "text_sha256": "sha256:t", "first_seen": datetime(2026, 1, 1)})
        warehouse.write(batch)
    return path


@pytest.fixture(scope="module")
def outside(folder: Path) -> Path:
    """A file outside the warehouse that user SQL must not be able to read."""
    path = folder / "private.csv"
    path.write_text(f"secret\n{SECRET_LINE}\n", encoding="utf-8")
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


REFUSED_BY_TYPE = {
    "INSERT INTO papers (paper_id) VALUES ('x')": "INSERT",
    "UPDATE papers SET chars = 0": "UPDATE",
    "DELETE FROM papers": "DELETE",
    "CREATE TABLE x (a INT)": "CREATE",
    "CREATE TEMP TABLE x AS SELECT 1": "CREATE",
    "CREATE VIEW v AS SELECT 1": "CREATE",
    "DROP TABLE papers": "DROP",
    "ALTER TABLE papers ADD COLUMN y INT": "ALTER",
    "ATTACH '{tmp}/other.duckdb' AS other": "ATTACH",
    "DETACH w": "DETACH",
    "COPY papers TO '{tmp}/stolen.csv'": "COPY",
    "COPY papers FROM '{outside}'": "COPY",
    "EXPORT DATABASE '{tmp}/dump'": "EXPORT",
    "INSTALL httpfs": "LOAD",
    "LOAD httpfs": "LOAD",
    "SET enable_external_access = true": "SET",
    "RESET lock_configuration": "SET",
    "PRAGMA enable_profiling": "PRAGMA",
    "CALL checkpoint()": "CALL",
    "CHECKPOINT": "CALL",
    "VACUUM": "VACUUM",
    "BEGIN TRANSACTION": "TRANSACTION",
    "SELECT 1; DROP TABLE papers": "DROP",
}


@pytest.mark.parametrize("statement", list(REFUSED_BY_TYPE))
def test_statements_that_are_not_queries_are_refused(
    statement: str, db: Path, outside: Path, folder: Path
) -> None:
    before = _digest(db)
    sql = statement.format(tmp=folder, outside=outside)
    with pytest.raises(WarehouseError, match=rf"read-only: a {REFUSED_BY_TYPE[statement]} "):
        run_sql(db, sql)
    assert _digest(db) == before
    assert not (folder / "stolen.csv").exists() and not (folder / "dump").exists()
    assert not (folder / "other.duckdb").exists()


FILE_READS = [
    "SELECT * FROM read_csv('{outside}')",
    "SELECT * FROM read_csv_auto('{outside}')",
    "SELECT * FROM '{outside}'",
    "SELECT * FROM read_text('{outside}')",
    "SELECT * FROM read_blob('{outside}')",
    "SELECT * FROM read_json_objects('{outside}')",
    "SELECT * FROM read_parquet('{outside}')",
    "SELECT * FROM sniff_csv('{outside}')",
    "SELECT * FROM glob('{tmp}/*')",
    "SELECT * FROM read_text('file://{outside}')",
    "WITH t AS (SELECT * FROM read_csv('{outside}')) SELECT * FROM t",
    "SELECT (SELECT count(*) FROM read_text('{outside}')) AS n",
    "DESCRIBE SELECT * FROM read_csv('{outside}')",
    "EXPLAIN SELECT * FROM read_csv('{outside}')",
]


@pytest.mark.parametrize("query", FILE_READS)
def test_queries_cannot_reach_other_files(
    query: str, db: Path, outside: Path, folder: Path
) -> None:
    with pytest.raises(WarehouseError) as refused:
        run_sql(db, query.format(outside=outside, tmp=folder))
    message = str(refused.value)
    assert SECRET_LINE not in message
    assert "disabled by configuration" in message or "does not exist" in message


def test_settings_cannot_be_switched_back_on(db: Path) -> None:
    """Even reached through a query, the configuration is locked and external access off."""
    rows = run_sql(db, "SELECT name, value FROM duckdb_settings() WHERE name IN "
                       "('enable_external_access', 'lock_configuration')").rows
    assert dict(rows) == {"enable_external_access": "false", "lock_configuration": "true"}
    with pytest.raises(WarehouseError, match="Catalog Error"):
        run_sql(db, "SELECT getenv('HOME')")


@pytest.mark.parametrize("query", [
    "SELECT count(*) FROM papers",
    "WITH p AS (SELECT * FROM papers) SELECT paper_id FROM p",
    "FROM papers SELECT chars",
    "DESCRIBE papers",
    "SHOW TABLES",
    "SUMMARIZE papers",
    "EXPLAIN SELECT * FROM papers",
    "PRAGMA table_info('papers')",
    "SELECT 1; SELECT 2",
])
def test_queries_still_run(query: str, db: Path) -> None:
    before = _digest(db)
    assert run_sql(db, query).columns
    assert _digest(db) == before


def test_the_cli_says_read_only_and_names_the_statement(db: Path, outside: Path) -> None:
    runner = CliRunner()
    attach = runner.invoke(cli, ["sql", f"ATTACH '{outside}.db' AS x", "--db", str(db)])
    assert attach.exit_code == 1 and "read-only: a ATTACH statement" in attach.output
    read = runner.invoke(cli, ["sql", f"SELECT * FROM read_csv('{outside}')", "--db", str(db)])
    assert read.exit_code == 1 and "file system operations are disabled" in read.output
    assert SECRET_LINE not in read.output and "Traceback" not in read.output


SIDE_EFFECT_CALLS = [
    "FROM enable_logging(storage='file'); SELECT 1",
    "SELECT * FROM enable_logging(storage='file', storage_path='{tmp}/logs')",
    "SELECT * FROM system.main.\"Enable_Logging\" /* a comment */ ()",
    "WITH t AS (SELECT * FROM disable_logging()) SELECT * FROM t",
    "SELECT * FROM truncate_duckdb_logs()",
    "SELECT write_log('x')",
    "SELECT 1 WHERE EXISTS (SELECT * FROM checkpoint())",
    "SELECT * FROM force_checkpoint()",
    "SELECT * FROM query('SELECT 1')",
    "EXPLAIN ANALYZE SELECT * FROM enable_logging()",
]


@pytest.mark.parametrize("query", SIDE_EFFECT_CALLS)
def test_functions_that_change_settings_or_files_are_refused(
    query: str, db: Path, folder: Path
) -> None:
    before = _digest(db)
    with pytest.raises(WarehouseError, match=r"read-only: \w+\(\) is refused"):
        run_sql(db, query.format(tmp=folder))
    assert _digest(db) == before and not (folder / "logs").exists()


def test_a_name_in_a_string_or_a_column_is_not_a_call(db: Path) -> None:
    rows = run_sql(db, "SELECT 'enable_logging(' AS s, 1 AS checkpoint -- query(\n").rows
    assert rows == [("enable_logging(", 1)]


def test_file_logging_ends_with_a_message_not_an_aborted_process(db: Path) -> None:
    """DuckDB 1.4.4 aborts the process (an uncaught C++ exception) on this pair, so it
    runs in a child: exit 1 and one line, not a signal."""
    done = subprocess.run(
        [sys.executable, "-m", "papersift", "sql",
         "SELECT * FROM enable_logging(storage='file'); SELECT count(*) FROM papers",
         "--db", str(db)], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 1, done.stderr
    assert "enable_logging() is refused" in done.stdout + done.stderr
    assert "terminate called" not in done.stderr
