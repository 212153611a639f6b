"""Opening a warehouse file and bringing its schema up to date.

Migrations are numbered SQL files in ``migrations/`` (``0001_name.sql``), append-only,
each applied in its own transaction and recorded in ``_migrations``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import duckdb

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_MIGRATION_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


class WarehouseError(Exception):
    """The warehouse file cannot be opened or used as asked."""


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[tuple[int, str, Path]]:
    """(number, name, path) of every migration file, in order; gaps and repeats are errors."""
    found = []
    for path in sorted(directory.glob("*.sql")):
        match = _MIGRATION_FILE.match(path.name)
        if not match:
            raise WarehouseError(f"migration file name not understood: {path.name}")
        found.append((int(match.group(1)), match.group(2), path))
    numbers = [number for number, _, _ in found]
    if numbers != list(range(1, len(numbers) + 1)):
        raise WarehouseError(f"migrations must be numbered 1..n without gaps, found {numbers}")
    return found


def applied_migrations(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Numbers of the migrations already applied to this database."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS _migrations "
        "(version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied TIMESTAMP NOT NULL)"
    )
    return [row[0] for row in con.execute("SELECT version FROM _migrations ORDER BY 1").fetchall()]


def migrate(con: duckdb.DuckDBPyConnection, directory: Path = MIGRATIONS_DIR) -> list[int]:
    """Apply the migrations this database lacks, each in a transaction; return their numbers."""
    done = set(applied_migrations(con))
    newly = []
    for number, name, path in migration_files(directory):
        if number in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(path.read_text(encoding="utf-8"))
            con.execute("INSERT INTO _migrations VALUES (?, ?, ?)", [number, name, _now()])
            con.execute("COMMIT")
        except Exception as error:
            con.execute("ROLLBACK")
            raise WarehouseError(f"migration {path.name} failed: {error}") from error
        newly.append(number)
    return newly


def connect(path: str | Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open a warehouse; a writable one is created if needed and migrated."""
    path = Path(path)
    if read_only:
        if not path.exists():
            raise WarehouseError(
                f"no warehouse at {path}: run `papersift run` first, or pass --db"
            )
        try:
            return duckdb.connect(str(path), read_only=True)
        except duckdb.Error as error:
            raise WarehouseError(f"cannot open {path} read-only: {error}") from error
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(str(path))
    except duckdb.Error as error:
        raise WarehouseError(f"cannot open {path}: {error}") from error
    migrate(con)
    return con
