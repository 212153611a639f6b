"""Two papersift processes on one warehouse: the second waits a bounded time, then exits
with a message naming the file and the process that holds it; waiting long enough, it
runs after the first. Nothing is corrupted either way."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from papersift.extract.interface.cli import cli
from papersift.extract.runs.ingest_files import ingest
from papersift.testing.faultcheck import integrity
from papersift.testing.sim import fault_profile, running
from papersift.warehouse.db import LOCK_WAIT_ENV
from papersift.warehouse.repository import Repository
from tests.conftest import CORPUS

PAPERSIFT = Path(sys.executable).parent / "papersift"


def test_second_process_waits_or_says_who_holds_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    abstracts = [paper.text for paper in ingest([CORPUS]).papers][:3]
    corpus = tmp_path / "three.txt"
    corpus.write_text("\n\n".join(abstracts) + "\n", encoding="utf-8")
    db = tmp_path / "shared.duckdb"
    with running(fault_profile(latency_s=0.7)) as server:
        endpoint = ["--base-url", server.base_url, "--model", "fault-server"]
        holder = subprocess.Popen([str(PAPERSIFT), "run", str(corpus), "--db", str(db),
                                   *endpoint], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not server.log and holder.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.log, "the first run never reached the model"  # it holds the file now
        runner = CliRunner()
        monkeypatch.setenv(LOCK_WAIT_ENV, "0.3")
        second = runner.invoke(cli, ["run", str(corpus), "--db", str(db), *endpoint])
        reader = runner.invoke(cli, ["sql", "SELECT count(*) FROM papers", "--db", str(db)])
        for result in (second, reader):
            assert result.exit_code == 1, result.output
            assert f"{db} is in use" in result.output
            assert f"another papersift process (PID {holder.pid}" in result.output
            assert "waited 0.3s" in result.output and "Traceback" not in result.output
        monkeypatch.setenv(LOCK_WAIT_ENV, "60")
        waiting = runner.invoke(cli, ["run", str(corpus), "--db", str(db), *endpoint])
        out, _ = holder.communicate(timeout=60)
        assert holder.returncode == 0 and "3 abstracts: 3 extracted" in out.decode()
        assert waiting.exit_code == 0, waiting.output
        assert "3 abstracts: 0 extracted, 3 from cache, 0 failed" in waiting.output
        assert len(server.log) == 3  # the waiting run paid for nothing
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert integrity(Repository(con)) == []
        statuses = con.execute("SELECT status, count(*) FROM runs GROUP BY 1").fetchall()
    finally:
        con.close()
    assert statuses == [("finished", 2)]  # the refused run never started one
