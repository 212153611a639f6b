"""Faults and the request log of the one fake OpenAI server (hand-written, NOT a model).

A chat completion is answered with a fault, chosen by rule or at a rate, or with a valid
answer. Faults (``FAULTS``):

- ``rate_limit``: 429 with ``Retry-After`` (and ``retry-after-ms`` when configured)
- ``server_error`` / ``bad_gateway`` / ``unavailable``: 500 / 502 / 503
- ``hang``: no answer for ``hang_s`` (set it past the client's timeout), then the
  connection is closed
- ``drop``: the connection is closed without an answer
- ``truncated_json``: 200, the answer's JSON cut in half
- ``schema_break``: 200, valid JSON that breaks the schema
- ``length``: 200, a cut answer with ``finish_reason: length``
- ``empty_body``: 200 with no body at all
- ``ungrounded``: 200, a valid draft naming things the abstract does not contain

With ``log_requests`` every chat request is logged (time, paper, fault), so tests and
benchmarks can count requests per abstract, check that waits honoured ``Retry-After``,
and predict each abstract's outcome with :func:`papersift.testing.expected.expected_outcome`.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from papersift.extract.domain.reading.ingest import paper_id_for
from papersift.testing.bodies import chat_completion
from papersift.testing.drafts import ungrounded_answer
from papersift.testing.expected import TRANSPORT_FAULTS
from papersift.testing.sim.wire import Response, error_response, json_response

if TYPE_CHECKING:
    from papersift.testing.sim.config import SimConfig

CONTENT_FAULTS = ("truncated_json", "schema_break", "empty_body", "ungrounded")
FAULTS = (*TRANSPORT_FAULTS, *CONTENT_FAULTS, "length")
STATUS = {"rate_limit": 429, "server_error": 500, "bad_gateway": 502, "unavailable": 503,
          "unauthorized": 401}  # 401: by rule only, not part of FAULTS
# Rule(abstract, n) -> fault or None (a valid answer); n counts this abstract's requests
# from 1. Rules run before the rate.
Rule = Callable[[str, int], str | None]
Answer = Callable[[str], dict[str, Any]]  # the valid draft for an abstract
ExtraHeaders = Callable[[str | None], dict[str, str]]  # headers for any answer, by fault


@dataclass(frozen=True)
class Served:
    """One chat request as the server saw it."""

    at: float  # time.monotonic() when the request arrived
    paper_id: str | None
    fault: str | None  # None: a valid answer
    retry_after_s: float | None = None
    authorization: str | None = None
    body: dict[str, Any] | None = None  # the request's JSON, when keep_bodies


def fault_completion(content: str, *, finish_reason: str = "stop",
                     tools: bool = False) -> dict[str, Any]:
    """The chat-completion body of a fault-profile answer carrying ``content``."""
    return chat_completion(content, finish_reason=finish_reason, completion_tokens=20,
                           tool="PaperExtraction" if tools else None,
                           completion_id="chatcmpl-faultserver", model="fault-server",
                           call_id="call_faultserver")


def broken_content(fault: str | None, good: str) -> tuple[str, str]:
    """(content, finish reason) of an answer whose valid JSON is ``good``, under a
    content fault (or none)."""
    if fault == "truncated_json":
        return good[: len(good) // 2], "stop"
    if fault == "schema_break":
        return json.dumps({"contribution_types": "method", "tasks": "all of them"}), "stop"
    if fault == "ungrounded":
        return json.dumps(ungrounded_answer()), "stop"
    if fault == "length":
        return good[: len(good) // 3], "length"
    return good, "stop"


def broken_answer(completion: dict[str, Any], fault: str | None) -> dict[str, Any]:
    """The simulator's own completion with its draft broken by a content fault."""
    broken: dict[str, Any] = json.loads(json.dumps(completion))
    choice = broken["choices"][0]
    message = choice["message"]
    calls = message.get("tool_calls")
    good = calls[0]["function"]["arguments"] if calls else str(message.get("content") or "")
    content, finish = broken_content(fault, good)
    if calls:
        calls[0]["function"]["arguments"] = content
    else:
        message["content"] = content
    if fault == "length":
        choice["finish_reason"] = finish
    return broken


def seconds_asked(retry_after: str, retry_after_ms: int | None) -> float | None:
    """What a client honouring the headers waits: retry-after-ms first, as the client does."""
    if retry_after_ms is not None:
        return retry_after_ms / 1000.0
    try:
        return float(retry_after)
    except ValueError:
        return None


def _echo(config: SimConfig, headers: dict[str, str]) -> str:
    echo = ""
    if config.echo_authorization:
        echo += f" (request carried Authorization: {headers.get('authorization')})"
    if config.echo_headers:
        echo += f" headers: {json.dumps(headers)}"
    return echo


async def configured_answer(config: SimConfig, fault: str | None, abstract: str | None,
                            body: dict[str, Any], headers: dict[str, str],
                            answer: dict[str, Any] | None) -> Response:
    """The answer under a fault, or the valid answer of ``config.answer``; ``answer`` is
    the simulator's own completion when the config names no answer."""
    if fault in STATUS:
        extra = {}
        if fault == "rate_limit":
            extra["Retry-After"] = config.retry_after
            if config.retry_after_ms is not None:
                extra["retry-after-ms"] = str(config.retry_after_ms)
        message = f"injected fault: {fault}{_echo(config, headers)}"
        return json_response(STATUS[str(fault)], {"error": {"message": message,
                                                           "type": fault}}, extra)
    if fault == "hang":
        await asyncio.sleep(config.hang_s)
        return Response(0, b"", drop=True)
    if fault == "drop":
        return Response(0, b"", drop=True)
    if fault == "empty_body":
        return Response(200, b"")
    if answer is not None:  # a content fault on the simulator's own answer
        return Response(200, json.dumps(broken_answer(answer, fault)).encode("utf-8"))
    if abstract is None:
        return error_response(400, "no abstract in the request")
    assert config.answer is not None
    content, finish = broken_content(fault, json.dumps(config.answer(abstract)))
    return json_response(200, fault_completion(content, finish_reason=finish,
                                               tools=bool(body.get("tools"))))


class RequestLog:
    """Chooses each request's fault and logs what was served; thread-safe, since the
    server's loop thread writes it while tests read it."""

    def __init__(self, rate: float = 0.0, mix: Sequence[str] = FAULTS,
                 rules: Sequence[Rule] = (), seed: int = 0) -> None:
        self.rate, self.mix, self.rules = rate, list(mix), list(rules)
        self.entries: list[Served] = []
        self._lock = threading.Lock()
        self._random = random.Random(seed)
        self._per_paper: dict[str, int] = {}

    def choose(self, abstract: str | None) -> tuple[str | None, str | None]:
        """(paper id, fault or None) for a request carrying ``abstract``."""
        with self._lock:
            if abstract is None:
                return None, None
            paper_id = paper_id_for(abstract)
            count = self._per_paper.get(paper_id, 0) + 1
            self._per_paper[paper_id] = count
            for rule in self.rules:
                fault = rule(abstract, count)
                if fault is not None:
                    return paper_id, fault
            if self.rate and self._random.random() < self.rate:
                return paper_id, self._random.choice(self.mix)
            return paper_id, None

    def record(self, served: Served) -> None:
        with self._lock:
            self.entries.append(served)

    def snapshot(self) -> list[Served]:
        with self._lock:
            return list(self.entries)

    def requests_for(self, paper_id: str) -> list[Served]:
        return [served for served in self.snapshot() if served.paper_id == paper_id]

    def faults_by_paper(self) -> dict[str, list[str | None]]:
        """Each paper's served faults, in order (None: a valid answer)."""
        found: dict[str, list[str | None]] = {}
        for served in self.snapshot():
            if served.paper_id is not None:
                found.setdefault(served.paper_id, []).append(served.fault)
        return found

    def retry_after_gaps(self) -> list[tuple[float, float]]:
        """(asked seconds, measured gap) for every 429 followed by another request for the
        same paper: the gap must not be shorter than what Retry-After asked."""
        log = self.snapshot()
        gaps = []
        for index, served in enumerate(log):
            if served.fault != "rate_limit" or served.retry_after_s is None:
                continue
            later = next((other for other in log[index + 1:]
                          if other.paper_id == served.paper_id), None)
            if later is not None:
                gaps.append((served.retry_after_s, later.at - served.at))
        return gaps
