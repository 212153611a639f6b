"""Endpoint chaos against the hand-written fault server: hostile but schema-shaped drafts
(minimal, empty strings, maximal lists, unicode tricks, lone surrogates, NULs, repeats) and
absurd headers (Retry-After 1e9, negative, non-numeric, NaN; tiny or negative announced
limits). Invariants, first run and warm re-run alike: no crash, no wait beyond the retry
budget, every request the server saw is a calls row, and a cached answer is reused or
asked again, never a crash."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.ingest_files import ingest
from papersift.extract.runs.pipeline import RunSummary
from papersift.testing.drafts import HOSTILE_DRAFTS, hostile_answer
from papersift.testing.sim import SimConfig, SimEndpoint, fault_profile, running
from tests.conftest import CORPUS, stored_rows

pytestmark = pytest.mark.usefixtures("quiet_instructor")

POLICY = RetryPolicy(max_attempts=4, max_elapsed_s=2.0, initial_wait_s=0.01, max_wait_s=0.05,
                     jitter_s=0.0, max_retry_after_s=0.5)
RETRY_AFTERS = ["1e9", "100000", "-5", "soon", "nan", "inf", "0", "0.2",
                "Wed, 21 Oct 2099 07:28:00 GMT"]
LIMITS = ["0.000001", "-1", "nan", "1e999", "abc", "100000"]


def _config(texts: list[str], seed: int) -> SimConfig:
    """Each abstract gets a hostile draft kind, and sometimes a 429 with an absurd header."""
    rng = random.Random(seed)
    kind = {text: rng.choice(HOSTILE_DRAFTS) for text in texts}
    limited = {text for text in texts if rng.random() < 0.4}
    retry_after = rng.choice(RETRY_AFTERS)

    def rule(abstract: str, n: int) -> str | None:
        return "rate_limit" if abstract in limited and n <= 2 else None

    def headers(_fault: str | None) -> dict[str, str]:
        return {"x-ratelimit-limit-requests": rng.choice(LIMITS),
                "x-ratelimit-limit-tokens": rng.choice(LIMITS),
                "retry-after": retry_after}

    return fault_profile(rules=[rule], retry_after=retry_after, headers=headers,
                       answer=lambda abstract: hostile_answer(kind[abstract], abstract))


def _run(path: Path, db: Path, server: SimEndpoint) -> tuple[RunSummary, float]:
    endpoint = Endpoint(base_url=server.base_url, model="chaos", mode="json", timeout_s=5.0)
    started = time.monotonic()
    _, summary = run_inputs([str(path)], RunSettings(db=db, retry=POLICY, max_reasks=1,
                                                     concurrency=8), endpoint=endpoint)
    return summary, time.monotonic() - started


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_hostile_drafts_and_headers_never_crash_or_stall(tmp_path: Path, seed: int) -> None:
    texts = [paper.text for paper in ingest([CORPUS]).papers][:24]
    path = tmp_path / "corpus.txt"
    path.write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    with running(_config(texts, seed)) as server:
        first, first_s = _run(path, db, server)
        seen_first = len(server.log)
        warm, _ = _run(path, db, server)
        seen = len(server.log)
    for summary in (first, warm):
        assert summary.status == "finished"
        assert summary.done == summary.n_abstracts == len(texts)
    # Extracted answers come back from the cache; the rest are asked again.
    assert warm.n_cached == first.n_extracted
    calls = stored_rows(db, "SELECT count(*) FROM calls")[0][0]
    assert calls == seen  # every request the server saw is a calls row
    # Each paper's work is bounded by the budget: attempts x (wait cap + a request).
    assert first_s < 30.0, first_s
    assert seen_first <= len(texts) * (1 + 1) * POLICY.max_attempts
    for reason, detail in stored_rows(db, "SELECT reason, detail FROM failures"):
        assert reason in {"http_429", "schema_violation", "invalid_json"}, (reason, detail)
        if reason == "http_429":
            assert "the retry budget" in detail, detail  # and the wait asked, if any


@pytest.mark.parametrize("asked", ["100000", "1e9", "Wed, 21 Oct 2099 07:28:00 GMT"])
def test_a_wait_past_the_budget_fails_the_paper_at_once(tmp_path: Path, asked: str) -> None:
    texts = [paper.text for paper in ingest([CORPUS]).papers][:6]
    path = tmp_path / "corpus.txt"
    path.write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    config = fault_profile(rules=[lambda _abstract, _n: "rate_limit"], retry_after=asked)
    with running(config) as server:
        summary, seconds = _run(path, db, server)
        seen = len(server.log)
    assert summary.n_failed == len(texts)
    assert seen == len(texts)  # one request each: no retry can pay the wait asked
    assert seconds < POLICY.max_elapsed_s * 3
    for reason, detail in stored_rows(db, "SELECT reason, detail FROM failures"):
        assert reason == "http_429"
        assert "the server asked to wait" in detail and "cannot pay it" in detail
