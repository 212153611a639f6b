"""Exports for spreadsheets (CSV) and code (Parquet, JSONL), from a read-only connection."""

from __future__ import annotations

import codecs
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from papersift.schemas.fields import BUILTIN_FIELDS, CUSTOM_VIEW, FieldSpec
from papersift.warehouse.cells import SHEET_SAFE_MACRO, sheet_safe_query
from papersift.warehouse.choices import FORMATS
from papersift.warehouse.custom import CUSTOM_LONG, has_custom_items, wide_papers
from papersift.warehouse.db import WarehouseError, connect, missing_warehouse, storage_failure
from papersift.warehouse.views import stored_fields

_ITEM = "evidence, char_start, char_end, alignment, align_score"
_STRUCT_ITEM = (
    "'evidence': evidence, 'char_start': char_start, 'char_end': char_end, "
    "'alignment': alignment"
)


def _long_query(spec: FieldSpec) -> str:
    """The long export of one field: its declared columns (a list column is ``{aliases}``,
    joined for CSV), then the evidence."""
    names = [f"{{{c.name}}} AS {c.name}" if c.sql.endswith("[]") else c.name
             for c in spec.columns]
    evidence = [_ITEM] if spec.grounded else []
    late = [c.name for c in spec.appended]
    columns = ["paper_id", "idx", *names, *late, *spec.view_columns, *evidence]
    return f"SELECT {', '.join(columns)} FROM {spec.view}"


def _jsonl_column(spec: FieldSpec) -> str:
    """One field of a paper's JSON object: a list of its items, in order."""
    where = f"WHERE x.extraction_id = l.extraction_id) AS {spec.name}"
    if not spec.grounded:
        return f"(SELECT list(x.{spec.columns[0].name} ORDER BY x.idx) FROM {spec.view} x {where}"
    members = ", ".join(f"'{c.name}': {c.name}" for c in spec.columns)
    return (f"(SELECT list({{{members}, {_STRUCT_ITEM}}} ORDER BY idx) FROM {spec.view} x "
            f"{where}")


# Long tables: one row per item of each paper's latest extraction; one per field of the
# registry, then the user-defined fields' items (written when there are any).
_LONG = {
    **{spec.export: _long_query(spec) for spec in BUILTIN_FIELDS},
    "sources": "SELECT * FROM sources",
    "failures": "SELECT * FROM failures",
    "runs": "SELECT * EXCLUDE (params, inputs), CAST(params AS VARCHAR) AS params FROM runs",
}
_CUSTOM_JSONL = (f"(SELECT list({{'field': field, 'value': value, 'unit': unit, "
                 f"{_STRUCT_ITEM}}} ORDER BY field, idx) FROM {CUSTOM_VIEW} x "
                 "WHERE x.extraction_id = l.extraction_id) AS custom")


def _jsonl(custom: bool, stored: tuple[FieldSpec, ...] = BUILTIN_FIELDS) -> str:
    fields = [_jsonl_column(spec) for spec in stored] + ([_CUSTOM_JSONL] if custom else [])
    return f"""
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
    {(',' + chr(10) + '    ').join(fields)}
FROM papers p
LEFT JOIN latest_extractions l USING (paper_id)
ORDER BY p.paper_id
"""


@dataclass(frozen=True)
class Exported:
    path: Path
    rows: int


def _with_bom(partial: Path) -> None:
    """Put a UTF-8 byte-order mark before the file's text: Excel then reads it as UTF-8
    (without one, it takes CJK and accented text for the local code page)."""
    marked = partial.with_name(f"{partial.name}.bom")
    try:
        with marked.open("wb") as target, partial.open("rb") as source:
            target.write(codecs.BOM_UTF8)
            shutil.copyfileobj(source, target, 1 << 20)
        os.replace(marked, partial)
    finally:
        marked.unlink(missing_ok=True)


def _copy(con: duckdb.DuckDBPyConnection, query: str, path: Path, options: str,
          bom: bool = False) -> int:
    """COPY into a partial file beside ``path``, then rename it over: a full disk or a
    read-only place leaves no half-written export (the partial file is removed)."""
    partial = path.with_name(f".{path.name}.partial")
    literal = str(partial).replace("'", "''")
    try:
        con.execute(f"COPY ({query}) TO '{literal}' ({options})")
        if bom:
            _with_bom(partial)
        os.replace(partial, path)
    except (duckdb.Error, OSError) as error:
        partial.unlink(missing_ok=True)
        raise WarehouseError(storage_failure(error, path)) from None
    count = con.execute(f"SELECT count(*) FROM ({query})").fetchone()
    return int(count[0]) if count else 0


def export(db_path: str | Path, out_dir: str | Path, fmt: str, *,
           bom: bool = False) -> list[Exported]:
    """Write the wide paper table and every long table in one format; returns the files.
    ``bom``: CSV with a UTF-8 byte-order mark, for Excel. A failed export leaves no folder
    it made."""
    if fmt not in FORMATS:
        raise WarehouseError(f"unknown export format {fmt!r}; choose one of {FORMATS}")
    if bom and fmt != "csv":
        raise WarehouseError(f"the byte-order mark (--excel) is for CSV, not {fmt}")
    if not Path(db_path).exists():
        raise WarehouseError(missing_warehouse(Path(db_path)))
    out = Path(out_dir)
    made = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise WarehouseError(storage_failure(error, out)) from None
    try:
        return _write(db_path, out, fmt, bom)
    except BaseException:
        if made:
            shutil.rmtree(out, ignore_errors=True)
        raise


def _write(db_path: str | Path, out: Path, fmt: str, bom: bool) -> list[Exported]:
    if fmt == "xlsx":
        from papersift.warehouse.workbook import write_workbook

        return [Exported(path, rows) for path, rows in write_workbook(db_path, out)]
    con = connect(db_path, read_only=True)
    written: list[Exported] = []
    try:
        custom = has_custom_items(con)
        stored = stored_fields(con)  # an optional field no run enabled is left out
        if fmt == "jsonl":
            path = out / "papers.jsonl"
            written.append(Exported(path, _copy(con, _jsonl(custom, stored), path,
                                                "FORMAT JSON")))
            return written
        options = "FORMAT CSV, HEADER" if fmt == "csv" else "FORMAT PARQUET"
        aliases = "array_to_string(aliases, '; ')" if fmt == "csv" else "aliases"
        tables = {"papers": wide_papers(con)}
        skipped = {spec.export for spec in BUILTIN_FIELDS if spec not in stored}
        tables.update({name: sql.replace("{aliases}", aliases) for name, sql in _LONG.items()
                       if name not in skipped})
        if custom:
            tables[CUSTOM_VIEW] = CUSTOM_LONG
        if fmt == "csv":
            con.execute(SHEET_SAFE_MACRO)
        for name, query in tables.items():
            path = out / f"{name}.{fmt}"
            shown = sheet_safe_query(query) if fmt == "csv" else query
            written.append(Exported(path, _copy(con, shown, path, options, bom)))
    finally:
        con.close()
    return written
