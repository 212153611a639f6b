"""One hostile value in an answer never stops a run (issue 28): absurd usage counts and
finish reasons are stored as null with the call kept, and a batch that still cannot be
written is written paper by paper, so only the paper whose rows fail becomes a failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest

from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs import runner as runner_module
from papersift.testing.hostile import HostileUsage
from papersift.testing.mock import FakeModel
from tests.conftest import CORPUS, stored_rows
from tests.test_pipeline import ENDPOINT

pytestmark = pytest.mark.usefixtures("quiet_instructor")

def test_absurd_usage_values_are_stored_as_null_and_every_paper_is_kept(
        tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    model = HostileUsage()
    _, summary = run_inputs([str(CORPUS)], RunSettings(db=db, concurrency=4),
                            transport=httpx2.MockTransport(model), endpoint=ENDPOINT)
    assert summary.status == "finished"
    assert summary.n_extracted == 63 and summary.n_failed == 0
    calls = stored_rows(db, "SELECT prompt_tokens, completion_tokens, finish_reason "
                            "FROM calls")
    assert len(calls) == model.requests == 63
    for prompt, completion, finish in calls:
        assert prompt is None or 0 <= prompt < 2 ** 31
        assert completion is None or 0 <= completion < 2 ** 31
        assert finish is None or len(finish) <= 64
    assert stored_rows(db, "SELECT status FROM runs") == [("finished",)]


def test_a_paper_whose_rows_the_warehouse_refuses_is_one_failure_and_the_rest_stored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = runner_module.outcome_batch
    spoiled: list[str] = []

    def spoil_one(outcome: Any, job: Any, **kw: Any) -> Any:
        batch = real(outcome, job, **kw)
        if not spoiled and outcome.ok:  # a value no check foresaw, in one paper's rows
            spoiled.append(outcome.paper_id)
            batch.rows["calls"][0]["http_status"] = "not a number"
        return batch

    monkeypatch.setattr(runner_module, "outcome_batch", spoil_one)
    db = tmp_path / "w.duckdb"
    model = FakeModel()
    _, summary = run_inputs([str(CORPUS)], RunSettings(db=db, concurrency=4),
                            transport=model.transport(), endpoint=ENDPOINT)
    assert summary.status == "finished"
    assert (summary.n_extracted, summary.n_failed) == (62, 1)
    failed = stored_rows(db, "SELECT paper_id, stage, reason FROM failures")
    assert failed == [(spoiled[0], "store", "unstorable: ArrowInvalid")] or \
        (len(failed) == 1 and failed[0][:2] == (spoiled[0], "store")), failed
    assert stored_rows(db, "SELECT count(*) FROM extractions")[0][0] == 62
    assert stored_rows(db, "SELECT count(*) FROM run_papers")[0][0] == 63
    assert stored_rows(db, "SELECT status FROM runs") == [("finished",)]
