"""Client-side pacing (extract.limits) and the --max-cost budget, end to end through the
runner against the hand-written fake model of papersift/testing/mock.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx2
import pytest

from papersift.extract.access.limits import (
    BudgetExceededError,
    Pricing,
    RequestGate,
    TokenBucket,
    parse_duration,
    retry_after_seconds,
)
from papersift.extract.access.llm import Endpoint
from papersift.extract.domain.prices import PriceError, price_table, pricing_for
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.testing.bodies import chat_completion
from papersift.testing.mock import FakeModel
from tests.conftest import CORPUS, stored_rows


class FakeClock:
    """Time that passes only when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _request(prompt_chars: int = 400, max_tokens: int = 100) -> httpx2.Request:
    body = {"model": "m", "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": "x" * prompt_chars}]}
    return httpx2.Request("POST", "http://sim.test/v1/chat/completions",
                          content=json.dumps(body).encode())


def _answer(prompt: int, completion: int, status: int = 200,
            headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, json=chat_completion("{}", prompt_tokens=prompt,
                                                        completion_tokens=completion),
                           headers=headers or {})


@pytest.mark.parametrize(("text", "seconds"), [
    ("1s", 1.0), ("6m0s", 360.0), ("120ms", 0.12), ("1h2m3.5s", 3723.5), ("2.5", 2.5),
    ("soon", None), ("5x", None),
])
def test_reset_durations_in_openai_format(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_retry_after_prefers_milliseconds() -> None:
    headers = httpx2.Headers({"retry-after": "3", "retry-after-ms": "250"})
    assert retry_after_seconds(headers) == pytest.approx(0.25)
    assert retry_after_seconds(httpx2.Headers({"retry-after": "2"})) == 2.0
    assert retry_after_seconds(httpx2.Headers({})) is None


def test_bucket_refills_at_its_rate_and_lets_a_large_amount_go_when_full() -> None:
    clock = FakeClock()
    bucket = TokenBucket(600, burst_s=1.0, clock=clock)  # 10 per second, holds 10
    assert bucket.wait_s(10) == 0
    bucket.take(10)
    assert bucket.wait_s(1) == pytest.approx(0.1)
    clock.now += 0.5
    assert bucket.wait_s(5) == 0 and bucket.wait_s(6) == pytest.approx(0.1)
    clock.now += 10
    assert bucket.wait_s(1000) == 0  # larger than the bucket: goes when full, runs a debt
    bucket.take(1000)
    assert bucket.wait_s(1) == pytest.approx((1000 - 10 + 1) / 10)


def _paced(gate: RequestGate, clock: FakeClock, n: int) -> list[float]:
    """Start times of n requests through the gate, answered at once with fixed usage."""
    starts: list[float] = []

    async def go() -> None:
        for _ in range(n):
            ticket = await gate.acquire(_request())
            starts.append(clock())
            gate.settle(ticket, _answer(prompt=120, completion=30))

    asyncio.run(go())
    return starts


def test_requests_per_minute_are_paced_at_the_safety_share(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    clock = FakeClock()
    monkeypatch.setattr(asyncio, "sleep", clock.sleep)
    gate = RequestGate(rpm=600, clock=clock)  # paced at 570/min = 9.5/s
    starts = _paced(gate, clock, 200)
    steady = starts[-1] - starts[20]
    assert (200 - 21) / steady == pytest.approx(9.5, rel=0.01)


def test_tokens_per_minute_count_prompt_plus_max_tokens_and_learn_from_usage(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(asyncio, "sleep", clock.sleep)
    gate = RequestGate(tpm=60_000, clock=clock)  # paced at 950 tokens/s
    starts = _paced(gate, clock, 300)
    # After the estimate has learned that a request's prompt is 120 tokens, each request
    # costs 120 + max_tokens 100 = 220 tokens: 950 / 220 = 4.32 requests per second.
    late = starts[-100:]
    assert 99 / (late[-1] - late[0]) == pytest.approx(950 / 220, rel=0.03)
    assert gate.tokens_per_byte * len(_request().content) == pytest.approx(120, rel=0.02)


def test_limits_are_learned_from_headers_and_a_429_pauses_everyone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(asyncio, "sleep", clock.sleep)
    gate = RequestGate(clock=clock)

    async def go() -> float:
        ticket = await gate.acquire(_request())
        gate.settle(ticket, _answer(100, 10, headers={
            "x-ratelimit-limit-requests": "120", "x-ratelimit-remaining-requests": "119",
            "x-ratelimit-reset-requests": "500ms"}))
        # Must wait: the request already sent counts against the limit just learned.
        ticket = await gate.acquire(_request())
        after_wait = clock()
        gate.settle(ticket, _answer(100, 10, status=429, headers={"retry-after": "7"}))
        await gate.acquire(_request())
        return after_wait

    started = clock()
    after_first_wait = asyncio.run(go())
    assert gate.stats.learned_rpm == 120
    assert after_first_wait - started == pytest.approx(1 / (120 * 0.95 / 60), rel=0.01)
    assert clock() - after_first_wait >= 7.0
    assert gate.stats.paused_by_429 == 1


def test_budget_refuses_an_attempt_that_could_cross_it() -> None:
    gate = RequestGate(budget_usd=0.01, pricing=Pricing(10.0, 10.0))  # $10 per Mtok

    async def go() -> int:
        sent = 0
        while True:
            try:
                ticket = await gate.acquire(_request(prompt_chars=400, max_tokens=100))
            except BudgetExceededError:
                return sent
            sent += 1
            gate.settle(ticket, _answer(prompt=150, completion=50))  # $0.002 each

    sent = asyncio.run(go())
    assert gate.spent_usd == pytest.approx(sent * 0.002)
    assert gate.spent_usd <= 0.01 and gate.reserved_usd == pytest.approx(0.0)
    assert sent >= 3  # the worst case (prompt estimate + max_tokens) leaves room for some
    with pytest.raises(ValueError, match="needs prices"):
        RequestGate(budget_usd=1.0)


def test_max_cost_stops_the_run_and_a_rerun_finishes_without_paying_twice(tmp_path: Path
                                                                        ) -> None:
    db = tmp_path / "w.duckdb"
    endpoint = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")
    model = FakeModel()  # every answer reports 100 prompt + 50 completion tokens
    price = (1000.0, 1000.0)  # $0.15 per answer
    _, summary = run_inputs([str(CORPUS)], RunSettings(db=db, max_cost=6.0, price=price),
                            transport=model.transport(), endpoint=endpoint)
    assert summary.status == "budget_reached"
    assert 0 < summary.n_extracted < 63
    assert summary.n_extracted + summary.n_failed == 63
    spent = (summary.prompt_tokens + summary.completion_tokens) * 1000.0 / 1e6
    assert spent <= 6.0
    assert model.requests == summary.n_extracted  # nothing sent beyond the budget
    reasons = stored_rows(db, "SELECT DISTINCT stage, reason FROM failures")
    assert reasons == [("budget", "max_cost")]
    assert stored_rows(db, "SELECT status FROM runs") == [("budget_reached",)]

    again = FakeModel()
    _, rerun = run_inputs([str(CORPUS)], RunSettings(db=db, price=price),
                          transport=again.transport(), endpoint=endpoint)
    assert rerun.status == "finished"
    assert again.requests == 63 - summary.n_extracted
    assert rerun.n_cached == summary.n_extracted


def test_price_table_is_data_and_can_be_overridden(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    mini = price_table()["gpt-4o-mini"]
    assert (mini.input, mini.output, mini.batch_input, mini.batch_output) == (
        0.15, 0.60, 0.075, 0.30)
    assert pricing_for("gpt-4o-mini", batch=True) == Pricing(0.075, 0.30)
    assert pricing_for("unknown-model") is None
    assert pricing_for("unknown-model", override=(1.0, 2.0)) == Pricing(1.0, 2.0)
    extra = tmp_path / "prices.toml"
    extra.write_text('[models."my-model"]\ninput = 1.0\noutput = 3.0\n', encoding="utf-8")
    monkeypatch.setenv("PAPERSIFT_PRICES", str(extra))
    assert pricing_for("my-model") == Pricing(1.0, 3.0)
    assert pricing_for("my-model", batch=True) == Pricing(0.5, 1.5)
    bad = tmp_path / "bad-prices.toml"
    bad.write_text('[models."bad"]\ninput = "cheap"\n', encoding="utf-8")
    monkeypatch.setenv("PAPERSIFT_PRICES", str(bad))
    with pytest.raises(PriceError, match=r"bad-prices\.toml: \[models\.'bad'\] needs numeric"):
        price_table()
    monkeypatch.setenv("PAPERSIFT_PRICES", str(tmp_path / "missing.toml"))
    with pytest.raises(PriceError, match=r"missing\.toml: cannot read"):
        price_table()


def test_a_run_learns_the_simulators_limit_and_loses_nothing(tmp_path: Path) -> None:
    from papersift.extract.access.endpoints import EndpointOptions
    from papersift.testing.sim import SimConfig, SimEndpoint

    config = SimConfig(latency="fixed:0", rpm=1200, burst_s=0.5)  # 20/s, 10 at once
    with SimEndpoint(config) as sim:
        settings = RunSettings(db=tmp_path / "w.duckdb", concurrency=16, endpoint=EndpointOptions(
            provider="compatible", base_url=sim.base_url, model="gpt-4o-mini"))
        _, summary = run_inputs([str(CORPUS)], settings)
        stats = sim.stats()
    assert summary.line() == "63 abstracts: 63 extracted, 0 from cache, 0 failed"
    assert stats["by_status"]["200"] == 63
    # Only the first burst, sent before any answer announced the limit, may be refused;
    # once learned, pacing at 95% of 20/s keeps every later request inside it.
    assert stats["rate_limited"]["requests"] <= 16
    retried = stored_rows(tmp_path / "w.duckdb",
                          "SELECT count(*) FROM calls WHERE http_status = 429")
    assert retried == [(stats["rate_limited"]["requests"],)]


def test_max_cost_needs_a_price(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from papersift.extract.interface.cli import cli

    result = CliRunner().invoke(cli, ["run", str(CORPUS), "--db", str(tmp_path / "w.duckdb"),
                                      "--base-url", "http://127.0.0.1:9/v1", "--model",
                                      "no-such-model", "--max-cost", "1"])
    assert result.exit_code != 0
    assert "--max-cost needs the price of 'no-such-model'" in result.output
    assert not (tmp_path / "w.duckdb").exists() or stored_rows(
        tmp_path / "w.duckdb", "SELECT count(*) FROM calls") == [(0,)]


@pytest.mark.parametrize("headers", [
    {"x-ratelimit-limit-tokens": "2"}, {"x-ratelimit-limit-tokens": "999"},
    {"x-ratelimit-limit-requests": "1"}, {"x-ratelimit-limit-requests": "1.5",
                                          "x-ratelimit-limit-tokens": "50"}])
def test_an_absurd_learned_limit_holds_no_request_back_for_long(
        monkeypatch: pytest.MonkeyPatch, headers: dict[str, str]) -> None:
    clock = FakeClock()
    monkeypatch.setattr(asyncio, "sleep", clock.sleep)
    gate = RequestGate(clock=clock)

    async def go() -> None:
        for _ in range(20):
            ticket = await gate.acquire(_request(prompt_chars=4000, max_tokens=2000))
            gate.settle(ticket, _answer(1000, 200, headers=headers))

    asyncio.run(go())
    assert max(clock.slept, default=0.0) <= 10.0  # a header is a hint, not a stall
    assert clock.now - 1000.0 <= 20 * 10.0


def test_hostile_usage_cannot_spend_the_budget_or_stall_the_tokens_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    monkeypatch.setattr(asyncio, "sleep", clock.sleep)
    pricing = Pricing(input_per_mtok=1.0, output_per_mtok=1.0)
    gate = RequestGate(tpm=600_000, budget_usd=1.0, pricing=pricing, clock=clock)

    async def go() -> None:
        for _ in range(10):
            ticket = await gate.acquire(_request())
            gate.settle(ticket, _answer(2**31 - 1, 2**31 - 1))

    asyncio.run(go())
    assert gate.spent_usd < 0.01
    assert sum(clock.slept) < 5.0
    assert 0.01 <= gate.tokens_per_byte <= 1.0


@pytest.mark.parametrize("value", ["31 Dec 99999999999999999999 23:59:59 GMT",
                                   "Fri, 31 Dec 9999999999 23:59:59 -2359", "Mon, 99 Foo"])
def test_a_retry_after_date_no_clock_can_hold_is_no_wait_not_a_crash(value: str) -> None:
    assert retry_after_seconds(httpx2.Headers({"retry-after": value})) is None
