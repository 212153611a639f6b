"""A hostile endpoint on loopback (hand-written, NOT a model): raw-socket behaviours that
break naive HTTP clients (trickling heads or bodies, floods, malformed lengths), a fake
model whose answers carry absurd usage values, and the issue 28 fault classes run
end to end with what each must hold (tests/test_hostile_*.py and bench/faults.py)."""

from __future__ import annotations

import json
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import httpx2

from papersift.testing.bodies import chat_completion, last_abstract
from papersift.testing.drafts import first_words

Behaviour = Callable[[socketserver.StreamRequestHandler], None]
# Absurd usage counts a hostile server may send (none is a count a row can hold).
HOSTILE_USAGE: list[Any] = [True, 10 ** 20, -5, 1e20, "12", [3], {"n": 1}, float("nan"),
                            2 ** 63, None]


def continues(handler: socketserver.StreamRequestHandler) -> None:
    """'100 Continue' heads, one every 0.1 s, for ever."""
    while True:
        handler.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        time.sleep(0.1)


def byte_by_byte(handler: socketserver.StreamRequestHandler) -> None:
    """A head promising 100 kB, then a byte every 0.1 s."""
    handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 100000\r\n\r\n")
    while True:
        handler.wfile.write(b" ")
        time.sleep(0.1)


def huge(handler: socketserver.StreamRequestHandler) -> None:
    """A 20 MiB body with its length."""
    handler.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (20 << 20))
    for _ in range(20):
        handler.wfile.write(b"x" * (1 << 20))


def huge_chunked(handler: socketserver.StreamRequestHandler) -> None:
    """A 20 MiB body in 1 MiB chunks."""
    handler.wfile.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    for _ in range(20):
        handler.wfile.write(b"100000\r\n" + b"x" * (1 << 20) + b"\r\n")
    handler.wfile.write(b"0\r\n\r\n")


def answering(head: bytes, body: bytes = b"") -> Behaviour:
    """One fixed answer (a malformed head, say)."""
    def behave(handler: socketserver.StreamRequestHandler) -> None:
        handler.wfile.write(head + body)
    return behave


@contextmanager
def hostile_server(behave: Behaviour) -> Iterator[str]:
    """A loopback server that reads each request's head and then behaves so; yields the
    chat-completions URL."""
    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            while self.rfile.readline() not in (b"\r\n", b""):
                pass
            with suppress(OSError):
                behave(self)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1/chat/completions"
    finally:
        server.shutdown()
        server.server_close()


class HostileUsage:
    """A fake model whose answers carry absurd usage values, one per request in turn,
    and every third a finish reason that is no string."""

    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests += 1
        value = HOSTILE_USAGE[self.requests % len(HOSTILE_USAGE)]
        text = json.dumps(first_words(last_abstract(json.loads(request.content))))
        body = chat_completion(text)
        body["usage"] = {"prompt_tokens": value, "completion_tokens": value,
                         "total_tokens": value}
        if self.requests % 3 == 0:
            body["choices"][0]["finish_reason"] = {"why": "x" * 5000}
        return httpx2.Response(200, content=json.dumps(body, allow_nan=True).encode(),
                               headers={"content-type": "application/json"})


class TinyLimits:
    """A fake model whose every answer announces a tokens-per-minute limit of 2."""

    def __init__(self) -> None:
        self.requests = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests += 1
        text = json.dumps(first_words(last_abstract(json.loads(request.content))))
        return httpx2.Response(200, json=chat_completion(text), headers={
            "x-ratelimit-limit-tokens": "2"})
