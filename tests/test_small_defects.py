"""Smaller promises: ingest says so (and exits 2) when nothing was read, --max-chars must
be positive, an unreadable subfolder is reported, `cache stats` only reads, and the report
never inlines a text too long to extract."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from papersift.extract.interface.cli import cli
from papersift.extract.runs.ingest_files import ingest
from papersift.report.render import write_report
from papersift.warehouse import Warehouse
from papersift.warehouse.report import SHOWN_TEXT_CHARS
from papersift.warehouse.store import Batch
from tests.conftest import CORPUS


def test_ingest_of_nothing_exits_non_zero(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.md").write_text("not an input", encoding="utf-8")
    result = CliRunner().invoke(cli, ["ingest", str(empty), "--db", str(tmp_path / "w.db")])
    assert result.exit_code == 2
    assert "no abstract was read" in result.output


@pytest.mark.parametrize("command", ["ingest", "run"])
@pytest.mark.parametrize("value", ["-1", "0"])
def test_max_chars_must_be_positive(tmp_path: Path, command: str, value: str) -> None:
    result = CliRunner().invoke(cli, [command, str(CORPUS), "--max-chars", value,
                                      "--db", str(tmp_path / "w.db")])
    assert result.exit_code == 2 and "--max-chars" in result.output


def test_an_unreadable_subfolder_is_reported(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.txt").write_text("one two three four five six\n", encoding="utf-8")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "b.txt").write_text("seven eight nine ten eleven twelve\n", encoding="utf-8")
    real = os.scandir

    def scandir(path: Any = ".") -> Iterator[os.DirEntry[str]]:
        if Path(path) == locked:  # root may read anything: act out a folder it may not
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = ingest([tmp_path])
    assert len(result.papers) == 1
    assert [(p.reason, p.file) for p in result.problems] == [("unreadable", str(locked))]
    assert "Permission denied" in result.problems[0].message


def test_cache_stats_only_reads(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with Warehouse(db):
        pass
    holder = subprocess.Popen(  # another process holds the file read-only
        [sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1], "
         "read_only=True); print('ready', flush=True); sys.stdin.read()", str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        result = CliRunner().invoke(cli, ["cache", "stats", "--db", str(db)])
        assert result.exit_code == 0, result.output
        assert '"entries": 0' in result.output
    finally:
        holder.communicate("", timeout=30)


def test_the_report_does_not_inline_a_too_long_text(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    huge = "word " * 200_000  # 1 MB: stored, never extracted (too_long)
    with Warehouse(db) as warehouse:
        batch = Batch()
        batch.add("papers", {"paper_id": "sha256:huge", "text": huge, "chars": len(huge),
                             "text_sha256": "sha256:t", "first_seen": datetime(2026, 1, 1)})
        warehouse.write(batch)
    out = tmp_path / "report.html"
    write_report(db, out)
    page = out.read_text(encoding="utf-8")
    assert "word " * (SHOWN_TEXT_CHARS // 5) in page  # its beginning is shown
    assert "word " * (2 * SHOWN_TEXT_CHARS // 5) not in page  # the rest is not
    assert "more characters not shown" in page
