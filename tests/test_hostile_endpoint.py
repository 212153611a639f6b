"""A hostile endpoint on loopback (a hand-written fake server, NOT a model): a server that
trickles its answer, or sends '100 Continue' heads for ever, is bounded by a deadline per
attempt on every transport path (issue 28, 4)."""

from __future__ import annotations

import asyncio
import socketserver
import time

import httpx2
import pytest

from papersift.extract.access.keepalive import KeepAliveTransport
from papersift.extract.access.transport import (
    AsyncRetryingTransport,
    RetryingTransport,
    RetryPolicy,
)
from papersift.testing.hostile import (
    Behaviour,
    answering,
    byte_by_byte,
    continues,
    hostile_server,
    huge,
    huge_chunked,
)

TIMEOUT_S = 0.4  # each wait for bytes; the attempt's deadline is twice that
POLICY = RetryPolicy(max_attempts=2, max_elapsed_s=30.0, initial_wait_s=0.01,
                     max_wait_s=0.01, jitter_s=0.0)
Trickle = Behaviour


def _async_post(url: str, transport: httpx2.AsyncBaseTransport) -> float:
    async def go() -> float:
        started = time.monotonic()
        async with httpx2.AsyncClient(transport=transport, timeout=TIMEOUT_S) as client:
            with pytest.raises(httpx2.ReadTimeout, match="deadline"):
                await client.post(url, content=b"{}")
        return time.monotonic() - started

    return asyncio.run(go())


@pytest.mark.parametrize("behave", [continues, byte_by_byte])
@pytest.mark.parametrize("path", ["keepalive", "sdk-async", "sdk-sync"])
def test_a_trickling_server_is_bounded_by_a_deadline_per_attempt(
        behave: Trickle, path: str) -> None:
    with hostile_server(behave) as url:
        if path == "sdk-sync":
            started = time.monotonic()
            transport = RetryingTransport(httpx2.HTTPTransport(), policy=POLICY)
            with httpx2.Client(transport=transport, timeout=TIMEOUT_S) as client, \
                    pytest.raises(httpx2.ReadTimeout, match="deadline"):
                client.post(url, content=b"{}")
            took = time.monotonic() - started
        else:
            inner: httpx2.AsyncBaseTransport = httpx2.AsyncHTTPTransport()
            if path == "keepalive":
                inner = KeepAliveTransport(inner)
            took = _async_post(url, AsyncRetryingTransport(inner, policy=POLICY))
    # two attempts, each cut at its deadline (2 x the read timeout), plus slack
    assert took < POLICY.max_attempts * 2 * TIMEOUT_S + 2.0, took


@pytest.mark.parametrize("length", [b"-1", b"3_45", b"+5", b" 0x10", b"1e3"])
def test_a_malformed_content_length_is_a_protocol_error(length: bytes) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: " + length + b"\r\n\r\n"
    with hostile_server(answering(head, b"{}" * 200)) as url:
        async def go() -> None:
            transport = KeepAliveTransport(httpx2.AsyncHTTPTransport())
            async with httpx2.AsyncClient(transport=transport, timeout=2.0) as client:
                with pytest.raises(httpx2.RemoteProtocolError, match="Content-Length"):
                    await client.post(url, content=b"{}")
        asyncio.run(go())


@pytest.mark.parametrize("behave", [huge, huge_chunked])
@pytest.mark.parametrize("path", ["keepalive", "sdk-async", "sdk-sync"])
def test_a_body_over_the_cap_is_refused_on_every_path(behave: Trickle, path: str) -> None:
    policy = RetryPolicy(max_attempts=1)
    with hostile_server(behave) as url:
        if path == "sdk-sync":
            transport = RetryingTransport(httpx2.HTTPTransport(), policy=policy)
            with httpx2.Client(transport=transport, timeout=5.0) as client, \
                    pytest.raises(httpx2.RemoteProtocolError, match="MiB"):
                client.post(url, content=b"{}")
            return
        inner: httpx2.AsyncBaseTransport = httpx2.AsyncHTTPTransport()
        if path == "keepalive":
            inner = KeepAliveTransport(inner)

        async def go() -> None:
            async with httpx2.AsyncClient(
                    transport=AsyncRetryingTransport(inner, policy=policy),
                    timeout=5.0) as client:
                with pytest.raises(httpx2.RemoteProtocolError, match="MiB"):
                    await client.post(url, content=b"{}")
        asyncio.run(go())


def test_a_late_unsolicited_answer_on_an_idle_connection_is_never_the_next_answer() -> None:
    def behave(handler: socketserver.StreamRequestHandler) -> None:
        def answer(text: bytes) -> bytes:
            return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(text), text)
        handler.wfile.write(answer(b"first"))
        time.sleep(0.1)
        handler.wfile.write(answer(b"unsolicited"))  # nobody asked for it
        while handler.rfile.readline() not in (b"\r\n", b""):
            pass
        handler.wfile.write(answer(b"second"))

    with hostile_server(behave) as url:
        async def go() -> list[bytes]:
            transport = KeepAliveTransport(httpx2.AsyncHTTPTransport())
            async with httpx2.AsyncClient(transport=transport, timeout=2.0) as client:
                first = await client.post(url, content=b"{}")
                time.sleep(0.3)  # a busy loop: the late bytes wait unread at the socket
                second = await client.post(url, content=b"{}")
                return [first.content, second.content]
        first, second = asyncio.run(go())
    assert first == b"first"
    assert second != b"unsolicited"
