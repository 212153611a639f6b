"""papersift's own plain-HTTP/1.1 transport (extract/access/keepalive.py), against a
hand-written fake server on loopback that answers each request with scripted bytes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import httpx2
import pytest

from papersift.extract.access.keepalive import KeepAliveTransport
from papersift.extract.access.transport import AsyncRetryingTransport, RetryPolicy

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"a\": true}"
# answer(request_number, request_bytes) -> the bytes to send back; None: close, no answer
Script = Callable[[int, bytes], bytes | None]


class FakeServer:
    """A hand-written fake HTTP server: reads each request (head and Content-Length body),
    answers with the script's bytes, and counts connections and requests."""

    def __init__(self, script: Script, hang_s: float = 0.0) -> None:
        self.script = script
        self.hang_s = hang_s
        self.connections = 0
        self.requests: list[bytes] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                await asyncio.sleep(self.hang_s)
                answer = self.script(len(self.requests), request)
                if answer is None:
                    break
                writer.write(answer)
                await writer.drain()
                if b"Connection: close" in answer or answer.startswith(b"HTTP/1.0"):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


def run_against(server: FakeServer,
                client_work: Callable[[httpx2.AsyncClient], Awaitable[object]],
                transport: Callable[[httpx2.AsyncBaseTransport], httpx2.AsyncBaseTransport]
                = lambda inner: inner, timeout: float = 5.0) -> object:
    async def go() -> object:
        listening = await asyncio.start_server(server.serve, "127.0.0.1", 0)
        port = listening.sockets[0].getsockname()[1]
        fallback = httpx2.MockTransport(lambda request: httpx2.Response(599))
        inner = transport(KeepAliveTransport(fallback=fallback))
        try:
            async with httpx2.AsyncClient(transport=inner, timeout=timeout,
                                          base_url=f"http://127.0.0.1:{port}") as client:
                return await client_work(client)
        finally:
            listening.close()
    return asyncio.run(go())


def test_answers_come_back_and_one_connection_carries_them() -> None:
    server = FakeServer(lambda n, _request: OK)

    async def work(client: httpx2.AsyncClient) -> list[tuple[int, object, str]]:
        answers = [await client.post("/v1/chat", json={"n": n}) for n in range(3)]
        return [(a.status_code, a.json(), a.headers["content-type"]) for a in answers]

    assert run_against(server, work) == [(200, {"a": True}, "application/json")] * 3
    assert server.connections == 1
    assert server.requests[0].startswith(b"POST /v1/chat HTTP/1.1\r\n")
    assert server.requests[0].endswith(b'{"n":0}')


def test_chunked_close_delimited_and_interim_answers_are_read_whole() -> None:
    answers = {
        1: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"4;ext=1\r\nabcd\r\n3\r\nefg\r\n0\r\nX-Trailer: 1\r\n\r\n",
        2: b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nhi",
        3: b"HTTP/1.0 200 OK\r\n\r\nuntil the close",
    }
    server = FakeServer(lambda n, _request: answers[n])

    async def work(client: httpx2.AsyncClient) -> list[tuple[int, bytes]]:
        got = [await client.post("/", content=b"x") for _ in range(3)]
        return [(a.status_code, a.content) for a in got]

    assert run_against(server, work) == [(200, b"abcdefg"), (201, b"hi"),
                                         (200, b"until the close")]


def test_a_connection_the_server_closed_is_not_reused() -> None:
    server = FakeServer(lambda n, _request: OK.replace(b"OK\r\n", b"OK\r\nConnection: close\r\n"))

    async def work(client: httpx2.AsyncClient) -> list[int]:
        return [(await client.get("/")).status_code for _ in range(3)]

    assert run_against(server, work) == [200, 200, 200]
    assert server.connections == 3


def test_a_disconnect_and_a_short_body_are_protocol_errors() -> None:
    closing = OK.replace(b"OK\r\n", b"OK\r\nConnection: close\r\n")
    script: dict[int, bytes | None] = {1: None, 2: closing[:-3]}  # cut, then closed
    server = FakeServer(lambda n, _request: script[n])

    async def work(client: httpx2.AsyncClient) -> list[str]:
        seen = []
        for _ in range(2):
            with pytest.raises(httpx2.RemoteProtocolError) as error:
                await client.get("/")
            seen.append(str(error.value))
        return seen

    first, second = run_against(server, work)  # type: ignore[misc]
    assert first == "Server disconnected without sending a response."
    assert "complete message body" in second


def test_the_retrying_transport_retries_a_dropped_request() -> None:
    server = FakeServer(lambda n, _request: None if n == 1 else OK)

    async def work(client: httpx2.AsyncClient) -> int:
        return (await client.get("/")).status_code

    policy = RetryPolicy(initial_wait_s=0.0, jitter_s=0.0)
    assert run_against(server, work,
                       lambda inner: AsyncRetryingTransport(inner, policy=policy)) == 200
    assert len(server.requests) == 2 and server.connections == 2


def test_a_slow_answer_is_a_read_timeout_and_a_closed_port_a_connect_error() -> None:
    server = FakeServer(lambda n, _request: OK, hang_s=1.0)

    async def slow(client: httpx2.AsyncClient) -> None:
        with pytest.raises(httpx2.ReadTimeout):
            await client.get("/")

    run_against(server, slow, timeout=0.1)

    async def refused() -> None:
        fallback = httpx2.MockTransport(lambda request: httpx2.Response(599))
        transport = KeepAliveTransport(fallback=fallback)
        async with httpx2.AsyncClient(transport=transport) as client:
            with pytest.raises(httpx2.ConnectError):
                await client.get("http://127.0.0.1:1/")

    asyncio.run(refused())


def test_https_goes_to_the_fallback() -> None:
    async def go() -> int:
        fallback = httpx2.MockTransport(lambda request: httpx2.Response(203))
        async with httpx2.AsyncClient(transport=KeepAliveTransport(fallback=fallback)) as client:
            return (await client.get("https://example.test/")).status_code

    assert asyncio.run(go()) == 203
