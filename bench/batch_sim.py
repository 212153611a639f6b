"""Batch API mode end to end against the simulated endpoint: the bundled corpus (or a
synthetic one) submitted as one batch, polled, collected; prints wall time, tokens per
abstract from the answers' usage, and the cost at gpt-4o-mini's batch prices.

    python -m bench.batch_sim [--mode tools | --lean] [--papers N] [--batch-seconds 2]
                              [--failure-rate 0.05]

With --papers N the input is a synthetic corpus of N abstracts (bench/synth.py). The
dry-run estimate (`papersift run --batch --dry-run`) is printed next to the tokens the
simulator's usage reports for the same requests.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from bench.simendpoint import SimConfig, SimEndpoint
from bench.synth import write_corpus
from papersift.extract.access.endpoints import EndpointOptions
from papersift.extract.domain.prices import pricing_for
from papersift.extract.interface.app import RunSettings, estimate_run, run_inputs
from papersift.extract.runs.batch import BatchOptions
from papersift.warehouse.query import run_sql

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="*", default=[str(ROOT / "examples" / "neurips-2026")])
    parser.add_argument("--mode", default="tools", choices=["json", "tools", "json_schema"])
    parser.add_argument("--batch-seconds", type=float, default=2.0)
    parser.add_argument("--failure-rate", type=float, default=0.0)
    parser.add_argument("--poll-interval", type=float, default=0.5)
    parser.add_argument("--lean", action="store_true",
                        help="the short prompt, no schema on the wire (papersift --lean)")
    parser.add_argument("--papers", type=int, help="a synthetic corpus of this many")
    args = parser.parse_args()
    config = SimConfig(batch_seconds=args.batch_seconds,
                       batch_failure_rate=args.failure_rate, model="gpt-4o-mini")
    with tempfile.TemporaryDirectory() as folder, SimEndpoint.spawn(config) as sim:
        db = Path(folder) / "batch.duckdb"
        if args.papers:
            write_corpus(Path(folder) / "corpus", args.papers, files=1, fmt="jsonl", seed=11)
            args.inputs = [str(Path(folder) / "corpus")]
        settings = RunSettings(
            db=db, batch=BatchOptions(poll_interval_s=args.poll_interval),
            prompt="extract_lean" if args.lean else "extract_v2",
            endpoint=EndpointOptions(provider="compatible", base_url=sim.base_url,
                                     model="gpt-4o-mini",
                                     mode=None if args.lean else args.mode, lean=args.lean))
        estimate = estimate_run(args.inputs, settings)
        started = time.perf_counter()
        _, summary = run_inputs(args.inputs, settings)
        first = time.perf_counter() - started
        started = time.perf_counter()
        _, again = run_inputs(args.inputs, settings)
        warm = time.perf_counter() - started
        calls = run_sql(db, "SELECT count(*), sum(prompt_tokens), sum(completion_tokens) "
                            "FROM calls WHERE status = 'ok'").rows[0]
        failures = run_sql(db, "SELECT reason, count(*) FROM failures GROUP BY 1 "
                               "ORDER BY 2 DESC").rows
        batches = run_sql(db, "SELECT count(*), sum(request_count) FROM batches").rows[0]
    answered, prompt, completion = calls[0], calls[1] or 0, calls[2] or 0
    print(f"mode {'lean (json_schema + json_object)' if args.lean else args.mode}, "
          f"sim batch_seconds {args.batch_seconds}, "
          f"failure rate {args.failure_rate}")
    print(f"first run: {summary.line()} in {first:.1f} s "
          f"({batches[0]} batch(es), {batches[1]} requests)")
    print(f"rerun:     {again.line()} in {warm:.1f} s")
    if answered:
        pricing = pricing_for("gpt-4o-mini", batch=True)  # extract/prices.toml
        assert pricing is not None
        cost = pricing.cost(prompt, completion)
        print(f"per answered abstract: {prompt / answered:,.0f} prompt + "
              f"{completion / answered:,.1f} completion tokens (usage of {answered} answers)")
        print(f"cost at gpt-4o-mini batch prices: ${cost / answered * 1000:.4f} per 1,000 "
              "abstracts")
        print(f"dry-run estimate: {estimate.prompt_tokens:,} prompt + "
              f"{estimate.completion_tokens:,} completion tokens, "
              f"${(estimate.cost_usd or 0) / estimate.to_send * 1000:.4f} per 1,000; "
              f"measured {prompt:,} + {completion:,} "
              f"(prompt {estimate.prompt_tokens / prompt - 1:+.1%}, "
              f"completion {estimate.completion_tokens / max(completion, 1) - 1:+.1%})")
    for reason, count in failures:
        print(f"failed: {reason} x{count}")


if __name__ == "__main__":
    main()
