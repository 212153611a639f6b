"""How the warehouse is written so a kill leaves it openable: the schema and every batch
are checkpointed, so the WAL never holds DDL and holds at most one batch of inserts."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from papersift.warehouse import Warehouse, WarehouseError
from papersift.warehouse.db import connect
from papersift.warehouse.store import Batch


def _wal_bytes(db: Path) -> int:
    wal = Path(f"{db}.wal")
    return wal.stat().st_size if wal.exists() else 0


def test_new_schema_and_each_batch_leave_nothing_in_the_wal(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with Warehouse(db) as warehouse:
        assert _wal_bytes(db) == 0  # the migrations' DDL is checkpointed
        for index in range(3):
            batch = Batch()
            batch.add("papers", {"paper_id": f"sha256:{index}", "text": "An abstract.",
                                 "text_sha256": "sha256:t", "chars": 12,
                                 "first_seen": datetime(2026, 1, 1)})
            warehouse.write(batch)
            assert _wal_bytes(db) == 0
        # A statement outside write() does reach the WAL: the check above can fail.
        warehouse.con.execute("INSERT INTO failures (stage, reason, created) "
                              "VALUES ('ingest', 'empty', now())")
        assert _wal_bytes(db) > 0


def test_a_wal_that_does_not_replay_gets_a_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "w.duckdb"
    Warehouse(db).close()

    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise duckdb.InternalException(
            f'Failure while replaying WAL file "{db}.wal": Conflict on tuple deletion!')

    monkeypatch.setattr(duckdb, "connect", refuse)
    with pytest.raises(WarehouseError) as error:
        connect(db)
    message = str(error.value)
    assert f"cannot open {db}" in message and "Conflict on tuple deletion" in message
    assert f"mv '{db}.wal' '{db}.wal.bad'" in message
