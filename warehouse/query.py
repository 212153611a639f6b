"""Read-only SQL over a warehouse, and the saved queries users ask first."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any

import duckdb

from papersift.warehouse.cells import sheet_safe
from papersift.warehouse.choices import DEFAULT_TIMEOUT_S
from papersift.warehouse.db import Bounds, WarehouseError, connect_bounded

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
        writer.writerows([sheet_safe(_plain(value)) for value in row] for row in self.rows)
        return buffer.getvalue()

    def to_json(self) -> str:
        """Standard JSON: NaN and infinities (which JSON has no spelling for) become null."""
        rows = [{key: _finite(value) for key, value in row.items()} for row in self.as_dicts()]
        return json.dumps(rows, default=_json_default, ensure_ascii=False, indent=2,
                          allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_finite(item) for item in value]
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    return value


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


# Functions a query may call that change settings or files, or run other SQL unchecked:
# logging (enable_logging(storage='file') and a second statement abort DuckDB 1.4.4 with an
# uncaught C++ exception), checkpoints, and SQL given as a string. lock_configuration
# does not cover them, so they are refused by name before anything runs.
SIDE_EFFECT_FUNCTIONS = frozenset({
    "enable_logging", "disable_logging", "truncate_duckdb_logs", "write_log",
    "checkpoint", "force_checkpoint", "query", "query_table", "json_execute_serialized_sql",
})


_NAME = re.compile(r'"(?:[^"]|"")*"|[^\s"(),.;:]+')


def _called_functions(sql: str) -> set[str]:
    """Lower-cased names (quotes removed) followed by an opening parenthesis: the functions
    ``sql`` calls. Comments and strings are skipped by DuckDB's own tokenizer."""
    names = set()
    tokens = duckdb.tokenize(sql)
    for (start, kind), (after, _) in pairwise(tokens):
        if kind.name in ("identifier", "keyword") and sql.startswith("(", after):
            found = _NAME.match(sql, start)
            if found:
                name = found.group()
                if name.startswith('"'):
                    name = name[1:-1].replace('""', '"')
                names.add(name.lower())
    return names


def _pivot_enum(statements: list[Any], index: int) -> bool:
    """Whether the CREATE at ``index`` is the one DuckDB itself adds for a PIVOT whose
    columns come from the data (a temporary enum of the values; the user wrote no text
    for it), followed by the PIVOT's own SELECT. A CREATE the user wrote has its text."""
    if statements[index].query:
        return False
    for later in statements[index + 1:]:
        if later.type.name == "CREATE" and not later.query:
            continue  # one enum per pivoted column
        return bool(later.type.name == "SELECT" and not later.query)
    return False


def check_read_only(sql: str) -> None:
    """Refuse anything but queries, naming the statement: DDL, DML, ATTACH, COPY, INSTALL,
    LOAD, SET, EXPORT... (the sandboxed connection would refuse most of them too), and
    queries calling a function that changes settings or files (SIDE_EFFECT_FUNCTIONS)."""
    try:
        statements = duckdb.extract_statements(sql)
        called = _called_functions(sql)
    except duckdb.Error as error:
        raise WarehouseError(f"query failed: {error}") from error
    for index, statement in enumerate(statements):
        kind = statement.type.name
        if kind == "CREATE" and _pivot_enum(statements, index):
            continue
        if kind not in ALLOWED_STATEMENTS:
            raise WarehouseError(
                f"papersift sql is read-only: a {kind} statement is refused; only queries "
                "(SELECT, WITH, DESCRIBE, SHOW, EXPLAIN) run"
            )
    refused = sorted(called & SIDE_EFFECT_FUNCTIONS)
    if refused:
        raise WarehouseError(
            f"papersift sql is read-only: {refused[0]}() is refused (it changes the "
            "database's settings or files, or runs SQL from a string); only queries run")


class QueryStop:
    """Set when a query must stop (its --timeout, Ctrl-C). DuckDB sees an interrupt only
    between chunks of rows, and a chunk of a Python function's rows (``embed(text)``: a
    model call each) can take minutes; such a function calls ``check`` before each row."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def check(self) -> None:
        """Raise when the query is to stop: DuckDB then ends it with that error."""
        if self._event.is_set():
            raise WarehouseError("query stopped")


# What a connection is prepared with before it is locked: the search macros, and a
# Python function or two that check the query's QueryStop.
Prepare = Callable[[duckdb.DuckDBPyConnection, QueryStop], None]

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)
_FETCH_ROWS = 10_000


def size_bytes(text: str) -> int | None:
    """A DuckDB size (``512MB``, ``1GB``, ``2GiB``; KB is 1000 bytes, as in DuckDB) in
    bytes; None when it is not one."""
    found = _SIZE.match(text)
    unit = _UNITS.get(found.group(2).lower()) if found else None
    return None if found is None or unit is None else int(float(found.group(1)) * unit)


# DuckDB's memory_limit bounds its buffer pool; its other allocations come on top (a window
# sort under 1GB held 1,176 MiB): DuckDB is given this share, so the query stays near it.
DUCKDB_SHARE = 0.8


def _duckdb_share(memory_limit: str) -> str:
    limit = size_bytes(memory_limit)
    return memory_limit if limit is None else f"{int(limit * DUCKDB_SHARE) // 1000}KB"


def _row_bytes(rows: list[tuple[Any, ...]]) -> int:
    """About how much memory Python holds for ``rows`` (from a sample of them)."""
    sample = rows[:: max(1, len(rows) // 100)]
    held = sum(sys.getsizeof(row) + sum(map(sys.getsizeof, row)) for row in sample)
    return held * len(rows) // max(1, len(sample))


def _fetch_bounded(cursor: duckdb.DuckDBPyConnection, budget: int | None
                   ) -> list[tuple[Any, ...]]:
    """Every row of the result, fetched in parts; the query fails once the rows held in
    Python would pass ``budget`` bytes (DuckDB's memory_limit does not cover them: 5
    million rows took 2 GB beside a 1 GB limit)."""
    rows: list[tuple[Any, ...]] = []
    held = 0
    while part := cursor.fetchmany(_FETCH_ROWS):
        rows.extend(part)
        held += _row_bytes(part)
        if budget is not None and held > budget:
            raise WarehouseError(
                f"the result passes --memory-limit ({len(rows):,} rows held, about "
                f"{held / 2**20:,.0f} MiB, and more to come): add a LIMIT, aggregate, or "
                "pass a larger --memory-limit (`papersift export` writes whole tables)")
    return rows


def _spilled(folder: Path) -> int:
    """Bytes of the files under a query's spill folder (files go and come: best effort)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


_POLL_S = 0.1  # how often the waiting thread looks up (Ctrl-C is seen within this)


def run_sql(db_path: str | Path, sql: str,
            params: list[Any] | dict[str, Any] | None = None, *,
            timeout_s: float | None = DEFAULT_TIMEOUT_S, memory_limit: str = "1GB",
            threads: int = 2,
            prepare: Prepare | None = None) -> QueryResult:
    """Run queries on a sandboxed read-only connection: only SELECT-like statements, no
    file but the warehouse, no extensions, no settings changes; the file never changes.

    Bounded: the query is interrupted after ``timeout_s`` (None: never) or at Ctrl-C,
    holds at most ``memory_limit`` and ``threads`` (and its rows in Python at most about
    ``memory_limit`` more), and spills only into a temporary folder made for it, stopped
    past ``Bounds.max_temp_size`` and removed afterwards."""
    check_read_only(sql)
    stop = QueryStop()
    spill = Path(tempfile.mkdtemp(prefix="papersift-sql-"))
    try:
        con = connect_bounded(
            db_path, Bounds(spill, memory_limit=_duckdb_share(memory_limit), threads=threads),
            prepare=None if prepare is None else lambda con: prepare(con, stop))
        try:
            return _bounded(con, sql, params or [], timeout_s, stop,
                            budget=size_bytes(memory_limit),
                            spill=(spill, size_bytes(Bounds.max_temp_size) or 0))
        finally:
            con.close()
    finally:
        shutil.rmtree(spill, ignore_errors=True)


def _bounded(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | dict[str, Any],
             timeout_s: float | None, stop: QueryStop | None = None, *,
             budget: int | None = None, spill: tuple[Path, int] | None = None,
             ) -> QueryResult:
    """Run the query in a worker thread; this thread waits, and interrupts the
    connection (and sets ``stop``) at the deadline or at Ctrl-C (DuckDB holds the GIL-free
    C call otherwise)."""
    stop = stop or QueryStop()
    done: dict[str, Any] = {}

    def work() -> None:
        try:
            cursor = con.execute(sql, params)
            columns = [d[0] for d in cursor.description] if cursor.description else []
            done["result"] = QueryResult(columns,
                                         _fetch_bounded(cursor, budget) if columns else [])
        except BaseException as error:
            done["error"] = error

    worker = threading.Thread(target=work, name="papersift-sql", daemon=True)
    stopped: list[str] = []

    def on_sigint(_signum: int, _frame: object) -> None:
        # Interrupt the query and let this thread wind down in order: a KeyboardInterrupt
        # raised into the middle of DuckDB's teardown aborts the process instead.
        if not stopped:
            stopped.append("query interrupted (Ctrl-C); nothing was changed")
        stop.set()
        con.interrupt()

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_sigint) if in_main else None
    started = time.monotonic()
    worker.start()
    try:
        while worker.is_alive():
            worker.join(_POLL_S)
            if stopped and worker.is_alive():
                # again at every poll: DuckDB drops an interrupt that comes before the
                # query has begun (Ctrl-C just as it starts, or on a loaded machine)
                con.interrupt()
            elif timeout_s is not None and time.monotonic() - started > timeout_s \
                    and worker.is_alive():
                stopped.append(f"query stopped after {timeout_s:g} s (--timeout); narrow "
                               "it, or pass a larger --timeout")
                stop.set()
                con.interrupt()
            elif spill is not None and worker.is_alive() and _spilled(spill[0]) > spill[1]:
                # DuckDB's max_temp_directory_size let a sort spill 2.9 GiB against 2 GB
                stopped.append(f"query stopped: it spilled more than {spill[1] / 1e9:g} GB "
                               "to disk; narrow it (fewer rows or columns to sort or group)")
                stop.set()
                con.interrupt()
    finally:
        if in_main:
            signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
    if stopped:
        raise WarehouseError(stopped[0])
    error = done.get("error")
    if isinstance(error, duckdb.Error):
        raise WarehouseError(f"query failed: {error}") from error
    if error is not None:
        raise error
    result: QueryResult = done["result"]
    return result


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
