"""`papersift sql` is bounded: a runaway query stops at its timeout and at Ctrl-C (SIGINT to
a real process), spills only into a folder papersift makes and removes (a symlinked
`<db>.tmp` is never followed), and TIMESTAMPTZ, PIVOT and NaN results come out right."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from papersift.extract.interface.cli import cli
from papersift.warehouse import Warehouse, WarehouseError
from papersift.warehouse.query import (
    QueryStop,
    _bounded,
    check_read_only,
    run_sql,
    size_bytes,
)
from papersift.warehouse.store import Batch

PAPERSIFT = Path(sys.executable).parent / "papersift"
RUNAWAY = "SELECT count(*) FROM range(100000000000) a, range(100000000000) b"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bounds") / "w.duckdb"
    with Warehouse(path) as warehouse:
        batch = Batch()
        for n in range(3):
            batch.add("papers", {"paper_id": f"sha256:{n}", "text": f"Abstract {n}.",
                                 "chars": 11, "text_sha256": f"sha256:t{n}",
                                 "first_seen": datetime(2026, 1, 1 + n)})
        warehouse.write(batch)
    return path


@pytest.fixture(autouse=True)
def own_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test its own temporary folder, here and in its subprocesses, so spill folders
    of queries run by other tests at the same time (pytest-xdist) are not counted."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _spill_dirs() -> set[str]:
    return {name for name in os.listdir(tempfile.gettempdir())
            if name.startswith("papersift-sql-")}


@pytest.mark.parametrize("timeout_s", [0.3, 1.0])
def test_a_runaway_query_stops_at_its_timeout(db: Path, timeout_s: float) -> None:
    before = _spill_dirs()
    started = time.monotonic()
    with pytest.raises(WarehouseError, match="--timeout"):
        run_sql(db, RUNAWAY, timeout_s=timeout_s)
    assert time.monotonic() - started < timeout_s + 15  # not the hours the join needs
    assert _spill_dirs() == before  # its spill folder is gone


# The CLI, announcing on stderr the moment the query's worker thread starts: by then
# papersift's Ctrl-C handler is installed, so the test waits on that and not on a sleep.
ANNOUNCED_CLI = """
import sys, threading
start = threading.Thread.start
def announced(thread):
    start(thread)
    if thread.name == "papersift-sql":
        print("query started", file=sys.stderr, flush=True)
threading.Thread.start = announced
from papersift.extract.interface.cli import main
main()
"""


def test_ctrl_c_stops_a_query(db: Path) -> None:
    """SIGINT at once when the query starts (the worker may not be inside DuckDB yet: the
    interrupt must not be lost). Only the time from SIGINT to exit is measured; the
    start-up on a loaded machine may take what it takes."""
    process = subprocess.Popen([sys.executable, "-c", ANNOUNCED_CLI, "sql", RUNAWAY,
                                "--db", str(db), "--timeout", "3600"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # blocks until the announcement (or an exit)
        assert line.strip() == "query started", line + process.stderr.read()
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=600)
    finally:
        process.kill()
    # Far less than the join would take (hours); how fast exactly is not a test's business.
    assert time.monotonic() - sent < 120
    assert process.returncode == 1
    assert "interrupted" in err and "Traceback" not in err


class _SlowToStart:
    """A connection that is sent Ctrl-C as a query starts, and reaches DuckDB only after a
    pause: the interrupt comes before the query has begun, which DuckDB alone forgets."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def execute(self, sql: str, params: object) -> duckdb.DuckDBPyConnection:
        os.kill(os.getpid(), signal.SIGINT)  # the worker runs: papersift's handler is set
        time.sleep(0.5)
        return self.con.execute(sql, params)

    def interrupt(self) -> None:
        self.con.interrupt()


def test_a_ctrl_c_before_the_query_begins_is_not_lost(db: Path) -> None:
    con = duckdb.connect(str(db), read_only=True)
    watchdog = threading.Timer(30, con.interrupt)  # ends the join if the Ctrl-C was lost
    watchdog.start()
    started = time.monotonic()
    try:
        with pytest.raises(WarehouseError, match="Ctrl-C"):
            _bounded(_SlowToStart(con), RUNAWAY, [], None)  # type: ignore[arg-type]
    finally:
        watchdog.cancel()
        con.close()
    assert time.monotonic() - started < 20


def test_a_symlinked_spill_folder_is_never_used(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    link = db.with_name(db.name + ".tmp")
    link.symlink_to(target, target_is_directory=True)
    try:
        rows = run_sql(db, "SELECT current_setting('temp_directory') AS t, "
                           "current_setting('memory_limit') AS m").rows
        assert "papersift-sql-" in rows[0][0] and str(link) not in rows[0][0]
        assert list(target.iterdir()) == []
    finally:
        link.unlink()


def test_timestamptz_pivot_and_nan(db: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["sql", "SELECT first_seen::TIMESTAMPTZ AS t FROM papers",
                                 "--db", str(db), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)) == 3
    pivot = "PIVOT (SELECT paper_id, chars FROM papers) ON paper_id USING sum(chars)"
    check_read_only(pivot)
    assert run_sql(db, pivot).rows == [(11, 11, 11)]
    result = runner.invoke(cli, ["sql", "SELECT 'nan'::DOUBLE AS a, 'inf'::DOUBLE AS b, "
                                 "[1.0, 'nan'::DOUBLE] AS c", "--db", str(db),
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [{"a": None, "b": None, "c": [1.0, None]}]
    for refused in ("CREATE TABLE z AS PIVOT papers ON paper_id",
                    "CREATE TYPE e AS ENUM ('a')"):
        with pytest.raises(WarehouseError, match="read-only"):
            check_read_only(refused)


class _SlowFunction:
    """A Python function a query calls once per row (as ``embed(text)`` is), 0.2 s a row:
    a chunk of 2,000 rows is 400 s of calls DuckDB's interrupt cannot cut short. It
    checks the query's stop before each row; ``ctrl_c_at`` sends SIGINT from a call."""

    def __init__(self, ctrl_c_at: int | None = None) -> None:
        self.calls = 0
        self.ctrl_c_at = ctrl_c_at

    def prepare(self, con: duckdb.DuckDBPyConnection, stop: QueryStop) -> None:
        def slow(value: int) -> int:
            stop.check()
            self.calls += 1
            if self.calls == self.ctrl_c_at:
                os.kill(os.getpid(), signal.SIGINT)  # the query runs: papersift's handler is set
            time.sleep(0.2)
            return value

        con.create_function("slow", slow, ["BIGINT"], "BIGINT",  # type: ignore[list-item, arg-type]
                            side_effects=True)


@pytest.mark.parametrize("how", ["timeout", "ctrl-c"])
def test_a_slow_python_function_stops_between_rows(db: Path, how: str) -> None:
    function = _SlowFunction(ctrl_c_at=3 if how == "ctrl-c" else None)
    with pytest.raises(WarehouseError, match="Ctrl-C" if how == "ctrl-c" else "after 1 s"):
        run_sql(db, "SELECT count(slow(i)) FROM range(2000) r(i)", prepare=function.prepare,
                timeout_s=1 if how == "timeout" else None)
    assert function.calls < 1000  # a handful of rows at most, not the whole chunk


def test_a_result_larger_than_the_memory_limit_is_refused_not_held(db: Path) -> None:
    """DuckDB's memory_limit does not cover the rows handed to Python (5 million rows held
    2 GB beside a 1 GB limit): the fetch stops once they pass it."""
    with pytest.raises(WarehouseError, match=r"passes --memory-limit .* add a LIMIT"):
        run_sql(db, "SELECT i, repeat('x', 100) AS s FROM range(2000000) t(i)",
                memory_limit="50MB")
    rows = run_sql(db, "SELECT i FROM range(30000) t(i)", memory_limit="50MB").rows
    assert len(rows) == 30000


@pytest.mark.parametrize(("text", "expected"), [
    ("1GB", 10**9), ("512MB", 512 * 10**6), ("2GiB", 2 * 2**30), (" 1.5 gb ", 1_500_000_000),
    ("100", 100), ("lots", None), ("1XB", None),
])
def test_memory_limits_read_as_duckdb_reads_them(text: str, expected: int | None) -> None:
    assert size_bytes(text) == expected


def test_a_query_that_spills_past_the_cap_is_stopped(db: Path, tmp_path: Path) -> None:
    """DuckDB's max_temp_directory_size let a sort spill 2.9 GiB against 2 GB; papersift
    watches the spill folder itself (here one already past a 1,000-byte cap)."""
    spill = tmp_path / "spill"
    spill.mkdir()
    (spill / "sort.block").write_bytes(b"x" * 2000)
    con = duckdb.connect(str(db), read_only=True)
    try:
        with pytest.raises(WarehouseError, match="spilled more than"):
            _bounded(con, RUNAWAY, [], None, spill=(spill, 1000))
    finally:
        con.close()
