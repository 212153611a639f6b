"""`papersift export --format xlsx`: one workbook, a sheet per table, for spreadsheets.

Sheets: papers (a column per user field too), a sheet per field that declares one in the
registry (methods, benchmarks, gains), leaderboard,
entities, and custom (the user fields' items) when a run declared some. Each has a frozen
header row, an autofilter, column widths fitted to the content (capped), and lists joined
with '; '. Written with XlsxWriter in constant-memory mode, row by row.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any

import xlsxwriter

from papersift.warehouse.custom import CUSTOM_LONG, has_custom_items, wide_papers
from papersift.warehouse.db import connect
from papersift.warehouse.views import stored_fields

WORKBOOK_NAME = "papersift.xlsx"
MAX_WIDTH = 60  # characters; longer cells wrap instead of widening the column
# Excel's limit on one cell's text.
MAX_CELL_CHARS = 32_767
# The sheets after the fields' own (see _sheets).
SHEETS = {
    "leaderboard": ("SELECT benchmark, metric, direction, method, score, improvement, "
                    "efficiency, unit, result_kind, baseline, paper_id, evidence, "
                    "mention_start, mention_end FROM leaderboard "
                    "ORDER BY benchmark, metric, paper_id"),
    "entities": ("SELECT entity_id, kind, canonical, keys, aliases, direction, metric_kind "
                 "FROM entities ORDER BY kind, canonical, entity_id"),
}


def _cell(value: Any) -> Any:
    if isinstance(value, list):
        return "; ".join("" if item is None else str(item) for item in value)
    if isinstance(value, dict):
        return str(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        return value[:MAX_CELL_CHARS - 1] + "…"
    return value


def _sheets(con: Any) -> dict[str, str]:
    """The workbook's sheets: the wide paper table with the user fields' columns, a sheet
    per stored field that declares one (FieldSpec.sheet), the other built-in sheets, and
    the user fields' items when there are any."""
    fields = {spec.view: f"SELECT paper_id, idx, {', '.join(spec.sheet)} FROM {spec.view} "
              "ORDER BY paper_id, idx" for spec in stored_fields(con) if spec.sheet}
    sheets = {"papers": wide_papers(con, text_as="abstract"), **fields, **SHEETS}
    if has_custom_items(con):
        sheets["custom"] = f"{CUSTOM_LONG} ORDER BY paper_id, field, idx"
    return sheets


def write_workbook(db_path: str | Path, out_dir: Path) -> list[tuple[Path, int]]:
    """Write ``papersift.xlsx`` into ``out_dir``; (path, data rows) per sheet."""
    path = out_dir / WORKBOOK_NAME
    con = connect(db_path, read_only=True)
    counts: list[tuple[Path, int]] = []
    workbook = xlsxwriter.Workbook(str(path), {"constant_memory": True,
                                               "strings_to_urls": False,
                                               "strings_to_formulas": False,
                                               "nan_inf_to_errors": True})
    try:
        header = workbook.add_format({"bold": True, "bg_color": "#E8EEF7", "bottom": 1})
        wrap = workbook.add_format({"text_wrap": True, "valign": "top"})
        for sheet_name, query in _sheets(con).items():
            cursor = con.execute(query)
            columns = [d[0] for d in cursor.description]
            sheet = workbook.add_worksheet(sheet_name)
            widths = [len(column) + 2 for column in columns]
            rows = 0
            sheet.write_row(0, 0, columns, header)
            while batch := cursor.fetchmany(4096):
                for row in batch:
                    rows += 1
                    values = [_cell(value) for value in row]
                    for col, value in enumerate(values):
                        if value is None:
                            continue
                        width = len(str(value)) + 2
                        if width > MAX_WIDTH:
                            sheet.write(rows, col, value, wrap)
                        else:
                            sheet.write(rows, col, value)
                        widths[col] = max(widths[col], min(width, MAX_WIDTH))
            # constant-memory mode writes each row as it goes, so widths are known only
            # now; XlsxWriter stores column settings apart from rows, so setting them last
            # is still valid
            for col, width in enumerate(widths):
                sheet.set_column(col, col, width)
            sheet.freeze_panes(1, 0)
            sheet.autofilter(0, 0, max(rows, 1), len(columns) - 1)
            counts.append((path.with_name(f"{path.name}#{sheet_name}"), rows))
    finally:
        workbook.close()
        con.close()
    return counts
