"""The client's CPU against an instant simulated endpoint (issue 27): what papersift's own
request path costs, measured so that two checkouts can be compared.

- ``stack``: N requests (concurrency 64) through the async HTTP client a run builds
  (``llm.build_async_http``: the retrying transport over the default connections), with a
  body of a real request's size; process CPU per request, nothing else.
- ``run``: ``run_inputs`` on the first N records of FILE (concurrency 64, row workers
  off so that grounding is in this process too); this process's CPU per abstract.

    python -m bench.client_cpu stack --requests 3000
    python -m bench.client_cpu run ../shared/conferences/neurips2025.jsonl --papers 2000

The simulator runs in its own process; only this process's CPU is counted
(``time.process_time``). Run each checkout a few times, interleaved, on a loaded machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from bench.simendpoint import SimConfig, SimEndpoint
from papersift.extract.access.endpoints import EndpointOptions
from papersift.extract.access.llm import Endpoint, build_async_http
from papersift.extract.interface.app import RunSettings, run_inputs

BODY = json.dumps({"model": "gpt-4o-mini", "max_tokens": 64, "messages": [
    {"role": "system", "content": "x" * 6000},
    {"role": "user", "content": "We propose FooNet. On CIFAR-10 it is 2.5x faster."}]}).encode()


async def _stack(base_url: str, requests: int) -> tuple[float, float]:
    client = build_async_http(Endpoint(base_url=base_url, model="gpt-4o-mini"))
    slots = asyncio.Semaphore(64)
    headers = {"Authorization": "Bearer sim", "Content-Type": "application/json"}

    async def one() -> None:
        async with slots:
            answer = await client.post(base_url + "/chat/completions", content=BODY,
                                       headers=headers)
            assert answer.status_code == 200, answer.status_code
            json.loads(answer.content)

    await asyncio.gather(*(one() for _ in range(200)))  # connections open, code warm
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(requests)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await client.aclose()
    return cpu, wall


def stack(requests: int) -> None:
    with SimEndpoint.spawn(SimConfig(latency="fixed:0", seed=1)) as sim:
        cpu, wall = asyncio.run(_stack(sim.base_url, requests))
    print(f"stack: {1000 * cpu / requests:.3f} ms CPU per request, "
          f"{requests / wall:.0f} requests/s ({requests} requests, concurrency 64)")


def run(source: Path, papers: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        corpus = Path(folder) / "corpus.jsonl"
        with source.open(encoding="utf-8") as lines:
            corpus.write_text("".join(line for _, line in zip(range(papers), lines,
                                                              strict=False)),
                              encoding="utf-8")
        with SimEndpoint.spawn(SimConfig(latency="fixed:0", seed=1)) as sim:
            settings = RunSettings(
                db=Path(folder) / "w.duckdb", concurrency=64, row_workers=0,
                endpoint=EndpointOptions(provider="compatible", base_url=sim.base_url,
                                         model="gpt-4o-mini", max_tokens=512))
            cpu = time.process_time()
            _, summary = run_inputs([str(corpus)], settings)
            cpu = time.process_time() - cpu
    print(f"run: {1000 * cpu / max(summary.n_abstracts, 1):.2f} ms CPU per abstract "
          f"({cpu:.1f} s; {summary.line()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    one = sub.add_parser("stack")
    one.add_argument("--requests", type=int, default=3000)
    whole = sub.add_parser("run")
    whole.add_argument("file", type=Path)
    whole.add_argument("--papers", type=int, default=2000)
    args = parser.parse_args()
    if args.what == "stack":
        stack(args.requests)
    else:
        run(args.file, args.papers)


if __name__ == "__main__":
    main()
