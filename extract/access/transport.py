"""Retrying transports: every HTTP request of a client goes through one, which owns
transport retries (the SDK's own are off).

A tenacity ``Retrying`` around each request retries 429, 5xx, timeouts and connection
errors with exponential backoff and jitter, honours ``Retry-After``, and is bounded in
attempts and in time. Every attempt is reported to the current :class:`CallLog`.
"""

from __future__ import annotations

import asyncio
import contextvars
import random
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx2
from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception_type

from papersift.extract.access.calls import CallLog, CallRecord, current_log, shorten
from papersift.extract.access.credentials import scrub
from papersift.extract.access.limits import (
    BudgetExceededError,
    RequestGate,
    retry_after_seconds,
    usage_of,
)

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
# An attempt's whole exchange gets this many read timeouts (--timeout): the read timeout
# bounds each wait for bytes, so a server trickling a byte at a time (or endless
# '100 Continue' heads) would otherwise hold a request for ever.
ATTEMPT_READS = 2.0
# The largest answer body read (an extraction answer is a few kB): a server sending
# 100 MB is answered with an error, not with the memory to hold it.
MAX_BODY_BYTES = 16 << 20


class AnswerTooLargeError(httpx2.RemoteProtocolError):
    """An answer body over MAX_BODY_BYTES; what was read of it is dropped."""


def too_large(size: int) -> AnswerTooLargeError:
    return AnswerTooLargeError(f"the response body is over {MAX_BODY_BYTES >> 20} MiB "
                               f"({size:,} bytes or more); not read")


def attempt_deadline(request: httpx2.Request) -> float | None:
    """Seconds the whole exchange of one attempt may take (None: no read timeout set)."""
    timeouts: dict[str, Any] = request.extensions.get("timeout", {})
    read = timeouts.get("read")
    return None if read is None else ATTEMPT_READS * float(read)


def past_deadline(deadline: float | None) -> httpx2.ReadTimeout:
    return httpx2.ReadTimeout(f"no whole answer within the attempt's deadline of "
                              f"{deadline:g} s (twice --timeout)")


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



def _retry_after_seconds(response: httpx2.Response) -> float | None:
    return retry_after_seconds(response.headers)


class _WaitRetryAfterOrBackoff:
    """Wait what the server's Retry-After asks (capped), else exponential backoff with jitter."""

    def __init__(self, policy: RetryPolicy, spent_s: float = 0.0) -> None:
        self.policy = policy
        self.spent_s = spent_s  # seconds spent before tenacity's first attempt

    def backoff(self, state: RetryCallState) -> float:
        """initial * 2^(n-1) plus up to ``jitter`` seconds, capped. Computed here rather than
        by tenacity's wait_exponential_jitter, whose keywords differ between 9.1 and 9.2."""
        policy = self.policy
        grown = policy.initial_wait_s * 2.0 ** (state.attempt_number - 1)
        return min(grown + random.uniform(0.0, policy.jitter_s), policy.max_wait_s)

    def __call__(self, state: RetryCallState) -> float:
        asked = asked_wait(state)
        wait = self.backoff(state) if asked is None else min(asked, self.policy.max_retry_after_s)
        left = self.policy.max_elapsed_s - (state.seconds_since_start or 0.0) - self.spent_s
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

    def __init__(self, policy: RetryPolicy, spent_s: float = 0.0) -> None:
        self.policy = policy
        self.spent_s = spent_s  # seconds spent before tenacity's first attempt

    def __call__(self, state: RetryCallState) -> bool:
        policy = self.policy
        elapsed = (state.seconds_since_start or 0.0) + self.spent_s
        asked = asked_wait(state)
        spent = state.attempt_number >= policy.max_attempts or elapsed >= policy.max_elapsed_s
        beyond = asked is not None and (asked > policy.max_retry_after_s
                                        or elapsed + asked > policy.max_elapsed_s)
        if not (spent or beyond):
            return False
        log = current_log()
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

    def _retry_rule(self, spent_s: float = 0.0) -> dict[str, Any]:
        """tenacity's arguments; ``spent_s``: the seconds the request has already taken
        (its first attempt, made outside tenacity), counted against max_elapsed_s."""
        return {
            "stop": _StopWithinBudget(self.policy, spent_s),
            "wait": _WaitRetryAfterOrBackoff(self.policy, spent_s),
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
            record.error = (log.redact if log else scrub)(shorten(response.text, 500))
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
        log = current_log()
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
            response = _within_deadline(self.inner, request)
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


class _Capped(httpx2.SyncByteStream):
    """A response body that stops with a protocol error past MAX_BODY_BYTES."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __iter__(self) -> Iterator[bytes]:
        size = 0
        for chunk in self.inner:
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise too_large(size)
            yield chunk

    def close(self) -> None:
        self.inner.close()


class _CappedAsync(httpx2.AsyncByteStream):
    """The async twin of _Capped."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self.inner:
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise too_large(size)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


def _within_deadline(inner: httpx2.BaseTransport, request: httpx2.Request) -> httpx2.Response:
    """The answer to one attempt, read whole, or a ReadTimeout once the attempt's deadline
    passes: a blocking read cannot be cancelled, so the exchange runs in a daemon thread
    that is left to the server's close when the deadline passes."""
    deadline = attempt_deadline(request)
    if deadline is None:
        response = inner.handle_request(request)
        response.stream = _Capped(response.stream)
        response.read()
        return response
    outcome: list[httpx2.Response | BaseException] = []

    def exchange() -> None:
        try:
            answer = inner.handle_request(request)
            answer.stream = _Capped(answer.stream)
            answer.read()
            outcome.append(answer)
        except BaseException as error:  # handed to the caller's thread
            outcome.append(error)

    context = contextvars.copy_context()  # the call log and the like, as in this thread
    worker = threading.Thread(target=context.run, args=(exchange,), name="papersift-attempt",
                              daemon=True)
    worker.start()
    worker.join(deadline)
    if not outcome:
        raise past_deadline(deadline)
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


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
        log = current_log()
        if log is not None:
            log.ask += 1
        await request.aread()
        started = time.monotonic()
        try:
            # The first attempt goes outside tenacity, whose set-up per request costs
            # about as much CPU as a whole clean exchange; a failure worth retrying
            # carries on in tenacity's loop as that loop's first attempt.
            return await self._send_once(request, log, 1)
        except _RETRIED_ERRORS as error:
            first: Exception = error
        retrying = AsyncRetrying(sleep=self.sleep,
                                 **self._retry_rule(time.monotonic() - started))
        try:
            async for attempt in retrying:
                with attempt:
                    number = attempt.retry_state.attempt_number
                    if number == 1:
                        raise first  # the first attempt's outcome, logged already
                    return await self._send_once(request, log, number)
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
            deadline = attempt_deadline(request)
            bound = asyncio.timeout(deadline)
            try:
                async with bound:
                    response = await self.inner.handle_async_request(request)
                    response.stream = _CappedAsync(response.stream)
                    await response.aread()
            except TimeoutError:
                if bound.expired():
                    raise past_deadline(deadline) from None
                raise
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

