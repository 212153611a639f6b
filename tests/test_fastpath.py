"""The fast first ask (extract/access/fastpath.py) sends what instructor sends and ends
every abstract as instructor's path ends it: same request, same draft, same calls, same
failure. Each case runs twice against the same hand-written fake server script (httpx2
MockTransport): once with the fast path, once with it switched off."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any

import httpx2
import openai
import pytest

from papersift.extract.access.extractor import Extractor, Outcome
from papersift.extract.access.fastpath import BodyTemplate, body_template, sdk_request, serialise
from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.prompts import LEAN_PROMPT, load_prompt
from tests.conftest import chat_completion

ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json",
                    api_key="sk-test-fastpath")
ABSTRACTS = [
    "We propose FooNet, a graph method for protein folding. On CASP15 it improves "
    "GDT-TS by 4.2% over AlphaFold.",
    'Quotes "like this", a backslash \\ and a tab\t, unicode: café, 東京, emoji 🧪, '
    "and a placeholder-looking {{abstract}} inside the text.",
]
DRAFT = {"tasks": ["protein folding"], "methods": ["FooNet"],
         "benchmarks": [{"name": "CASP15", "new": False}], "types": ["method"],
         "gains": [{"metric": "GDT-TS", "value": "4.2", "vs": "AlphaFold"}]}

Answer = Callable[[int, dict[str, Any]], httpx2.Response]


def _answer(content: str, mode: str, finish: str = "stop") -> httpx2.Response:
    body = chat_completion(content)
    body["choices"][0]["finish_reason"] = finish
    if mode == "tools":
        message = body["choices"][0]["message"]
        message["content"] = None
        message["tool_calls"] = [{"id": "call_1", "type": "function", "function": {
            "name": "PaperDraft", "arguments": content}}]
    return httpx2.Response(200, json=body)


def _run(mode: str, script: list[Callable[[str], httpx2.Response]], *, fast: bool,
         text: str = ABSTRACTS[0], lean: bool = False,
         ) -> tuple[Outcome, list[httpx2.Request]]:
    """Extract one abstract through a fake server that answers request i with
    script[i]; returns the outcome and the requests it received."""
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return script[min(len(seen), len(script)) - 1](mode)

    endpoint = dataclasses.replace(ENDPOINT, mode=mode, plain_json=lean)
    prompt = load_prompt(LEAN_PROMPT) if lean else load_prompt()
    policy = RetryPolicy(initial_wait_s=0.0, jitter_s=0.0, max_wait_s=0.0)
    extractor = Extractor(endpoint, prompt, transport=httpx2.MockTransport(handler),
                          policy=policy)
    if not fast:
        extractor._fast_path = lambda raw, http: None  # type: ignore[method-assign]

    async def go() -> Outcome:
        async with extractor.session():
            assert (extractor._fast is not None) == fast
            return await extractor.extract_async("p1", text)

    try:
        return asyncio.run(go()), seen
    finally:
        extractor.close()


def _same(mode: str, script: list[Callable[[str], httpx2.Response]], **kwargs: Any) -> Outcome:
    fast, fast_requests = _run(mode, script, fast=True, **kwargs)
    slow, slow_requests = _run(mode, script, fast=False, **kwargs)
    assert [json.loads(r.content) for r in fast_requests] == [
        json.loads(r.content) for r in slow_requests]
    for quick, sdk in zip(fast_requests, slow_requests, strict=True):
        assert quick.url == sdk.url and quick.method == sdk.method
        assert dict(quick.headers) == dict(sdk.headers)
        assert quick.extensions.get("timeout") == sdk.extensions.get("timeout")

    def shape(outcome: Outcome) -> dict[str, Any]:
        return {"draft": outcome.draft.model_dump(mode="json") if outcome.draft else None,
                "failure": outcome.failure, "asks": outcome.asks,
                "tokens": (outcome.prompt_tokens, outcome.completion_tokens),
                "calls": [(c.ask, c.attempt, c.status, c.http_status, c.finish_reason, c.error)
                          for c in outcome.calls]}

    assert shape(fast) == shape(slow)
    return fast


GOOD: Callable[[str], httpx2.Response] = lambda mode: _answer(json.dumps(DRAFT), mode)  # noqa: E731


@pytest.mark.parametrize("mode", ["json", "tools", "json_schema"])
@pytest.mark.parametrize("text", ABSTRACTS)
def test_a_clean_answer_is_the_same_request_and_draft(mode: str, text: str) -> None:
    outcome = _same(mode, [GOOD], text=text)
    assert outcome.draft is not None and outcome.draft.methods == ["FooNet"]
    assert [c.status for c in outcome.calls] == ["ok"]


def test_the_lean_prompt_sends_the_same_body() -> None:
    outcome = _same("json_schema", [GOOD], lean=True)
    assert outcome.draft is not None


@pytest.mark.parametrize("mode", ["json", "tools"])
def test_an_invalid_answer_is_reasked_as_instructor_reasks(mode: str) -> None:
    bad: Callable[[str], httpx2.Response] = lambda m: _answer('{"tasks": 3}', m)  # noqa: E731
    outcome = _same(mode, [bad, GOOD])
    assert outcome.draft is not None and outcome.asks == 2
    assert [c.status for c in outcome.calls] == ["invalid", "ok"]


def test_an_answer_cut_at_max_tokens_fails_as_length() -> None:
    cut: Callable[[str], httpx2.Response] = lambda m: _answer('{"tasks": ["a', m, "length")  # noqa: E731
    outcome = _same("json", [cut])
    assert outcome.failure is not None and outcome.failure.reason == "length"


def test_retried_statuses_and_a_final_error_status_end_the_same() -> None:
    busy: Callable[[str], httpx2.Response] = lambda m: httpx2.Response(  # noqa: E731
        500, json={"error": {"message": "busy"}})
    refused: Callable[[str], httpx2.Response] = lambda m: httpx2.Response(  # noqa: E731
        400, json={"error": {"message": "bad request"}})
    assert _same("json", [busy, GOOD]).draft is not None
    outcome = _same("json", [refused])
    assert outcome.failure is not None and outcome.failure.reason == "http_400"


def test_a_network_error_is_raised_to_the_sdk_as_it_happened() -> None:
    def down(_mode: str) -> httpx2.Response:
        raise httpx2.ConnectError("refused")

    outcome = _same("json", [down])
    assert outcome.failure is not None and outcome.failure.reason == "connection_error"


def test_a_template_splices_any_text_as_serialising_it_whole() -> None:
    body = {"messages": [{"role": "user", "content": "A: \u0000papersift-abstract\u0000 !"}]}
    template = body_template(body)
    assert isinstance(template, BodyTemplate)
    for text in [*ABSTRACTS, "", "\u0000", '"\\']:
        expected = {"messages": [{"role": "user", "content": f"A: {text} !"}]}
        assert template.body(text) == serialise(expected)
    assert body_template({"messages": []}) is None


@pytest.mark.parametrize(("key", "url", "timeout"), [
    ("sk-test", "http://127.0.0.1:9/v1", 180.0), ("not-needed", "https://h.example/v1/", 600.0)])
def test_the_public_request_matches_the_sdks_own(key: str, url: str, timeout: float) -> None:
    """sdk_request, built from public attributes, is byte for byte what the SDK builds for
    itself (its private builder is the oracle here, and only here)."""
    from openai._models import FinalRequestOptions

    http = httpx2.AsyncClient(timeout=httpx2.Timeout(timeout, connect=10.0))
    raw = openai.AsyncOpenAI(api_key=key, base_url=url, timeout=timeout, max_retries=0,
                             http_client=http)
    sdk = raw._build_request(FinalRequestOptions.construct(
        method="post", url="/chat/completions", json_data={}))
    ours = sdk_request(raw, http)
    assert (ours.url, ours.headers.raw, ours.extensions) == \
        (sdk.url, sdk.headers.raw, sdk.extensions)
