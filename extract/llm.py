"""The one place that builds LLM clients: openai SDK + instructor over a retrying transport.

Transport retries have one owner: :class:`RetryingTransport`, a tenacity ``Retrying`` around
each HTTP request (the SDK's own retries are off). It retries 429, 5xx, timeouts and
connection errors with exponential backoff and jitter, honours ``Retry-After``, and is
bounded in attempts and in time. Validation re-asks are instructor's, bounded separately.
Every HTTP attempt is reported to the :class:`CallLog` active in the current thread.
"""

from __future__ import annotations

import contextvars
import email.utils
import json
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx2
import instructor
import openai
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_after_delay,
)

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
MODES = {
    "json": instructor.Mode.JSON,
    "tools": instructor.Mode.TOOLS,
    "json_schema": instructor.Mode.JSON_SCHEMA,
    "md_json": instructor.Mode.MD_JSON,
}


class RetryableStatusError(Exception):
    """An HTTP answer worth retrying (429, 5xx...)."""

    def __init__(self, response: httpx2.Response) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


@dataclass(frozen=True)
class RetryPolicy:
    """How hard the transport tries before giving up on one request."""

    max_attempts: int = 5
    max_elapsed_s: float = 300.0
    initial_wait_s: float = 1.0
    max_wait_s: float = 30.0
    jitter_s: float = 1.0
    max_retry_after_s: float = 120.0


@dataclass
class CallRecord:
    """One HTTP attempt, as stored in the calls table."""

    ask: int
    attempt: int
    status: str
    started: datetime
    http_status: int | None = None
    latency_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    error: str | None = None


@dataclass
class CallLog:
    """The attempts made for one abstract; set as current while it is extracted."""

    secrets: tuple[str, ...] = ()
    records: list[CallRecord] = field(default_factory=list)
    ask: int = 0

    def redact(self, text: str) -> str:
        return redact(text, self.secrets)

    @property
    def prompt_tokens(self) -> int:
        return sum(r.prompt_tokens or 0 for r in self.records)

    @property
    def completion_tokens(self) -> int:
        return sum(r.completion_tokens or 0 for r in self.records)

    @property
    def asks(self) -> int:
        return self.ask

    def mark_last_invalid(self, error: Exception) -> None:
        """The last successful HTTP answer failed validation (called from instructor's hook)."""
        for record in reversed(self.records):
            if record.status == "ok":
                record.status = "invalid"
                record.error = self.redact(_short(str(error)))
                return


_current_log: contextvars.ContextVar[CallLog | None] = contextvars.ContextVar(
    "papersift_call_log", default=None
)


@contextmanager
def call_log(secrets: tuple[str, ...] = ()) -> Iterator[CallLog]:
    """Collect the HTTP attempts made in this thread until the block ends."""
    log = CallLog(secrets=secrets)
    token = _current_log.set(log)
    try:
        yield log
    finally:
        _current_log.reset(token)


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """Replace every secret (and a bearer token) in text with a placeholder."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[REDACTED]")
    return text


def _short(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


def _retry_after_seconds(response: httpx2.Response) -> float | None:
    value = response.headers.get("retry-after-ms")
    if value:
        try:
            return max(float(value) / 1000.0, 0.0)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return max((parsed - datetime.now(UTC)).total_seconds(), 0.0)


class _WaitRetryAfterOrBackoff:
    """Wait what the server's Retry-After asks (capped), else exponential backoff with jitter."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy

    def backoff(self, state: RetryCallState) -> float:
        """initial * 2^(n-1) plus up to ``jitter`` seconds, capped. Computed here rather than
        by tenacity's wait_exponential_jitter, whose keywords differ between 9.1 and 9.2."""
        policy = self.policy
        grown = policy.initial_wait_s * 2.0 ** (state.attempt_number - 1)
        return min(grown + random.uniform(0.0, policy.jitter_s), policy.max_wait_s)

    def __call__(self, state: RetryCallState) -> float:
        outcome = state.outcome
        error = outcome.exception() if outcome is not None else None
        if isinstance(error, RetryableStatusError):
            asked = _retry_after_seconds(error.response)
            if asked is not None:
                return min(asked, self.policy.max_retry_after_s)
        return self.backoff(state)


def _usage_from(response: httpx2.Response) -> tuple[int | None, int | None, str | None]:
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        return None, None, None
    if not isinstance(body, dict):
        return None, None, None
    usage = body.get("usage") or {}
    choices = body.get("choices") or [{}]
    finish = choices[0].get("finish_reason") if isinstance(choices[0], dict) else None
    return usage.get("prompt_tokens"), usage.get("completion_tokens"), finish


class RetryingTransport(httpx2.BaseTransport):
    """Wraps a transport with bounded, logged retries of transient failures."""

    def __init__(
        self,
        inner: httpx2.BaseTransport,
        policy: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.inner = inner
        self.policy = policy
        self.sleep = sleep

    def _retrying(self) -> Retrying:
        return Retrying(
            stop=stop_after_attempt(self.policy.max_attempts)
            | stop_after_delay(self.policy.max_elapsed_s),
            wait=_WaitRetryAfterOrBackoff(self.policy),
            retry=retry_if_exception_type(
                (RetryableStatusError, httpx2.TimeoutException, httpx2.NetworkError,
                 httpx2.RemoteProtocolError)
            ),
            sleep=self.sleep,
            reraise=True,
        )

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        log = _current_log.get()
        if log is not None:
            log.ask += 1
        try:
            for attempt in self._retrying():
                with attempt:
                    return self._send_once(request, log, attempt.retry_state.attempt_number)
        except RetryableStatusError as exhausted:
            # Hand the last answer to the SDK, which raises its own typed error for it.
            return exhausted.response
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _send_once(
        self, request: httpx2.Request, log: CallLog | None, attempt: int
    ) -> httpx2.Response:
        started = datetime.now(UTC).replace(tzinfo=None)
        clock = time.perf_counter()
        record = CallRecord(
            ask=log.ask if log else 0, attempt=attempt, status="ok", started=started
        )
        try:
            response = self.inner.handle_request(request)
            response.read()
        except httpx2.TimeoutException as error:
            record.status = "timeout"
            record.error = f"{type(error).__name__}: {error}"
            raise
        except (httpx2.NetworkError, httpx2.RemoteProtocolError) as error:
            record.status = "connection_error"
            record.error = f"{type(error).__name__}: {error}"
            raise
        finally:
            record.latency_ms = round((time.perf_counter() - clock) * 1000.0, 1)
            if log is not None:
                if record.error:
                    record.error = log.redact(record.error)
                log.records.append(record)
        record.http_status = response.status_code
        if response.status_code >= 400:
            record.status = "http_error"
            record.error = (log.redact if log else str)(_short(response.text, 500))
        else:
            record.prompt_tokens, record.completion_tokens, record.finish_reason = _usage_from(
                response
            )
            if record.finish_reason == "length":
                record.status = "length"
            elif not response.content.strip():
                record.status = "empty_body"  # a 200 without an answer is no "ok"
        if response.status_code in RETRY_STATUSES:
            raise RetryableStatusError(response)
        return response

    def close(self) -> None:
        self.inner.close()


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
    kind: str = "compatible"  # local / openai / compatible
    # What identifies the model server in cache keys; a local server's port changes every
    # run, so it is identified by its model file's hash instead of its URL.
    identity: str | None = None

    @property
    def cache_identity(self) -> str:
        return self.identity or self.base_url.rstrip("/")

    def sampling(self) -> dict[str, Any]:
        """The request parameters that shape the answer (part of the cache key)."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "constrain_json": self.constrain_json,
        }

    def describe(self) -> dict[str, Any]:
        """Everything about the endpoint except the key, for runs and logs."""
        return {
            "base_url": self.base_url,
            "model": self.model,
            "mode": self.mode,
            "kind": self.kind,
            "timeout_s": self.timeout_s,
            **self.sampling(),
        }


def build_client(
    endpoint: Endpoint,
    *,
    transport: httpx2.BaseTransport | None = None,
    policy: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[instructor.Instructor, openai.OpenAI]:
    """An instructor client for the endpoint, its HTTP going through the retrying transport."""
    if endpoint.mode not in MODES:
        raise ValueError(f"unknown mode {endpoint.mode!r}; choose one of {sorted(MODES)}")
    inner = transport if transport is not None else httpx2.HTTPTransport()
    http_client = httpx2.Client(
        transport=RetryingTransport(inner, policy=policy, sleep=sleep),
        timeout=httpx2.Timeout(endpoint.timeout_s, connect=10.0),
    )
    raw = openai.OpenAI(
        base_url=endpoint.base_url,
        api_key=endpoint.api_key or "not-needed",
        max_retries=0,
        timeout=endpoint.timeout_s,
        http_client=http_client,
    )
    client = instructor.from_openai(raw, mode=MODES[endpoint.mode])
    client.on("parse:error", _mark_invalid)
    return client, raw


def _mark_invalid(error: Exception, *_args: Any, **_kwargs: Any) -> None:
    log = _current_log.get()
    if log is not None:
        log.mark_last_invalid(error)
