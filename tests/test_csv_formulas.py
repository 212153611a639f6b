"""CSV for spreadsheets never carries a live formula (issue 28, moderate): a text cell
that starts with =, +, -, @ (and is not a plain number) is written with a leading
apostrophe in export, sql/query and corrections CSV; numbers and other formats stay."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq

from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.testing.mock import FakeModel
from papersift.warehouse.cells import sheet_safe
from papersift.warehouse.export import export
from papersift.warehouse.query import run_sql
from tests.test_pipeline import ENDPOINT

HOSTILE_TITLE = '=HYPERLINK("http://evil.example","click")'


def test_cells_that_a_spreadsheet_would_run_are_neutralised() -> None:
    for formula in ("=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1", "=HYPERLINK()"):
        assert sheet_safe(formula) == "'" + formula
    for plain in ("-3.5", "+12%", "1e-3", "-1,000", "GPT-4", "a=b", 7, None, -2.5):
        assert sheet_safe(plain) == plain


def test_exports_and_sql_csv_carry_no_formula(tmp_path: Path) -> None:
    source = tmp_path / "conf.jsonl"
    source.write_text(json.dumps({
        "id": "x1", "title": HOSTILE_TITLE,
        "abstract": "We propose a method for counting and report that it reaches 91.5% "
                    "accuracy on the standard test set, 3 points above the baseline."}) + "\n",
        encoding="utf-8")
    db = tmp_path / "w.duckdb"
    run_inputs([str(source)], RunSettings(db=db), transport=FakeModel().transport(),
               endpoint=ENDPOINT)
    out = tmp_path / "csv"
    export(db, out, "csv")
    with (out / "papers.csv").open(encoding="utf-8", newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["title"] == "'" + HOSTILE_TITLE
    assert row["chars"].isdigit()  # numbers are left as they are
    assert run_sql(db, "SELECT title FROM sources").to_csv().splitlines()[1] == \
        '"\'=HYPERLINK(""http://evil.example"",""click"")"'
    export(db, tmp_path / "pq", "parquet")  # other formats keep the value as stored
    assert pq.read_table(tmp_path / "pq" / "papers.parquet").column("title").to_pylist() == \
        [HOSTILE_TITLE]
