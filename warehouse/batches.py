"""Bookkeeping of Batch API submissions (tables ``batches`` and ``batch_requests``).

Knows nothing of the provider: the caller says what was submitted and what the provider
reported; this module stores it, so a later process can find an unfinished batch by the
cache keys it was asked for and resume it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pyarrow as pa

from papersift.warehouse.db import WarehouseError, _now
from papersift.warehouse.store import Warehouse

# Provider statuses after which a batch changes no more.
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})


@dataclass(frozen=True)
class BatchRecord:
    """One submitted batch as stored (no secret: the endpoint is its cache identity)."""

    batch_id: str
    run_id: str
    endpoint: str
    model: str
    mode: str | None
    prompt_version: str | None
    schema_version: str | None
    input_file_id: str
    status: str
    request_count: int
    submitted: datetime
    output_file_id: str | None = None
    error_file_id: str | None = None
    completed_count: int | None = None
    failed_count: int | None = None
    finished: datetime | None = None
    collected: datetime | None = None
    collected_run_id: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class BatchRequest:
    custom_id: str
    paper_id: str
    cache_key: str


_COLUMNS = tuple(BatchRecord.__dataclass_fields__)


def _record(row: Sequence[Any]) -> BatchRecord:
    return BatchRecord(**dict(zip(_COLUMNS, row, strict=True)))


def record_submission(
    warehouse: Warehouse, batch: BatchRecord, requests: Sequence[BatchRequest]
) -> None:
    """Store a batch the provider accepted and the request behind each of its lines."""
    con = warehouse.con
    table = pa.table({
        "batch_id": pa.array([batch.batch_id] * len(requests), type=pa.string()),
        "custom_id": pa.array([r.custom_id for r in requests], type=pa.string()),
        "paper_id": pa.array([r.paper_id for r in requests], type=pa.string()),
        "cache_key": pa.array([r.cache_key for r in requests], type=pa.string()),
    })
    values = [getattr(batch, name) for name in _COLUMNS]
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(
            f"INSERT INTO batches ({', '.join(_COLUMNS)}) "
            f"VALUES ({', '.join('?' for _ in _COLUMNS)})",
            values,
        )
        con.register("_batch_requests", table)
        try:
            con.execute("INSERT INTO batch_requests SELECT batch_id, custom_id, paper_id, "
                        "cache_key FROM _batch_requests")
        finally:
            con.unregister("_batch_requests")
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    con.execute("CHECKPOINT")


def update_status(
    warehouse: Warehouse,
    batch_id: str,
    *,
    status: str,
    completed_count: int | None,
    failed_count: int | None,
    output_file_id: str | None,
    error_file_id: str | None,
    detail: str | None = None,
) -> None:
    """What the provider last said about the batch; ``finished`` is set when it ends."""
    warehouse.con.execute(
        "UPDATE batches SET status = ?, completed_count = ?, failed_count = ?, "
        "output_file_id = coalesce(?, output_file_id), "
        "error_file_id = coalesce(?, error_file_id), detail = coalesce(?, detail), "
        "finished = CASE WHEN ? AND finished IS NULL THEN ? ELSE finished END "
        "WHERE batch_id = ?",
        [status, completed_count, failed_count, output_file_id, error_file_id, detail,
         status in TERMINAL, _now(), batch_id],
    )


def mark_collected(warehouse: Warehouse, batch_id: str, run_id: str) -> None:
    """The batch's results are stored (by ``run_id``): later runs leave it alone."""
    warehouse.con.execute(
        "UPDATE batches SET collected = ?, collected_run_id = ? WHERE batch_id = ?",
        [_now(), run_id, batch_id],
    )


def get_batch(warehouse: Warehouse, batch_id: str) -> BatchRecord:
    row = warehouse.con.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM batches WHERE batch_id = ?", [batch_id]
    ).fetchone()
    if row is None:
        raise WarehouseError(f"no batch {batch_id!r} in {warehouse.path}: "
                             "`papersift batch list` shows the stored ones")
    return _record(row)


def batch_ids(warehouse: Warehouse) -> set[str]:
    """The ids of every stored batch."""
    return {str(row[0]) for row in warehouse.con.execute(
        "SELECT batch_id FROM batches").fetchall()}


def requests_of(warehouse: Warehouse, batch_id: str) -> list[BatchRequest]:
    rows = warehouse.con.execute(
        "SELECT custom_id, paper_id, cache_key FROM batch_requests WHERE batch_id = ? "
        "ORDER BY custom_id", [batch_id]
    ).fetchall()
    return [BatchRequest(*row) for row in rows]


def open_batches_for(warehouse: Warehouse, cache_keys: Iterable[str]) -> list[BatchRecord]:
    """Uncollected batches that asked for any of these cache keys, oldest first."""
    keys = list(dict.fromkeys(cache_keys))
    if not keys:
        return []
    con = warehouse.con
    con.register("_wanted_keys", pa.table({"key": pa.array(keys, type=pa.string())}))
    try:
        rows = con.execute(
            f"SELECT {', '.join('b.' + c for c in _COLUMNS)} FROM batches b "
            "WHERE b.collected IS NULL AND b.batch_id IN (SELECT r.batch_id FROM "
            "batch_requests r WHERE r.cache_key IN (SELECT key FROM _wanted_keys)) "
            "ORDER BY b.submitted, b.batch_id"
        ).fetchall()
    finally:
        con.unregister("_wanted_keys")
    return [_record(row) for row in rows]
