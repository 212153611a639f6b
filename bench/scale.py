"""How papersift grows with the corpus: `papersift run` on N synthetic abstracts against the
simulated endpoint, for each N given.

For each N: a synthetic JSONL corpus (bench/synth.py), a fresh simulator in its own process
(bench/simendpoint.py, fixed latency, as many slots as papersift's concurrency), then
`papersift run CORPUS --db DB --base-url SIM --model gpt-4o-mini --concurrency C` as a
subprocess, twice: cold, then the same command again (every answer now comes from the
warehouse's cache). Reported per N: wall time of each run, the papersift process's peak
resident set size (ru_maxrss from wait4 on that process: exact, not sampled), the
warehouse file's size, and the time of every saved query (`papersift query NAME`, whole
command, Python start-up included; in parentheses the SQL alone, run in this process).

    python -m bench.scale [--papers 1000 10000 100000] [--concurrency 32] [--latency fixed:0.05]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.simendpoint import SimConfig, SimEndpoint
from bench.synth import write_corpus
from papersift.warehouse.query import run_sql, saved_queries

REPO_ROOT = Path(__file__).resolve().parent.parent
MODEL = "gpt-4o-mini"


@dataclass(frozen=True)
class Measured:
    """One finished subprocess: its wall time, exit status, peak RSS and output."""

    seconds: float
    status: int
    peak_rss_mib: float
    output: str


def papersift_command() -> list[str]:
    """The installed `papersift` next to this interpreter, else the module."""
    script = Path(sys.executable).with_name("papersift")
    return [str(script)] if script.exists() else [sys.executable, "-m", "papersift"]


def measured(command: list[str], env: dict[str, str]) -> Measured:
    """Run ``command`` to its end; its own peak RSS comes from wait4's resource usage."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env, cwd=REPO_ROOT)
    assert process.stdout is not None
    output = process.stdout.read()
    _, wait_status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(wait_status)  # reaped here, not by Popen
    return Measured(seconds, process.returncode, usage.ru_maxrss / 1024, output)


@dataclass(frozen=True)
class SizeResult:
    """Everything measured for one corpus size: the cold run and the warm rerun."""

    papers: int
    cold: Pass
    warm: Pass
    requests: int
    mb: float
    queries: dict[str, tuple[float, float]]  # name: (whole command s, SQL alone s)


def outcomes(db: Path) -> dict[str, int]:
    """Papers per outcome in the warehouse's latest run."""
    rows = run_sql(db, "SELECT outcome, count(*) FROM run_papers WHERE run_id = "
                       "(SELECT run_id FROM runs ORDER BY started DESC LIMIT 1) GROUP BY 1")
    return {str(outcome): int(count) for outcome, count in rows.rows}


def file_mb(db: Path) -> float:
    wal = db.with_name(db.name + ".wal")
    return (db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)) / 1e6


@dataclass(frozen=True)
class Pass:
    """One `papersift run` over the corpus, and the papers per outcome it recorded."""

    run: Measured
    outcomes: dict[str, int]


def one_pass(command: list[str], env: dict[str, str], db: Path, what: str) -> Pass:
    """Run ``command`` (a `papersift run`); stop the bench when it fails."""
    run = measured(command, env)
    if run.status != 0:
        raise SystemExit(f"{what} failed ({run.status}):\n{run.output[-3000:]}")
    return Pass(run, outcomes(db))


def one_size(papers: int, concurrency: int, latency: str, work: Path,
             env: dict[str, str]) -> SizeResult:
    corpus = work / f"corpus-{papers}"
    db = work / f"scale-{papers}.duckdb"
    write_corpus(corpus, papers, fmt="jsonl", seed=6)
    command = [*papersift_command(), "run", str(corpus), "--db", str(db), "--model", MODEL,
               "--concurrency", str(concurrency)]
    with SimEndpoint.spawn(SimConfig(latency=latency, concurrency=concurrency)) as sim:
        command += ["--base-url", sim.base_url]
        cold = one_pass(command, env, db, "papersift run")
        requests = sim.stats()["requests"]
        warm = one_pass(command, env, db, "rerun")
        assert sim.stats()["requests"] == requests, "the warm rerun sent requests"
    queries = {}
    for name, saved in saved_queries().items():
        cli = measured([*papersift_command(), "query", name, "--db", str(db), "--format",
                        "csv"], env)
        if cli.status != 0:
            raise SystemExit(f"papersift query {name} failed:\n{cli.output[-2000:]}")
        started = time.perf_counter()
        run_sql(db, saved.sql)
        queries[name] = (cli.seconds, time.perf_counter() - started)
    shutil.rmtree(corpus)
    return SizeResult(papers, cold, warm, int(requests), file_mb(db), queries)


def main(argv: list[str] | None = None) -> int:
    """Print the scale table: wall time, peak RSS, warehouse size, saved-query times."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--papers", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--concurrency", type=int, default=32,
                        help="papersift --concurrency, and the simulator's slots")
    parser.add_argument("--latency", default="fixed:0.05", help="the simulator's latency")
    parser.add_argument("--keep", type=Path, help="keep the warehouses in this folder")
    args = parser.parse_args(argv)
    # The simulator takes any key; a dummy one keeps the openai client from asking.
    env = {**os.environ, "OPENAI_API_KEY": "sk-simulated-endpoint", "NO_COLOR": "1"}
    env.pop("PAPERSIFT_DB", None)
    work = args.keep or Path(tempfile.mkdtemp(prefix="papersift-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    startup = measured([*papersift_command(), "--version"], env).seconds
    results = []
    for papers in args.papers:
        result = one_size(papers, args.concurrency, args.latency, work, env)
        results.append(result)
        print(f"{papers:,} papers: cold {result.cold.run.seconds:.1f} s, "
              f"{result.cold.outcomes}",
              file=sys.stderr, flush=True)
    print(f"\n`papersift run` against the simulated endpoint (latency {args.latency}, "
          f"{args.concurrency} slots), --concurrency {args.concurrency}, synthetic JSONL "
          f"corpora; peak RSS = ru_maxrss of the papersift process (wait4). "
          f"Python start-up of `papersift --version`: {startup:.2f} s.\n")
    names = list(saved_queries())
    header = ["", *(f"{r.papers:,}" for r in results)]
    lines = [
        ("cold run: wall s", [f"{r.cold.run.seconds:.1f}" for r in results]),
        ("cold run: abstracts/s", [f"{r.papers / r.cold.run.seconds:.1f}" for r in results]),
        ("cold run: outcomes", [_counts(r.cold.outcomes) for r in results]),
        ("cold run: HTTP requests", [f"{r.requests:,}" for r in results]),
        ("cold run: peak RSS MiB", [f"{r.cold.run.peak_rss_mib:.0f}" for r in results]),
        ("warm rerun: wall s", [f"{r.warm.run.seconds:.1f}" for r in results]),
        ("warm rerun: outcomes", [_counts(r.warm.outcomes) for r in results]),
        ("warm rerun: peak RSS MiB", [f"{r.warm.run.peak_rss_mib:.0f}" for r in results]),
        ("warehouse MB", [f"{r.mb:.1f}" for r in results]),
        *((f"query {name}: s (SQL alone s)",
           [f"{r.queries[name][0]:.2f} ({r.queries[name][1]:.3f})" for r in results])
          for name in names),
    ]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * len(results))
    for label, cells in lines:
        print(f"| {label} | " + " | ".join(cells) + " |")
    print(f"\n(total {time.perf_counter() - started:.0f} s; warehouses in {work})")
    return 0


def _counts(counts: dict[str, int]) -> str:
    return " ".join(f"{count:,} {outcome}" for outcome, count in sorted(counts.items()))


if __name__ == "__main__":
    raise SystemExit(main())
