"""The extractor through the real openai + instructor code, against a scripted fake
endpoint (hand-written responses, labelled as such): re-asks, retries, faults, secrets."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from papersift.extract.access.extractor import Extractor, cache_key
from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.prompts import load_prompt
from papersift.testing.bodies import chat_completion
from papersift.testing.mock import ScriptedServer, ok

ABSTRACT = (
    "We propose FastMix, a mixing scheme for diffusion samplers. On CIFAR-10, FastMix "
    "reduces sampling time by 2.5x while keeping FID within 0.3 points of the baseline."
)
GOOD = {  # a draft: names and numbers only, code finds the evidence
    "tasks": ["diffusion samplers"],
    "methods": ["FastMix"],
    "benchmarks": [{"name": "CIFAR-10", "new": False}],
    "gains": [{"value": "2.5", "metric": "sampling time", "on": "CIFAR-10"}],
    "types": ["method"],
}
SECRET = "sk-test-SECRET-never-store-me"


def _endpoint(**overrides: Any) -> Endpoint:
    values: dict[str, Any] = {"base_url": "http://fake.test/v1", "model": "fake-model",
                              "mode": "json", "api_key": SECRET}
    values.update(overrides)
    return Endpoint(**values)


def _extractor(server: ScriptedServer, sleeps: list[float] | None = None,
               **endpoint: Any) -> Extractor:
    recorded = sleeps if sleeps is not None else []
    return Extractor(_endpoint(**endpoint), load_prompt(), max_reasks=2,
                     transport=server.transport(),
                     policy=RetryPolicy(max_attempts=3, initial_wait_s=0.5, jitter_s=0.0),
                     sleep=recorded.append)


def test_good_answer_is_validated_and_logged() -> None:
    server = ScriptedServer([ok(GOOD, prompt_tokens=321, completion_tokens=77)])
    outcome = _extractor(server).extract("sha256:p", ABSTRACT)
    assert outcome.ok and outcome.failure is None
    assert outcome.draft is not None
    assert outcome.draft.methods == ["FastMix"]
    assert [(c.ask, c.attempt, c.status) for c in outcome.calls] == [(1, 1, "ok")]
    assert (outcome.prompt_tokens, outcome.completion_tokens) == (321, 77)
    body = server.bodies()[0]
    assert body["messages"][-1]["content"].endswith(f'{ABSTRACT}\n"""')
    assert body["messages"][0]["role"] == "system"


def test_answer_outside_the_draft_schema_is_reasked_then_succeeds() -> None:
    bad = {**GOOD, "types": ["novel"]}
    server = ScriptedServer([ok(bad), ok(GOOD)])
    outcome = _extractor(server).extract("sha256:p", ABSTRACT)
    assert outcome.ok
    assert [(c.ask, c.status) for c in outcome.calls] == [(1, "invalid"), (2, "ok")]
    reask = server.bodies()[1]["messages"]
    assert reask[-2]["role"] == "assistant"
    assert "types" in reask[-1]["content"]


def test_malformed_json_is_reasked_and_then_recorded_as_failure() -> None:
    server = ScriptedServer([ok("{not json"), ok('{"tasks": '), ok("nope")])
    outcome = _extractor(server).extract("sha256:p", ABSTRACT)
    assert not outcome.ok
    assert outcome.failure is not None
    assert (outcome.failure.stage, outcome.failure.reason) == ("validation", "invalid_json")
    assert len(server.requests) == 3


def test_schema_violation_is_a_failure_with_reason() -> None:
    wrong = {"types": ["novel"], "tasks": ["x"], "methods": [], "benchmarks": [], "gains": []}
    server = ScriptedServer([ok(wrong)] * 3)
    outcome = _extractor(server).extract("sha256:p", ABSTRACT)
    assert outcome.failure is not None and outcome.failure.reason == "schema_violation"


def test_finish_reason_length_is_a_failure_not_data() -> None:
    server = ScriptedServer([ok('{"tasks": ["diffusion"], "methods": [',
                                finish_reason="length")])
    outcome = _extractor(server).extract("sha256:p", ABSTRACT)
    assert not outcome.ok
    assert outcome.failure is not None and outcome.failure.reason == "length"
    assert outcome.calls[0].status == "length"
    assert len(server.requests) == 1


def test_429_waits_for_retry_after_then_succeeds() -> None:
    sleeps: list[float] = []
    server = ScriptedServer([
        httpx2.Response(429, headers={"retry-after": "7"}, json={"error": "slow down"}),
        ok(GOOD),
    ])
    outcome = _extractor(server, sleeps).extract("sha256:p", ABSTRACT)
    assert outcome.ok
    assert sleeps == [7.0]
    assert [(c.ask, c.attempt, c.status, c.http_status) for c in outcome.calls] == [
        (1, 1, "http_error", 429), (1, 2, "ok", 200)]


def test_500_backs_off_exponentially_and_gives_up_with_reason() -> None:
    sleeps: list[float] = []
    server = ScriptedServer([httpx2.Response(500, json={"error": "boom"})] * 3)
    outcome = _extractor(server, sleeps).extract("sha256:p", ABSTRACT)
    assert not outcome.ok
    assert outcome.failure is not None
    assert (outcome.failure.stage, outcome.failure.reason) == ("request", "http_500")
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]


def test_timeout_is_retried() -> None:
    sleeps: list[float] = []
    server = ScriptedServer([httpx2.ReadTimeout("read timed out"), ok(GOOD)])
    outcome = _extractor(server, sleeps).extract("sha256:p", ABSTRACT)
    assert outcome.ok
    assert [c.status for c in outcome.calls] == ["timeout", "ok"]
    assert len(sleeps) == 1


def test_connection_errors_exhausted_become_a_failure() -> None:
    server = ScriptedServer([httpx2.ConnectError("refused")] * 3)
    outcome = _extractor(server).extract("sha256:p", ABSTRACT)
    assert outcome.failure is not None and outcome.failure.reason == "connection_error"


def test_client_errors_are_not_retried_and_secrets_are_redacted() -> None:
    server = ScriptedServer([
        httpx2.Response(401, json={"error": {"message": f"bad key {SECRET}"}}),
    ])
    outcome = _extractor(server).extract("sha256:p", ABSTRACT)
    assert outcome.failure is not None and outcome.failure.reason == "http_401"
    assert len(server.requests) == 1
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    stored = json.dumps([c.__dict__ for c in outcome.calls], default=str)
    assert SECRET not in stored and SECRET not in outcome.failure.detail
    assert "[REDACTED]" in outcome.failure.detail


def test_local_constraint_sends_the_schema_as_response_format() -> None:
    server = ScriptedServer([ok(GOOD), ok({**GOOD, "gains": []})])
    _extractor(server, constrain_json=True).extract("sha256:p", ABSTRACT)
    body = server.bodies()[0]
    assert body["response_format"]["type"] == "json_object"
    schema = body["response_format"]["schema"]
    assert schema["title"] == "PaperDraft"
    # a gain's value can only be a number this abstract states
    assert schema["$defs"]["DraftGain"]["properties"]["value"]["enum"] == ["2.5", "0.3"]
    _extractor(server, constrain_json=True).extract("sha256:q", "We prove a bound. No numbers.")
    assert server.bodies()[1]["response_format"]["schema"]["properties"]["gains"]["maxItems"] == 0


def test_tools_mode_goes_through_the_same_road() -> None:
    arguments = json.dumps(GOOD)
    response = chat_completion("")
    response["choices"][0]["message"] = {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "PaperDraft", "arguments": arguments}}]}
    response["choices"][0]["finish_reason"] = "tool_calls"
    server = ScriptedServer([httpx2.Response(200, json=response)])
    outcome = _extractor(server, mode="tools").extract("sha256:p", ABSTRACT)
    assert outcome.ok
    assert server.bodies()[0]["tools"][0]["function"]["name"] == "PaperDraft"


def test_cache_key_covers_what_shapes_the_answer() -> None:
    prompt = load_prompt()
    base = cache_key(_endpoint(), prompt.version, ABSTRACT)
    assert base.startswith("sha256:")
    assert base == cache_key(_endpoint(api_key="another-key"), prompt.version, ABSTRACT)
    variants = [
        cache_key(_endpoint(model="other"), prompt.version, ABSTRACT),
        cache_key(_endpoint(mode="tools"), prompt.version, ABSTRACT),
        cache_key(_endpoint(temperature=0.7), prompt.version, ABSTRACT),
        cache_key(_endpoint(max_tokens=99), prompt.version, ABSTRACT),
        cache_key(_endpoint(base_url="http://elsewhere/v1"), prompt.version, ABSTRACT),
        cache_key(_endpoint(), "sha256:other-prompt", ABSTRACT),
        cache_key(_endpoint(), prompt.version, ABSTRACT + " "),
    ]
    assert len({base, *variants}) == len(variants) + 1
    assert SECRET not in base


@pytest.mark.parametrize("value", ["7", "Wed, 21 Oct 2015 07:28:00 GMT"])
def test_retry_after_header_forms_are_understood(value: str) -> None:
    from papersift.extract.access.transport import _retry_after_seconds

    seconds = _retry_after_seconds(httpx2.Response(429, headers={"retry-after": value}))
    assert seconds is not None and seconds >= 0


def test_cache_key_covers_the_grammar_sent() -> None:
    prompt = load_prompt()
    constrained = _endpoint(constrain_json=True)
    # same endpoint and prompt; the abstracts' numbers make different grammars
    with_numbers = cache_key(constrained, prompt.version, ABSTRACT)
    assert with_numbers != cache_key(_endpoint(), prompt.version, ABSTRACT)
    from papersift.extract.access.extractor import request_schema

    schema = request_schema(constrained, ABSTRACT)
    assert schema is not None and request_schema(_endpoint(), ABSTRACT) is None
