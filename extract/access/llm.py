"""The one place that builds the HTTP clients every model request goes through.

Transport retries have one owner: :class:`RetryingTransport` (transport.py), a tenacity
``Retrying`` around each HTTP request. Validation re-asks are the extractor's, bounded
separately. Every HTTP attempt is reported to the :class:`CallLog` (calls.py) active in
the current context. The clients are httpx2's; an async run's plain-HTTP connections are
papersift's own (keepalive.py), its https ones httpx2's pools.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

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

__all__ = ["MODE_NAMES", "RETRY_STATUSES", "AsyncRetryingTransport", "CallLog", "CallRecord",
           "Endpoint", "RetryPolicy", "RetryableStatusError", "RetryingTransport",
           "ThreadedTransport", "asked_wait", "build_async_http", "build_http", "call_log",
           "chat_headers", "chat_url", "check_endpoint", "current_log", "redact"]

# How the answer's format is asked for (instructor's modes of the same names).
MODE_NAMES = ("json", "tools", "json_schema", "md_json")


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


def check_endpoint(endpoint: Endpoint) -> None:
    """Raise what building a client for the endpoint would: an unknown mode, a URL that
    carries a key."""
    if endpoint.mode not in MODE_NAMES:
        raise ValueError(f"unknown mode {endpoint.mode!r}; choose one of {sorted(MODE_NAMES)}")
    check_endpoint_url(endpoint.base_url, "the endpoint URL")  # no client for a URL with a key


def _http_timeout(endpoint: Endpoint) -> httpx2.Timeout:
    """Each wait of an attempt (connect, write, each read) is bounded by --timeout."""
    return httpx2.Timeout(endpoint.timeout_s)


def chat_url(endpoint: Endpoint) -> httpx2.URL:
    """The endpoint's chat-completions URL: its base URL's path plus /chat/completions."""
    base = httpx2.URL(endpoint.base_url)
    return base.copy_with(path=base.path.rstrip("/") + "/chat/completions")


def chat_headers(endpoint: Endpoint) -> dict[str, str]:
    """The headers of every chat request (the key only here, never in a recording)."""
    return {"Authorization": f"Bearer {endpoint.api_key or 'not-needed'}",
            "Content-Type": "application/json", "Accept": "application/json",
            "User-Agent": "papersift"}


def build_http(
    endpoint: Endpoint,
    *,
    transport: httpx2.BaseTransport | None = None,
    policy: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], None] = time.sleep,
) -> httpx2.Client:
    """A blocking HTTP client for the endpoint, through the retrying transport."""
    check_endpoint(endpoint)
    inner = (transport if transport is not None
             else httpx2.HTTPTransport(verify=shared_ssl_context()))
    return httpx2.Client(transport=RetryingTransport(inner, policy=policy, sleep=sleep),
                         timeout=_http_timeout(endpoint))


def build_async_http(
    endpoint: Endpoint,
    *,
    transport: httpx2.BaseTransport | httpx2.AsyncBaseTransport | None = None,
    policy: RetryPolicy = RetryPolicy(),
    gate: RequestGate | None = None,
) -> httpx2.AsyncClient:
    """The async HTTP client for the endpoint: retrying, logging and paced."""
    check_endpoint(endpoint)
    if transport is None:
        # Plain HTTP on papersift's own keep-alive connections (keepalive.py: measured
        # faster than httpx2's pools and than aiohttp, see docs/architecture.md); https in
        # httpx2's small pools, so the walk each pool makes after a request stays short.
        inner: httpx2.AsyncBaseTransport = KeepAliveTransport(fallback=ShardedPool(
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=None)))
    elif isinstance(transport, httpx2.AsyncBaseTransport):
        inner = transport
    else:
        inner = ThreadedTransport(transport)
    return httpx2.AsyncClient(
        transport=AsyncRetryingTransport(inner, policy=policy, gate=gate),
        timeout=_http_timeout(endpoint))
