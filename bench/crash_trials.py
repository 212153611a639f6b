"""Kill -9 `papersift run` at random points and check that nothing is lost or paid twice.

Each trial starts a fresh warehouse and runs the real CLI as a subprocess against the
hand-written fake OpenAI server with faults (papersift/testing/sim: slow answers, some
fast faults), kills it with SIGKILL once or twice at a random moment (a random time
after start, or right after a random number of requests), then:

- the warehouse opens (DuckDB replays its WAL) and every cross-table check passes
  (papersift/testing/faultcheck.py: no duplicate keys, no extraction without its items, no
  cache entry without its extraction, no outcome without its row);
- the next run never requests an abstract whose answer was already stored (the server
  counts requests per abstract);
- the last run finishes, accounts for every abstract (extracted + cached + failed = all),
  and its cached count equals what the killed runs had stored.

    python -m bench.crash_trials --trials 20
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from papersift.testing.crashcheck import ABSTRACTS, calibrate, run_trial

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.05,
                        help="seconds the server takes per answer")
    parser.add_argument("--fault-rate", type=float, default=0.2)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        full = calibrate(folder, args.concurrency, args.latency)
        print(f"an uninterrupted run takes {full:.2f}s; kills land in [0, {full:.2f}]s "
              f"or after 1..{ABSTRACTS} requests (at most as many as remain)")
        started = time.monotonic()
        failed = 0
        for number in range(1, args.trials + 1):
            trial = run_trial(number, rng, folder, concurrency=args.concurrency,
                              full_run_s=full, latency_s=args.latency,
                              fault_rate=args.fault_rate)
            verdict = "ok" if not trial.problems else "FAILED"
            failed += bool(trial.problems)
            print(f"trial {number:2}: kills {'; '.join(trial.kills)} | stored before the last "
                  f"run {trial.stored_before_last} | {trial.requests} requests | "
                  f"{trial.final} | {verdict}")
            for problem in trial.problems:
                print(f"    {problem}")
        print(f"{args.trials - failed}/{args.trials} trials passed in "
              f"{time.monotonic() - started:.1f}s")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
