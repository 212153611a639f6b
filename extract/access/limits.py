"""Client-side pacing of requests: requests and tokens per minute, and a spending cap.

The runner bounds how many abstracts are in flight; a :class:`RequestGate` decides when
each HTTP attempt (first ask, re-ask or retry alike) may leave. Before a request it
estimates the tokens the provider will count (prompt estimated from the request's size,
plus its ``max_tokens``, as OpenAI counts against a tokens-per-minute limit) and waits
until both token buckets allow it; after the answer it corrects the estimate from the
answer's ``usage`` and adopts the limits the provider's ``x-ratelimit-limit-*`` headers
announce. A 429 pauses
every request, not just the one that got it. With a budget, an attempt whose worst-case
cost would cross it is refused before it is sent (:class:`BudgetExceededError`).
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx2

from papersift.errors import PapersiftError
from papersift.extract.access.calls import finish_reason_of, token_count
from papersift.extract.domain.prices import Pricing

# Pace at this share of a learned or configured limit: close enough to the ceiling to be
# worth it, far enough that clock skew between client and server rarely yields a 429.
RATE_SAFETY = 0.95
# Prompt tokens per byte of request body before any answer has said better (the body's
# JSON framing and escapes make it a bit more than raw text's ~4 characters per token).
INITIAL_TOKENS_PER_BYTE = 0.25
# Without max_tokens OpenAI counts this many completion tokens against the limit.
DEFAULT_MAX_TOKENS = 4096
# An announced requests- or tokens-per-minute limit below this is ignored, not obeyed.
MIN_ANNOUNCED_LIMIT = 1.0
# ... and an announced tokens limit below this (no provider's tier is so small, and one
# abstract's request is more): 'x-ratelimit-limit-tokens: 2' would stall every request.
MIN_ANNOUNCED_TPM = 1000.0
# The longest a limit learned from headers (not one the user set) holds one attempt back:
# a header is a hint, a 429 with Retry-After is the provider's word.
MAX_LEARNED_WAIT_S = 10.0
# A request's prompt tokens per byte of its body stay within these (a token is at least
# a byte; an answer's usage claiming more is not believed for pacing or the budget).
TOKENS_PER_BYTE_RANGE = (0.01, 1.0)
# Completion tokens believed of one answer without a larger max_tokens (no model writes
# more in one answer today).
MAX_COMPLETION_TOKENS = 131_072
_DURATION = re.compile(r"(?P<value>\d+(?:\.\d+)?)(?P<unit>ms|h|m|s)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


_PIECE = re.compile(r"[A-Za-z]+|\d{1,3}|[^\sA-Za-z\d]")
# Pieces (words, 3-digit groups, punctuation marks) per BPE token, fitted on the bundled
# corpus's real requests: Qwen2.5's tokenizer counted 134,163 prompt tokens where this
# counts 155,466 pieces (1.159); the simulator's tokenizer gives 1.136 for --lean requests.
PIECES_PER_TOKEN = 1.159
_LONG_WORD = 7


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate of the BPE tokens of ``text``: one per short word, number
    group or punctuation mark, long words split every 7 letters, whitespace free."""
    pieces = 0
    for match in _PIECE.finditer(text):
        piece = match.group(0)
        pieces += -(-len(piece) // _LONG_WORD) if piece.isalpha() else 1
    return round(pieces / PIECES_PER_TOKEN)


class BudgetExceededError(PapersiftError):
    """An attempt was not sent: its worst-case cost would cross the run's budget."""


def parse_duration(text: str) -> float | None:
    """Seconds in an OpenAI reset header: '1s', '6m0s', '120ms', '1h2m3.5s', or a number."""
    text = text.strip()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    parts = list(_DURATION.finditer(text))
    if not parts or "".join(p.group(0) for p in parts) != text:
        return None
    return sum(float(p["value"]) * _UNIT_SECONDS[p["unit"]] for p in parts)


class TokenBucket:
    """Refills continuously at ``per_minute / 60`` per second up to ``burst_s`` seconds'
    worth; an amount larger than the whole bucket may leave when it is full (it then
    runs a debt), so no request waits forever."""

    def __init__(self, per_minute: float, burst_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.burst_s = burst_s
        self.rate = 0.0
        self.capacity = 1.0
        self.set_rate(per_minute)
        self.level = self.capacity
        self.updated = clock()

    def set_rate(self, per_minute: float) -> None:
        self.rate = max(per_minute, 1e-9) / 60.0
        self.capacity = max(self.rate * self.burst_s, 1.0)

    def _refill(self) -> None:
        now = self.clock()
        self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
        self.updated = now

    def wait_s(self, amount: float) -> float:
        """Seconds until ``amount`` may be taken (0 when it may be taken now)."""
        self._refill()
        short = min(amount, self.capacity) - self.level
        # A shortfall below a millionth is rounding, not a reason to sleep (a sleep that
        # short would not even move a float clock).
        return 0.0 if short <= 1e-6 else short / self.rate

    def take(self, amount: float) -> None:
        self._refill()
        self.level -= amount


@dataclass
class Ticket:
    """What one attempt was charged before it left, to be settled when it returns."""

    body_bytes: int
    prompt_estimate: float
    body: bytes = field(default=b"", repr=False)
    cost_reserved: float = 0.0

    @functools.cached_property
    def asked_max_tokens(self) -> int | None:
        """The request's own max_tokens, read from the body when first asked: only a
        tokens-per-minute limit, a budget or an answer's usage asks, and parsing a whole
        request body per attempt was a visible cost of an unlimited run."""
        try:
            body = json.loads(self.body)
            value = body.get("max_completion_tokens") or body.get("max_tokens")
            if isinstance(value, int) and value > 0:
                return value
        except (ValueError, AttributeError):
            pass
        return None

    @property
    def max_tokens(self) -> int:
        """The completion tokens the request may use, as the provider counts them."""
        return self.asked_max_tokens or DEFAULT_MAX_TOKENS


@dataclass
class GateStats:
    waited_s: float = 0.0
    paused_by_429: int = 0
    refused_by_budget: int = 0
    learned_rpm: float | None = None
    learned_tpm: float | None = None
    refused_pauses: int = 0  # 429s asking a wait beyond max_pause_s (not honoured)


@dataclass
class RequestGate:
    """Paces attempts under requests/tokens-per-minute limits and a budget (see module doc).

    ``rpm``/``tpm`` are the provider's limits as configured by the user (paced at
    RATE_SAFETY of them); when they are None, limits announced in ``x-ratelimit-limit-*``
    headers are adopted. One gate serves one event loop.
    """

    rpm: float | None = None
    tpm: float | None = None
    budget_usd: float | None = None
    pricing: Pricing | None = None
    clock: Callable[[], float] = time.monotonic
    tokens_per_byte: float = INITIAL_TOKENS_PER_BYTE
    # The longest a 429's Retry-After may pause every request (the retry policy's cap).
    max_pause_s: float = 120.0
    spent_usd: float = 0.0
    reserved_usd: float = 0.0
    stats: GateStats = field(default_factory=GateStats)

    def __post_init__(self) -> None:
        if self.budget_usd is not None and self.pricing is None:
            raise ValueError("a budget needs prices to count against it")
        self._requests = (TokenBucket(self.rpm * RATE_SAFETY, clock=self.clock)
                          if self.rpm else None)
        self._tokens = (TokenBucket(self.tpm * RATE_SAFETY, clock=self.clock)
                        if self.tpm else None)
        self._paused_until = 0.0
        self._learned: set[str] = set()  # limits adopted from headers, not configured

    # -- before ------------------------------------------------------------------------

    def estimate(self, request: httpx2.Request) -> Ticket:
        """Prompt tokens from the body's size; completion from its max_tokens."""
        content = request.content
        return Ticket(len(content), len(content) * self.tokens_per_byte, content)

    def _wait_s(self, ticket: Ticket) -> tuple[float, float]:
        """(the wait a 429 or a configured limit asks, the wait a learned limit asks)."""
        waits = {"pause": self._paused_until - self.clock(), "requests": 0.0, "tokens": 0.0}
        if self._requests is not None:
            waits["requests"] = self._requests.wait_s(1)
        if self._tokens is not None:
            waits["tokens"] = self._tokens.wait_s(ticket.prompt_estimate + ticket.max_tokens)
        hard = max(wait for kind, wait in waits.items() if kind not in self._learned)
        soft = max((waits[kind] for kind in self._learned), default=0.0)
        return hard, soft

    def _reserve(self, ticket: Ticket) -> None:
        if self.budget_usd is None or self.pricing is None:
            return
        worst = self.pricing.cost(ticket.prompt_estimate, ticket.max_tokens)
        if self.spent_usd + self.reserved_usd + worst > self.budget_usd:
            self.stats.refused_by_budget += 1
            raise BudgetExceededError(
                f"budget ${self.budget_usd:.4f} reached: ${self.spent_usd:.4f} spent, "
                f"${self.reserved_usd:.4f} in flight, this request could cost ${worst:.5f}")
        ticket.cost_reserved = worst
        self.reserved_usd += worst

    async def acquire(self, request: httpx2.Request) -> Ticket:
        """Wait until the request may leave, then charge it; raises BudgetExceededError."""
        ticket = self.estimate(request)
        self._reserve(ticket)
        waited = 0.0
        # Every wait is bounded: past max_pause_s the request leaves anyway (the server's
        # own answer, and the retry budget, decide what happens next).
        while waited < self.max_pause_s:
            hard, soft = self._wait_s(ticket)
            wait = min(max(hard, min(soft, MAX_LEARNED_WAIT_S - waited)),
                       self.max_pause_s - waited)
            if wait <= 0:
                break
            waited += wait
            self.stats.waited_s += wait
            await asyncio.sleep(wait)
        if self._requests is not None:
            self._requests.take(1)
        if self._tokens is not None:
            self._tokens.take(ticket.prompt_estimate + ticket.max_tokens)
        return ticket

    # -- after -------------------------------------------------------------------------

    def settle(self, ticket: Ticket, response: httpx2.Response | None) -> None:
        """Correct the charge from the answer's usage and headers (None: no answer)."""
        self.reserved_usd -= ticket.cost_reserved
        if response is None:
            return
        prompt, completion, _ = usage_of(response)
        if prompt is not None:
            low, high = TOKENS_PER_BYTE_RANGE
            if ticket.body_bytes:  # usage beyond what the request could hold is not believed
                prompt = min(prompt, round(ticket.body_bytes * high))
            if completion is not None and completion > DEFAULT_MAX_TOKENS:  # body read rarely
                completion = min(completion, ticket.asked_max_tokens or MAX_COMPLETION_TOKENS)
            if self.pricing is not None:
                self.spent_usd += self.pricing.cost(prompt, completion or 0)
            if self._tokens is not None:
                self._tokens.take(prompt - ticket.prompt_estimate)
            if ticket.body_bytes:
                observed = prompt / ticket.body_bytes
                learned = 0.8 * self.tokens_per_byte + 0.2 * observed
                self.tokens_per_byte = min(max(learned, low), high)
        self._follow_headers(response)

    def _follow_headers(self, response: httpx2.Response) -> None:
        """Adopt the limits a server announces (unless the user gave them) and pause all
        requests after a 429. ``x-ratelimit-remaining-*`` is not used to pace: it was true
        when the request was admitted, a whole latency ago, and every request sent since
        would be counted twice."""
        headers = response.headers
        for kind in ("requests", "tokens"):
            limit = _number(headers.get(f"x-ratelimit-limit-{kind}"))
            configured = self.rpm if kind == "requests" else self.tpm
            floor = MIN_ANNOUNCED_LIMIT if kind == "requests" else MIN_ANNOUNCED_TPM
            if limit is None or limit < floor or configured is not None:
                continue  # no limit, or one too small to be meant (it would stall the run)
            self._learned.add(kind)
            bucket = self._requests if kind == "requests" else self._tokens
            if bucket is None:
                bucket = TokenBucket(limit * RATE_SAFETY, clock=self.clock)
                bucket.level = 0.0  # what was sent before the limit was known counts
                if kind == "requests":
                    self._requests = bucket
                else:
                    self._tokens = bucket
            else:
                bucket.set_rate(limit * RATE_SAFETY)
            if kind == "requests":
                self.stats.learned_rpm = limit
            else:
                self.stats.learned_tpm = limit
        if response.status_code == 429:
            self.stats.paused_by_429 += 1
            wait = retry_after_seconds(headers)
            wait = 1.0 if wait is None else wait
            if wait > self.max_pause_s:
                # The request that got it fails at once (see llm's retry rule); holding
                # every other request for longer than the retry budget helps nobody.
                self.stats.refused_pauses += 1
                return
            self._paused_until = max(self._paused_until, self.clock() + wait)


def _number(value: str | None) -> float | None:
    """A header's finite number, or None ('nan', 'inf', '1e999' and words are no number)."""
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def retry_after_seconds(headers: httpx2.Headers) -> float | None:
    """What a server's ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date) asks."""
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return max(millis / 1000.0, 0.0)
    value = headers.get("retry-after")
    if not value:
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(seconds, 0.0)
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return max((when - datetime.now(UTC)).total_seconds(), 0.0)
    except (TypeError, ValueError, OverflowError, IndexError):  # a year of 20 digits...
        return None


# Where answer_json keeps a response's decoded body, so it is decoded once.
_DECODED = "papersift.decoded_json"


def answer_json(response: httpx2.Response) -> object:
    """The response's body decoded from JSON (None when it is not JSON), decoded once per
    response: the call log, the request gate and the fast path all read it. Treat the
    value as read-only."""
    if _DECODED not in response.extensions:
        try:
            body: object = json.loads(response.content)
        except (ValueError, UnicodeDecodeError):
            body = None
        response.extensions[_DECODED] = body
    return response.extensions[_DECODED]


def usage_of(response: httpx2.Response) -> tuple[int | None, int | None, str | None]:
    """Prompt tokens, completion tokens and finish reason of a chat-completion answer
    (None for what it does not say)."""
    body = answer_json(response)
    if not isinstance(body, dict):
        return None, None, None
    usage = body.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    finish = first.get("finish_reason") if isinstance(first, dict) else None
    return (token_count(usage.get("prompt_tokens")),
            token_count(usage.get("completion_tokens")), finish_reason_of(finish))
