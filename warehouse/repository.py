"""What code outside warehouse/ holds of an open warehouse: a repository, never a bare
connection (the import contracts keep duckdb inside warehouse/).

A caller runs the warehouse's own query functions on it, ``repo.run(reads.count_papers)``:
each is a function of warehouse/ that takes the connection first, so the SQL stays here.
The test harness (testing/) may read with SQL of its own through ``fetch_all``
and ``fetch_one``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import duckdb

from papersift.warehouse.db import connect

P = ParamSpec("P")
T = TypeVar("T")


class Repository:
    """One open warehouse: its query functions run on it; closed when done."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con

    def run(self, query: Callable[Concatenate[duckdb.DuckDBPyConnection, P], T], /,
            *args: P.args, **kwargs: P.kwargs) -> T:
        """``query(connection, *args, **kwargs)``: a warehouse function on this warehouse."""
        return query(self._con, *args, **kwargs)

    @contextmanager
    def cursor(self) -> Iterator[Repository]:
        """A repository on a cursor of its own (one per thread), closed at the end."""
        cursor = self._con.cursor()
        try:
            yield Repository(cursor)
        finally:
            cursor.close()

    def checkpoint(self) -> None:
        """Write the write-ahead log into the file (a copy of the file is then whole)."""
        self._con.execute("CHECKPOINT")

    def fetch_all(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """Every row of a query the test harness writes itself (shipped code uses ``run``)."""
        return self._con.execute(sql, params).fetchall()

    def fetch_one(self, sql: str, params: list[Any] | None = None) -> tuple[Any, ...] | None:
        """The first row of such a query, or None."""
        return self._con.execute(sql, params).fetchone()

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> Repository:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_repository(path: str | Path, *, read_only: bool = False,
                    create: bool = True) -> Repository:
    """db.connect (a writable warehouse is made if needed and migrated) as a repository."""
    return Repository(connect(path, read_only=read_only, create=create))
