"""A hand-written fake: a fault-injecting OpenAI-compatible server (NOT a recording).

It listens on loopback and speaks real HTTP, so the whole client stack (httpx2, the
retrying transport, openai, instructor) runs as it does against a real endpoint. Each chat
completion is answered with a fault, chosen by rule or at a rate, or with a valid answer
built by code from the abstract it received (drafts.valid_answer: the abstract's first
sentence quoted as the evidence of one task). Nothing here comes from a model.

Faults (``FAULTS``):

- ``rate_limit``: 429 with ``Retry-After`` (and ``retry-after-ms`` when configured)
- ``server_error`` / ``bad_gateway`` / ``unavailable``: 500 / 502 / 503
- ``hang``: no answer until after the client's timeout, then the connection is closed
- ``drop``: the connection is closed without an answer
- ``truncated_json``: 200, the model's JSON cut in half
- ``schema_break``: 200, valid JSON that breaks the schema
- ``length``: 200, a cut answer with ``finish_reason: length``
- ``empty_body``: 200 with no body at all
- ``ungrounded``: 200, a valid draft naming things the abstract does not contain

Every request is logged (time, paper, fault), so tests and benchmarks can count requests
per abstract, check that waits honoured ``Retry-After``, and predict each abstract's
outcome with :func:`papersift.testing.expected.expected_outcome`. ``bench/`` uses it too.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from papersift.extract.domain.ingest import paper_id_for
from papersift.testing.bodies import chat_completion, first_user_abstract
from papersift.testing.drafts import ungrounded_answer, valid_answer
from papersift.testing.expected import TRANSPORT_FAULTS

CONTENT_FAULTS = ("truncated_json", "schema_break", "empty_body", "ungrounded")
FAULTS = (*TRANSPORT_FAULTS, *CONTENT_FAULTS, "length")
_STATUS = {"rate_limit": 429, "server_error": 500, "bad_gateway": 502, "unavailable": 503,
           "unauthorized": 401}  # 401: by rule only, not part of FAULTS
# Rule(abstract, n) -> fault or None (a valid answer); n counts this abstract's requests
# from 1. Rules run before the rate.
Rule = Callable[[str, int], str | None]


def completion_body(content: str, *, finish_reason: str = "stop",
                    tools: bool = False) -> dict[str, Any]:
    """The fault server's chat-completion body carrying ``content`` (a tool call when asked)."""
    return chat_completion(content, finish_reason=finish_reason, completion_tokens=20,
                           tool="PaperExtraction" if tools else None,
                           completion_id="chatcmpl-faultserver", model="fault-server",
                           call_id="call_faultserver")


@dataclass(frozen=True)
class Served:
    """One request as the server saw it."""

    at: float  # time.monotonic() when the request arrived
    paper_id: str | None
    fault: str | None  # None: a valid answer
    retry_after_s: float | None = None
    authorization: str | None = None
    body: dict[str, Any] | None = None  # the request's JSON, when FaultConfig.keep_bodies


@dataclass
class FaultConfig:
    """What the server does: rules first, then faults at ``rate`` drawn from ``mix``."""

    rate: float = 0.0
    mix: Sequence[str] = FAULTS
    rules: Sequence[Rule] = ()
    seed: int = 0
    retry_after: str = "1"  # the Retry-After header value sent with 429
    retry_after_ms: int | None = None  # also send retry-after-ms (OpenAI's header)
    hang_s: float = 2.0  # how long a hang lasts; set it above the client's timeout
    latency_s: float = 0.0  # added before every answer (crash trials need a slow server)
    echo_authorization: bool = False  # error bodies repeat the Authorization header
    echo_headers: bool = False  # error bodies repeat every request header, as JSON
    keep_bodies: bool = False  # keep every request body in the log
    answer: Callable[[str], dict[str, Any]] = valid_answer  # the valid answer for an abstract
    headers: Callable[[str | None], dict[str, str]] | None = None  # extra headers, any answer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # A deep accept queue: with the default (5), a burst of concurrent requests has its
    # connections refused by the kernel, a fault the server would not know it caused.
    request_queue_size = 256


class FaultServer:
    """A threaded HTTP server on 127.0.0.1 answering /v1/chat/completions."""

    def __init__(self, config: FaultConfig | None = None) -> None:
        self.config = config or FaultConfig()
        self.log: list[Served] = []
        self._lock = threading.Lock()
        self._random = random.Random(self.config.seed)
        self._per_paper: dict[str, int] = {}
        self._stopping = threading.Event()
        handler = _handler_for(self)
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self.httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FaultServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- bookkeeping ---------------------------------------------------------------------

    def choose(self, abstract: str | None) -> tuple[str | None, str | None]:
        """(paper id, fault or None) for a request carrying ``abstract``."""
        with self._lock:
            if abstract is None:
                return None, None
            paper_id = paper_id_for(abstract)
            count = self._per_paper.get(paper_id, 0) + 1
            self._per_paper[paper_id] = count
            for rule in self.config.rules:
                fault = rule(abstract, count)
                if fault is not None:
                    return paper_id, fault
            if self.config.rate and self._random.random() < self.config.rate:
                return paper_id, self._random.choice(list(self.config.mix))
            return paper_id, None

    def record(self, served: Served) -> None:
        with self._lock:
            self.log.append(served)

    def requests_for(self, paper_id: str) -> list[Served]:
        with self._lock:
            return [served for served in self.log if served.paper_id == paper_id]

    def faults_by_paper(self) -> dict[str, list[str | None]]:
        """Each paper's served faults, in order (None: a valid answer)."""
        with self._lock:
            found: dict[str, list[str | None]] = {}
            for served in self.log:
                if served.paper_id is not None:
                    found.setdefault(served.paper_id, []).append(served.fault)
            return found

    def retry_after_gaps(self) -> list[tuple[float, float]]:
        """(asked seconds, measured gap) for every 429 followed by another request for the
        same paper: the gap must not be shorter than what Retry-After asked."""
        with self._lock:
            log = list(self.log)
        gaps = []
        for index, served in enumerate(log):
            if served.fault != "rate_limit" or served.retry_after_s is None:
                continue
            later = next((other for other in log[index + 1:]
                          if other.paper_id == served.paper_id), None)
            if later is not None:
                gaps.append((served.retry_after_s, later.at - served.at))
        return gaps


def _handler_for(server: FaultServer) -> type[BaseHTTPRequestHandler]:
    config = server.config

    class Handler(BaseHTTPRequestHandler):
        """One request: read the body, decide, answer (or misbehave)."""

        _fault: str | None = None

        def log_message(self, format: str, *args: Any) -> None:
            return  # keep test output clean

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            extra = config.headers(self._fault) if config.headers is not None else {}
            headers = {**(headers or {}), **extra}
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass  # the client gave up (timeout) and closed the socket

        def _json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(value).encode("utf-8"), headers)

        def do_GET(self) -> None:
            self._json(200, {"object": "list", "data": [{"id": "fault-server",
                                                          "object": "model"}]})

        def do_POST(self) -> None:
            arrived = time.monotonic()
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._json(400, {"error": {"message": "request body is not JSON"}})
                return
            abstract = first_user_abstract(body)
            paper_id, fault = server.choose(abstract)
            self._fault = fault
            authorization = self.headers.get("Authorization")
            retry_after = None
            if fault == "rate_limit":
                retry_after = _seconds(config.retry_after, config.retry_after_ms)
            server.record(Served(arrived, paper_id, fault, retry_after, authorization,
                                 body if config.keep_bodies else None))
            if config.latency_s:
                server._stopping.wait(config.latency_s)
            self._answer(fault, abstract, body, authorization)

        def _echo(self, authorization: str | None) -> str:
            echo = ""
            if config.echo_authorization:
                echo += f" (request carried Authorization: {authorization})"
            if config.echo_headers:
                echo += f" headers: {json.dumps(dict(self.headers.items()))}"
            return echo

        def _answer(self, fault: str | None, abstract: str | None, body: dict[str, Any],
                    authorization: str | None) -> None:
            tools = bool(body.get("tools"))
            if fault in _STATUS:
                message = f"injected fault: {fault}{self._echo(authorization)}"
                headers = {}
                if fault == "rate_limit":
                    headers["Retry-After"] = config.retry_after
                    if config.retry_after_ms is not None:
                        headers["retry-after-ms"] = str(config.retry_after_ms)
                self._json(_STATUS[fault], {"error": {"message": message, "type": fault}},
                           headers)
                return
            if fault == "hang":
                server._stopping.wait(config.hang_s)
                self._drop()
                return
            if fault == "drop":
                self._drop()
                return
            if fault == "empty_body":
                self._send(200, b"")
                return
            if abstract is None:
                self._json(400, {"error": {"message": "no abstract in the request"}})
                return
            good = json.dumps(config.answer(abstract))
            content, finish = good, "stop"
            if fault == "truncated_json":
                content = good[: len(good) // 2]
            elif fault == "schema_break":
                content = json.dumps({"contribution_types": "method", "tasks": "all of them"})
            elif fault == "ungrounded":
                content = json.dumps(ungrounded_answer())
            elif fault == "length":
                content, finish = good[: len(good) // 3], "length"
            self._json(200, completion_body(content, finish_reason=finish, tools=tools))

        def _drop(self) -> None:
            self.close_connection = True
            with suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)

    return Handler


def _seconds(retry_after: str, retry_after_ms: int | None) -> float | None:
    """What a client honouring the headers waits: retry-after-ms first, as the client does."""
    if retry_after_ms is not None:
        return retry_after_ms / 1000.0
    try:
        return float(retry_after)
    except ValueError:
        return None


@contextmanager
def running(config: FaultConfig | None = None) -> Iterator[FaultServer]:
    """A started server, stopped when the block ends."""
    server = FaultServer(config).start()
    try:
        yield server
    finally:
        server.stop()
