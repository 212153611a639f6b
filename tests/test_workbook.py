"""`papersift export --format xlsx`: the workbook's sheets, frozen headers and row counts,
read back by LibreOffice headless (`soffice --convert-to csv`, Debian's libreoffice-calc).
The LibreOffice check is skipped where soffice is missing, unless PAPERSIFT_REQUIRE_SOFFICE
is set, as .ci/run does: there a missing LibreOffice fails."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from papersift.extract.interface.cli import cli
from papersift.warehouse.workbook import WORKBOOK_NAME
from tests.conftest import stored_rows

# Every sheet, in the workbook's order, and the view its rows come from.
EXPECTED = {"papers": "paper_summary", "methods": "methods", "benchmarks": "benchmarks",
            "gains": "gains", "artifacts": "artifacts", "leaderboard": "leaderboard",
            "entities": "entities"}
# LibreOffice's CSV filter: comma, double quote, UTF-8, first line 1, every sheet (-1).
CSV_FILTER = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1"


@pytest.fixture(scope="module")
def workbook(corpus_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("xlsx")
    result = CliRunner().invoke(cli, ["export", "--db", str(corpus_db), "--format", "xlsx",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "#entities" in result.output
    return out / WORKBOOK_NAME


def _expected_rows(db: Path) -> dict[str, int]:
    return {sheet: int(stored_rows(db, f"SELECT count(*) FROM {view}")[0][0])
            for sheet, view in EXPECTED.items()}


def test_workbook_has_every_sheet_with_a_frozen_header(workbook: Path) -> None:
    with zipfile.ZipFile(workbook) as archive:
        book = archive.read("xl/workbook.xml").decode()
        assert re.findall(r'<sheet name="([^"]+)"', book) == list(EXPECTED)
        for number in range(1, len(EXPECTED) + 1):
            sheet = archive.read(f"xl/worksheets/sheet{number}.xml").decode()
            assert 'ySplit="1"' in sheet and 'state="frozen"' in sheet
            assert "<cols>" in sheet and "autoFilter" in sheet


def test_libreoffice_reads_the_expected_sheets_and_rows(workbook: Path, corpus_db: Path,
                                                        tmp_path: Path) -> None:
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        if os.environ.get("PAPERSIFT_REQUIRE_SOFFICE"):
            pytest.fail("PAPERSIFT_REQUIRE_SOFFICE is set but soffice is not installed "
                        "(apt-get install libreoffice-calc; .ci/install-soffice)")
        pytest.skip("LibreOffice (soffice) is not installed")
    profile = tmp_path / "profile"  # its own profile: no clash with another soffice
    subprocess.run([soffice, f"-env:UserInstallation=file://{profile}", "--headless",
                    "--convert-to", CSV_FILTER, "--outdir", str(tmp_path), str(workbook)],
                   check=True, capture_output=True, timeout=240)
    expected = _expected_rows(corpus_db)
    assert all(expected[s] > 0 for s in ("papers", "methods", "entities", "leaderboard"))
    for sheet, rows in expected.items():
        path = tmp_path / f"{workbook.stem}-{sheet}.csv"
        assert path.is_file(), f"LibreOffice wrote no sheet {sheet}"
        with path.open(encoding="utf-8", newline="") as handle:
            table = list(csv.reader(handle))
        assert len(table) - 1 == rows, sheet
        if sheet == "entities":
            header = table[0]
            aliases = [row[header.index("aliases")] for row in table[1:]]
            assert any("; " in cell for cell in aliases)  # lists joined with '; '
        if sheet == "gains":
            assert {"canonical_metric", "canonical_dataset"} <= set(table[0])
