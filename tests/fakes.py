"""A hand-written fake model endpoint (NOT a recording): it answers every extraction
request with a small answer quoting the abstract's first words, so pipeline mechanics
(counts, cache, resume, exports) can be tested on the whole corpus in milliseconds."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import httpx2

from tests.conftest import chat_completion

_ABSTRACT = re.compile(r'Abstract:\n"""\n(.*)\n"""', re.S)


def fake_answer(abstract: str) -> dict[str, Any]:
    """A draft naming the abstract's first words as its task, and nothing else."""
    words = abstract.split()
    return {
        "tasks": [" ".join(words[:6])],
        "methods": [],
        "benchmarks": [],
        "gains": [],
        "types": ["method"],
    }


class FakeModel:
    """Answers from the abstract in the last user message; can fail on chosen calls."""

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
        body = json.loads(request.content)
        match = _ABSTRACT.search(body["messages"][-1]["content"])
        assert match, "the abstract must be the last thing in the request"
        return httpx2.Response(200, json=chat_completion(json.dumps(fake_answer(match.group(1)))))

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)
