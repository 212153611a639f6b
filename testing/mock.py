"""Hand-written fakes of a model endpoint behind ``httpx2.MockTransport`` (NOT recordings):
a scripted server that answers with a list of responses or errors, and a first-words
model that answers every extraction request from its abstract, so pipeline mechanics
(counts, cache, resume, exports) can be tested on the whole corpus in milliseconds."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import httpx2

from papersift.testing.bodies import chat_completion, last_abstract
from papersift.testing.drafts import first_words

Step = httpx2.Response | Exception | Callable[[httpx2.Request], httpx2.Response]


class ScriptedServer:
    """A fake endpoint: answers requests with a script of responses or errors, and keeps
    every request it saw."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if not self.steps:
            raise AssertionError(f"unexpected extra request #{len(self.requests)}")
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        if callable(step) and not isinstance(step, httpx2.Response):
            return step(request)
        return step

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def ok(content: dict[str, Any] | str, **kwargs: Any) -> httpx2.Response:
    """A 200 answer carrying ``content`` (a draft, or raw text) as the message."""
    text = content if isinstance(content, str) else json.dumps(content)
    return httpx2.Response(200, json=chat_completion(text, **kwargs))


class FakeModel:
    """A fake model: answers with drafts.first_words of the abstract in the last user
    message; raises KeyboardInterrupt after ``interrupt_after`` calls when asked."""

    def __init__(self, *, interrupt_after: int | None = None) -> None:
        self.requests = 0
        self.interrupt_after = interrupt_after
        self._lock = threading.Lock()

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        with self._lock:
            self.requests += 1
            count = self.requests
        if self.interrupt_after is not None and count > self.interrupt_after:
            raise KeyboardInterrupt  # what Ctrl-C looks like from inside a request
        text = json.dumps(first_words(last_abstract(json.loads(request.content))))
        return httpx2.Response(200, json=chat_completion(text))

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)


class KeyedDrafts:
    """A fake model: answers the draft of ``drafts`` whose key the last message contains,
    passed through ``adjust(draft, request)`` when given, and keeps every request body."""

    def __init__(self, drafts: dict[str, dict[str, Any]],
                 adjust: Callable[[dict[str, Any], httpx2.Request], dict[str, Any]] | None = None,
                 ) -> None:
        self.drafts = drafts
        self.adjust = adjust
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        last = body["messages"][-1]["content"]
        draft = next(answer for key, answer in self.drafts.items() if key in last)
        if self.adjust is not None:
            draft = self.adjust(draft, request)
        return ok(draft)
