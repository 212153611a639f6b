"""Results a person can read at 80 columns (issue 28): a wide result becomes one block
per record instead of 18 columns of 1-3 characters, long cells are clipped with an
ellipsis on one line, and CSV / JSON keep every value whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from papersift.extract.interface import cli_common, result_view
from papersift.extract.interface.cli import cli
from papersift.warehouse import Warehouse

WIDE = "SELECT " + ", ".join(f"'value {n}' AS column_{n}" for n in range(17)) + \
       ", repeat('long ', 60) AS notes"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(cli_common.out, "width", 80)
    path = tmp_path / "w.duckdb"
    Warehouse(path).close()
    return path


def _lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


def test_a_wide_result_is_shown_as_records_that_fit(db: Path) -> None:
    result = CliRunner().invoke(cli, ["sql", WIDE, "--db", str(db)])
    assert result.exit_code == 0, result.output
    lines = _lines(result.output)
    assert lines[0].startswith("-[ record 1 ]")
    assert any(line.startswith("column_16") and line.endswith("| value 16") for line in lines)
    notes = next(line for line in lines if line.startswith("notes"))
    assert notes.endswith("…")
    assert "--format csv or json" in result.output
    assert all(cell_len(line) <= 80 for line in lines)
    whole = CliRunner().invoke(cli, ["sql", WIDE, "--db", str(db), "--format", "json"])
    assert json.loads(whole.output)[0]["notes"] == "long " * 60


def test_a_narrow_result_stays_a_table_with_clipped_cells(db: Path) -> None:
    query = "SELECT 'sha256:' || repeat('ab', 40) AS paper_id, repeat('word ', 80) AS text, " \
            "7 AS n, 'a' || chr(10) || 'b' AS two_lines"
    result = CliRunner().invoke(cli, ["sql", query, "--db", str(db)])
    assert result.exit_code == 0, result.output
    lines = _lines(result.output)
    assert "record" not in result.output
    assert "n" in lines[1] and "two_lines" in lines[1]  # every column is there
    assert all(cell_len(line) <= 80 for line in lines)
    assert "…" in lines[3] and "a b" in lines[3]  # one line per row, clipped


def test_layout_rule() -> None:
    columns = [f"c{n}" for n in range(18)]
    row = [("x" * 30,) * 18]
    assert result_view.layout(columns, row, 80)[0] == "records"
    assert result_view.layout(columns, row, 400)[0] == "table"
    assert result_view.column_widths([40, 5, 90], 80) == [32, 5, 32]  # 80 - 4 rules, 3 wide
    assert result_view.clip("論文列表です", 7) == "論文列…"  # wide characters count twice
