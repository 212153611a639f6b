"""Fuzzing through `papersift run`: more than 10,000 seeded hostile records (tests/hostile.py)
in text, JSONL, CSV and Parquet files, mixed with the bundled corpus, against the
hand-written fault server on loopback. The run must finish without a traceback, store
every good abstract, and leave a failure row naming the file and place of every bad
record."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from papersift.extract.runs.ingest_files import ingest
from papersift.testing.sim import fault_profile, running
from tests.conftest import CORPUS
from tests.hostile import generate

PAPERSIFT = Path(sys.executable).parent / "papersift"
SEED = 14
PER_FILE = 800  # 13 shapes of file: 10,402 hostile records


def _covered(con: duckdb.DuckDBPyConnection, file: str, run_id: str) -> set[int]:
    """Positions of ``file`` that a failure row accounts for: its own, or (for a record
    stored as a paper) the run's failure of that paper."""
    own = {row[0] for row in con.execute(
        "SELECT position FROM failures WHERE file = ? AND position IS NOT NULL",
        [file]).fetchall()}
    via_paper = {row[0] for row in con.execute(
        "SELECT s.position FROM sources s JOIN failures f ON f.paper_id = s.paper_id "
        "AND f.run_id = ? WHERE s.file = ?", [run_id, file]).fetchall()}
    return own | via_paper


def test_hostile_records_never_stop_a_run(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    written = generate(inputs / "hostile", SEED, PER_FILE)
    assert written.records >= 10_000
    shutil.copytree(CORPUS, inputs / "corpus")
    good = {paper.paper_id for paper in ingest([CORPUS]).papers}
    db = tmp_path / "w.duckdb"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PAPERSIFT_"))}
    with running(fault_profile()) as server:
        done = subprocess.run(
            [str(PAPERSIFT), "run", str(inputs), "--db", str(db), "--base-url",
             server.base_url, "--model", "fault", "--concurrency", "8"],
            env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode in (0, 2), done.stderr[-3000:]
    assert "Traceback" not in done.stderr + done.stdout
    con = duckdb.connect(str(db), read_only=True)
    try:
        run_id = con.execute("SELECT run_id FROM runs").fetchone()[0]  # type: ignore[index]
        status = con.execute("SELECT status FROM runs").fetchone()[0]  # type: ignore[index]
        assert status == "finished"
        extracted = {row[0] for row in con.execute(
            "SELECT paper_id FROM latest_extractions").fetchall()}
        assert extracted == good  # every good abstract, and nothing hostile, was extracted
        unplaced = con.execute("SELECT count(*) FROM failures WHERE file IS NULL AND "
                               "stage = 'ingest'").fetchone()[0]  # type: ignore[index]
        assert unplaced == 0
        for path, records in written.files.items():
            file = str(path.resolve())
            whole = con.execute("SELECT count(*) FROM failures WHERE file = ? AND "
                                "position IS NULL", [file]).fetchone()[0]  # type: ignore[index]
            if whole:  # refused as a whole (binary, duplicate columns): one row says so
                continue
            missing = set(range(1, records + 1)) - _covered(con, file, run_id)
            assert not missing, (path.name, sorted(missing)[:10])
    finally:
        con.close()
