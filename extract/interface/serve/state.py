"""The running server's state: its config, the warehouse connection it holds, the CSRF
secret its pages carry and the queue of API runs."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import duckdb

from papersift.extract.interface.serve.config import ServeConfig
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
        """Hold the warehouse read-write (migrating it), so this process is its writer."""
        return cls(config=config, con=connect(config.db), jobs=Jobs(config))

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
