"""The live path's lean parts (issue 18): row workers that import no SDK, small
connection pools, no blocking client for a run that sends asynchronously."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import httpx2
import pytest

from papersift.extract.access.extractor import Extractor
from papersift.extract.access.llm import Endpoint
from papersift.extract.access.pools import ShardedPool
from papersift.prompts import load_prompt
from tests.conftest import chat_completion

DRAFT = ('{"tasks": ["protein folding"], "methods": ["FooNet"], "benchmarks": [], '
         '"types": ["method"], "gains": []}')


def test_a_row_worker_imports_neither_openai_nor_instructor() -> None:
    probe = ("import sys, papersift.extract.runs.rowbuild, papersift.extract.runs.rows; "
             "print(sorted(m for m in ('openai', 'instructor', 'httpx2') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


class FakePool(httpx2.AsyncBaseTransport):
    """Hand-written fake of one connection pool: counts what it has in flight."""

    def __init__(self, log: list[FakePool]) -> None:
        log.append(self)
        self.now = self.most = self.served = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.now += 1
        self.most = max(self.most, self.now)
        await asyncio.sleep(0.01)
        self.now -= 1
        self.served += 1
        return httpx2.Response(200, content=request.url.path.encode())


def test_requests_spread_over_small_pools_and_answers_are_the_pools() -> None:
    made: list[FakePool] = []
    pool = ShardedPool(httpx2.Limits(), shard_size=4, make_pool=lambda: FakePool(made))

    async def go() -> list[bytes]:
        async with httpx2.AsyncClient(transport=pool) as client:
            answers = await asyncio.gather(*(client.get(f"http://fake.test/{i}")
                                             for i in range(12)))
            again = await client.get("http://fake.test/again")  # one more, all idle now
        return [a.content for a in [*answers, again]]

    answers = asyncio.run(go())
    assert answers == [f"/{i}".encode() for i in range(12)] + [b"/again"]
    assert len(made) == 3
    assert [p.most for p in made] == [4, 4, 4]
    assert sum(p.served for p in made) == 13


def test_a_clean_async_answer_builds_no_blocking_client_and_a_bad_mode_fails_at_once() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=chat_completion(DRAFT))

    endpoint = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")
    extractor = Extractor(endpoint, load_prompt(), transport=httpx2.MockTransport(handler))

    async def go() -> None:
        async with extractor.session():
            outcome = await extractor.extract_async("p1", "We propose FooNet for folding.")
            assert outcome.draft is not None and outcome.draft.methods == ["FooNet"]
            assert extractor._sync is None

    try:
        asyncio.run(go())
    finally:
        extractor.close()
    with pytest.raises(ValueError, match="unknown mode"):
        Extractor(Endpoint(base_url="http://fake.test/v1", model="fake", mode="nope"),
                  load_prompt())
