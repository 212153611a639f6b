"""A full disk and a read-only export target give one clear message naming the file and
what to do, leave no partial file, and lose nothing: a rerun elsewhere completes. Needs a
tiny tmpfs (`mount -t tmpfs -o size=3m`); skipped where mounting is not permitted."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from papersift.testing.sim import fault_profile, running
from tests.conftest import CORPUS

PAPERSIFT = Path(sys.executable).parent / "papersift"


def _mount(path: Path, options: str) -> bool:
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                          capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def tiny(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "tiny"
    if os.geteuid() != 0 or not _mount(folder, "size=3m"):
        pytest.skip("mounting a tmpfs is not permitted here")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=False)


def _papersift(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PAPERSIFT_"))}
    return subprocess.run([str(PAPERSIFT), *args], env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def _one_clear_message(done: subprocess.CompletedProcess[str], file: Path) -> str:
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "libpython" not in done.stderr
    assert str(file) in errors[0]
    return errors[0]


def test_a_full_disk_is_one_message_and_a_rerun_elsewhere_loses_nothing(
        tiny: Path, tmp_path: Path) -> None:
    with running(fault_profile()) as server:
        endpoint = ["--base-url", server.base_url, "--model", "fault"]
        full = _papersift(["run", str(CORPUS), "--db", str(tiny / "w.duckdb"), *endpoint])
        message = _one_clear_message(full, tiny / "w.duckdb")
        assert "disk is full" in message and "rerun" in message
        elsewhere = _papersift(["run", str(CORPUS), "--db", str(tmp_path / "w.duckdb"),
                                *endpoint])
    assert elsewhere.returncode == 0, elsewhere.stderr[-2000:]
    assert "63 abstracts: 63 extracted" in elsewhere.stdout
    export = _papersift(["export", "--db", str(tmp_path / "w.duckdb"), "--format", "csv",
                         "--out", str(tiny / "out")])
    if export.returncode == 0:  # it fit: fill the disk and export again
        (tiny / "filler").write_bytes(b"\0" * (3 * 1024 * 1024 - 8192))
        export = _papersift(["export", "--db", str(tmp_path / "w.duckdb"), "--format",
                             "parquet", "--out", str(tiny / "out")])
    message = _one_clear_message(export, tiny / "out")
    assert "disk is full" in message
    # (a folder the failed export made is gone with it)
    assert not [p for p in (tiny / "out").glob("*") if p.name.endswith(".partial")]


def test_a_read_only_export_target_is_one_message(tmp_path: Path) -> None:
    target = tmp_path / "ro"
    if os.geteuid() != 0 or not _mount(target, "size=1m,ro"):
        pytest.skip("mounting a tmpfs is not permitted here")
    try:
        db = tmp_path / "w.duckdb"
        assert _papersift(["ingest", str(CORPUS), "--db", str(db)]).returncode == 0
        done = _papersift(["export", "--db", str(db), "--out", str(target / "x")])
        assert "cannot write there" in _one_clear_message(done, target / "x")
    finally:
        subprocess.run(["umount", str(target)], check=False)


@pytest.mark.parametrize("seed", [1])
def test_a_corrupted_block_is_one_message(tmp_path: Path, seed: int) -> None:
    import random

    db = tmp_path / "w.duckdb"
    assert _papersift(["ingest", str(CORPUS), "--db", str(db)]).returncode == 0
    data = bytearray(db.read_bytes())
    rng = random.Random(seed)
    for block in range(1, len(data) // 262144):  # every data block past the header
        for _ in range(20):
            data[block * 262144 + rng.randrange(4096)] = rng.randrange(256)
    db.write_bytes(bytes(data))
    done = _papersift(["sql", "SELECT sum(length(text)) FROM papers", "--db", str(db)])
    message = _one_clear_message(done, db)  # every block is damaged: it cannot pass
    assert "restore a copy" in message, message
