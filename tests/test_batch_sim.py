"""Batch API mode against the simulated endpoint (bench/simendpoint.py, a hand-written
simulator on loopback): failed lines, cancelling, and a process killed with SIGKILL while
polling whose rerun resumes the same batch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from papersift.extract.access.endpoints import EndpointOptions
from papersift.extract.interface.app import (
    RunSettings,
    cancel_stored_batch,
    resume_batch,
    run_inputs,
)
from papersift.extract.runs.batch import BatchOptions, BatchProgress
from papersift.testing.sim import SimConfig, SimEndpoint
from tests.conftest import CORPUS, ROOT, stored_rows


def _settings(db: Path, base_url: str, poll: float = 0.05) -> RunSettings:
    return RunSettings(db=db, batch=BatchOptions(poll_interval_s=poll),
                       endpoint=EndpointOptions(provider="compatible", base_url=base_url,
                                                model="gpt-4o-mini", mode="tools"))


def _one(db: Path, sql: str) -> Any:
    return stored_rows(db, sql)[0][0]


def test_failed_lines_are_stored_as_failures_and_only_they_are_resubmitted(
        tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with SimEndpoint(SimConfig(batch_seconds=0.3, batch_failure_rate=0.1, seed=3)) as sim:
        _, first = run_inputs([str(CORPUS)], _settings(db, sim.base_url))
        assert 0 < first.n_failed < 63 and first.n_extracted + first.n_failed == 63
        reasons = {row[0] for row in stored_rows(db, "SELECT reason FROM failures")}
        assert reasons <= {"batch_server_error", "batch_http_400"}
        _, second = run_inputs([str(CORPUS)], _settings(db, sim.base_url))
        assert sim.stats()["batches"] == 2
    assert second.n_cached == first.n_extracted
    assert stored_rows(db, "SELECT request_count FROM batches ORDER BY submitted") == [
        (63,), (first.n_failed,)]
    assert _one(db, "SELECT count(*) FROM extractions") == first.n_extracted + \
        second.n_extracted


def test_a_cancelled_batch_stores_what_it_finished_and_fails_the_rest(
        tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"

    def interrupt(_progress: BatchProgress) -> None:
        raise KeyboardInterrupt

    with SimEndpoint(SimConfig(batch_seconds=3.0)) as sim:
        settings = _settings(db, sim.base_url)
        with pytest.raises(KeyboardInterrupt):
            run_inputs([str(CORPUS)], settings, on_poll=interrupt)
        (batch_id,) = [row[0] for row in stored_rows(db, "SELECT batch_id FROM batches")]
        assert cancel_stored_batch(settings, batch_id) in ("cancelling", "cancelled")
        summary = resume_batch(settings, batch_id)
    assert summary.n_abstracts == 63 and summary.n_extracted + summary.n_failed == 63
    assert summary.n_failed > 0
    assert stored_rows(db, "SELECT DISTINCT reason FROM failures") == [("batch_cancelled",)]
    assert _one(db, "SELECT status FROM batches") == "cancelled"


_CHILD = """
import sys
from pathlib import Path
from papersift.testing.sim import SimConfig, SimEndpoint
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.batch import BatchOptions
from papersift.extract.access.endpoints import EndpointOptions
db, base_url, marker, corpus = sys.argv[1:]
settings = RunSettings(db=Path(db), batch=BatchOptions(poll_interval_s=0.1),
                       endpoint=EndpointOptions(provider="compatible", base_url=base_url,
                                                model="gpt-4o-mini", mode="tools"))
run_inputs([corpus], settings, on_poll=lambda progress: Path(marker).touch())
"""


def test_a_run_killed_while_polling_resumes_the_same_batch(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    marker = tmp_path / "polled"
    with SimEndpoint(SimConfig(batch_seconds=2.0)) as sim:
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(db), sim.base_url, str(marker), str(CORPUS)],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        deadline = time.monotonic() + 60
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the child never polled its batch"
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert sim.stats()["batches"] == 1
        _, summary = run_inputs([str(CORPUS)], _settings(db, sim.base_url))
        assert sim.stats()["batches"] == 1, "the rerun resumed the batch, it did not resubmit"
    assert summary.line() == "63 abstracts: 63 extracted, 0 from cache, 0 failed"
    assert stored_rows(db, "SELECT status FROM runs ORDER BY started") == [
        ("interrupted",), ("finished",)]
    assert _one(db, "SELECT count(*) FROM extractions") == 63
    assert _one(db, "SELECT count(*) FROM llm_cache") == 63
    assert _one(db, "SELECT count(*) FROM calls") == 63
    assert _one(db, "SELECT count(*) FROM run_papers") == 63
    assert _one(db, "SELECT count(*) FROM batches WHERE collected IS NOT NULL") == 1


def test_a_batch_accepted_but_never_stored_is_adopted_not_paid_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import papersift.extract.runs.batch

    db = tmp_path / "w.duckdb"

    def killed(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt  # death right after the provider accepted the batch

    with SimEndpoint(SimConfig(batch_seconds=0.2)) as sim:
        with monkeypatch.context() as patched:
            patched.setattr(papersift.extract.runs.batch, "record_submission", killed)
            with pytest.raises(KeyboardInterrupt):
                run_inputs([str(CORPUS)], _settings(db, sim.base_url))
        assert sim.stats()["batches"] == 1
        assert _one(db, "SELECT count(*) FROM batches") == 0  # the warehouse never knew
        _, summary = run_inputs([str(CORPUS)], _settings(db, sim.base_url))
        assert sim.stats()["batches"] == 1, "the rerun adopted the batch, it did not resubmit"
    assert summary.line() == "63 abstracts: 63 extracted, 0 from cache, 0 failed"
    assert _one(db, "SELECT count(*) FROM batches") == 1
    assert _one(db, "SELECT count(*) FROM extractions") == 63
