"""Plain-HTTP/1.1 requests on keep-alive asyncio connections, for async runs.

On a fast endpoint most of the event loop's CPU per abstract went to the HTTP stack:
httpcore2's pool bookkeeping, h11's event machinery and anyio's stream wrappers, about
2 ms a request. The requests of a run are all alike (a POST with a JSON body and a
Content-Length; a JSON answer), so :class:`KeepAliveTransport` speaks that much HTTP/1.1
itself on an :class:`asyncio.Protocol`: the request goes out as one buffer, the answer's
head is parsed when its blank line arrives and its body (Content-Length, chunked, or up
to the close) is read whole before the response is returned, as the retrying transport
reads it anyway.

What the layers above see is unchanged: an ``httpx2.Response`` with the server's status,
headers and bytes; httpx2's own exceptions (ConnectError, ConnectTimeout, ReadTimeout,
WriteTimeout, ReadError, RemoteProtocolError) where httpcore2 raises them, with the
timeouts of the request (the read timeout bounds each wait for more bytes, as there).
Anything else (https, a streamed request body) goes to the ``fallback`` transport.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx2

from papersift.extract.access.transport import (
    MAX_BODY_BYTES,
    attempt_deadline,
    past_deadline,
    too_large,
)

# How long an idle connection is kept for the next request (httpcore2's default).
KEEPALIVE_S = 5.0
# The largest response head accepted.
MAX_HEAD_BYTES = 1 << 20
_NO_BODY_STATUSES = frozenset({204, 304})


class _Wire(asyncio.Protocol):
    """One TCP connection: what has arrived, and a way to wait for more."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.closed = False
        self.error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None
        self.idle_since = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._wake()

    def eof_received(self) -> bool:
        self.closed = True
        self._wake()
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.error = exc
        self._wake()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)

    def pause_writing(self) -> None:
        self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def reusable(self, now: float) -> bool:
        """Open, nothing unread (a server that closes an idle connection may first send
        a 408), and idle for less than KEEPALIVE_S."""
        return (not self.closed and not self.buffer and self.transport is not None
                and not self.transport.is_closing() and now - self.idle_since < KEEPALIVE_S)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    async def send(self, data: bytes, timeout: float | None) -> None:
        assert self.transport is not None
        if self.closed or self.transport.is_closing():
            raise httpx2.WriteError("the connection is closed")
        self.transport.write(data)
        if self._writable is not None:
            try:
                async with asyncio.timeout(timeout):
                    await self._writable
            except TimeoutError:
                raise httpx2.WriteTimeout("") from None
        if self.error is not None:
            raise httpx2.WriteError(str(self.error))

    async def more(self, timeout: float | None) -> bool:
        """Wait for more bytes; False when the connection ended instead."""
        if self.closed:
            if self.error is not None:
                raise httpx2.ReadError(str(self.error))
            return False
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(timeout):
                await self._waiter
        except TimeoutError:
            raise httpx2.ReadTimeout("") from None
        finally:
            self._waiter = None
        if self.closed and self.error is not None:
            raise httpx2.ReadError(str(self.error))
        return True


class _Answer:
    """Reads one response off a wire."""

    def __init__(self, wire: _Wire, read_timeout: float | None) -> None:
        self.wire = wire
        self.timeout = read_timeout

    async def head(self) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes]:
        """Status, reason, headers and HTTP version of the next final (non-1xx) answer."""
        while True:
            raw = await self._until(b"\r\n\r\n", first=True)
            status, reason, headers, version = _parse_head(raw)
            if not 100 <= status < 200:
                return status, reason, headers, version

    async def _until(self, mark: bytes, first: bool = False) -> bytes:
        buffer = self.wire.buffer
        start = 0
        while (end := buffer.find(mark, start)) < 0:
            if len(buffer) > MAX_HEAD_BYTES:
                raise httpx2.RemoteProtocolError("the response head is too large")
            start = max(0, len(buffer) - len(mark) + 1)
            if not await self.wire.more(self.timeout):
                if first and not buffer:
                    raise httpx2.RemoteProtocolError(
                        "Server disconnected without sending a response.")
                raise _incomplete()
        found = bytes(buffer[:end])
        del buffer[:end + len(mark)]
        return found

    async def exactly(self, size: int) -> bytes:
        if size > MAX_BODY_BYTES:
            raise too_large(size)
        buffer = self.wire.buffer
        while len(buffer) < size:
            if not await self.wire.more(self.timeout):
                raise _incomplete()
        found = bytes(buffer[:size])
        del buffer[:size]
        return found

    async def chunked(self) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            line = await self._until(b"\r\n")
            digits = line.split(b";", 1)[0].strip()
            if not digits or len(digits) > 16 or digits.strip(b"0123456789abcdefABCDEF"):
                raise httpx2.RemoteProtocolError("malformed chunk size")
            size = int(digits, 16)
            total += size
            if total > MAX_BODY_BYTES:
                raise too_large(total)
            if size == 0:
                while await self._until(b"\r\n"):  # trailers, up to the blank line
                    pass
                return b"".join(parts)
            parts.append(await self.exactly(size))
            await self.exactly(2)

    async def rest(self) -> bytes:
        """Everything up to the close (an answer without a length)."""
        while await self.wire.more(self.timeout):
            if len(self.wire.buffer) > MAX_BODY_BYTES:
                raise too_large(len(self.wire.buffer))
        found = bytes(self.wire.buffer)
        self.wire.buffer.clear()
        return found


def _incomplete() -> httpx2.RemoteProtocolError:
    return httpx2.RemoteProtocolError(
        "peer closed connection without sending complete message body")


def _parse_head(raw: bytes) -> tuple[int, bytes, list[tuple[bytes, bytes]], bytes]:
    status_line, *lines = raw.split(b"\r\n")
    version, _, rest = status_line.partition(b" ")
    code, _, reason = rest.partition(b" ")
    if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise httpx2.RemoteProtocolError(f"malformed status line {status_line[:80]!r}")
    headers = []
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip():
            raise httpx2.RemoteProtocolError(f"malformed header line {line[:80]!r}")
        headers.append((name, value.strip()))
    return int(code), reason, headers, version


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


class KeepAliveTransport(httpx2.AsyncBaseTransport):
    """An async transport that sends plain-HTTP requests itself, the rest to ``fallback``."""

    def __init__(self, fallback: httpx2.AsyncBaseTransport) -> None:
        self.fallback = fallback
        self._idle: dict[tuple[str, int], list[_Wire]] = {}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if url.scheme != "http" or "transfer-encoding" in request.headers:
            return await self.fallback.handle_async_request(request)
        deadline = attempt_deadline(request)
        bound = asyncio.timeout(deadline)
        try:
            async with bound:
                return await self._exchange(request)
        except TimeoutError:
            if bound.expired():
                raise past_deadline(deadline) from None
            raise

    async def _exchange(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        timeouts: dict[str, Any] = request.extensions.get("timeout", {})
        origin = (url.host, url.port or 80)
        body = await request.aread()
        wire = await self._idle_wire(origin) or await self._connect(origin,
                                                                     timeouts.get("connect"))
        try:
            await wire.send(_request_bytes(request, body), timeouts.get("write"))
            answer = _Answer(wire, timeouts.get("read"))
            status, reason, headers, version = await answer.head()
            content, keep = await _body(answer, request.method, status, headers, version)
        except BaseException:
            wire.close()  # half an exchange: the connection cannot be reused
            raise
        if keep and not wire.buffer:
            wire.idle_since = time.monotonic()
            self._idle.setdefault(origin, []).append(wire)
        else:
            wire.close()
        return httpx2.Response(status, headers=headers, stream=httpx2.ByteStream(content),
                               extensions={"http_version": version, "reason_phrase": reason})

    async def _idle_wire(self, origin: tuple[str, int]) -> _Wire | None:
        """An idle connection to reuse: one the server has sent nothing on since its last
        answer (an unsolicited late answer would be read as the next request's)."""
        idle = self._idle.get(origin)
        if not idle:
            return None
        # Bytes already at the socket reach their buffer first: the loop polls the
        # sockets after this task's first yield and delivers before its second.
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        now = time.monotonic()
        while idle:
            wire = idle.pop()
            if wire.reusable(now):
                return wire
            wire.close()
        return None

    @staticmethod
    async def _connect(origin: tuple[str, int], timeout: float | None) -> _Wire:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                _, wire = await loop.create_connection(_Wire, *origin)
        except TimeoutError:
            raise httpx2.ConnectTimeout("") from None
        except OSError as error:
            raise httpx2.ConnectError(str(error)) from None
        return wire

    async def aclose(self) -> None:
        idle, self._idle = self._idle, {}
        for wires in idle.values():
            for wire in wires:
                wire.close()
        await self.fallback.aclose()


def _request_bytes(request: httpx2.Request, body: bytes) -> bytes:
    lines = [b"%s %s HTTP/1.1" % (request.method.encode("ascii"), request.url.raw_path)]
    headers = request.headers.raw
    if "host" not in request.headers:
        lines.append(b"Host: " + request.url.netloc)
    lines.extend(b"%s: %s" % pair for pair in headers)
    if body and "content-length" not in request.headers:
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


async def _body(answer: _Answer, method: str, status: int, headers: list[tuple[bytes, bytes]],
                version: bytes) -> tuple[bytes, bool]:
    """The answer's body, and whether the connection may carry another request."""
    connection = (_header(headers, b"connection") or b"").lower()
    keep = version == b"HTTP/1.1" and b"close" not in connection
    if method == "HEAD" or status in _NO_BODY_STATUSES:
        return b"", keep
    encoding = _header(headers, b"transfer-encoding")
    if encoding is not None and encoding.lower().rsplit(b",", 1)[-1].strip() == b"chunked":
        return await answer.chunked(), keep
    length = _header(headers, b"content-length")
    if length is not None:
        # Digits only: int() would also take '-1', '+5', ' 3' and '3_45'.
        if not length.isdigit() or len(length) > 18:
            raise httpx2.RemoteProtocolError(f"malformed Content-Length {length[:40]!r}")
        return await answer.exactly(int(length)), keep
    return await answer.rest(), False
