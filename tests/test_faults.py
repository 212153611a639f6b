"""Runs against the fake OpenAI server with faults (papersift/testing/sim, hand-written,
real HTTP on loopback): each fault survived or failed with its own reason, a 30% fault
rate loses and doubles nothing, Retry-After is honoured."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.extract.domain.reading.ingest import paper_id_for
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.ingest_files import ingest
from papersift.extract.runs.pipeline import RunSummary
from papersift.testing.faultcheck import account, variant_corpus
from papersift.testing.sim import FAULTS, Rule, SimEndpoint, fault_profile, running
from tests.conftest import CORPUS, stored_rows

MAX_ATTEMPTS = 3
MAX_REASKS = 2
POLICY = RetryPolicy(max_attempts=MAX_ATTEMPTS, initial_wait_s=0.01, max_wait_s=0.05,
                     jitter_s=0.0)
# The client's read timeout; an attempt's whole exchange may take twice it, and the
# server's hangs (HANG_S) last longer than that. Not shorter: on a loaded machine a normal
# answer could pass a 0.6 s deadline and be counted as a fault the server never served.
TIMEOUT_S = 1.0
HANG_S = 2.5


@pytest.fixture(autouse=True)
def quiet_instructor() -> Iterator[None]:
    logger = logging.getLogger("instructor")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # as the CLI does: failed attempts are in `calls`
    yield
    logger.setLevel(level)


def _run(inputs: list[str], db: Path, server: SimEndpoint, **settings: object) -> RunSummary:
    endpoint = Endpoint(base_url=server.base_url, model="fault-server", mode="json",
                        timeout_s=TIMEOUT_S)
    values: dict[str, object] = {"retry": POLICY, "max_reasks": MAX_REASKS, **settings}
    _, summary = run_inputs(inputs, RunSettings(db=db, **values),  # type: ignore[arg-type]
                            endpoint=endpoint)
    return summary


def _one_fault_per_abstract(folder: Path, every_request: bool) -> tuple[list[str], Rule]:
    """A file of one abstract per fault, and a rule serving each abstract its fault."""
    texts = [paper.text for paper in ingest([CORPUS]).papers][: len(FAULTS)]
    path = folder / "one_per_fault.txt"
    path.write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    fault_of = dict(zip(texts, FAULTS, strict=True))

    def rule(abstract: str, n: int) -> str | None:
        return fault_of[abstract] if every_request or n == 1 else None

    return [str(path)], rule


def test_each_fault_once_is_survived_except_length(tmp_path: Path) -> None:
    inputs, rule = _one_fault_per_abstract(tmp_path, every_request=False)
    db = tmp_path / "w.duckdb"
    with running(fault_profile(rules=[rule], retry_after="0", hang_s=HANG_S)) as server:
        summary = _run(inputs, db, server)
        accounting = account(db, server, summary.run_id, max_attempts=MAX_ATTEMPTS,
                             max_reasks=MAX_REASKS)
    assert accounting.problems() == []
    assert summary.line() == "11 abstracts: 10 extracted, 0 from cache, 1 failed"
    assert [reason for _, reason, _ in summary.failures] == ["length"]
    assert sorted(accounting.survived) == sorted(set(FAULTS) - {"length"})
    statuses = dict(stored_rows(db, "SELECT status, count(*) FROM calls GROUP BY 1"))
    # an ungrounded draft is valid (code drops what it names); the two broken ones re-ask
    assert statuses == {"ok": 10, "http_error": 4, "timeout": 1, "connection_error": 1,
                        "invalid": 2, "empty_body": 1, "length": 1}


def test_each_fault_every_time_fails_with_its_own_reason(tmp_path: Path) -> None:
    inputs, rule = _one_fault_per_abstract(tmp_path, every_request=True)
    db = tmp_path / "w.duckdb"
    with running(fault_profile(rules=[rule], retry_after="0", hang_s=HANG_S)) as server:
        summary = _run(inputs, db, server)
        requests = {fault: len(server.requests_for(paper_id_for(text)))
                    for text, fault in _texts_and_faults(inputs)}
        accounting = account(db, server, summary.run_id, max_attempts=MAX_ATTEMPTS,
                             max_reasks=MAX_REASKS)
    assert accounting.problems() == []
    reasons = dict(stored_rows(
        db, "SELECT f.reason, count(*) FROM failures f GROUP BY 1"))
    assert reasons == {"http_429": 1, "http_500": 1, "http_502": 1, "http_503": 1,
                       "timeout": 1, "connection_error": 1, "invalid_json": 1,
                       "schema_violation": 1, "no_answer": 1, "length": 1}
    # Only the ungrounded draft is extracted, at its first answer: code dropped the method,
    # benchmark and number it invented, and flagged the task phrase it could not find.
    assert stored_rows(db, "SELECT lenient, items_ungrounded, items_rejected "
                       "FROM extractions") == [(False, 1, 3)]
    assert stored_rows(db, "SELECT alignment FROM tasks") == [("none",)]
    assert stored_rows(db, "SELECT count(*) FROM gains") == [(0,)]
    assert stored_rows(db, "SELECT count(*) FROM benchmarks") == [(0,)]
    assert ("InventedNet",) not in stored_rows(db, "SELECT name FROM methods")
    # Bounded: transport faults cost MAX_ATTEMPTS requests, content faults 1 + MAX_REASKS.
    assert requests == {
        **dict.fromkeys(["rate_limit", "server_error", "bad_gateway", "unavailable", "hang",
                         "drop"], MAX_ATTEMPTS),
        **dict.fromkeys(["truncated_json", "schema_break", "empty_body"], 1 + MAX_REASKS),
        "length": 1,
        "ungrounded": 1,
    }


def _texts_and_faults(inputs: list[str]) -> list[tuple[str, str]]:
    texts = [paper.text for paper in ingest(inputs).papers]
    return list(zip(texts, FAULTS, strict=True))


def test_thirty_percent_faults_lose_and_double_nothing(tmp_path: Path) -> None:
    inputs = variant_corpus(tmp_path / "in", 150)
    db = tmp_path / "w.duckdb"
    config = fault_profile(rate=0.3, seed=7, retry_after="0", retry_after_ms=20, hang_s=HANG_S)
    with running(config) as server:
        first = _run(inputs, db, server, concurrency=6)
        accounting = account(db, server, first.run_id, max_attempts=MAX_ATTEMPTS,
                             max_reasks=MAX_REASKS)
        assert accounting.problems() == []
        assert accounting.abstracts == 150 and sum(accounting.faults_served.values()) > 30
        failed = {paper_id for paper_id, _, _ in first.failures}
        before = len(server.log)
        second = _run(inputs, db, server, concurrency=6)
        asked_again = {served.paper_id for served in server.log[before:]}
    # The rerun pays only for what failed; everything extracted comes from the cache.
    assert asked_again == failed
    assert second.n_cached == first.n_extracted
    assert second.n_abstracts == second.done == 150


def test_retry_after_is_honoured(tmp_path: Path) -> None:
    inputs, _ = _one_fault_per_abstract(tmp_path, every_request=False)

    def twice_limited(abstract: str, n: int) -> str | None:
        return "rate_limit" if n <= 2 else None

    db = tmp_path / "w.duckdb"
    # Seconds only: the client's own backoff here is 0.01 s, far shorter than asked.
    with running(fault_profile(rules=[twice_limited], retry_after="0.4")) as server:
        _run(inputs, db, server, concurrency=11)
        gaps = server.retry_after_gaps()
    assert len(gaps) == 2 * 11
    assert all(gap >= 0.4 for _, gap in gaps), gaps
    # retry-after-ms is preferred to Retry-After when both are sent (OpenAI sends both).
    with running(fault_profile(rules=[twice_limited], retry_after="30",
                             retry_after_ms=150)) as server:
        _run(inputs, tmp_path / "w2.duckdb", server, concurrency=11)
        gaps = server.retry_after_gaps()
    assert all(0.15 <= gap < 5 for _, gap in gaps), gaps


def test_an_empty_last_body_leaves_the_last_real_answer_to_decide(tmp_path: Path) -> None:
    """When re-asks run out on an empty body, the last answer that had content decides:
    broken JSON fails as such, and nothing at all is 'no_answer'."""
    texts = [paper.text for paper in ingest([CORPUS]).papers][:3]
    path = tmp_path / "three.txt"
    path.write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    served = {texts[0]: ["schema_break", "empty_body", "empty_body"],
              texts[1]: ["truncated_json", "empty_body", "empty_body"],
              texts[2]: ["empty_body", "empty_body", "empty_body"]}

    def rule(abstract: str, n: int) -> str | None:
        return served[abstract][n - 1]

    db = tmp_path / "w.duckdb"
    with running(fault_profile(rules=[rule])) as server:
        summary = _run([str(path)], db, server)
        accounting = account(db, server, summary.run_id, max_attempts=MAX_ATTEMPTS,
                             max_reasks=MAX_REASKS)
    assert accounting.problems() == []
    assert sorted(accounting.outcomes.items()) == [
        ("failed: invalid_json", 1), ("failed: no_answer", 1),
        ("failed: schema_violation", 1)]
