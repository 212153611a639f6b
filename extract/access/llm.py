"""The one place that builds LLM clients: openai SDK + instructor over a retrying transport.

Transport retries have one owner: :class:`RetryingTransport`, a tenacity ``Retrying`` around
each HTTP request (the SDK's own retries are off). It retries 429, 5xx, timeouts and
connection errors with exponential backoff and jitter, honours ``Retry-After``, and is
bounded in attempts and in time. Validation re-asks are instructor's, bounded separately.
Every HTTP attempt is reported to the :class:`CallLog` active in the current thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx2
import instructor
import openai
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    Retrying,
    retry_if_exception_type,
)

from papersift.extract.access.credentials import check_endpoint_url, scrub
from papersift.extract.access.fastpath import take_handover
from papersift.extract.access.limits import (
    BudgetExceededError,
    RequestGate,
    retry_after_seconds,
    usage_of,
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
    note: str | None = None  # why retries stopped early, for the failure's detail

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
    """Replace every secret, credential header, bearer/basic token and URL credential in
    text with a placeholder (see extract.access.credentials)."""
    return scrub(text, secrets)


def _short(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


def _retry_after_seconds(response: httpx2.Response) -> float | None:
    return retry_after_seconds(response.headers)


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
        asked = asked_wait(state)
        wait = self.backoff(state) if asked is None else min(asked, self.policy.max_retry_after_s)
        left = self.policy.max_elapsed_s - (state.seconds_since_start or 0.0)
        return max(0.0, min(wait, left))  # no wait outlasts the retry budget


def asked_wait(state: RetryCallState) -> float | None:
    """The Retry-After of the answer that ended this attempt, if it asked one."""
    outcome = state.outcome
    error = outcome.exception() if outcome is not None else None
    if isinstance(error, RetryableStatusError):
        return _retry_after_seconds(error.response)
    return None


class _StopWithinBudget:
    """Stop after max_attempts or max_elapsed_s, and at once when the server asks a wait
    the budget cannot pay (over max_retry_after_s, or past max_elapsed_s): the paper then
    fails with the server's status, and the call log says how long it asked."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy

    def __call__(self, state: RetryCallState) -> bool:
        policy = self.policy
        elapsed = state.seconds_since_start or 0.0
        asked = asked_wait(state)
        spent = state.attempt_number >= policy.max_attempts or elapsed >= policy.max_elapsed_s
        beyond = asked is not None and (asked > policy.max_retry_after_s
                                        or elapsed + asked > policy.max_elapsed_s)
        if not (spent or beyond):
            return False
        log = _current_log.get()
        if log is not None:
            budget = (f"the retry budget ({policy.max_attempts} attempts, "
                      f"{policy.max_retry_after_s:g} s per wait, {policy.max_elapsed_s:g} s "
                      "in all)")
            if asked is None:
                log.note = f"{budget} is spent"
            else:
                shown = f"{asked:,.0f}" if asked >= 10 else f"{asked:.2g}"
                log.note = (f"the server asked to wait {shown} s (Retry-After); {budget} "
                            f"{'cannot pay it' if beyond else 'is spent'}; rerun later")
        return True


_RETRIED_ERRORS = (RetryableStatusError, httpx2.TimeoutException, httpx2.NetworkError,
                  httpx2.RemoteProtocolError)


class _Attempts:
    """What the sync and async retrying transports share: the retry rule and the logging
    of each attempt into the current CallLog."""

    policy: RetryPolicy

    def _retry_rule(self) -> dict[str, Any]:
        return {
            "stop": _StopWithinBudget(self.policy),
            "wait": _WaitRetryAfterOrBackoff(self.policy),
            "retry": retry_if_exception_type(_RETRIED_ERRORS),
            "reraise": True,
        }

    @staticmethod
    def _begin(log: CallLog | None, attempt: int) -> tuple[CallRecord, float]:
        started = datetime.now(UTC).replace(tzinfo=None)
        record = CallRecord(ask=log.ask if log else 0, attempt=attempt, status="ok",
                            started=started)
        return record, time.perf_counter()

    @staticmethod
    def _failed(record: CallRecord, error: Exception) -> None:
        if isinstance(error, httpx2.TimeoutException):
            record.status = "timeout"
        elif isinstance(error, BudgetExceededError):
            record.status = "not_sent"
        else:
            record.status = "connection_error"
        record.error = f"{type(error).__name__}: {error}"

    @staticmethod
    def _end(record: CallRecord, clock: float, log: CallLog | None) -> None:
        record.latency_ms = round((time.perf_counter() - clock) * 1000.0, 1)
        if log is not None:
            if record.error:
                record.error = log.redact(record.error)
            log.records.append(record)

    @staticmethod
    def _answered(record: CallRecord, response: httpx2.Response, log: CallLog | None) -> None:
        """Fill the record from a read response; raise for an answer worth retrying."""
        record.http_status = response.status_code
        if response.status_code >= 400:
            record.status = "http_error"
            record.error = (log.redact if log else scrub)(_short(response.text, 500))
        else:
            record.prompt_tokens, record.completion_tokens, record.finish_reason = usage_of(
                response
            )
            if record.finish_reason == "length":
                record.status = "length"
            elif not response.content.strip():
                record.status = "empty_body"  # a 200 without an answer is no "ok"
        if response.status_code in RETRY_STATUSES:
            raise RetryableStatusError(response)


class RetryingTransport(_Attempts, httpx2.BaseTransport):
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

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        log = _current_log.get()
        if log is not None:
            log.ask += 1
        try:
            for attempt in Retrying(sleep=self.sleep, **self._retry_rule()):
                with attempt:
                    return self._send_once(request, log, attempt.retry_state.attempt_number)
        except RetryableStatusError as exhausted:
            # Hand the last answer to the SDK, which raises its own typed error for it.
            return exhausted.response
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _send_once(
        self, request: httpx2.Request, log: CallLog | None, attempt: int
    ) -> httpx2.Response:
        record, clock = self._begin(log, attempt)
        try:
            response = self.inner.handle_request(request)
            response.read()
        except (httpx2.TimeoutException, httpx2.NetworkError,
                httpx2.RemoteProtocolError) as error:
            self._failed(record, error)
            raise
        finally:
            self._end(record, clock, log)
        self._answered(record, response, log)
        return response

    def close(self) -> None:
        self.inner.close()


class ThreadedTransport(httpx2.AsyncBaseTransport):
    """Runs a sync-only transport (a recorder, a replayer) in worker threads so the async
    client can use it."""

    def __init__(self, inner: httpx2.BaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        response = await asyncio.to_thread(self.inner.handle_request, request)
        await asyncio.to_thread(response.read)
        return response

    async def aclose(self) -> None:
        self.inner.close()


class AsyncRetryingTransport(_Attempts, httpx2.AsyncBaseTransport):
    """The async twin of RetryingTransport; each attempt first passes the RequestGate
    (rate limits, budget) when there is one."""

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        policy: RetryPolicy = RetryPolicy(),
        gate: RequestGate | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.inner = inner
        self.policy = policy
        self.gate = gate
        self.sleep = sleep

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        waiting = take_handover()
        if waiting is not None and waiting.error is not None:
            raise waiting.error  # the fast path's attempts ended so; already logged
        if waiting is not None and waiting.response is not None:
            return waiting.response  # the answer the fast path received, already logged
        log = _current_log.get()
        if log is not None:
            log.ask += 1
        await request.aread()
        try:
            async for attempt in AsyncRetrying(sleep=self.sleep, **self._retry_rule()):
                with attempt:
                    return await self._send_once(request, log,
                                                 attempt.retry_state.attempt_number)
        except RetryableStatusError as exhausted:
            return exhausted.response
        raise AssertionError("unreachable: tenacity either returns or raises")

    async def _send_once(
        self, request: httpx2.Request, log: CallLog | None, attempt: int
    ) -> httpx2.Response:
        record, clock = self._begin(log, attempt)
        ticket = None
        response = None
        sent = False
        try:
            if self.gate is not None:
                ticket = await self.gate.acquire(request)
                clock = time.perf_counter()  # latency is the server's, not the wait's
            sent = True
            response = await self.inner.handle_async_request(request)
            await response.aread()
        except (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError,
                BudgetExceededError) as error:
            self._failed(record, error)
            raise
        except (asyncio.CancelledError, KeyboardInterrupt):
            # Ctrl-C while the request was out: it left the machine, so it is a row.
            record.status = "interrupted" if sent else "not_sent"
            record.error = ("interrupted (Ctrl-C) before the answer arrived" if sent
                            else "interrupted (Ctrl-C) before it was sent")
            raise
        finally:
            self._end(record, clock, log)
            if ticket is not None and self.gate is not None:
                self.gate.settle(ticket, response)
        self._answered(record, response, log)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


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

    def sampling(self) -> dict[str, Any]:
        """The request parameters that shape the answer (part of the cache key)."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "constrain_json": self.constrain_json,
            "plain_json": self.plain_json,
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
    sdk = _sdk_options(endpoint)
    inner = transport if transport is not None else httpx2.HTTPTransport()
    http_client = httpx2.Client(transport=RetryingTransport(inner, policy=policy, sleep=sleep),
                                timeout=_http_timeout(endpoint))
    raw = openai.OpenAI(**sdk, http_client=http_client)
    client = instructor.from_openai(raw, mode=MODES[endpoint.mode])
    client.on("parse:error", _mark_invalid)
    return client, raw


def _sdk_options(endpoint: Endpoint) -> dict[str, Any]:
    """What both SDK clients get: the endpoint, the key, no SDK retries (the transport
    owns them), the endpoint's timeout. Checks the mode first."""
    if endpoint.mode not in MODES:
        raise ValueError(f"unknown mode {endpoint.mode!r}; choose one of {sorted(MODES)}")
    check_endpoint_url(endpoint.base_url, "the endpoint URL")  # no client for a URL with a key
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
    sdk = _sdk_options(endpoint)
    if transport is None:
        inner: httpx2.AsyncBaseTransport = httpx2.AsyncHTTPTransport(
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=None))
    elif isinstance(transport, httpx2.AsyncBaseTransport):
        inner = transport
    else:
        inner = ThreadedTransport(transport)
    http_client = httpx2.AsyncClient(
        transport=AsyncRetryingTransport(inner, policy=policy, gate=gate),
        timeout=_http_timeout(endpoint))
    raw = openai.AsyncOpenAI(**sdk, http_client=http_client)
    client = instructor.from_openai(raw, mode=MODES[endpoint.mode])
    client.on("parse:error", _mark_invalid)
    return client, raw


def _mark_invalid(error: Exception, *_args: Any, **_kwargs: Any) -> None:
    log = _current_log.get()
    if log is not None:
        log.mark_last_invalid(error)
