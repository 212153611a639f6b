"""One hostile value in an answer never stops a run (issue 28): absurd usage counts and
finish reasons are stored as null with the call kept, and a batch that still cannot be
written is written paper by paper, so only the paper whose rows fail becomes a failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs import runner as runner_module
from papersift.testing.bodies import chat_completion, last_abstract
from papersift.testing.drafts import first_words
from papersift.testing.mock import FakeModel
from tests.conftest import CORPUS, stored_rows
from tests.test_pipeline import ENDPOINT

pytestmark = pytest.mark.usefixtures("quiet_instructor")

HOSTILE_USAGE: list[Any] = [True, 10 ** 20, -5, 1e20, "12", [3], {"n": 1}, float("nan"),
                            2 ** 63, None]


class HostileUsage:
    """A fake model (hand-written) whose answers carry absurd usage values, one per
    abstract in turn."""

    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests += 1
        value = HOSTILE_USAGE[self.requests % len(HOSTILE_USAGE)]
        text = json.dumps(first_words(last_abstract(json.loads(request.content))))
        body = chat_completion(text)
        body["usage"] = {"prompt_tokens": value, "completion_tokens": value,
                         "total_tokens": value}
        if self.requests % 3 == 0:
            body["choices"][0]["finish_reason"] = {"why": "x" * 5000}
        raw = json.dumps(body, allow_nan=True).replace('"__big__"', "1" + "0" * 40)
        return httpx2.Response(200, content=raw.encode(),
                               headers={"content-type": "application/json"})


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
