"""Batch API mode against a hand-written fake of OpenAI's Files and Batches routes
(papersift/testing/fakebatch.py): the lines are the live requests, the stored rows are the
live rows, faults become failure rows with reasons, and a run killed while polling
resumes its batch."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner

from papersift.extract.access.extractor import Extractor
from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.extract.interface.app import (
    RunSettings,
    cancel_stored_batch,
    resume_batch,
    run_inputs,
)
from papersift.extract.interface.cli import cli
from papersift.extract.runs.batch import BatchError, BatchOptions, BatchProgress
from papersift.prompts import load_prompt
from papersift.testing.fakebatch import FAULTS, FILE_FAULTS, FakeBatchAPI, answer_for
from papersift.testing.mock import FakeModel, ScriptedServer
from tests.conftest import CORPUS, stored_rows

ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json",
                    api_key="sk-test-secret-0123456789")
FAST = BatchOptions(poll_interval_s=0.0)
ABSTRACT = ("We propose FooNet, a graph method for protein folding. On the CASP15 benchmark "
            "it improves GDT-TS by 4.2% over AlphaFold.")


def _batch_run(db: Path, api: FakeBatchAPI, endpoint: Endpoint = ENDPOINT,
               options: BatchOptions = FAST, **settings: Any) -> Any:
    polls: list[BatchProgress] = []
    _, summary = run_inputs(
        [str(CORPUS)], RunSettings(db=db, batch=options, **settings),
        transport=api.transport(), endpoint=endpoint, on_poll=polls.append)
    summary.polls = polls
    return summary


def _one(db: Path, sql: str) -> Any:
    return stored_rows(db, sql)[0][0]


@pytest.mark.parametrize(("mode", "constrain"), [
    ("json", False), ("json", True), ("tools", False), ("json_schema", False),
    ("md_json", False)])
def test_a_batch_line_is_the_request_the_live_path_sends(mode: str, constrain: bool) -> None:
    endpoint = dataclasses.replace(ENDPOINT, mode=mode, constrain_json=constrain)
    server = ScriptedServer([
        lambda request: httpx2.Response(200, json=answer_for(json.loads(request.content)))])
    live = Extractor(endpoint, load_prompt("extract_v2"), transport=server.transport())
    try:
        assert live.extract("p1", ABSTRACT).ok
        body = live.request_body(ABSTRACT)
    finally:
        live.close()
    assert body == server.bodies()[0]
    if constrain:
        assert body["response_format"]["schema"]["type"] == "object"


def test_batch_run_stores_exactly_what_the_live_run_stores(tmp_path: Path) -> None:
    api = FakeBatchAPI()
    summary = _batch_run(tmp_path / "batch.duckdb", api)
    assert summary.line() == "63 abstracts: 63 extracted, 0 from cache, 0 failed"
    assert len(api.jobs) == 1 and len(api.uploaded_lines) == 63
    assert {line["custom_id"] for line in api.uploaded_lines} == {
        row[0] for row in stored_rows(tmp_path / "batch.duckdb", "SELECT paper_id FROM papers")}
    assert summary.polls[-1].status == "completed" and summary.polls[-1].completed == 63

    run_inputs([str(CORPUS)], RunSettings(db=tmp_path / "live.duckdb"),
               transport=FakeModel().transport(), endpoint=ENDPOINT)
    query = ("SELECT e.paper_id, e.extraction_id, e.raw_json, e.items, e.items_ungrounded, "
             "list(t.name ORDER BY t.idx), list(t.char_start ORDER BY t.idx) "
             "FROM extractions e JOIN extraction_tasks t USING (extraction_id) "
             "GROUP BY ALL ORDER BY 1")
    batch_rows = stored_rows(tmp_path / "batch.duckdb", query)
    assert len(batch_rows) == 63
    assert batch_rows == stored_rows(tmp_path / "live.duckdb", query)
    cache = "SELECT cache_key, response_json FROM llm_cache ORDER BY 1"
    assert stored_rows(tmp_path / "batch.duckdb", cache) == stored_rows(
        tmp_path / "live.duckdb", cache)
    # The usage of each answer is logged per call, as for live calls.
    assert stored_rows(tmp_path / "batch.duckdb",
                       "SELECT count(*), sum(prompt_tokens), sum(completion_tokens), "
                       "min(status), max(status) FROM calls") == [(63, 63_000, 2520, "ok", "ok")]
    params = json.loads(_one(tmp_path / "batch.duckdb", "SELECT params FROM runs"))
    assert params["batch"] is True and params["completion_window"] == "24h"
    assert stored_rows(tmp_path / "batch.duckdb",
                       "SELECT status, request_count, completed_count, collected IS NOT NULL, "
                       "collected_run_id = run_id FROM batches") == [
        ("completed", 63, 63, True, True)]
    assert ENDPOINT.api_key is not None
    assert ENDPOINT.api_key.encode() not in (tmp_path / "batch.duckdb").read_bytes()


def test_faulty_lines_are_failures_and_a_rerun_resubmits_only_them(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    probe = FakeBatchAPI()
    _batch_run(tmp_path / "probe.duckdb", probe)
    ids = sorted(line["custom_id"] for line in probe.uploaded_lines)
    faults = dict(zip(ids, FAULTS, strict=False))
    api = FakeBatchAPI(faults=faults)
    summary = _batch_run(db, api)
    assert summary.line() == "63 abstracts: 57 extracted, 0 from cache, 6 failed"
    reasons = dict(stored_rows(db, "SELECT paper_id, reason FROM failures"))
    assert reasons == {ids[0]: "batch_http_500", ids[1]: "batch_server_error",
                       ids[2]: "invalid_json", ids[3]: "schema_violation", ids[4]: "length",
                       ids[5]: "batch_missing"}
    assert dict(stored_rows(db, "SELECT paper_id, status FROM calls WHERE status <> 'ok'")) == {
        ids[0]: "http_error", ids[1]: "http_error", ids[2]: "invalid", ids[3]: "invalid",
        ids[4]: "length"}
    assert _one(db, "SELECT count(*) FROM run_papers") == 63

    api.faults = {}
    again = _batch_run(db, api)
    assert again.line() == "63 abstracts: 6 extracted, 57 from cache, 0 failed"
    assert len(api.jobs) == 2
    assert sorted(line["custom_id"] for line in api.jobs["batch_fake_2"].lines) == ids[:6]
    assert _one(db, "SELECT count(*) FROM latest_extractions") == 63
    assert _one(db, "SELECT count(*) FROM extractions") == 63


def test_a_run_killed_while_polling_resumes_its_batch(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    api = FakeBatchAPI(polls_to_finish=3, interrupt_on_poll=2)
    with pytest.raises(KeyboardInterrupt):
        _batch_run(db, api)
    assert stored_rows(db, "SELECT status, n_extracted FROM runs") == [("interrupted", 0)]
    assert stored_rows(db, "SELECT batch_id, status, collected FROM batches") == [
        ("batch_fake_1", "in_progress", None)]
    assert _one(db, "SELECT count(*) FROM batch_requests") == 63

    summary = _batch_run(db, api)
    assert len(api.jobs) == 1, "the open batch is resumed, not submitted again"
    assert summary.line() == "63 abstracts: 63 extracted, 0 from cache, 0 failed"
    assert _one(db, "SELECT count(*) FROM extractions") == 63
    assert _one(db, "SELECT count(*) FROM llm_cache") == 63
    assert _one(db, "SELECT count(*) FROM extraction_tasks") == 63
    assert _one(db, "SELECT count(*) FROM calls") == 63
    assert _one(db, "SELECT count(*) FROM failures") == 0
    assert _one(db, "SELECT collected_run_id <> run_id FROM batches")

    third = _batch_run(db, api)
    assert third.line() == "63 abstracts: 0 extracted, 63 from cache, 0 failed"
    assert len(api.jobs) == 1


def test_an_expired_batch_keeps_its_answers_and_fails_the_rest(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    summary = _batch_run(db, FakeBatchAPI(final_status="expired"))
    assert summary.line() == "63 abstracts: 31 extracted, 0 from cache, 32 failed"
    assert stored_rows(db, "SELECT reason, count(*) FROM failures GROUP BY 1") == [
        ("batch_expired", 32)]
    assert _one(db, "SELECT count(*) FROM calls") == 31  # a request never run is no call


def test_cancel_then_resume_by_id(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    api = FakeBatchAPI(polls_to_finish=5, interrupt_on_poll=1)
    with pytest.raises(KeyboardInterrupt):
        _batch_run(db, api)
    settings = RunSettings(db=db, batch=FAST)
    other = dataclasses.replace(ENDPOINT, model="other")
    with pytest.raises(BatchError, match="same"):
        cancel_stored_batch(settings, "batch_fake_1", transport=api.transport(),
                            endpoint=other)
    with pytest.raises(BatchError, match="same"):
        resume_batch(settings, "batch_fake_1", transport=api.transport(), endpoint=other)
    assert cancel_stored_batch(settings, "batch_fake_1", transport=api.transport(),
                               endpoint=ENDPOINT) == "cancelling"
    summary = resume_batch(settings, "batch_fake_1", transport=api.transport(),
                           endpoint=ENDPOINT)
    assert summary.line() == "63 abstracts: 31 extracted, 0 from cache, 32 failed"
    assert _one(db, "SELECT status FROM batches") == "cancelled"
    assert _one(db, "SELECT count(*) FROM failures WHERE reason = 'batch_cancelled'") == 32
    with pytest.raises(BatchError, match="collected"):
        resume_batch(settings, "batch_fake_1", transport=api.transport(), endpoint=ENDPOINT)


def test_a_refused_submission_fails_its_papers_with_the_reason(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    summary = _batch_run(db, FakeBatchAPI(refuse_uploads=True))
    assert summary.line() == "63 abstracts: 0 extracted, 0 from cache, 63 failed"
    assert stored_rows(db, "SELECT reason, count(*) FROM failures GROUP BY 1") == [
        ("batch_submit_http_400", 63)]
    assert _one(db, "SELECT count(*) FROM batches") == 0


def test_a_failed_poll_stops_cleanly_and_a_rerun_resumes(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    api = FakeBatchAPI(failing_polls=1)
    with pytest.raises(BatchError, match=r"batch_fake_1.*rerun"):
        _batch_run(db, api, retry=RetryPolicy(max_attempts=1))
    assert stored_rows(db, "SELECT status FROM runs") == [("crashed",)]
    assert ENDPOINT.api_key not in str(stored_rows(db, "SELECT * FROM batches"))
    summary = _batch_run(db, api)
    assert summary.n_extracted == 63 and len(api.jobs) == 1


def test_large_runs_are_split_into_several_batches(tmp_path: Path) -> None:
    api = FakeBatchAPI()
    summary = _batch_run(tmp_path / "w.duckdb", api,
                         options=BatchOptions(poll_interval_s=0.0, max_requests=20))
    assert [len(job.lines) for job in api.jobs.values()] == [20, 20, 20, 3]
    assert summary.n_extracted == 63
    assert _one(tmp_path / "w.duckdb", "SELECT count(*) FROM batches WHERE collected IS NOT "
                "NULL") == 4


def test_batch_mode_refuses_the_local_model(tmp_path: Path) -> None:
    local = dataclasses.replace(ENDPOINT, kind="local")
    with pytest.raises(BatchError, match="Batch API"):
        _batch_run(tmp_path / "w.duckdb", FakeBatchAPI(), endpoint=local,
                   retry=RetryPolicy(max_attempts=1))


def test_batch_commands_list_stored_batches(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    _batch_run(db, FakeBatchAPI())
    result = CliRunner().invoke(cli, ["batch", "list", "--db", str(db), "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert "batch_fake_1,completed,fake,63,63,0" in result.output
    for command in (["batch", "resume", "--help"], ["batch", "cancel", "--help"],
                    ["run", "--help"], ["extract", "--help"]):
        assert "--batch" in CliRunner().invoke(cli, command).output or command[0] == "batch"


def test_a_batch_dry_run_prices_at_batch_rates_and_max_cost_is_refused(tmp_path: Path) -> None:
    from papersift.extract.access.endpoints import EndpointOptions
    from papersift.extract.interface.app import estimate_run

    options = EndpointOptions(provider="compatible", base_url="http://fake.test/v1",
                              model="gpt-4o-mini", mode="tools")
    live = estimate_run([str(CORPUS)], RunSettings(db=tmp_path / "w.duckdb", endpoint=options))
    batch = estimate_run([str(CORPUS)], RunSettings(db=tmp_path / "w.duckdb", endpoint=options,
                                                    batch=FAST))
    assert live.cost_usd is not None and batch.cost_usd is not None
    assert batch.cost_usd == pytest.approx(live.cost_usd / 2)
    with pytest.raises(BatchError, match="max-cost"):
        _batch_run(tmp_path / "w.duckdb", FakeBatchAPI(), max_cost=1.0)


def test_a_damaged_output_file_ends_every_paper_stored_or_failed_with_its_reason(
        tmp_path: Path) -> None:
    """Issue 28: faults of the output file itself (FILE_FAULTS), one paper each; the run
    finishes, every input is a row or a failure, and the good lines are all kept."""
    probe = FakeBatchAPI()
    _batch_run(tmp_path / "probe.duckdb", probe)
    ids = sorted(line["custom_id"] for line in probe.uploaded_lines)
    faults = dict(zip(ids, FILE_FAULTS, strict=False))
    db = tmp_path / "w.duckdb"
    summary = _batch_run(db, FakeBatchAPI(faults=faults))
    assert summary.n_extracted + summary.n_failed == 63
    assert stored_rows(db, "SELECT status FROM runs") == [("finished",)]
    outcomes = dict(stored_rows(db, "SELECT paper_id, outcome FROM run_papers"))
    assert len(outcomes) == 63
    reasons = dict(stored_rows(db, "SELECT paper_id, reason FROM failures"))
    assert set(reasons) <= set(faults)  # no paper without a fault fails
    assert all(reason for reason in reasons.values())
    # a line that is readable JSON for the paper gives its answer, hostile usage or not
    assert outcomes[ids[FILE_FAULTS.index("hostile_usage")]] == "extracted"
    assert outcomes[ids[FILE_FAULTS.index("duplicate")]] == "extracted"
    lost = {ids[FILE_FAULTS.index(f)] for f in ("garbled_line", "truncated_line",
                                                 "no_custom_id", "foreign_id")}
    for paper in lost:  # unreadable or unidentifiable lines: said so, not "missing" alone
        assert reasons[paper] == "batch_missing"
    details = [row[0] for row in stored_rows(
        db, "SELECT DISTINCT detail FROM failures WHERE reason = 'batch_missing'")]
    assert details and all("unreadable" in detail for detail in details), details
