"""--lean: the short prompt, and a request that carries no schema (only json_object), still
validated against the draft schema; and the dry-run estimate of each request's tokens.
Against the scripted fake endpoint (hand-written responses)."""

from __future__ import annotations

import json

import pytest

from papersift.extract.access.endpoints import EndpointError, EndpointOptions, plan_endpoint
from papersift.extract.access.extractor import Extractor
from papersift.extract.access.limits import approx_tokens
from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.app import billed_prompt_tokens
from papersift.prompts import DEFAULT_PROMPT, LEAN_PROMPT, load_prompt
from papersift.testing.mock import ScriptedServer, ok
from tests.test_extractor import ABSTRACT, GOOD


def _lean_endpoint() -> Endpoint:
    options = EndpointOptions(provider="compatible", base_url="http://fake.test/v1",
                              model="gpt-4o-mini", lean=True)
    return plan_endpoint(options).endpoint


def test_lean_request_sends_no_schema_and_still_validates() -> None:
    endpoint = _lean_endpoint()
    assert (endpoint.mode, endpoint.plain_json) == ("json_schema", True)
    server = ScriptedServer([ok({"tasks": ["x"]}), ok(GOOD)])  # the first breaks the schema
    extractor = Extractor(endpoint, load_prompt(LEAN_PROMPT), max_reasks=1,
                          transport=server.transport())
    outcome = extractor.extract("sha256:p", ABSTRACT)
    assert outcome.ok and outcome.asks == 2  # the draft schema is enforced by validation
    body = server.bodies()[0]
    assert body["response_format"] == {"type": "json_object"}
    assert "tools" not in body
    sent = json.dumps(body)
    assert "$defs" not in sent and "genius" not in sent  # no schema text anywhere
    assert body["messages"][0]["content"] == load_prompt(LEAN_PROMPT).system


def test_lean_is_refused_where_it_cannot_apply() -> None:
    with pytest.raises(EndpointError, match="json_schema mode only"):
        plan_endpoint(EndpointOptions(provider="compatible", base_url="http://x/v1",
                                      model="m", mode="tools", lean=True))
    with pytest.raises(EndpointError, match="for large remote models"):
        plan_endpoint(EndpointOptions(provider="local", lean=True))


def test_lean_and_plain_json_change_the_cache_key() -> None:
    lean = _lean_endpoint()
    full = Endpoint(base_url=lean.base_url, model=lean.model, mode="json_schema")
    assert (Extractor(lean, load_prompt(LEAN_PROMPT)).key_for(ABSTRACT)
            != Extractor(full, load_prompt(LEAN_PROMPT)).key_for(ABSTRACT))


def test_estimate_counts_what_each_mode_sends() -> None:
    remote = Endpoint(base_url="http://x/v1", model="gpt-4o-mini", mode="tools",
                      kind="compatible")
    full = billed_prompt_tokens(Extractor(remote, load_prompt(DEFAULT_PROMPT)), ABSTRACT)
    lean = billed_prompt_tokens(Extractor(_lean_endpoint(), load_prompt(LEAN_PROMPT)),
                                ABSTRACT)
    # The full prompt carries examples and a tools schema; the lean one neither.
    assert full > 4 * lean
    response_format = json.dumps({"type": "json_object"}, separators=(",", ":"))
    assert lean == (approx_tokens(load_prompt(LEAN_PROMPT).user(ABSTRACT))
                    + approx_tokens(load_prompt(LEAN_PROMPT).system)
                    + approx_tokens(response_format) + 2 * 4)
    assert approx_tokens("") == 0
    assert approx_tokens("Transformers") == round(2 / 1.159)  # a long word counts per 7
