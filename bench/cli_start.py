"""CPU seconds (user + system) that starting the CLI costs, per command line.

Each command line runs REPEAT times as `python -m papersift ...` in a fresh process;
prints the median and the range. CPU, not wall time: the machine is shared.

    python -m bench.cli_start [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND_LINES = (
    ("--version",),
    ("--help",),
    ("run", "--help"),
    ("sql", "--help"),
    ("serve", "--help"),
    ("entities", "list", "--help"),
)


def cpu_seconds(args: tuple[str, ...]) -> float:
    """User + system CPU seconds of one `python -m papersift ARGS` process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-m", "papersift", *args], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"papersift {' '.join(args)} failed")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    print(f"{'command':32} {'median CPU s':>12}   min-max")
    for args in COMMAND_LINES:
        times = [cpu_seconds(args) for _ in range(repeat)]
        print(f"{'papersift ' + ' '.join(args):32} {statistics.median(times):12.3f}   "
              f"{min(times):.3f}-{max(times):.3f}")


if __name__ == "__main__":
    main()
