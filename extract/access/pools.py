"""Several small HTTP connection pools in place of one large one.

After every request, httpcore2's pool walks all of its connections and probes each idle
one's socket (``has_expired``: a poll and anyio's attribute lookups). With 64 requests
in flight that walk is 64 connections long, once per request, and it was the largest
single cost of a fast run's event loop. :class:`ShardedPool` hands each request to the
pool with the fewest requests in flight, opening another pool only when every pool has
``SHARD_SIZE`` in flight, so each walk covers a few connections. Each pool is an
ordinary ``httpx2.AsyncHTTPTransport``: requests, answers, timeouts and errors are its
own, unchanged.
"""

from __future__ import annotations

import functools
import os
import ssl
from collections.abc import Callable

import httpx2

# Requests in flight per pool before another pool is opened.
SHARD_SIZE = 4


@functools.cache
def _ssl_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx2.create_ssl_context()


def shared_ssl_context() -> ssl.SSLContext:
    """httpx2's default verifying context, built once per process (loading the CA
    bundle costs tens of milliseconds) for the CA settings of the environment."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


class ShardedPool(httpx2.AsyncBaseTransport):
    """An async transport that spreads requests over small connection pools."""

    def __init__(self, limits: httpx2.Limits, shard_size: int = SHARD_SIZE,
                 make_pool: Callable[[], httpx2.AsyncBaseTransport] | None = None) -> None:
        self.limits = limits
        self.shard_size = max(1, shard_size)
        self.make_pool = make_pool or self._http_pool
        self.pools: list[httpx2.AsyncBaseTransport] = []
        self.in_flight: list[int] = []

    def _http_pool(self) -> httpx2.AsyncBaseTransport:
        return httpx2.AsyncHTTPTransport(verify=shared_ssl_context(), limits=self.limits)

    def _pick(self) -> int:
        counts = self.in_flight
        if counts:
            index = min(range(len(counts)), key=counts.__getitem__)
            if counts[index] < self.shard_size:
                return index
        self.pools.append(self.make_pool())
        counts.append(0)
        return len(counts) - 1

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        index = self._pick()
        self.in_flight[index] += 1
        try:
            return await self.pools[index].handle_async_request(request)
        finally:
            self.in_flight[index] -= 1  # the answer's headers are in: its body follows

    async def aclose(self) -> None:
        pools, self.pools, self.in_flight = self.pools, [], []
        for pool in pools:
            await pool.aclose()
