"""Writes to the warehouse: one writer, bulk inserts, one transaction per batch."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from itertools import repeat
from pathlib import Path
from typing import Any

import pyarrow as pa

from papersift.schemas.fields import child_tables
from papersift.warehouse.db import WarehouseError, _now, connect
from papersift.warehouse.repository import Repository

# Child rows belong to an extraction: written only when the extraction itself is new.
# One table per field of the registry (schemas.fields), and one for user-defined fields.
_CHILDREN = child_tables()
# Tables a batch may write to, and the order they are written in.
# Writes of one process to one warehouse take turns: a batch's CHECKPOINT fails while
# another write transaction of the same database is open (papersift serve writes
# corrections while a run started through its API writes batches). `papersift serve`
# also holds it around every request's reads (see serve/state.py): a CHECKPOINT waits for
# every open scan, so nobody may wait for this lock while a result of theirs is open
# (fetch results whole: a half-read fetchone() result keeps its scan open). Reentrant, so
# a correction's transaction can take it inside the request that holds it.
WRITE_LOCK = threading.RLock()

WRITABLE_TABLES = (
    "papers",
    "sources",
    "llm_cache",
    "extractions",
    *_CHILDREN,
    "run_papers",
    "calls",
    "failures",
)
# Tables whose rows are keyed: a row whose key is already stored is skipped, not duplicated.
_KEYS = {
    "papers": ("paper_id",),
    "sources": ("paper_id", "file", "position"),
    "llm_cache": ("cache_key",),
    "extractions": ("extraction_id",),
    "run_papers": ("run_id", "paper_id"),
}


def row_key(table: str) -> tuple[str, ...] | None:
    """The key columns of a keyed table; None for a table whose rows are not keyed."""
    return _KEYS.get(table)


@dataclass
class Batch:
    """Rows for several tables, written together in one transaction."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, table: str, *rows: Mapping[str, Any]) -> None:
        if table not in WRITABLE_TABLES:
            raise WarehouseError(f"not a writable table: {table}")
        self.rows.setdefault(table, []).extend(dict(row) for row in rows)

    def extend(self, other: Batch) -> None:
        for table, rows in other.rows.items():
            self.add(table, *rows)

    def __len__(self) -> int:
        return sum(len(rows) for rows in self.rows.values())


@dataclass(frozen=True)
class RunCounts:
    n_abstracts: int
    n_extracted: int
    n_cached: int
    n_failed: int
    prompt_tokens: int
    completion_tokens: int


class Warehouse(Repository):
    """A read-write handle on one warehouse file. Only one process should hold it. Code
    outside warehouse/ uses it as a Repository (``run``); ``con`` is for warehouse/."""

    def __init__(self, path: str | Path, *, read_only: bool = False,
                 create: bool = True) -> None:
        self.path = Path(path)
        # read-only: no migration; create=False: a missing file is an error, not made
        self.con = connect(self.path, read_only=read_only, create=create)
        super().__init__(self.con)
        self._columns: dict[str, list[str]] = {}
        self._arrow_schemas: dict[str, pa.Schema] = {}

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- bulk writes -------------------------------------------------------------------

    def columns(self, table: str) -> list[str]:
        if table not in self._columns:
            described = self.con.execute(f"DESCRIBE {table}").fetchall()
            self._columns[table] = [row[0] for row in described]
        return self._columns[table]

    def _arrow_schema(self, table: str) -> pa.Schema:
        """The table's columns as Arrow types (asked once per table and connection)."""
        if table not in self._arrow_schemas:
            self._arrow_schemas[table] = (
                self.con.execute(f"SELECT * FROM {table} LIMIT 0").arrow().schema
            )
        return self._arrow_schemas[table]

    def write(self, batch: Batch) -> None:
        """Write every row of the batch in one transaction; keyed rows already stored are kept.

        Inserts only (keys checked with an anti-join, never ON CONFLICT), then a CHECKPOINT,
        so a kill leaves at most this one batch of plain inserts in the WAL to replay.
        """
        if not batch.rows:
            return
        with WRITE_LOCK:
            self._write_locked(batch)

    def _write_locked(self, batch: Batch) -> None:
        self.con.execute("BEGIN TRANSACTION")
        try:
            new_extractions = self._insert_new_extractions(batch)
            for table in WRITABLE_TABLES:
                if table == "extractions":
                    continue
                rows = batch.rows.get(table, [])
                if table in _CHILDREN:
                    rows = [row for row in rows if row["extraction_id"] in new_extractions]
                self._insert(table, rows)
            self.con.execute("COMMIT")
        except Exception:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("CHECKPOINT")

    def _insert_new_extractions(self, batch: Batch) -> set[str]:
        """Insert the batch's extractions not stored yet; return their ids (their item rows
        are written only for these, so a re-seen answer never duplicates items)."""
        rows = batch.rows.get("extractions", [])
        if not rows:
            return set()
        ids = [row["extraction_id"] for row in rows]
        with self._keys(ids) as view:
            stored = {
                row[0]
                for row in self.con.execute(
                    f"SELECT extraction_id FROM extractions WHERE extraction_id IN "
                    f"(SELECT key FROM {view})"
                ).fetchall()
            }
        fresh = [row for row in rows if row["extraction_id"] not in stored]
        self._insert("extractions", fresh)
        return {row["extraction_id"] for row in fresh}

    def _insert(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        columns = self.columns(table)
        unknown = set().union(*(row.keys() for row in rows)) - set(columns)
        if unknown:
            raise WarehouseError(f"{table}: unknown column(s) {sorted(unknown)}")
        present = [c for c in columns if any(c in row for row in rows)]
        # Build an Arrow table with the target's types so DuckDB inserts in bulk.
        schema_fields = []
        arrays = []
        target = self._arrow_schema(table)
        for name in present:
            arrow_type = target.field(name).type
            values = [row.get(name) for row in rows]
            if any(map(isinstance, values, repeat(dict))):  # JSON columns: encode dicts
                values = [_arrow_value(value) for value in values]
            arrays.append(pa.array(values, type=arrow_type))
            schema_fields.append(pa.field(name, arrow_type))
        incoming = pa.Table.from_arrays(arrays, schema=pa.schema(schema_fields))
        keys = _KEYS.get(table)
        column_list = ", ".join(present)
        self.con.register("_incoming", incoming)
        try:
            if keys:
                # Skip rows whose key is stored already, and repeats inside the batch.
                key_list = ", ".join(keys)
                join = " AND ".join(f"t.{k} = i.{k}" for k in keys)
                self.con.execute(
                    f"INSERT INTO {table} ({column_list}) "
                    f"SELECT {column_list} FROM _incoming i "
                    f"WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE {join}) "
                    f"QUALIFY row_number() OVER (PARTITION BY {key_list}) = 1"
                )
            else:
                self.con.execute(
                    f"INSERT INTO {table} ({column_list}) SELECT {column_list} FROM _incoming"
                )
        finally:
            self.con.unregister("_incoming")

    @contextmanager
    def _keys(self, keys: Sequence[str]) -> Iterator[str]:
        """A one-column view of ``keys`` for IN (...) lookups. Passed as Arrow: a Python
        list parameter is converted element by element, about 0.3 ms each."""
        self.con.register("_keys", pa.table({"key": pa.array(keys, type=pa.string())}))
        try:
            yield "_keys"
        finally:
            self.con.unregister("_keys")

    # -- runs --------------------------------------------------------------------------

    def start_run(self, run_id: str, **fields: Any) -> None:
        row = {"run_id": run_id, "started": _now(), "status": "running", **fields}
        for name in ("params", "inputs"):
            if name in row:
                row[name] = json.dumps(row[name], sort_keys=True)
        columns = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        self.con.execute(f"INSERT INTO runs ({columns}) VALUES ({marks})", list(row.values()))

    def finish_run(self, run_id: str, status: str, counts: RunCounts) -> None:
        self.con.execute(
            "UPDATE runs SET finished = ?, status = ?, n_abstracts = ?, n_extracted = ?, "
            "n_cached = ?, n_failed = ?, prompt_tokens = ?, completion_tokens = ? "
            "WHERE run_id = ?",
            [
                _now(),
                status,
                counts.n_abstracts,
                counts.n_extracted,
                counts.n_cached,
                counts.n_failed,
                counts.prompt_tokens,
                counts.completion_tokens,
                run_id,
            ],
        )

    def mark_unfinished_runs(self) -> int:
        """Runs left 'running' by a killed process become 'interrupted'; returns how many."""
        rows = self.con.execute(
            "UPDATE runs SET status = 'interrupted' WHERE status = 'running' RETURNING run_id"
        ).fetchall()
        return len(rows)

    # -- cache -------------------------------------------------------------------------

    def cache_lookup(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Stored responses for the given cache keys (missing keys are absent)."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        with self._keys(wanted) as view:
            rows = self.con.execute(
                "SELECT cache_key, response_json, lenient, asks, prompt_tokens, "
                f"completion_tokens FROM llm_cache WHERE cache_key IN (SELECT key FROM {view})"
            ).fetchall()
        return {
            key: {
                "response": json.loads(response),
                "lenient": bool(lenient),
                "asks": asks,
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
            }
            for key, response, lenient, asks, prompt_tokens, completion_tokens in rows
        }

    def cache_stats(self) -> dict[str, Any]:
        row = self.con.execute(
            "SELECT count(*), coalesce(sum(length(response_json)), 0), "
            "coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), "
            "min(created), max(created) FROM llm_cache"
        ).fetchone()
        assert row is not None
        by_model = self.con.execute(
            "SELECT coalesce(model, '?'), count(*) FROM llm_cache GROUP BY 1 ORDER BY 2 DESC"
        ).fetchall()
        return {
            "entries": row[0],
            "bytes": row[1],
            "prompt_tokens_saved_per_pass": row[2],
            "completion_tokens_saved_per_pass": row[3],
            "oldest": _iso(row[4]),
            "newest": _iso(row[5]),
            "by_model": dict(by_model),
        }

    def cache_clear(self, model: str | None = None) -> int:
        """Delete cached responses (all, or one model's); extractions stay. Returns the count."""
        if model is None:
            rows = self.con.execute("DELETE FROM llm_cache RETURNING cache_key").fetchall()
        else:
            rows = self.con.execute(
                "DELETE FROM llm_cache WHERE model = ? RETURNING cache_key", [model]
            ).fetchall()
        return len(rows)


def _arrow_value(value: Any) -> Any:
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def _iso(value: datetime | None) -> str | None:
    return value.isoformat(sep=" ", timespec="seconds") if value else None
