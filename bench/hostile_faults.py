"""The fault classes of issue 28's hostile endpoint, each tried and counted: held (the
run or the request ended as it must, within its bound) or lost (an abstract without a
stored outcome). Run through ``python -m bench.faults --hostile``."""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx2

from papersift.extract.access.keepalive import KeepAliveTransport
from papersift.extract.access.limits import retry_after_seconds
from papersift.extract.access.llm import Endpoint
from papersift.extract.access.transport import (
    AsyncRetryingTransport,
    RetryingTransport,
    RetryPolicy,
)
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.testing.corpus import CORPUS
from papersift.testing.hostile import (
    Behaviour,
    HostileUsage,
    TinyLimits,
    answering,
    byte_by_byte,
    continues,
    hostile_server,
    huge,
    huge_chunked,
)
from papersift.warehouse.query import run_sql

ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")
TIMEOUT_S = 0.5
POLICY = RetryPolicy(max_attempts=2, initial_wait_s=0.01, max_wait_s=0.01, jitter_s=0.0)
PATHS = ("keepalive", "sdk-async", "sdk-sync")
Row = tuple[str, int, int, int, str]  # class, tried, held, lost, note


def _run_class(name: str, model: Callable[[httpx2.Request], httpx2.Response],
               bound_s: float) -> Row:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "w.duckdb"
        started = time.monotonic()
        _, summary = run_inputs([str(CORPUS)], RunSettings(db=db, concurrency=4),
                                transport=httpx2.MockTransport(model), endpoint=ENDPOINT)
        took = time.monotonic() - started
        stored = run_sql(db, "SELECT count(*) FROM run_papers").rows[0][0]
    lost = summary.n_abstracts - int(stored)
    held = int(stored) if summary.status == "finished" and took < bound_s else 0
    return (name, summary.n_abstracts, held, lost,
            f"{summary.line()} in {took:.1f} s (bound {bound_s:g} s)")


def _attempt(behave: Behaviour, path: str, error: type[Exception]) -> float | None:
    """Seconds one request took to fail with ``error`` (None: it ended otherwise)."""
    with hostile_server(behave) as url:
        started = time.monotonic()
        try:
            if path == "sdk-sync":
                with httpx2.Client(transport=RetryingTransport(httpx2.HTTPTransport(),
                                                               policy=POLICY),
                                   timeout=TIMEOUT_S) as client:
                    client.post(url, content=b"{}")
            else:
                inner: httpx2.AsyncBaseTransport = httpx2.AsyncHTTPTransport()
                if path == "keepalive":
                    inner = KeepAliveTransport(inner)

                async def go(inner: httpx2.AsyncBaseTransport = inner) -> None:
                    async with httpx2.AsyncClient(
                            transport=AsyncRetryingTransport(inner, policy=POLICY),
                            timeout=TIMEOUT_S) as client:
                        await client.post(url, content=b"{}")
                asyncio.run(go())
        except error:
            return time.monotonic() - started
        return None


def _transport_class(name: str, behaviours: list[Behaviour], error: type[Exception],
                     bound_s: float, paths: tuple[str, ...] = PATHS) -> Row:
    took = [_attempt(behave, path, error) for behave in behaviours for path in paths]
    held = sum(1 for t in took if t is not None and t < bound_s)
    slowest = max((t for t in took if t is not None), default=0.0)
    return (name, len(took), held, 0, f"slowest {slowest:.1f} s (bound {bound_s:g} s)")


def hostile_figures() -> list[Row]:
    """Every class tried once: (class, tried, held, lost, note)."""
    lengths = [answering(b"HTTP/1.1 200 OK\r\nContent-Length: " + value + b"\r\n\r\n{}")
               for value in (b"-1", b"3_45", b"+5")]
    dates = ["31 Dec 99999999999999999999 23:59:59 GMT",
             "Fri, 31 Dec 9999999999 23:59:59 -2359"]
    no_wait = sum(retry_after_seconds(httpx2.Headers({"retry-after": d})) is None
                  for d in dates)
    return [
        _run_class("hostile usage values (true, 1e20, 2^63...)", HostileUsage(), 60.0),
        _run_class("x-ratelimit-limit-tokens: 2", TinyLimits(), 60.0),
        _transport_class("trickle: 100 Continue / a byte at a time",
                         [continues, byte_by_byte], httpx2.ReadTimeout,
                         POLICY.max_attempts * 2 * TIMEOUT_S + 2.0),
        _transport_class("20 MiB body (length, chunked)", [huge, huge_chunked],
                         httpx2.RemoteProtocolError, 30.0),
        _transport_class("Content-Length -1 / 3_45 / +5", lengths,
                         httpx2.RemoteProtocolError, 5.0, ("keepalive",)),
        ("Retry-After date past any clock", len(dates), no_wait, 0, "no wait, no crash"),
    ]


def print_hostile() -> list[str]:
    """Print the table; return the problems (a class not fully held, or a loss)."""
    problems = []
    print(f"{'class':48} {'tried':>5} {'held':>5} {'lost':>5}  note")
    for name, tried, held, lost, note in hostile_figures():
        print(f"{name:48} {tried:5} {held:5} {lost:5}  {note}")
        if held < tried or lost:
            problems.append(f"{name}: {held}/{tried} held, {lost} lost")
    return problems
