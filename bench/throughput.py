"""Throughput against the simulated endpoint: papersift's async runner vs its ceiling and
vs a plain sequential instructor loop, in the same run.

For each scenario a fresh simulator (bench/simendpoint.py, its own process) is started with
a latency distribution and one binding limit: its slots, its requests per minute, or its
tokens per minute. papersift extracts a synthetic corpus through it with the normal
`run_inputs` (async client, concurrency 32, limits learned from the x-ratelimit headers
unless --configured-limits), then a plain loop (`instructor.from_openai(OpenAI(...))`,
one `create` per abstract, the SDK's own retries) extracts the first abstracts of the
same corpus. Throughput is counted from the simulator's own clock: answered requests
between its first request and its last answer.

The ceiling of a scenario is min(slots / mean latency, rpm / 60, tpm / 60 / tokens per
request), where a request's tokens are what the simulator charged it (prompt + max_tokens).

Two scenarios measure papersift's own CPU instead of an endpoint's limits (issue 18):
``fast`` (fixed 200 ms, 16 slots: 80 requests/s; papersift --concurrency 16) and
``instant`` (no latency, no slots; --concurrency 64: papersift's own maximum). Their
ceiling is not computed but measured in the same run: a bare client (as many threads as
papersift's concurrency, keep-alive ``http.client`` connections) sends the very request
bodies papersift sends to the same simulator, and nothing else. They also report the CPU
seconds papersift's process spent per abstract (``resource.getrusage``: user + system,
all its threads), which a shared machine disturbs less than the wall rate.

    python -m bench.throughput [--papers 2000] [--sequential 60] [--scenario rpm]
    python -m bench.throughput --papers 1600 --scenario fast --scenario instant [--repeat 3]
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import resource
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import instructor
import openai

from bench.simendpoint import SimConfig, SimEndpoint, parse_latency
from bench.synth import write_corpus
from papersift.extract.access.endpoints import EndpointOptions, plan_endpoint
from papersift.extract.access.extractor import Extractor
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.ingest_files import ingest
from papersift.prompts import DEFAULT_PROMPT, load_prompt
from papersift.schemas import PaperDraft

CLIENT_CONCURRENCY = 32
MAX_TOKENS = 512


@dataclass(frozen=True)
class Scenario:
    name: str
    latency: str
    slots: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    concurrency: int = CLIENT_CONCURRENCY  # papersift's --concurrency
    bare: bool = False  # ceiling measured by a bare client, not computed


SCENARIOS = (
    Scenario("slots", latency="lognormal:0.4,0.5", slots=16),
    Scenario("rpm", latency="lognormal:0.8,0.5", rpm=1200),
    Scenario("tpm", latency="lognormal:0.8,0.5", tpm=1_200_000),
    Scenario("fast", latency="fixed:0.2", slots=16, concurrency=16, bare=True),
    Scenario("instant", latency="fixed:0", concurrency=64, bare=True),
)


def mean_latency(spec: str) -> float:
    kind, args = parse_latency(spec)
    if kind == "fixed":
        return args[0]
    if kind == "uniform":
        return (args[0] + args[1]) / 2
    median, sigma = args
    return median * math.exp(sigma * sigma / 2)


def _served(stats: dict[str, Any]) -> tuple[int, float]:
    ok = int(stats["by_status"].get("200", 0))
    window = float(stats["last_answer_at"] or 0) - float(stats["first_request_at"] or 0)
    return ok, window


def ceiling(scenario: Scenario, tokens_per_request: float) -> float:
    bounds = []
    if scenario.slots is not None:
        bounds.append(scenario.slots / mean_latency(scenario.latency))
    if scenario.rpm is not None:
        bounds.append(scenario.rpm / 60)
    if scenario.tpm is not None:
        bounds.append(scenario.tpm / 60 / tokens_per_request)
    return min(bounds) if bounds else math.inf


def _config(scenario: Scenario) -> SimConfig:
    return SimConfig(latency=scenario.latency, concurrency=scenario.slots, rpm=scenario.rpm,
                     tpm=scenario.tpm, seed=1)


def run_papersift(scenario: Scenario, corpus: Path, work: Path,
                  configured: bool) -> dict[str, Any]:
    with SimEndpoint.spawn(_config(scenario)) as sim:
        settings = RunSettings(
            db=work / f"{scenario.name}.duckdb",
            endpoint=EndpointOptions(provider="compatible", base_url=sim.base_url,
                                     model="gpt-4o-mini", max_tokens=MAX_TOKENS),
            concurrency=scenario.concurrency,
            rpm=scenario.rpm if configured else None,
            tpm=scenario.tpm if configured else None,
        )
        cpu, workers = _cpu_seconds(), _cpu_seconds(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        _, summary = run_inputs([str(corpus)], settings)
        wall = time.perf_counter() - started
        # The row workers have ended (and been waited for); the simulator has not.
        cpu = _cpu_seconds() - cpu
        workers = _cpu_seconds(resource.RUSAGE_CHILDREN) - workers
        stats = sim.stats()
    ok, window = _served(stats)
    tokens_per_request = (stats["prompt_tokens"] / max(stats["requests"], 1)) + MAX_TOKENS
    return {"abstracts": summary.n_abstracts, "extracted": summary.n_extracted,
            "failed": summary.n_failed, "wall_s": wall, "ok": ok, "window_s": window,
            "rate": ok / window if window else 0.0, "rate_429": stats["rate_limited"],
            "requests": stats["requests"], "tokens_per_request": tokens_per_request,
            "cpu_s": cpu, "cpu_ms_per_abstract": 1000 * cpu / max(summary.n_abstracts, 1),
            "worker_ms_per_abstract": 1000 * workers / max(summary.n_abstracts, 1)}


def _cpu_seconds(who: int = resource.RUSAGE_SELF) -> float:
    """User + system CPU so far of this process (all threads) or its waited-for children."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def papersift_bodies(texts: list[str], base_url: str) -> list[bytes]:
    """The request bodies papersift sends for these abstracts (its RequestBuilder, as the
    live and Batch paths build them), JSON-encoded once, before any timing."""
    endpoint = plan_endpoint(EndpointOptions(provider="compatible", base_url=base_url,
                                             model="gpt-4o-mini",
                                             max_tokens=MAX_TOKENS)).endpoint
    extractor = Extractor(endpoint, load_prompt(DEFAULT_PROMPT))
    try:
        return [json.dumps(extractor.request_body(text)).encode() for text in texts]
    finally:
        extractor.close()


def run_bare(scenario: Scenario, bodies: list[bytes]) -> dict[str, Any]:
    """The ceiling: ``scenario.concurrency`` threads, one keep-alive connection each,
    sending the bodies and reading the answers, nothing else."""
    queue = list(reversed(bodies))
    lock = threading.Lock()
    errors: list[str] = []

    def worker(port: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        try:
            while True:
                with lock:
                    if not queue:
                        return
                    body = queue.pop()
                connection.request("POST", "/v1/chat/completions", body=body,
                                   headers={"content-type": "application/json",
                                            "authorization": "Bearer sim"})
                answer = connection.getresponse()
                answer.read()
                if answer.status != 200:
                    errors.append(str(answer.status))
        finally:
            connection.close()

    with SimEndpoint.spawn(_config(scenario)) as sim:
        cpu = _cpu_seconds()
        threads = [threading.Thread(target=worker, args=(sim.port,))
                   for _ in range(scenario.concurrency)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        cpu = _cpu_seconds() - cpu
        stats = sim.stats()
    ok, window = _served(stats)
    return {"ok": ok, "failed": len(errors), "rate": ok / window if window else 0.0,
            "cpu_ms_per_request": 1000 * cpu / max(len(bodies), 1)}


def run_sequential(scenario: Scenario, texts: list[str]) -> dict[str, Any]:
    """The plain loop a user would write first: one instructor call after another."""
    prompt = load_prompt(DEFAULT_PROMPT)
    failures = 0
    with SimEndpoint.spawn(_config(scenario)) as sim:
        client = instructor.from_openai(openai.OpenAI(base_url=sim.base_url, api_key="sim"),
                                        mode=instructor.Mode.JSON)
        for text in texts:
            try:
                client.chat.completions.create(
                    model="gpt-4o-mini", response_model=PaperDraft, max_tokens=MAX_TOKENS,
                    messages=prompt.messages(text),  # type: ignore[arg-type]
                    temperature=0.0)
            except (openai.APIError, instructor.core.InstructorRetryException):
                failures += 1
        stats = sim.stats()
    ok, window = _served(stats)
    return {"ok": ok, "failed": failures, "rate": ok / window if window else 0.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=2000)
    parser.add_argument("--sequential", type=int, default=60,
                        help="abstracts for the sequential loop (it is slow)")
    parser.add_argument("--scenario", choices=[s.name for s in SCENARIOS], action="append")
    parser.add_argument("--configured-limits", action="store_true",
                        help="pass --rpm/--tpm to papersift instead of learning them")
    parser.add_argument("--repeat", type=int, default=1,
                        help="measure the bare-client scenarios this many times")
    parser.add_argument("--corpus", type=Path,
                        help="a real corpus file to extract instead of synthetic abstracts "
                             "(e.g. ../shared/conferences/neurips2025.jsonl)")
    args = parser.parse_args(argv)
    chosen = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
    work = Path(tempfile.mkdtemp(prefix="papersift-throughput-"))
    corpus = args.corpus or work / "corpus"
    if args.corpus is None:
        write_corpus(corpus, args.papers, files=1, fmt="jsonl", seed=3)
    papers = ingest([corpus]).papers
    texts = [p.text for p in papers][: args.sequential]
    limited_rows = [s for s in chosen if not s.bare]
    if limited_rows:
        limits_table(limited_rows, corpus, work, texts, args)
    bare_rows = [s for s in chosen if s.bare]
    if bare_rows:
        bare_table(bare_rows, corpus, work, [p.text for p in papers], args.repeat)
    return 0


def limits_table(chosen: list[Scenario], corpus: Path, work: Path, texts: list[str],
                 args: argparse.Namespace) -> None:
    rows = []
    for scenario in chosen:
        ours = run_papersift(scenario, corpus, work, args.configured_limits)
        plain = run_sequential(scenario, texts)
        top = ceiling(scenario, ours["tokens_per_request"])
        rows.append((scenario, ours, plain, top))
        print(f"{scenario.name}: papersift {ours['rate']:.2f}/s of ceiling {top:.2f}/s "
              f"({ours['rate'] / top:.1%}), sequential {plain['rate']:.2f}/s, "
              f"{ours['failed']} failed, 429s {ours['rate_429']}", file=sys.stderr)
    print(f"\n{args.papers} synthetic abstracts per scenario, papersift concurrency "
          f"{CLIENT_CONCURRENCY}, limits "
          f"{'configured' if args.configured_limits else 'learned from headers'}; "
          f"sequential loop on {args.sequential}.\n")
    print("| scenario | latency | limit | ceiling req/s | papersift req/s | of ceiling | "
          "sequential req/s | papersift / sequential | failed | 429s (req/tok) | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for scenario, ours, plain, top in rows:
        limit = (f"{scenario.slots} slots" if scenario.slots else
                 f"{scenario.rpm:g} rpm" if scenario.rpm else
                 f"{scenario.tpm:,.0f} tpm ({ours['tokens_per_request']:.0f} tok/req)")
        limited = ours["rate_429"]
        print(f"| {scenario.name} | {scenario.latency} | {limit} | {top:.2f} | "
              f"{ours['rate']:.2f} | {ours['rate'] / top:.1%} | {plain['rate']:.2f} | "
              f"{ours['rate'] / plain['rate']:.1f}x | {ours['failed']} | "
              f"{limited.get('requests', 0)}/{limited.get('tokens', 0)} | "
              f"{ours['wall_s']:.1f} |")
    print(f"\nmedian tokens charged per request: "
          f"{statistics.median(o['tokens_per_request'] for _, o, _, _ in rows):.0f}")


def bare_table(chosen: list[Scenario], corpus: Path, work: Path, texts: list[str],
               repeat: int) -> None:
    """papersift next to a bare client on the same simulator settings, ``repeat`` times
    each (a fresh warehouse and simulator every time)."""
    bodies = papersift_bodies(texts, "http://127.0.0.1:1/v1")
    print(f"\n{len(texts)} abstracts ({corpus.name}); bare client: the same bodies, as many "
          "threads as papersift's concurrency; load average before: "
          f"{' / '.join(f'{x:.1f}' for x in _load())}\n")
    print("| scenario | latency, slots | concurrency | bare client req/s | papersift "
          "abstracts/s | of bare | CPU ms/abstract, papersift process | CPU ms/abstract, row "
          "workers | failed | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for scenario in chosen:
        for attempt in range(repeat):
            bare = run_bare(scenario, bodies)
            folder = work / f"{scenario.name}-{attempt}"
            folder.mkdir()
            ours = run_papersift(scenario, corpus, folder, configured=False)
            print(f"| {scenario.name} | {scenario.latency}, {scenario.slots or 'unlimited'} | "
                  f"{scenario.concurrency} | {bare['rate']:.1f} | {ours['rate']:.1f} | "
                  f"{ours['rate'] / bare['rate']:.2f} | {ours['cpu_ms_per_abstract']:.2f} | "
                  f"{ours['worker_ms_per_abstract']:.2f} | {ours['failed'] + bare['failed']} | "
                  f"{ours['wall_s']:.1f} |", flush=True)


def _load() -> tuple[float, ...]:
    with open("/proc/loadavg", encoding="ascii") as handle:
        return tuple(float(x) for x in handle.read().split()[:3])


if __name__ == "__main__":
    raise SystemExit(main())
