"""The record of one abstract's HTTP attempts: a :class:`CallLog` set as current (a
context variable) while the abstract is extracted, one :class:`CallRecord` per attempt,
secrets redacted from every error kept."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from papersift.extract.access.credentials import scrub


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


# The calls table's token columns are 32-bit integers; no real answer comes near.
MAX_TOKENS = 2**31 - 1
MAX_REASON = 64


def token_count(value: object) -> int | None:
    """A usage count from an answer as stored: a plain non-negative integer that fits the
    column, else None (a bool, a float, a string, 1e20 are a hostile server's, not counts)."""
    if type(value) is not int or not 0 <= value <= MAX_TOKENS:
        return None
    return value


def finish_reason_of(value: object) -> str | None:
    """An answer's finish reason as stored: a short string, else None."""
    return value[:MAX_REASON] if isinstance(value, str) else None


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
                record.error = self.redact(shorten(str(error)))
                return


_current_log: contextvars.ContextVar[CallLog | None] = contextvars.ContextVar(
    "papersift_call_log", default=None
)


def current_log() -> CallLog | None:
    """The call log of the abstract being extracted in this context, if any."""
    return _current_log.get()


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


def shorten(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


