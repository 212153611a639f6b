"""A sharded run's rows as Parquet partitions: written per shard, read in place, merged.

Each shard's rows go to ``<out>/<table>/shard=<n>/<part>``, one file per warehouse table,
through a scratch warehouse's normal ``write`` (so the files hold exactly the columns,
types and key rules of the warehouse tables). DuckDB reads the partitions in place
(``parquet_views``), and ``merge_run`` copies them into a warehouse once per run, keeping
the keys ``Warehouse.write`` keeps. Also the cache snapshot every worker reads.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from papersift.schemas.fields import child_tables
from papersift.warehouse.db import WarehouseError, transaction
from papersift.warehouse.store import (
    NEWEST_WINS,
    WRITABLE_TABLES,
    Batch,
    RunCounts,
    Warehouse,
    newest_wins_update,
    row_key,
)

# What produced a run's answers, as each extraction row stores it.
PROVENANCE = ("endpoint", "model", "mode", "prompt_version", "schema_version")
_SOURCE = "read_parquet('{glob}', hive_partitioning = true, union_by_name = true)"


class MergeError(WarehouseError):
    """A sharded run's partitions cannot be merged into the warehouse as asked."""


def write_atomically(table: pa.Table, path: Path) -> None:
    """Write next to the target, then rename over it: readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    pq.write_table(table, partial)
    os.replace(partial, path)


@contextmanager
def _scratch_warehouse() -> Iterator[Warehouse]:
    with (tempfile.TemporaryDirectory(prefix="papersift-shard-") as scratch,
          Warehouse(Path(scratch) / "shard.duckdb") as warehouse):
        yield warehouse


def write_partitions(rows: Batch, out: Path, shard: int, part: str,
                     tables: Sequence[str]) -> None:
    """Write ``rows`` as ``<out>/<table>/shard=<shard>/<part>``, one file per table, every
    table written even when empty (so a retry replaces a previous attempt completely)."""
    with _scratch_warehouse() as scratch:
        scratch.write(rows)
        for table in tables:
            arrow = scratch.con.execute(f"SELECT * FROM {table}").fetch_arrow_table()
            write_atomically(arrow, out / table / f"shard={shard}" / part)


def has_partitions(out: Path, table: str) -> bool:
    return any((out / table).glob("shard=*/*.parquet"))


def partition_glob(out: Path, table: str) -> str:
    return str(out.resolve() / table / "shard=*" / "*.parquet")


def _source(out: Path, table: str) -> str:
    """The SQL that reads a table's partitions, with a ``shard`` column."""
    return _SOURCE.format(glob=partition_glob(out, table).replace("'", "''"))


# -- cache across workers --------------------------------------------------------------


def export_cache_snapshot(db: Path, path: Path) -> int:
    """Copy a warehouse's llm_cache to one Parquet file every worker can read; returns
    the number of entries."""
    with Warehouse(db) as warehouse:
        table = warehouse.con.execute(
            "SELECT cache_key, response_json, lenient, asks FROM llm_cache").fetch_arrow_table()
    write_atomically(table, path)
    return int(table.num_rows)


def cache_hits(snapshot: Path | None, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Snapshot entries for the given keys (pushed down into the Parquet scan), shaped as
    ``Warehouse.cache_lookup`` shapes them."""
    if snapshot is None:
        return {}
    wanted = pa.table({"key": pa.array(list(keys), type=pa.string())})
    con = duckdb.connect()
    try:
        con.register("wanted", wanted)
        rows = con.execute(
            "SELECT cache_key, response_json, lenient, asks FROM read_parquet(?) "
            "WHERE cache_key IN (SELECT key FROM wanted)", [str(snapshot)]).fetchall()
    finally:
        con.close()
    return {key: {"response": json.loads(response), "lenient": bool(lenient), "asks": asks}
            for key, response, lenient, asks in rows}


# -- reading and merging ---------------------------------------------------------------


def parquet_views(con: duckdb.DuckDBPyConnection, out: Path) -> list[str]:
    """Create one view per warehouse table over its partitions (with a ``shard`` column
    from the directory names); returns the tables that have files."""
    made = []
    for table in WRITABLE_TABLES:
        if not has_partitions(out, table):
            continue
        con.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM {_source(out, table)}")
        made.append(table)
    return made


def merge_run(db: Path, out: Path, run_id: str, *, params: dict[str, Any],
              inputs: Sequence[str], papersift_version: str) -> RunCounts:
    """Copy a sharded run's partitions into a warehouse in one transaction: keyed rows
    already stored are kept, item rows come only with new extractions (as in
    ``Warehouse.write``), and the run gets its ``runs`` row. A run merges once: merging
    it again is an error, so calls and failures are never doubled."""
    with Warehouse(db) as warehouse:
        con = warehouse.con
        if con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchone():
            raise MergeError(f"{db}: run {run_id} is already in the warehouse")
        present = [t for t in WRITABLE_TABLES if has_partitions(out, t)]
        if "run_papers" not in present:
            raise MergeError(f"{out}: no extraction partitions; run the shards first")
        with transaction(con):
            for table in present:
                _merge_table(warehouse, out, table)
            counts = _run_counts(con, out, run_id)
            warehouse.start_run(run_id, **_run_provenance(con, out, run_id), params=params,
                                inputs=list(inputs), papersift_version=papersift_version)
            warehouse.finish_run(run_id, "finished", counts)
        con.execute("CHECKPOINT")
    return counts


def _merge_table(warehouse: Warehouse, out: Path, table: str) -> None:
    columns = ", ".join(warehouse.columns(table))
    source = _source(out, table)
    keys = row_key(table)
    if table == "extractions":
        # Remember which extractions are new: only they bring their item rows.
        warehouse.con.execute(
            f"CREATE OR REPLACE TEMP TABLE _new_extractions AS SELECT DISTINCT extraction_id "
            f"FROM {source} WHERE extraction_id NOT IN (SELECT extraction_id FROM extractions)")
    if keys and table in NEWEST_WINS:  # a shard's newer cached answer replaces the stored one
        warehouse.con.execute(newest_wins_update(
            table, warehouse.columns(table), f"(SELECT * EXCLUDE (shard) FROM {source})"))
    if keys:
        key_list = ", ".join(keys)
        join = " AND ".join(f"t.{k} = i.{k}" for k in keys)
        sql = (f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {source} i "
               f"WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE {join}) "
               f"QUALIFY row_number() OVER (PARTITION BY {key_list} ORDER BY shard) = 1")
    elif table in child_tables():
        sql = (f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {source} "
               "WHERE extraction_id IN (SELECT extraction_id FROM _new_extractions)")
    else:
        sql = f"INSERT INTO {table} ({columns}) SELECT {columns} FROM {source}"
    warehouse.con.execute(sql)


def _run_provenance(con: duckdb.DuckDBPyConnection, out: Path, run_id: str) -> dict[str, Any]:
    """What produced the run's answers, read back from its extractions (as a run stores)."""
    if not has_partitions(out, "extractions"):
        return {}
    glob = partition_glob(out, "extractions").replace("'", "''")
    rows = con.execute(f"SELECT DISTINCT {', '.join(PROVENANCE)} FROM read_parquet('{glob}') "
                       "WHERE run_id = ?", [run_id]).fetchall()
    return dict(zip(PROVENANCE, rows[0], strict=True)) if len(rows) == 1 else {}


def _run_counts(con: duckdb.DuckDBPyConnection, out: Path, run_id: str) -> RunCounts:
    glob = partition_glob(out, "run_papers").replace("'", "''")
    calls = partition_glob(out, "calls").replace("'", "''")
    outcomes = con.execute(
        f"SELECT count(*) AS n_abstracts, "
        f"count(*) FILTER (outcome = 'extracted') AS n_extracted, "
        f"count(*) FILTER (outcome = 'cached') AS n_cached, "
        f"count(*) FILTER (outcome = 'failed') AS n_failed "
        f"FROM read_parquet('{glob}') WHERE run_id = ?", [run_id])
    row = outcomes.fetchone()
    names = [column[0] for column in outcomes.description]
    tokens = con.execute(
        f"SELECT coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0) "
        f"FROM read_parquet('{calls}') WHERE run_id = ?", [run_id]).fetchone()
    assert row is not None and tokens is not None
    return RunCounts(**dict(zip(names, row, strict=True)), prompt_tokens=int(tokens[0]),
                     completion_tokens=int(tokens[1]))
