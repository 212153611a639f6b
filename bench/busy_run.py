"""The local model's rate when another process gets busy during a run (issue 29).

    python -m bench.busy_run INPUT --sample N [--busy-after S] [--prompt-threads K]
        [--db /tmp/busy.duckdb] [--sample-seed 29]

Runs `papersift run INPUT --sample N --no-cache` with the embedded local model and, when
--busy-after is given, starts one CPU-bound process (a Python busy loop) S seconds after
the run starts and stops it when the run ends. Prints the run's abstracts per minute, the
seconds per abstract after the busy process started and before (the first abstract, which
also evaluates the system prompt, apart), and
the run's own notes (the threads it chose, and how the load moved them). Run it on an
otherwise idle machine: the figure is the run's rate beside exactly one busy process.
Compare with the same command without --busy-after for the idle rate.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from papersift.warehouse.query import run_sql

_BUSY_LOOP = "while True: pass"


def _run(args: argparse.Namespace, db: Path) -> tuple[float, float | None, str]:
    command = [sys.executable, "-m", "papersift", "run", args.input, "--sample", str(args.sample),
               "--sample-seed", str(args.sample_seed), "--no-cache", "--db", str(db)]
    if args.prompt_threads is not None:
        command += ["--prompt-threads", str(args.prompt_threads)]
    started = time.monotonic()
    run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    busy: subprocess.Popen[bytes] | None = None
    busy_at: float | None = None
    try:
        if args.busy_after is not None:
            try:
                run.wait(timeout=args.busy_after)
            except subprocess.TimeoutExpired:
                busy = subprocess.Popen([sys.executable, "-c", _BUSY_LOOP])
                busy_at = time.time()
        output, _ = run.communicate()
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    return time.monotonic() - started, busy_at, output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("--sample", type=int, default=16)
    parser.add_argument("--sample-seed", type=int, default=29)
    parser.add_argument("--busy-after", type=float, help="seconds before the busy process")
    parser.add_argument("--prompt-threads", type=int, help="pin them (no load following)")
    parser.add_argument("--db", type=Path)
    args = parser.parse_args()
    db = args.db or Path(tempfile.mkdtemp(prefix="papersift-busy-")) / "busy.duckdb"
    wall, busy_at, output = _run(args, db)
    rows = run_sql(db, "SELECT epoch(min(started)), sum(latency_ms) / 1000.0 FROM calls "
                       "GROUP BY paper_id ORDER BY 1").rows
    # the first abstract also evaluates the system prompt: shown apart
    first, rest = rows[0], rows[1:]
    after = [float(s) for start, s in rest if busy_at is not None and float(start) >= busy_at]
    before = [float(s) for start, s in rest if busy_at is None or float(start) < busy_at]
    print(f"{len(rows)} abstracts in {wall:.1f} s: {len(rows) / wall * 60:.2f} per minute; "
          f"the first (with the system prompt) {float(first[1]):.1f} s")
    for label, values in (("before the busy process", before),
                          ("beside the busy process", after)):
        if values:
            print(f"  {label}: {len(values)} abstracts, median {statistics.median(values):.1f} s,"
                  f" mean {statistics.fmean(values):.1f} s, max {max(values):.1f} s")
    for line in output.splitlines():
        if "threads" in line:
            print(f"  {line.strip()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
