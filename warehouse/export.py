"""Exports for spreadsheets (CSV) and code (Parquet, JSONL), from a read-only connection."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from papersift.warehouse.db import WarehouseError, connect

FORMATS = ("csv", "parquet", "jsonl")

_ITEM = "evidence, char_start, char_end, alignment, align_score"
# Long tables: one row per item of each paper's latest extraction.
_LONG = {
    "contribution_types": "SELECT paper_id, idx, type FROM contribution_types",
    "tasks": f"SELECT paper_id, idx, name, {_ITEM} FROM tasks",
    "methods": (
        f"SELECT paper_id, idx, name, expansion, {{aliases}} AS aliases, {_ITEM} FROM methods"
    ),
    "benchmarks": f"SELECT paper_id, idx, name, kind, introduced, {_ITEM} FROM benchmarks",
    "gains": (
        "SELECT paper_id, idx, metric, value, unit, kind, baseline, dataset, value_in_evidence, "
        "metric_alignment, baseline_alignment, dataset_alignment, "
        f"{_ITEM} FROM gains"
    ),
    "sources": "SELECT * FROM sources",
    "failures": "SELECT * FROM failures",
    "runs": "SELECT * EXCLUDE (params, inputs), CAST(params AS VARCHAR) AS params FROM runs",
}

_STRUCT_ITEM = (
    "'evidence': evidence, 'char_start': char_start, 'char_end': char_end, "
    "'alignment': alignment"
)
_JSONL = f"""
SELECT
    p.paper_id,
    p.text,
    (SELECT list({{'file': s.file, 'position': s.position, 'line': s.line,
                  'collection': s.collection, 'venue': s.venue, 'year': s.year}}
                 ORDER BY s.file, s.position)
     FROM sources s WHERE s.paper_id = p.paper_id) AS sources,
    l.extraction_id,
    l.model,
    l.lenient,
    (SELECT list(c.type ORDER BY c.idx) FROM contribution_types c
     WHERE c.extraction_id = l.extraction_id) AS contribution_types,
    (SELECT list({{'name': name, {_STRUCT_ITEM}}} ORDER BY idx) FROM tasks t
     WHERE t.extraction_id = l.extraction_id) AS tasks,
    (SELECT list({{'name': name, 'expansion': expansion, 'aliases': aliases,
                  {_STRUCT_ITEM}}} ORDER BY idx) FROM methods m
     WHERE m.extraction_id = l.extraction_id) AS methods,
    (SELECT list({{'name': name, 'kind': kind, 'introduced': introduced,
                  {_STRUCT_ITEM}}} ORDER BY idx) FROM benchmarks b
     WHERE b.extraction_id = l.extraction_id) AS benchmarks,
    (SELECT list({{'metric': metric, 'value': value, 'unit': unit, 'kind': kind,
                  'baseline': baseline, 'dataset': dataset,
                  'value_in_evidence': value_in_evidence, {_STRUCT_ITEM}}}
                 ORDER BY idx) FROM gains g
     WHERE g.extraction_id = l.extraction_id) AS claimed_gains
FROM papers p
LEFT JOIN latest_extractions l USING (paper_id)
ORDER BY p.paper_id
"""


@dataclass(frozen=True)
class Exported:
    path: Path
    rows: int


def _copy(con: duckdb.DuckDBPyConnection, query: str, path: Path, options: str) -> int:
    literal = str(path).replace("'", "''")
    con.execute(f"COPY ({query}) TO '{literal}' ({options})")
    count = con.execute(f"SELECT count(*) FROM ({query})").fetchone()
    return int(count[0]) if count else 0


def export(db_path: str | Path, out_dir: str | Path, fmt: str) -> list[Exported]:
    """Write the wide paper table and every long table in one format; returns the files."""
    if fmt not in FORMATS:
        raise WarehouseError(f"unknown export format {fmt!r}; choose one of {FORMATS}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    con = connect(db_path, read_only=True)
    written: list[Exported] = []
    try:
        if fmt == "jsonl":
            path = out / "papers.jsonl"
            written.append(Exported(path, _copy(con, _JSONL, path, "FORMAT JSON")))
            return written
        options = "FORMAT CSV, HEADER" if fmt == "csv" else "FORMAT PARQUET"
        aliases = "array_to_string(aliases, '; ')" if fmt == "csv" else "aliases"
        tables = {"papers": "SELECT * FROM paper_summary ORDER BY paper_id"}
        tables.update({name: sql.replace("{aliases}", aliases) for name, sql in _LONG.items()})
        for name, query in tables.items():
            path = out / f"{name}.{fmt}"
            written.append(Exported(path, _copy(con, query, path, options)))
    finally:
        con.close()
    return written
