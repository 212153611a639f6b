"""What papersift must record for an abstract the fake server (sim/faults.py) served a
given sequence of faults: the oracle tests and bench/faults.py check runs against."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

TRANSPORT_FAULTS = ("rate_limit", "server_error", "bad_gateway", "unavailable", "hang", "drop")
# What the client records when a transport fault exhausts its attempts.
TRANSPORT_REASONS = {
    "rate_limit": "http_429", "server_error": "http_500", "bad_gateway": "http_502",
    "unavailable": "http_503", "hang": "timeout", "drop": "connection_error",
}


@dataclass(frozen=True)
class Expected:
    outcome: str  # extracted / failed
    reason: str | None = None  # the failure reason, when failed
    lenient: bool = False
    requests: int = 0  # how many requests the client should have made


@dataclass
class _Walk:
    attempt: int = 0  # transport attempts of the current request
    asks: int = 1  # requests instructor has made, re-asks included
    requests: int = 0
    last_answer: str | None = None  # the last content fault that still carried an answer


def expected_outcome(faults: Sequence[str | None], *, max_attempts: int,
                     max_reasks: int) -> Expected:
    """The outcome papersift must record for an abstract served ``faults`` in this order.

    Transport faults are retried up to ``max_attempts`` per request; broken answers cost a
    validation re-ask (at most ``max_reasks``); ``length`` fails at once; an ungrounded
    draft is valid, so it is extracted (code drops what the abstract does not contain).
    When re-asks run out, the last *answer* decides (an empty body is no answer, so an
    earlier one counts): broken JSON or schema fails; none at all is ``no_answer``.
    """
    walk = _Walk()
    for fault in faults:
        walk.requests += 1
        if fault is None or fault == "ungrounded":
            return Expected("extracted", requests=walk.requests)
        if fault in TRANSPORT_FAULTS:
            walk.attempt += 1
            if walk.attempt >= max_attempts:
                return Expected("failed", TRANSPORT_REASONS[fault], requests=walk.requests)
            continue
        if fault == "length":
            return Expected("failed", "length", requests=walk.requests)
        walk.attempt = 0
        if fault != "empty_body":
            walk.last_answer = fault
        if walk.asks > max_reasks:
            reason = {"schema_break": "schema_violation", "truncated_json": "invalid_json",
                      None: "no_answer"}[walk.last_answer]
            return Expected("failed", reason, requests=walk.requests)
        walk.asks += 1
    return Expected("unfinished", requests=walk.requests)
