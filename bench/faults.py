"""A long run against a flaky endpoint: every abstract must be accounted for.

Runs --papers distinct abstracts (the bundled corpus plus generated variants, and a few
whitespace-only copies that must be stored once) through papersift against the
hand-written fake OpenAI server (papersift/testing/sim, real HTTP on loopback), which faults
--rate of all requests with a mix of 429 + Retry-After, 500/502/503, hangs past the
client timeout, dropped connections, truncated JSON, schema-breaking JSON,
finish_reason length, empty bodies and ungrounded evidence. The client uses papersift's
default retry policy (5 attempts, 1 s exponential backoff with jitter, Retry-After
honoured) and 2 validation re-asks.

Prints every abstract's fate (extracted, or failed by reason), checks each against the
faults it was served, counts duplicate rows, attempts per abstract, the Retry-After gaps
the server measured, the wall time, and what a rerun asks again (only the failures).

    python -m bench.faults --papers 500 --rate 0.3
    python -m bench.faults --hostile   # issue 28's hostile endpoint classes only
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

from bench.hostile_faults import print_hostile
from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.testing.faultcheck import account, variant_corpus
from papersift.testing.sim import fault_profile, running

ROOT = Path(__file__).resolve().parent.parent

MAX_REASKS = 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=500)
    parser.add_argument("--rate", type=float, default=0.3, help="share of requests faulted")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--retry-after", default="1", help="the 429's Retry-After, seconds")
    parser.add_argument("--timeout", type=float, default=1.0, help="client timeout, seconds")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--hostile", action="store_true",
                        help="try the hostile endpoint's classes (tried, held, lost) only")
    args = parser.parse_args()
    logging.getLogger("instructor").setLevel(logging.CRITICAL)  # as the CLI does
    if args.hostile:
        problems = print_hostile()
        print("problems: " + ("none" if not problems else "; ".join(problems)))
        sys.exit(1 if problems else 0)
    policy = RetryPolicy()  # what users get
    config = fault_profile(rate=args.rate, seed=args.seed, retry_after=args.retry_after,
                         hang_s=args.timeout + 1.0)
    with tempfile.TemporaryDirectory() as tmp, running(config) as server:
        folder = Path(tmp)
        inputs = variant_corpus(folder / "in", args.papers)
        endpoint = Endpoint(base_url=server.base_url, model="fault-server", mode="json",
                            timeout_s=args.timeout)
        settings = RunSettings(db=folder / "faults.duckdb", concurrency=args.concurrency,
                               retry=policy, max_reasks=MAX_REASKS)
        started = time.perf_counter()
        report, summary = run_inputs(inputs, settings, endpoint=endpoint)
        wall = time.perf_counter() - started
        print(f"input: {report.occurrences} occurrences in {report.files} files, "
              f"{report.papers} distinct abstracts")
        print(f"run: {summary.line()} in {wall:.1f}s wall "
              f"({summary.n_abstracts / wall:.1f} abstracts/s, concurrency "
              f"{args.concurrency}, {args.rate:.0%} of requests faulted)")
        accounting = account(settings.db, server, summary.run_id,
                             max_attempts=policy.max_attempts, max_reasks=MAX_REASKS)
        for line in accounting.lines():
            print(line)
        failed = {paper_id for paper_id, _, _ in summary.failures}
        before = len(server.log)
        started = time.perf_counter()
        _, again = run_inputs(inputs, settings, endpoint=endpoint)
        asked = {served.paper_id for served in server.log[before:]}
        print(f"rerun: {again.line()} in {time.perf_counter() - started:.1f}s; asked again "
              f"{len(asked)} abstract(s), {len(asked - failed)} of them not failed before")
        problems = accounting.problems()
        if asked - failed:
            problems.append("the rerun asked again for abstracts that were stored")
    print("problems: " + ("none" if not problems else "; ".join(problems[:10])))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
