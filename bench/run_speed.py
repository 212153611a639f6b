"""Seconds per abstract and abstracts per minute of each run in a warehouse.

    python -m bench.run_speed [--db papersift.duckdb] [--run RUN_ID ...]

Reads the stored calls (one row per HTTP attempt) of each run with model requests: the
distribution of seconds per abstract (all its attempts summed; min, p10, median, p90,
max), abstracts per minute over the run's wall time, and prompt and completion tokens
per abstract, with the run's model, threads and concurrency. The first abstract of a
local run also pays for the system prompt; it is shown apart. Runs of different
configurations on the same abstracts compare like for like; the machine's load is not
recorded, so say it with the figures.

    python -m bench.run_speed --db D --recording tests/recordings/FILE.json

also sets each run's calls beside the recording's calls for the same abstracts: how many
got the same completion (token count) and the median ratio of their latencies, which is
how much slower (or faster) this machine and load are than the recording's, on identical
requests.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from papersift.warehouse.query import run_sql

REPO = Path(__file__).resolve().parents[1]


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("papersift.duckdb"))
    parser.add_argument("--run", action="append", help="only these runs")
    parser.add_argument("--recording", type=Path, help="compare latencies with this recording")
    args = parser.parse_args()
    recorded = _recorded_calls(args.recording) if args.recording else None
    runs = run_sql(args.db, "SELECT run_id, model, params, epoch(finished) - epoch(started), "
                            "n_abstracts FROM runs ORDER BY started").rows
    print(f"{'run':28} {'model':22} {'thr':>3} {'n':>3} {'first':>6} {'min':>5} {'p10':>5} "
          f"{'median':>6} {'p90':>5} {'max':>5} {'abs/min':>7} {'prompt':>6} {'compl':>5}")
    for run_id, model, params, wall, _ in runs:
        if args.run and run_id not in args.run:
            continue
        rows = run_sql(args.db, "SELECT paper_id, sum(latency_ms) / 1000.0, sum(prompt_tokens), "
                                "sum(completion_tokens), min(started) FROM calls "
                                "WHERE run_id = ? GROUP BY paper_id ORDER BY 5", [run_id]).rows
        if not rows:
            continue
        seconds = [float(r[1] or 0.0) for r in rows]
        first, rest = seconds[0], seconds[1:] or seconds
        settings = json.loads(params) if isinstance(params, str) else (params or {})
        threads = settings.get("threads") or settings.get("n_threads") or "-"
        per_minute = len(rows) / (float(wall) / 60.0) if wall else float("nan")
        prompt = sum(int(r[2] or 0) for r in rows) / len(rows)
        completion = sum(int(r[3] or 0) for r in rows) / len(rows)
        print(f"{run_id:28} {str(model)[:22]:22} {threads!s:>3} {len(rows):>3} {first:>6.1f} "
              f"{min(rest):>5.1f} {_quantile(rest, 0.1):>5.1f} {_quantile(rest, 0.5):>6.1f} "
              f"{_quantile(rest, 0.9):>5.1f} {max(rest):>5.1f} {per_minute:>7.2f} "
              f"{prompt:>6.0f} {completion:>5.1f}")
        if recorded is not None:
            _against_recording(args.db, run_id, recorded)
    return 0


def _recorded_calls(path: Path) -> list[tuple[str, float, int]]:
    """(start of the last message, seconds, completion tokens) of each recorded call."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [(str(call["request"].get("last_message", "")), float(call["latency_ms"]) / 1000,
             int(call["body"].get("usage", {}).get("completion_tokens", -1)))
            for call in data["interactions"] if call.get("status") == 200]


def _against_recording(db: Path, run_id: str, recorded: list[tuple[str, float, int]]) -> None:
    """The median latency ratio over this run's answered calls that the recording also made
    (the first call of each is left out: it pays for the system prompt)."""
    rows = run_sql(db, "SELECT p.text, c.latency_ms / 1000.0, c.completion_tokens FROM calls c "
                       "JOIN papers p USING (paper_id) "
                       "WHERE c.run_id = ? AND c.status = 'ok' ORDER BY c.started",
                  [run_id]).rows
    ratios, same = [], 0
    for text, seconds, completion in rows[1:]:
        head = str(text)[:80]
        match = next((r for r in recorded if head and head in r[0]), None)
        if match is None or not match[1]:
            continue
        ratios.append(float(seconds) / match[1])
        same += int(match[2] == completion)
    if ratios:
        print(f"{'':28} vs recording: {len(ratios)} calls, {same} with the same completion "
              f"length; latency ratio median {_quantile(ratios, 0.5):.2f} "
              f"(p10 {_quantile(ratios, 0.1):.2f}, p90 {_quantile(ratios, 0.9):.2f})")


if __name__ == "__main__":
    raise SystemExit(main())
