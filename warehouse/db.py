"""Opening a warehouse file and bringing its schema up to date.

Migrations are numbered SQL files in ``migrations/`` (``0001_name.sql``), append-only,
each applied in its own transaction and recorded in ``_migrations``. The views of each
field are generated from the registry after them (warehouse.views).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from papersift.errors import PapersiftError
from papersift.warehouse.views import generated_names, refresh_views, views_hash

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
_MIGRATION_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
# How long to wait for a warehouse another process holds before giving up (seconds).
LOCK_WAIT_ENV = "PAPERSIFT_LOCK_WAIT"
DEFAULT_LOCK_WAIT_S = 5.0
_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")
# A read-only connection for user SQL: no files but the warehouse, no extensions, no
# settings changes (lock_configuration keeps a query from switching any of it back on).
SANDBOX = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "lock_configuration": True,
}


class WarehouseError(PapersiftError):
    """The warehouse file cannot be opened or used as asked."""


# What DuckDB raises, for code outside warehouse/ that reports it (which imports no duckdb).
DatabaseError = duckdb.Error


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


_CREATED = re.compile(r"(?i)\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW|MACRO)\s+"
                      r"(?:IF\s+NOT\s+EXISTS\s+)?([A-Za-z_][A-Za-z0-9_]*)")


def schema_names() -> set[str]:
    """Every table, view and macro name the migrations create (user fields stay clear)."""
    sources = [path for _, _, path in migration_files()]
    sources += sorted(Path(__file__).parent.glob("*.py"))  # tables code creates (search)
    return generated_names() | {name.lower() for path in sources
                                for name in _CREATED.findall(path.read_text(encoding="utf-8"))}


def applied_migrations(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Numbers of the migrations already applied to this database."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS _migrations "
        "(version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied TIMESTAMP NOT NULL)"
    )
    return [row[0] for row in con.execute("SELECT version FROM _migrations ORDER BY 1").fetchall()]


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """One write transaction: committed when the block ends, rolled back (and the error
    raised again) when it fails."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


@contextmanager
def committed(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """A :func:`transaction`, then a CHECKPOINT, as every warehouse write ends."""
    with transaction(con):
        yield
    con.execute("CHECKPOINT")


def migrate(con: duckdb.DuckDBPyConnection, directory: Path = MIGRATIONS_DIR) -> list[int]:
    """Apply the migrations this database lacks, each in a transaction, then (re)create
    the views generated from the field registry (warehouse.views) when their SQL changed
    or a migration ran; return the migrations' numbers."""
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
            if isinstance(error, duckdb.IOException | duckdb.FatalException):
                raise WarehouseError(storage_failure(error)) from None
            raise WarehouseError(f"migration {path.name} failed: {error}") from error
        newly.append(number)
    refreshed = False
    try:  # the generated views read the shipped schema, not another folder's
        if directory == MIGRATIONS_DIR:
            refreshed = refresh_views(con, force=bool(newly))
    except duckdb.Error as error:
        raise WarehouseError(f"the generated views failed: {error}") from error
    if newly or refreshed:
        # DDL is the part of DuckDB's WAL replay with known failures after a kill (see
        # docs/reliability.md, "Nothing lost"): checkpoint so the new schema never waits in the WAL.
        con.execute("CHECKPOINT")
    return newly


_QUOTED_FILE = re.compile(r'(?:file|File) "([^"]+)"')
_DISK_FULL = ("No space left on device", "disk is full", "Disk full", "out of disk space")


def storage_failure(error: BaseException, db: str | Path | None = None) -> str:
    """One line for a failed read or write of the warehouse (or an export): which file,
    what went wrong, and what to do; DuckDB's C++ stack trace is left out."""
    text = str(error)
    found = _QUOTED_FILE.search(text)
    file = found.group(1) if found else (getattr(error, "filename", None) or db or "the file")
    detail = next((line.strip().strip('"') for line in text.splitlines()
                   if line.strip() and not line.startswith(("Stack Trace", "/"))), text)
    detail = detail[:300]
    if any(marker in text for marker in _DISK_FULL) or getattr(error, "errno", None) == 28:
        return (f"{file}: the disk is full (No space left on device). Everything stored "
                "before stays consistent: free some space, or pass --db/--out on another "
                "disk, and rerun: what was stored is not asked again (the answers of "
                "the batch being written are).")
    if isinstance(error, PermissionError) or "Permission denied" in text or \
            "Read-only file system" in text:
        return (f"{file}: cannot write there ({detail}). Choose a writable place "
                "(--db or --out).")
    return (f"{file}: cannot be read or written ({detail}). If the file is damaged, "
            "restore a copy or pass another --db.")


def _lock_wait_s() -> float:
    value = os.environ.get(LOCK_WAIT_ENV)
    try:
        return max(float(value), 0.0) if value else DEFAULT_LOCK_WAIT_S
    except ValueError:
        return DEFAULT_LOCK_WAIT_S


def describe_command(argv: list[str]) -> str:
    """A process's program and subcommand only ('papersift run ...'): its other arguments
    may carry a URL with a key or a file name nobody asked to see."""
    words = [Path(argv[0]).name] if argv else []
    if words and words[0].startswith("python") and len(argv) > 1:
        words = [Path(argv[1]).name if argv[1] != "-m" else argv[2] if len(argv) > 2 else ""]
        argv = argv[2 if argv[1] != "-m" else 3:]
    else:
        argv = argv[1:]
    if argv and re.fullmatch(r"[a-z][a-z-]{0,20}", argv[0]):
        words.append(argv[0])
    shown = " ".join(words)
    return shown + (" ..." if len(argv) > (1 if len(words) > 1 else 0) else "")


def _holder(error: duckdb.Error) -> str:
    """Who holds the lock, from DuckDB's message: 'another papersift process (PID 12)'."""
    match = _LOCK_HOLDER.search(str(error))
    if match is None:
        return "another process"
    pid = match.group(2)
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        command = describe_command([part.decode(errors="replace") for part in argv if part])
    except OSError:
        command = describe_command([match.group(1)])
    if "papersift" in command:
        return f"another papersift process (PID {pid}: {command})"
    return f"another process (PID {pid}: {command})"


def _open(path: Path, *, read_only: bool, config: dict[str, object]) -> duckdb.DuckDBPyConnection:
    """duckdb.connect, waiting (bounded) while another process holds the file's lock."""
    wait_s = _lock_wait_s()
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only,
                                  config=config)  # type: ignore[arg-type]
        except duckdb.Error as error:
            message = str(error)
            if "Could not set lock" in message and time.monotonic() < deadline:
                time.sleep(min(0.2, max(deadline - time.monotonic(), 0.0)))
                continue
            raise WarehouseError(_open_failure(path, error, wait_s)) from error


def server_file(path: Path) -> Path:
    """Where a running `papersift serve` says it holds this warehouse (pid, url)."""
    return path.parent / f"{path.name}.serve.json"


def snapshot_file(path: Path) -> Path:
    """Where a running `papersift serve` publishes a read-only copy of this warehouse for
    readers its write lock shuts out (`papersift sql`, `query`)."""
    return path.parent / f"{path.name}.snapshot"


def _server_holding(path: Path, error: duckdb.Error) -> str | None:
    """The message for a warehouse a running `papersift serve` holds, else None."""
    match = _LOCK_HOLDER.search(str(error))
    try:
        info = json.loads(server_file(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or match is None or str(info.get("pid")) != match.group(2):
        return None
    url = info.get("url", "?")
    return (f"{path} is held by papersift serve (PID {info['pid']}) at {url}: DuckDB allows "
            f"one writer per file, so extract through the server (POST {url}/api/runs or "
            f"{url}/api/extract), or stop it first")


def _open_failure(path: Path, error: duckdb.Error, wait_s: float) -> str:
    message = str(error)
    served = _server_holding(path, error) if "Could not set lock" in message else None
    if served is not None:
        return served
    if "Could not set lock" in message:
        return (f"{path} is in use: {_holder(error)} holds it (waited {wait_s:g}s). Wait "
                f"for it to finish, or pass another --db; set {LOCK_WAIT_ENV}=SECONDS to "
                "wait longer.")
    if "replaying WAL" in message:
        return (f"cannot open {path}: DuckDB failed to replay its write-ahead log "
                f"{path}.wal ({message}). papersift checkpoints after every batch, so that "
                f"file holds at most the last batch; move it aside (mv '{path}.wal' "
                f"'{path}.wal.bad') and rerun to redo that batch.")
    return f"cannot open {storage_failure(error, path)}"


@dataclass(frozen=True)
class Bounds:
    """What one user query may use: memory, threads, and spill space in a folder of its
    own (never DuckDB's default ``<db>.tmp``, which it would follow through a symlink)."""

    temp_directory: Path
    memory_limit: str = "1GB"
    threads: int = 2
    max_temp_size: str = "2GB"


def connect_bounded(path: str | Path, bounds: Bounds,
                    prepare: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
                    ) -> duckdb.DuckDBPyConnection:
    """The sandboxed read-only connection (see SANDBOX) with memory, threads and spill
    bounded; the settings are made (and ``prepare`` run: the search macros), then external
    access is switched off and locked."""
    path = Path(path)
    if not path.exists():
        raise WarehouseError(missing_warehouse(path))
    config: dict[str, object] = {
        "temp_directory": str(bounds.temp_directory),
        "memory_limit": bounds.memory_limit,
        "threads": bounds.threads,
        "max_temp_directory_size": bounds.max_temp_size,
        **{key: value for key, value in SANDBOX.items()
           if key not in ("enable_external_access", "lock_configuration")},
    }
    def opened() -> duckdb.DuckDBPyConnection:
        con = _open(path, read_only=True, config=config)
        try:  # in this order: once external access is off, the temp directory is fixed
            if prepare is not None:
                prepare(con)
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
        except duckdb.Error:
            con.close()
            raise
        return con

    return _read_current(path, opened)


def _prepared_sandbox(path: Path, prepare: Callable[[duckdb.DuckDBPyConnection], None]
                      ) -> duckdb.DuckDBPyConnection:
    late = ("enable_external_access", "lock_configuration")
    con = _open(path, read_only=True,
                config={k: v for k, v in SANDBOX.items() if k not in late})
    try:
        prepare(con)
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except Exception:
        con.close()
        raise
    return con


def _stale(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether an open warehouse lacks a migration or its generated views are not this
    version's (a file an older papersift wrote); False for a file that is no warehouse."""
    try:
        done = {row[0] for row in con.execute("SELECT version FROM _migrations").fetchall()}
        row = con.execute("SELECT hash FROM _generated_views").fetchone()
    except duckdb.CatalogException:  # no _migrations: not a warehouse; else no views yet
        return bool(con.execute("SELECT count(*) FROM duckdb_tables() "
                                "WHERE table_name = '_migrations'").fetchone() == (1,))
    except duckdb.Error:
        return False
    wanted = {number for number, _, _ in migration_files()}
    return not wanted <= done or row is None or row[0] != views_hash()


def _upgrade(path: Path) -> None:
    """Bring a warehouse an older papersift wrote up to date (migrations, generated
    views). A file another process holds, or one that cannot be written, stays as it is."""
    try:
        con = duckdb.connect(str(path), read_only=False)
    except duckdb.Error:
        return
    try:
        migrate(con)
    except WarehouseError:
        pass
    finally:
        con.close()


def _read_current(path: Path, opener: Callable[[], duckdb.DuckDBPyConnection]
                  ) -> duckdb.DuckDBPyConnection:
    """A read-only connection from ``opener``, after upgrading the file first when it is
    stale, so readers find every table and view they read; the file is opened once when
    it is current (the usual case), and opened again only after an upgrade."""
    con = opener()
    try:
        stale = _stale(con)
    except BaseException:
        con.close()
        raise
    if not stale:
        return con
    con.close()
    _upgrade(path)
    return opener()


def missing_warehouse(path: Path) -> str:
    """The message for a --db that names no file: the path, the warehouses that are
    there (a typo is the usual cause), and how to make one."""
    try:
        near = sorted(p.name for p in (path.parent if str(path.parent) else Path()).glob(
            "*.duckdb"))[:5]
    except OSError:
        near = []
    there = f" (in that folder: {', '.join(near)})" if near else ""
    return (f"no warehouse at {path}{there}: pass the right --db, or make one with "
            f"`papersift run INPUTS --db {path}`")


def remove_empty(path: Path) -> None:
    """Delete a warehouse this command made and left empty (and its write-ahead log), so
    a failed first command leaves nothing behind."""
    for file in (path, path.with_name(f"{path.name}.wal")):
        file.unlink(missing_ok=True)


def connect(
    path: str | Path, *, read_only: bool = False, sandbox: bool = False, create: bool = True,
    prepare: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
) -> duckdb.DuckDBPyConnection:
    """Open a warehouse; a writable one is created if needed (unless ``create`` is false:
    then a missing file is an error, as it always is read-only) and migrated.

    ``sandbox`` (read-only only) also shuts out every file but the warehouse, extensions
    and settings changes: the connection for user-written SQL. ``prepare`` runs on a
    sandboxed connection before external access is switched off and its configuration
    locked (it loads the fts extension from its installed file and adds search macros).
    """
    path = Path(path)
    if (read_only or not create) and not path.exists():
        raise WarehouseError(missing_warehouse(path))
    if read_only:
        if sandbox and prepare is not None:
            return _read_current(path, lambda: _prepared_sandbox(path, prepare))
        return _read_current(path, lambda: _open(path, read_only=True,
                                                 config=dict(SANDBOX) if sandbox else {}))
    if sandbox:
        raise WarehouseError("a sandboxed connection is read-only")
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    con = _open(path, read_only=False, config={})
    try:
        migrate(con)
    except Exception:
        con.close()
        raise
    return con
