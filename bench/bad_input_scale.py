"""The bad-input corpus at scale: 100,000 one-word paragraphs and a 2 MB paragraph through
`papersift run` (in this process, against the simulated endpoint).

tests/test_bad_input.py proves the behaviour on 2,500 tiny paragraphs over a dozen small
stream chunks; this script measures what the full-size input costs at the default chunk
size: wall and CPU seconds, peak RSS, the failure rows by reason and the requests sent
(none: every paragraph is refused before the model).

    python -m bench.bad_input_scale [--paragraphs 100000]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from papersift.extract.interface.cli import cli
from papersift.testing.sim import fault_profile, running
from papersift.warehouse.query import run_sql

HUGE_CHARS = 2_000_000


def write_inputs(folder: Path, paragraphs: int) -> list[Path]:
    """A file of ``paragraphs`` one-word paragraphs under a collection title, and one
    paragraph of HUGE_CHARS characters."""
    tiny, huge = folder / "tiny_paragraphs.txt", folder / "huge_paragraph.txt"
    words = ["Tiny 2026 Papers", *(f"p{index}" for index in range(paragraphs))]
    tiny.write_text("\n\n".join(words) + "\n", encoding="utf-8")
    huge.write_text(("token " * (HUGE_CHARS // 6 + 1))[: HUGE_CHARS - 1] + "s\n",
                    encoding="utf-8")
    return [tiny, huge]


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=100_000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="papersift-bad-input-scale-"))
    inputs = write_inputs(folder, args.paragraphs)
    db = folder / "w.duckdb"
    with running(fault_profile()) as server:
        wall, cpu = time.perf_counter(), _cpu_s()
        result = CliRunner().invoke(cli, ["run", *map(str, inputs), "--db", str(db),
                                          "--base-url", server.base_url,
                                          "--model", "fault-server"])
        wall, cpu = time.perf_counter() - wall, _cpu_s() - cpu
        requests = len(server.log)
    summary = next((line for line in result.output.splitlines() if "abstracts:" in line),
                   result.output.strip()[-200:])
    reasons = run_sql(db, "SELECT reason, count(*) FROM failures GROUP BY 1 ORDER BY 1").rows
    print(f"{args.paragraphs:,} tiny paragraphs + a {HUGE_CHARS:,}-character paragraph")
    print(f"exit {result.exit_code}: {summary.strip()}")
    print(f"wall {wall:.1f} s, CPU {cpu:.1f} s, peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB, "
          f"{requests} requests")
    print("failures: " + ", ".join(f"{reason} {count:,}" for reason, count in reasons))


if __name__ == "__main__":
    main()
