"""The one place that builds LLM clients: openai SDK + instructor over a retrying transport.

Transport retries have one owner: :class:`RetryingTransport` (transport.py), a tenacity
``Retrying`` around each HTTP request (the SDK's own retries are off). Validation re-asks
are instructor's, bounded separately. Every HTTP attempt is reported to the
:class:`CallLog` (calls.py) active in the current context.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import instructor
import openai

from papersift.extract.access.calls import CallLog, CallRecord, call_log, current_log, redact
from papersift.extract.access.credentials import check_endpoint_url, redact_url
from papersift.extract.access.keepalive import KeepAliveTransport
from papersift.extract.access.limits import RequestGate
from papersift.extract.access.pools import ShardedPool, shared_ssl_context
from papersift.extract.access.transport import (
    RETRY_STATUSES,
    AsyncRetryingTransport,
    RetryableStatusError,
    RetryingTransport,
    RetryPolicy,
    ThreadedTransport,
    asked_wait,
)

__all__ = ["MODES", "RETRY_STATUSES", "AsyncRetryingTransport", "CallLog", "CallRecord",
           "Endpoint", "RetryPolicy", "RetryableStatusError", "RetryingTransport",
           "ThreadedTransport", "asked_wait", "async_sdk_over", "build_async_client",
           "build_async_http", "build_async_sdk",
           "build_client", "call_log", "check_endpoint", "redact", "wrap_async"]

MODES = {
    "json": instructor.Mode.JSON,
    "tools": instructor.Mode.TOOLS,
    "json_schema": instructor.Mode.JSON_SCHEMA,
    "md_json": instructor.Mode.MD_JSON,
}



# The Endpoint fields that shape the answer, and those that describe where it was asked,
# in the order runs and cache keys have always listed them.
_SAMPLING = ("temperature", "max_tokens", "seed", "constrain_json", "plain_json")
_DESCRIBED = ("base_url", "model", "mode", "kind", "timeout_s")


@dataclass(frozen=True)
class Endpoint:
    """Where and how to ask a model. The API key is kept out of repr and out of storage."""

    base_url: str
    model: str
    mode: str = "json"
    api_key: str | None = field(default=None, repr=False, compare=False)
    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = 0
    timeout_s: float = 180.0
    constrain_json: bool = False  # send the schema as response_format (llama.cpp, vLLM)
    # Ask for any JSON object (response_format json_object) and send no schema: the prompt
    # describes the format, the answer is still validated against it (see --lean).
    plain_json: bool = False
    kind: str = "compatible"  # local / openai / compatible
    # What identifies the model server in cache keys; a local server's port changes every
    # run, so it is identified by its model file's hash instead of its URL.
    identity: str | None = None

    @property
    def cache_identity(self) -> str:
        return self.identity or self.base_url.rstrip("/")

    @property
    def stored_identity(self) -> str:
        """The cache identity as runs and batches store it: a credential-shaped part of
        its URL redacted (the cache key hashes the full one)."""
        return redact_url(self.cache_identity, keep_fragment=True)

    def _values(self, names: tuple[str, ...]) -> dict[str, Any]:
        return {name: getattr(self, name) for name in names}

    def sampling(self) -> dict[str, Any]:
        """The request parameters that shape the answer (part of the cache key)."""
        return self._values(_SAMPLING)

    def describe(self) -> dict[str, Any]:
        """Everything about the endpoint except the key, for runs and logs."""
        described = self._values(_DESCRIBED)
        described["base_url"] = redact_url(self.base_url, keep_fragment=True)
        return {**described, **self.sampling()}


def build_client(
    endpoint: Endpoint,
    *,
    transport: httpx2.BaseTransport | None = None,
    policy: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[instructor.Instructor, openai.OpenAI]:
    """An instructor client for the endpoint, its HTTP going through the retrying transport."""
    sdk = _sdk_options(endpoint)
    inner = (transport if transport is not None
             else httpx2.HTTPTransport(verify=shared_ssl_context()))
    http_client = httpx2.Client(transport=RetryingTransport(inner, policy=policy, sleep=sleep),
                                timeout=_http_timeout(endpoint))
    raw = openai.OpenAI(**sdk, http_client=http_client)
    client = instructor.from_openai(raw, mode=MODES[endpoint.mode])
    client.on("parse:error", _mark_invalid)
    return client, raw


def check_endpoint(endpoint: Endpoint) -> None:
    """Raise what building a client for the endpoint would: an unknown mode, a URL that
    carries a key."""
    if endpoint.mode not in MODES:
        raise ValueError(f"unknown mode {endpoint.mode!r}; choose one of {sorted(MODES)}")
    check_endpoint_url(endpoint.base_url, "the endpoint URL")  # no client for a URL with a key


def _sdk_options(endpoint: Endpoint) -> dict[str, Any]:
    """What both SDK clients get: the endpoint, the key, no SDK retries (the transport
    owns them), the endpoint's timeout. Checks the mode first."""
    check_endpoint(endpoint)
    return {"base_url": endpoint.base_url, "api_key": endpoint.api_key or "not-needed",
            "max_retries": 0, "timeout": endpoint.timeout_s}


def _http_timeout(endpoint: Endpoint) -> httpx2.Timeout:
    return httpx2.Timeout(endpoint.timeout_s, connect=10.0)


def build_async_client(
    endpoint: Endpoint,
    *,
    transport: httpx2.BaseTransport | httpx2.AsyncBaseTransport | None = None,
    policy: RetryPolicy = RetryPolicy(),
    gate: RequestGate | None = None,
) -> tuple[instructor.AsyncInstructor, openai.AsyncOpenAI]:
    """The async instructor client for the endpoint, paced by ``gate`` when given. A
    sync-only transport runs in worker threads."""
    raw = build_async_sdk(endpoint, transport=transport, policy=policy, gate=gate)
    return wrap_async(raw, endpoint), raw


def build_async_sdk(
    endpoint: Endpoint,
    *,
    transport: httpx2.BaseTransport | httpx2.AsyncBaseTransport | None = None,
    policy: RetryPolicy = RetryPolicy(),
    gate: RequestGate | None = None,
) -> openai.AsyncOpenAI:
    """The async SDK client of build_async_client, without instructor's wrapping."""
    sdk = _sdk_options(endpoint)
    http_client = build_async_http(endpoint, transport=transport, policy=policy, gate=gate)
    return openai.AsyncOpenAI(**sdk, http_client=http_client)


def build_async_http(
    endpoint: Endpoint,
    *,
    transport: httpx2.BaseTransport | httpx2.AsyncBaseTransport | None = None,
    policy: RetryPolicy = RetryPolicy(),
    gate: RequestGate | None = None,
) -> httpx2.AsyncClient:
    """The HTTP client under an async SDK client: retrying, logging and paced."""
    if transport is None:
        # Plain HTTP on papersift's own keep-alive connections (keepalive.py); https in
        # small httpcore2 pools, so the walk each pool makes after a request stays short.
        inner: httpx2.AsyncBaseTransport = KeepAliveTransport(fallback=ShardedPool(
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=None)))
    elif isinstance(transport, httpx2.AsyncBaseTransport):
        inner = transport
    else:
        inner = ThreadedTransport(transport)
    return httpx2.AsyncClient(
        transport=AsyncRetryingTransport(inner, policy=policy, gate=gate),
        timeout=_http_timeout(endpoint))


def async_sdk_over(endpoint: Endpoint, http_client: httpx2.AsyncClient) -> openai.AsyncOpenAI:
    """The async SDK client for the endpoint over an HTTP client of build_async_http."""
    return openai.AsyncOpenAI(**_sdk_options(endpoint), http_client=http_client)


def wrap_async(raw: openai.AsyncOpenAI, endpoint: Endpoint) -> instructor.AsyncInstructor:
    """instructor around an async SDK client, marking answers it rejects in the call log."""
    client = instructor.from_openai(raw, mode=MODES[endpoint.mode])
    client.on("parse:error", _mark_invalid)
    return client


def _mark_invalid(error: Exception, *_args: Any, **_kwargs: Any) -> None:
    log = current_log()
    if log is not None:
        log.mark_last_invalid(error)
