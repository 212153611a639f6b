"""llama.cpp's threads: chosen from the machine's load as the local server starts, and
prompt threads that follow the load while it runs.

llama.cpp's threads wait for each other at every step: prompt evaluation on every CPU
is a fifth faster on an idle machine and 1.7 times slower beside one busy process
(docs/measured.md). The parent picks the threads as the server starts, from the load it
measures then (:func:`default_prompt_thread_count`); a process that starts later would
stall the server for the rest of the run. So :func:`start_from_environment` also runs
inside the server's process (the child of local_server.LocalServer): every second it
measures how many CPUs *other* processes keep busy (all CPUs' busy time from /proc/stat,
less this process's own), and moves the prompt threads between the generation count and
every CPU through llama.cpp's public ``llama_set_n_threads``. Each change is one line in
the server log, starting with :data:`LOG_PREFIX`, which the parent turns into a note of
the run.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any


def available_cpu_count() -> int:
    """CPUs this process may run on (honours affinity masks, e.g. in containers)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return max(os.cpu_count() or 1, 1)


def default_thread_count() -> int:
    """llama.cpp threads: every available CPU but one, and at least one.

    llama.cpp's worker threads wait for each other at every step, so when they
    outnumber the free cores any other busy process stalls them all. On a 2-CPU
    machine with one other busy process, 2 threads decoded at ~1 token/s where
    1 thread kept ~15 tokens/s (Qwen2.5-Coder-1.5B Q4_K_M).
    """
    return max(available_cpu_count() - 1, 1)


# Busy CPUs (other processes' work, measured as the server starts) under this count as an
# idle machine.
IDLE_LOAD = 0.5


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat (Linux)."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def machine_load(window_s: float = 0.5) -> float | None:
    """How many CPUs are busy right now: measured over ``window_s`` from /proc/stat, or
    the 1-minute load average where there is none (None where neither exists). The load
    average lags by a minute: a command that just finished still counts as busy."""
    first = _cpu_times()
    if first is not None:
        time.sleep(window_s)
        second = _cpu_times()
        if second is not None and second[1] > first[1]:
            return (second[0] - first[0]) / (second[1] - first[1]) * available_cpu_count()
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def default_prompt_thread_count(generation_threads: int, load: float | None) -> int:
    """Threads for prompt evaluation: every available CPU when the machine is idle as the
    server starts (fewer than IDLE_LOAD CPUs busy), else as many as for generation.

    Prompt evaluation is compute-bound and pays for more threads; on an idle 2-CPU VM,
    2 for the prompt and 1 for generation took a median 6.7 s per abstract against 8.4 s
    with 1 and 1 (12 random NeurIPS 2025 abstracts, the same answers; prompt evaluation
    60 -> 113 tokens/s). With another busy process the extra thread stalls the others
    (8 abstracts: 199 s against 115 s), so a loaded machine keeps the generation count.
    """
    if load is None or load >= IDLE_LOAD:
        return generation_threads
    return max(available_cpu_count(), generation_threads)


# The parent passes "GENERATION:LOW:HIGH:START" threads in this variable.
RANGE_VARIABLE = "PAPERSIFT_PROMPT_THREAD_RANGE"
LOG_PREFIX = "papersift prompt threads:"
WINDOW_S = 1.0


@dataclass
class Governor:
    """Hysteresis over per-window loads: lower the prompt threads after ``lower_after``
    windows in which other processes keep at least ``busy`` CPUs busy, raise them again
    after ``raise_after`` windows under ``calm``."""

    low: int
    high: int
    current: int
    busy: float = 0.5
    calm: float = 0.3
    lower_after: int = 2
    raise_after: int = 5
    _busy_streak: int = 0
    _calm_streak: int = 0

    def observe(self, other_load: float) -> int | None:
        """The new thread count after one window, or None when it stays."""
        self._busy_streak = self._busy_streak + 1 if other_load >= self.busy else 0
        self._calm_streak = self._calm_streak + 1 if other_load < self.calm else 0
        if self.current > self.low and self._busy_streak >= self.lower_after:
            self.current, self._busy_streak = self.low, 0
            return self.current
        if self.current < self.high and self._calm_streak >= self.raise_after:
            self.current, self._calm_streak = self.high, 0
            return self.current
        return None


def parse_range(value: str) -> tuple[int, Governor]:
    """The generation threads and a governor from "G:L:H:S" (S: the threads the server
    started with); a ValueError when malformed."""
    generation, low, high, start = (int(part) for part in value.split(":"))
    if not 1 <= low <= start <= high or generation < 1:
        raise ValueError(f"bad prompt thread range {value!r}")
    return generation, Governor(low, high, current=start)


def _own_busy() -> int | None:
    """This process's user + system jiffies, all its threads."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            after_name = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(after_name[11]) + int(after_name[12])  # utime, stime (fields 14 and 15)


def other_load(before: tuple[int, int, int], after: tuple[int, int, int], cpus: int) -> float:
    """CPUs kept busy by other processes between two (machine busy, total, own) samples."""
    total = after[1] - before[1]
    if total <= 0:
        return 0.0
    others = (after[0] - before[0]) - (after[2] - before[2])
    return max(0.0, others / total * cpus)


def _sample() -> tuple[int, int, int] | None:
    machine, own = _cpu_times(), _own_busy()
    return None if machine is None or own is None else (*machine, own)


def _served_model() -> Any:
    """The server's model once it is loaded (llama_cpp.server keeps one proxy)."""
    from llama_cpp.server import app

    proxy = getattr(app, "_llama_proxy", None)
    return None if proxy is None else proxy()


def _watch(generation: int, governor: Governor, cpus: int) -> None:
    import llama_cpp

    model = None
    while model is None:
        time.sleep(WINDOW_S)
        model = _served_model()
    before = _sample()
    while before is not None:
        time.sleep(WINDOW_S)
        after = _sample()
        if after is None:
            return
        load = other_load(before, after, cpus)
        before = after
        changed = governor.observe(load)
        if changed is not None:
            llama_cpp.llama_set_n_threads(model.ctx, generation, changed)
            model.n_threads_batch = changed
            print(f"{LOG_PREFIX} {changed} at {time.strftime('%H:%M:%S')} "
                  f"(other processes busy: {load:.2f} CPUs)", file=sys.stderr, flush=True)


def start_from_environment() -> None:
    """In the server's process: start the watch when the parent asked for it."""
    wanted = os.environ.get(RANGE_VARIABLE)
    if not wanted or not os.path.exists("/proc/stat"):
        return
    generation, governor = parse_range(wanted)
    threading.Thread(target=_watch, args=(generation, governor, available_cpu_count()), daemon=True,
                     name="papersift-thread-watch").start()


def changes_in(log: str) -> list[str]:
    """The changes a server log records, as written after the prefix."""
    return [line.split(LOG_PREFIX, 1)[1].strip() for line in log.splitlines()
            if LOG_PREFIX in line]
