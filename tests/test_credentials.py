"""Generated endpoint URLs and error texts with credentials in every position: no URL with a
credential becomes an endpoint, and no scrubbed text keeps a secret."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from papersift.extract.access.credentials import (
    SECRET_PARAMS,
    CredentialInURLError,
    check_endpoint_url,
    redact_url,
    scrub,
)
from papersift.extract.access.endpoints import EndpointError, EndpointOptions, plan_endpoint
from papersift.extract.access.llm import Endpoint, build_http
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.testing.mock import FakeModel
from papersift.warehouse.db import describe_command
from papersift.warehouse.export import export
from tests.conftest import CORPUS, stored_rows

SECRET_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
secrets_ = st.text(SECRET_CHARS, min_size=12, max_size=60).map(lambda s: "sk-" + s)
hosts = st.sampled_from(["127.0.0.1:8000", "api.example.org", "[::1]:9", "llm.local"])
paths = st.sampled_from(["/v1", "/openai/deployments/x", "", "/"])


def _spellings(name: str) -> st.SearchStrategy[str]:
    """A secret parameter's name as a user might write it: case, '-' or '_'."""
    return st.sampled_from([name, name.upper(), name.capitalize()])


param_names = st.sampled_from(sorted(SECRET_PARAMS | {"api-key", "api_key", "access_token",
                                                      "X-Amz-Signature"})).flatmap(_spellings)


@st.composite
def secret_urls(draw: st.DrawFn) -> tuple[str, str]:
    """(URL, the secret it carries), the secret in userinfo or in a query parameter."""
    secret = draw(secrets_)
    host, path = draw(hosts), draw(paths)
    scheme = draw(st.sampled_from(["http", "https", "HTTPS"]))
    harmless = draw(st.sampled_from(["", "api-version=2024-06-01&", "a=b&"]))
    where = draw(st.sampled_from(["password", "user", "query", "query-last"]))
    if where == "password":
        return f"{scheme}://user:{secret}@{host}{path}", secret
    if where == "user":
        return f"{scheme}://{secret}@{host}{path}", secret
    name = draw(param_names)
    query = f"{name}={secret}" if where == "query" else f"{harmless}{name}={secret}"
    return f"{scheme}://{host}{path}?{query}", secret


@settings(max_examples=300, deadline=None)
@given(secret_urls())
def test_no_url_with_a_credential_becomes_an_endpoint(case: tuple[str, str]) -> None:
    url, secret = case
    with pytest.raises(EndpointError) as refused:
        plan_endpoint(EndpointOptions(base_url=url, model="m"))
    assert secret not in str(refused.value)
    assert "OPENAI_API_KEY" in str(refused.value)
    assert secret not in redact_url(url)
    with pytest.raises(CredentialInURLError):  # nor can a client be built around it
        build_http(Endpoint(base_url=url, model="m"))


@settings(max_examples=100, deadline=None)
@given(hosts, paths, st.sampled_from(["", "?api-version=2024-06-01", "?a=1&b=two"]))
def test_plain_urls_pass_unchanged(host: str, path: str, query: str) -> None:
    url = f"http://{host}{path}{query}"
    assert check_endpoint_url(url) == url
    assert plan_endpoint(EndpointOptions(base_url=url, model="m")).endpoint.base_url == url


TEMPLATES = [
    "Authorization: Bearer {s}",
    "authorization: {s}",
    '{{"headers": {{"Authorization": "Bearer {s}"}}}}',
    "'api-key': '{s}'",
    "x-api-key={s}",
    "X-Api-Key: {s}",
    "Proxy-Authorization: Basic {s}",
    "request carried Authorization: Basic {b64}",
    "Basic {b64user}",
    "echo {s} back",
    "see http://user:{s}@host/v1/chat",
    "GET https://host/v1?api-key={s}&x=1",
    "cookie: session={s}",
]


@settings(max_examples=400, deadline=None)
@given(secrets_, st.lists(st.sampled_from(TEMPLATES), min_size=1, max_size=4),
       st.text(max_size=40))
# found by this test: Base64 glued to the next header ("...AwAuthorization: Bearer ...")
@example("sk-0000000000000", ["Authorization: Bearer {s}", "Basic {b64user}",
                              "Authorization: Bearer {s}"], "")
def test_scrub_leaves_no_secret(secret: str, templates: list[str], noise: str) -> None:
    b64 = base64.b64encode(f":{secret}".encode()).decode()
    b64user = base64.b64encode(f"user:{secret}".encode()).decode()
    text = noise.join(t.format(s=secret, b64=b64, b64user=b64user) for t in templates)
    cleaned = scrub(text, (secret,))
    assert secret not in cleaned
    assert b64 not in cleaned and b64user not in cleaned


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(SECRET_CHARS + ":/@?=&.", min_size=1, max_size=30), max_size=6),
       secrets_)
def test_the_lock_message_names_only_program_and_command(args: list[str], secret: str) -> None:
    argv = ["/venv/bin/python", "/venv/bin/papersift", "run", *args,
            f"--base-url=http://u:{secret}@h/v1", "--api-key-file", secret]
    shown = describe_command(argv)
    assert secret not in shown
    assert shown.startswith("papersift run")


NAMED_BY_SHAPE = ["https://apim.example.net/v1?subscription-key={s}",
                  "https://apim.example.net/v1?Ocp-Apim-Subscription-Key={s}",
                  "https://gitlab.example/api/v4?private_token={s}",
                  "https://h.example/v1;key={s}/chat",
                  "https://h.example/v1;X-Goog-Sig={s}",
                  "https://h.example/{s}/v1",
                  "https://h.example/v1?client_secret_value={s}"]


@pytest.mark.parametrize("template", NAMED_BY_SHAPE)
def test_a_credential_named_by_shape_or_in_the_path_is_refused(template: str) -> None:
    secret = "sk-proj-Zq81xVb7Lm2Wc9Rt4Yp6Ks3Hd"
    url = template.format(s=secret)
    with pytest.raises(CredentialInURLError) as refused:
        check_endpoint_url(url)
    assert secret not in str(refused.value)
    assert secret not in redact_url(url)
    assert secret not in scrub(f"GET {url} failed")


@pytest.mark.parametrize("url", [
    "https://api.cloudflare.example/client/v4/accounts/0123456789abcdef0123456789abcdef/ai/v1",
    "https://h.example/gw/Zq81xVb7Lm2Wc9Rt4Yp6Ks3Hd0/v1",
    "https://h.example/v1?deployment=aZ81xVb7Lm2Wc9Rt4Yp6Ks3Hd0",
])
def test_a_credential_shaped_value_is_redacted_wherever_the_endpoint_is_stored(
        url: str, tmp_path: Path) -> None:
    token = next(part for part in url.replace("=", "/").split("/") if len(part) >= 26)
    db = tmp_path / "w.duckdb"
    endpoint = Endpoint(base_url=url, model="fake", mode="json")
    run_inputs([str(CORPUS)], RunSettings(db=db), transport=FakeModel().transport(),
               endpoint=endpoint)
    stored = stored_rows(db, "SELECT endpoint, CAST(params AS VARCHAR) FROM runs")
    assert stored and all(token not in str(value) for row in stored for value in row)
    assert "[REDACTED]" in stored[0][0]
    for exported in export(db, tmp_path / "out", "csv"):
        assert token not in exported.path.read_text(encoding="utf-8")
    assert token not in scrub(f"POST {url}/chat/completions: 500")
    # plain URLs are kept as they are
    assert redact_url("https://x.openai.azure.com/openai/deployments/gpt-4o-mini-2024-07-18"
                      "?api-version=2024-06-01") == ("https://x.openai.azure.com/openai/"
                                                     "deployments/gpt-4o-mini-2024-07-18"
                                                     "?api-version=2024-06-01")
