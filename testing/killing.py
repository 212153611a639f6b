"""A fake for tests (NOT a model): a transport factory whose transport kills its own
process with SIGKILL at its n-th request, once per marker file: what a Ray worker lost to
the OOM killer or to a preempted node looks like from the driver. Picklable, so Ray can
ship it to the workers."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx2


@dataclass(frozen=True)
class KillOnce:
    """Makes transports over ``inner()``; the first to reach ``at_request`` requests
    while ``marker`` does not exist creates it and kills its process."""

    inner: Callable[[], httpx2.BaseTransport]
    marker: Path
    at_request: int = 2

    def __call__(self) -> httpx2.BaseTransport:
        return _Killing(self.inner(), self)


class _Killing(httpx2.BaseTransport):
    def __init__(self, inner: httpx2.BaseTransport, plan: KillOnce) -> None:
        self.inner = inner
        self.plan = plan
        self.seen = 0
        self._lock = threading.Lock()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        with self._lock:
            self.seen += 1
            now = self.seen
        if now == self.plan.at_request and not self.plan.marker.exists():
            self.plan.marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()
