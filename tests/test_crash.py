"""Kill -9 in the middle of `papersift run` (the real CLI in a subprocess, against the
hand-written fault server): the warehouse opens, the rerun pays for nothing already stored,
counts add up. bench/crash_trials.py runs the same trials twenty times and more."""

from __future__ import annotations

import random
from pathlib import Path

from papersift.testing.crashcheck import run_trial


def test_killed_runs_lose_nothing_and_are_not_paid_twice(tmp_path: Path) -> None:
    """One trial, two kills: the first run and then its rerun are killed mid-extraction
    (right after a random number of requests), the third run finishes."""
    trial = run_trial(1, random.Random(5), tmp_path, kill_modes=("requests",), kills=2,
                      latency_s=0.02)
    assert trial.problems == [], trial
    assert len(trial.kills) == 2 and all(kill.startswith("after ") for kill in trial.kills)
    assert 0 < trial.stored_before_last < 63
    assert trial.final.startswith("63 abstracts: ")
