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

    python -m bench.throughput [--papers 2000] [--sequential 60] [--scenario rpm]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import instructor
import openai

from bench.simendpoint import SimConfig, SimEndpoint, parse_latency
from bench.synth import write_corpus
from papersift.extract.access.endpoints import EndpointOptions
from papersift.extract.domain.ingest import ingest
from papersift.extract.interface.app import RunSettings, run_inputs
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


SCENARIOS = (
    Scenario("slots", latency="lognormal:0.4,0.5", slots=16),
    Scenario("rpm", latency="lognormal:0.8,0.5", rpm=1200),
    Scenario("tpm", latency="lognormal:0.8,0.5", tpm=1_200_000),
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
            concurrency=CLIENT_CONCURRENCY,
            rpm=scenario.rpm if configured else None,
            tpm=scenario.tpm if configured else None,
        )
        started = time.perf_counter()
        _, summary = run_inputs([str(corpus)], settings)
        wall = time.perf_counter() - started
        stats = sim.stats()
    ok, window = _served(stats)
    tokens_per_request = (stats["prompt_tokens"] / max(stats["requests"], 1)) + MAX_TOKENS
    return {"abstracts": summary.n_abstracts, "extracted": summary.n_extracted,
            "failed": summary.n_failed, "wall_s": wall, "ok": ok, "window_s": window,
            "rate": ok / window if window else 0.0, "rate_429": stats["rate_limited"],
            "requests": stats["requests"], "tokens_per_request": tokens_per_request}


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
            except (openai.APIError, instructor.core.exceptions.InstructorRetryException):
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
    args = parser.parse_args(argv)
    chosen = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
    work = Path(tempfile.mkdtemp(prefix="papersift-throughput-"))
    corpus = work / "corpus"
    write_corpus(corpus, args.papers, files=1, fmt="jsonl", seed=3)
    texts = [p.text for p in ingest([corpus]).papers][: args.sequential]
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
