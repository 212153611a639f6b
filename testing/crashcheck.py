"""Kill -9 trials of `papersift run` (the real CLI, as a subprocess) against the fault
server, and the checks after each kill. Used by tests/test_crash.py (two trials) and
bench/crash_trials.py (twenty and more)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from papersift.testing.corpus import CORPUS
from papersift.testing.faultcheck import integrity
from papersift.testing.sim import SimEndpoint, fault_profile, running
from papersift.warehouse.repository import open_repository

PAPERSIFT = Path(sys.executable).parent / "papersift"
ABSTRACTS = 63  # distinct abstracts in the bundled corpus
FAST_FAULTS = ("rate_limit", "server_error", "truncated_json", "schema_break", "ungrounded",
               "length", "empty_body")


@dataclass
class Trial:
    number: int
    kills: list[str] = field(default_factory=list)  # where each kill landed
    problems: list[str] = field(default_factory=list)
    stored_before_last: int = 0
    requests: int = 0
    final: str = ""


def _environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "PAPERSIFT_"))}
    env["PAPERSIFT_MODEL_DIR"] = str(folder / "models")
    return env


def _command(db: Path, server: SimEndpoint, concurrency: int) -> list[str]:
    return [str(PAPERSIFT), "run", str(CORPUS), "--db", str(db), "--base-url", server.base_url,
            "--model", "fault-server", "--timeout", "5", "--concurrency", str(concurrency)]


def stored_papers(db: Path) -> set[str]:
    """Papers whose answer is in the cache: a later run must not request them again."""
    with open_repository(db, read_only=True) as repo:
        rows = repo.fetch_all("SELECT DISTINCT e.paper_id FROM llm_cache c "
                              "JOIN extractions e USING (cache_key)")
    return {row[0] for row in rows}


def check_opens(db: Path, trial: Trial, label: str) -> bool:
    """Open read-write as papersift does (WAL replay, migrations) and run the checks."""
    if not db.exists():
        return True  # killed before DuckDB created the file: nothing to check
    try:
        repo = open_repository(db)
    except Exception as error:
        trial.problems.append(f"{label}: the warehouse does not open: {error}")
        return False
    try:
        trial.problems += [f"{label}: {problem}" for problem in integrity(repo)]
    finally:
        repo.close()
    return True


KILL_MODES = ("time", "requests")


def _kill_at_random(process: subprocess.Popen[bytes], server: SimEndpoint,
                    rng: random.Random, full_run_s: float, modes: tuple[str, ...],
                    remaining: int) -> str:
    """SIGKILL the run at a random time since its start (it may land in start-up, ingest,
    migrations or extraction) or right after a random number of requests."""
    started = time.monotonic()
    if rng.choice(modes) == "time":
        delay = rng.uniform(0.0, full_run_s)
        try:
            process.wait(timeout=delay)
            return f"finished before the kill at {delay:.2f}s"
        except subprocess.TimeoutExpired:
            pass
        landed = f"at {delay:.2f}s"
    else:
        before = len(server.log)
        target = before + rng.randint(1, max(remaining, 1))
        while len(server.log) < target and process.poll() is None:
            time.sleep(0.002)
        if process.poll() is not None:
            return "finished before its kill request"
        landed = (f"after {len(server.log) - before} request(s), "
                  f"{time.monotonic() - started:.2f}s")
    process.send_signal(signal.SIGKILL)
    process.wait()
    return landed


def run_trial(number: int, rng: random.Random, folder: Path, *, concurrency: int = 2,
              full_run_s: float = 10.0, latency_s: float = 0.05, fault_rate: float = 0.2,
              kill_modes: tuple[str, ...] = KILL_MODES, kills: int | None = None) -> Trial:
    """A fresh warehouse, one or two kills at random points, then a run to the end; every
    check after every step. Problems are collected in the returned trial."""
    trial = Trial(number)
    db = folder / f"trial{number}.duckdb"
    config = fault_profile(rate=fault_rate, mix=FAST_FAULTS, retry_after="0",
                         latency_s=latency_s, seed=number)
    with running(config) as server:
        env = _environment(folder)
        kills = kills or rng.choice((1, 1, 2))
        stored: set[str] = set()
        for index in range(kills + 1):
            last = index == kills
            mark = len(server.log)
            process = subprocess.Popen(_command(db, server, concurrency), env=env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if last:
                _, stderr = process.communicate(timeout=300)
                if process.returncode != 0:
                    trial.problems.append(f"last run exited {process.returncode}: "
                                          f"{stderr.decode(errors='replace')[-300:]}")
            else:
                trial.kills.append(_kill_at_random(process, server, rng, full_run_s, kill_modes,
                                                   ABSTRACTS - len(stored)))
                if process.stderr is not None:
                    process.stderr.close()
            asked_again = {s.paper_id for s in server.log[mark:]} & stored
            if asked_again:
                trial.problems.append(f"run {index + 1} re-requested {len(asked_again)} "
                                      "stored abstract(s)")
            label = "after the last run" if last else f"after kill {index + 1}"
            if not check_opens(db, trial, label) or last:
                break
            stored = stored_papers(db) if db.exists() else set()
            trial.stored_before_last = len(stored)
        trial.requests = len(server.log)
    final_counts(db, trial)
    return trial


def final_counts(db: Path, trial: Trial) -> None:
    """The last run accounts for every abstract, and its cache hits are what was stored."""
    with open_repository(db, read_only=True) as repo:
        row = repo.fetch_one(
            "SELECT run_id, n_abstracts, n_extracted, n_cached, n_failed, status FROM runs "
            "ORDER BY started DESC LIMIT 1")
        statuses = Counter(r[0] for r in repo.fetch_all("SELECT status FROM runs"))
        assert row is not None
        outcomes = repo.fetch_one("SELECT count(*) FROM run_papers WHERE run_id = ?",
                                  [row[0]])
    _, n, extracted, cached, failed, status = row
    trial.final = (f"{n} abstracts: {extracted} extracted, {cached} from cache, {failed} failed"
                   f"; runs {dict(statuses)}")
    if status != "finished" or n != ABSTRACTS or extracted + cached + failed != n:
        trial.problems.append(f"last run does not add up: {trial.final}")
    if outcomes is None or outcomes[0] != n:
        trial.problems.append(f"last run has {outcomes} outcome rows for {n} abstracts")
    if cached != trial.stored_before_last:
        trial.problems.append(f"last run took {cached} from cache, "
                              f"but {trial.stored_before_last} were stored")
    if statuses.get("running"):
        trial.problems.append("a run is still marked running")


def calibrate(folder: Path, concurrency: int, latency_s: float) -> float:
    """Seconds one uninterrupted run takes, start-up included."""
    with running(fault_profile(latency_s=latency_s)) as server:
        started = time.monotonic()
        subprocess.run(_command(folder / "calibrate.duckdb", server, concurrency),
                       env=_environment(folder), check=True, capture_output=True)
        return time.monotonic() - started
