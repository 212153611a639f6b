"""The one request path (extract/access/request.py): bodies are built once and filled in per
abstract, exactly as instructor's public request preparation shapes each abstract's own
messages; answers are read per mode and re-asked in instructor's words; the HTTP is
httpx2's (faked at the boundary with MockTransport, never a model)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import httpx2
import pytest
from instructor import response_schema
from instructor.processing import handle_response_model

from papersift.extract.access.extractor import Extractor
from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.extract.access.request import (
    MAX_SEARCHED_CHARS,
    MODES,
    Answer,
    AnswerParser,
    RequestBuilder,
    json_span,
    request_schema,
)
from papersift.extract.access.transport import MAX_BODY_BYTES
from papersift.prompts import Example, load_prompt
from papersift.prompts.pool import FewshotPool, with_pool
from papersift.schemas import PaperDraft
from papersift.testing.bodies import chat_completion
from papersift.testing.mock import ScriptedServer, ok

ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")
ABSTRACT = ("We propose FooNet, a graph method for protein folding. On the CASP15 benchmark "
            "it improves GDT-TS by 4.2% over AlphaFold. Quotes \"x\", a tab\t and ünïcode.")
DRAFT = {"tasks": ["protein folding"], "methods": ["FooNet"],
         "benchmarks": [{"name": "CASP15", "new": False}], "types": ["method"],
         "gains": [{"metric": "GDT-TS", "value": "4.2", "vs": "AlphaFold"}]}
POOL = FewshotPool(examples=(Example("An example about protein folding benchmarks.", DRAFT),
                             Example("Another example on image classification.", DRAFT)),
                   version="sha256:test", k=1)


def _instructor_body(endpoint: Endpoint, messages: list[dict[str, Any]],
                     text: str) -> dict[str, Any]:
    """What instructor's public request preparation makes of this abstract's messages,
    with papersift's response_format merged over it (as the SDK merged extra_body)."""
    options: dict[str, Any] = {"model": endpoint.model, "temperature": endpoint.temperature,
                               "max_tokens": endpoint.max_tokens, "seed": endpoint.seed}
    _, body = handle_response_model(response_schema(PaperDraft), mode=MODES[endpoint.mode],
                                    messages=messages, **options)
    schema = request_schema(endpoint, text)
    if schema is not None:
        body["response_format"] = {"type": "json_object", "schema": schema}
    elif endpoint.plain_json:
        body["response_format"] = {"type": "json_object"}
    return dict(body)


@pytest.mark.parametrize("pool", [False, True])
@pytest.mark.parametrize(("mode", "constrain", "plain"), [
    ("json", False, False), ("json", True, False), ("json", False, True),
    ("tools", False, False), ("tools", True, False), ("json_schema", False, False),
    ("md_json", False, False)])
def test_each_body_is_what_instructor_prepares_for_that_abstract(
        mode: str, constrain: bool, plain: bool, pool: bool) -> None:
    endpoint = dataclasses.replace(ENDPOINT, mode=mode, constrain_json=constrain,
                                   plain_json=plain)
    prompt = with_pool(load_prompt(), POOL) if pool else load_prompt()
    builder = RequestBuilder(endpoint, prompt)
    assert builder.fills_in == (not pool)  # prepared once unless examples vary per abstract
    for text in (ABSTRACT, "We prove a bound. No numbers at all."):
        expected = _instructor_body(endpoint, prompt.messages(text), text)
        assert builder.body(text) == expected
    first = builder.body(ABSTRACT)
    first["messages"][0]["content"] = "changed by a caller"
    assert builder.body(ABSTRACT) == _instructor_body(endpoint, prompt.messages(ABSTRACT),
                                                      ABSTRACT)


def _extractor(server: ScriptedServer, **endpoint: Any) -> Extractor:
    return Extractor(dataclasses.replace(ENDPOINT, api_key="sk-test-SECRET-0123456789",
                                         **endpoint),
                     load_prompt(), max_reasks=1, transport=server.transport(),
                     policy=RetryPolicy(max_attempts=1))


def test_the_wire_request_is_the_body_with_the_key_only_in_its_header() -> None:
    server = ScriptedServer([ok(DRAFT)])
    extractor = _extractor(server)
    outcome = extractor.extract("p", ABSTRACT)
    assert outcome.ok and type(outcome.draft) is PaperDraft  # plain: no instructor class
    request = server.requests[0]
    assert str(request.url) == "http://fake.test/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test-SECRET-0123456789"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == extractor.request_body(ABSTRACT)
    assert b"SECRET" not in request.content


def test_a_tools_answer_that_fails_is_reasked_with_a_tool_message() -> None:
    def tool_answer(arguments: str) -> httpx2.Response:
        response = chat_completion("")
        response["choices"][0]["message"] = {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": "call_7", "type": "function",
                            "function": {"name": "PaperDraft", "arguments": arguments}}]}
        return httpx2.Response(200, json=response)

    server = ScriptedServer([tool_answer('{"tasks": 5}'), tool_answer(json.dumps(DRAFT))])
    outcome = _extractor(server, mode="tools").extract("p", ABSTRACT)
    assert outcome.ok
    assert [(c.ask, c.status) for c in outcome.calls] == [(1, "invalid"), (2, "ok")]
    added = server.bodies()[1]["messages"][-2:]
    assert added[0]["role"] == "assistant" and added[0]["tool_calls"][0]["id"] == "call_7"
    assert added[1]["role"] == "tool" and added[1]["tool_call_id"] == "call_7"
    assert added[1]["content"].startswith("Validation Error found:\n")
    assert added[1]["content"].endswith("Recall the function correctly, fix the errors")


def test_the_async_path_sends_the_same_bodies_and_reasks_alike() -> None:
    answers = [ok({**DRAFT, "types": ["novel"]}), ok(DRAFT)]
    sync_server, async_server = ScriptedServer(list(answers)), ScriptedServer(list(answers))
    sync = _extractor(sync_server).extract("p", ABSTRACT)
    extractor = _extractor(async_server)

    async def go() -> Any:
        async with extractor.session():
            return await extractor.extract_async("p", ABSTRACT)

    done = asyncio.run(go())
    assert sync.ok and done.ok and sync.draft == done.draft
    assert sync_server.bodies() == async_server.bodies()
    reask = async_server.bodies()[1]["messages"][-1]["content"]
    assert reask.startswith("Correct your JSON ONLY RESPONSE, based on the following errors:")


def test_an_answer_over_the_body_cap_fails_with_its_own_reason() -> None:
    def huge(request: httpx2.Request) -> httpx2.Response:
        chunks = (b" " * (1 << 20) for _ in range((MAX_BODY_BYTES >> 20) + 1))
        return httpx2.Response(200, content=chunks)  # streamed, as a server sends it

    server = ScriptedServer([huge])
    outcome = _extractor(server).extract("p", ABSTRACT)
    assert outcome.failure is not None
    assert (outcome.failure.stage, outcome.failure.reason) == ("request", "answer_too_large")
    assert "16 MiB" in outcome.failure.detail


@pytest.mark.parametrize(("data", "problem"), [
    (None, "no_answer"), ({"choices": []}, "no_answer"), ({"choices": [{}]}, "no_answer"),
    (chat_completion('{"tasks": [', finish_reason="length"), "length"),
    (chat_completion("{not json"), "invalid"),
    (chat_completion(json.dumps(DRAFT)), None)])
def test_the_parser_says_what_an_answer_is(data: object, problem: str | None) -> None:
    answer = AnswerParser("json", PaperDraft).parse(data)
    assert isinstance(answer, Answer) and answer.problem == problem
    assert (answer.draft is not None) == (problem is None)


def test_md_json_takes_the_last_json_object_of_the_text() -> None:
    text = f'An echo {{"tasks": ["injected"]}} then\n```json\n{json.dumps(DRAFT)}\n```'
    answer = AnswerParser("md_json", PaperDraft).parse(chat_completion(text))
    assert answer.draft is not None and answer.draft.methods == ["FooNet"]  # type: ignore[attr-defined]
    assert json_span("no json here") == "no json here"
    assert json_span("{" * (MAX_SEARCHED_CHARS + 1)) == "{" * (MAX_SEARCHED_CHARS + 1)


@pytest.mark.parametrize("first", [b"", b'{"choices": [{"mess'])
def test_a_json_answer_that_did_not_arrive_whole_is_asked_again_as_it_was(first: bytes) -> None:
    broken = httpx2.Response(200, content=first, headers={"content-type": "application/json"})
    server = ScriptedServer([broken, ok(DRAFT)])
    outcome = _extractor(server).extract("p", ABSTRACT)
    assert outcome.ok
    assert server.bodies()[1] == server.bodies()[0]  # no re-ask message: nothing to correct
    assert [c.ask for c in outcome.calls] == [1, 2]
    assert outcome.calls[0].status in ("empty_body", "invalid")


def test_a_json_answer_broken_on_every_ask_is_no_answer() -> None:
    broken = httpx2.Response(200, content=b"", headers={"content-type": "application/json"})
    server = ScriptedServer([broken, broken])
    outcome = _extractor(server).extract("p", ABSTRACT)
    assert outcome.failure is not None
    assert (outcome.failure.stage, outcome.failure.reason) == ("validation", "no_answer")
    assert outcome.failure.detail.startswith("after 2 attempt(s): ")
