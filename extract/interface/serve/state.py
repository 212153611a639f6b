"""The running server's state: its config, the warehouse connection it holds, the CSRF
secret its pages carry and the queue of API runs."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import duckdb

from papersift.extract.interface.serve.config import ServeConfig, ServeError
from papersift.extract.interface.serve.jobs import Jobs
from papersift.warehouse.db import connect


@dataclass
class ServerState:
    config: ServeConfig
    con: duckdb.DuckDBPyConnection
    jobs: Jobs
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    @classmethod
    def open(cls, config: ServeConfig) -> ServerState:
        """Hold the warehouse read-write (migrating it), so this process is its writer;
        a read-only server opens it read-only (it never writes)."""
        con = connect(config.db, read_only=config.read_only)
        try:
            con.execute("SELECT 1 FROM corrections LIMIT 0")
        except duckdb.CatalogException as error:
            con.close()
            raise ServeError(f"{config.db} predates corrections: serve it once without "
                             "--read-only (that adds the table), then read-only") from error
        return cls(config=config, con=con, jobs=Jobs(config))

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection of its own for one request, on the database the server holds."""
        cursor = self.con.cursor()
        try:
            yield cursor
        finally:
            cursor.close()

    def close(self) -> None:
        self.jobs.shutdown()
        self.con.close()
