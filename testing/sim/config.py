"""How the simulator (a hand-written fake endpoint) behaves: its settings, latency
samplers and the token buckets behind its RPM / TPM limits."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SimConfig:
    """How the simulated endpoint behaves; None means unlimited."""

    latency: str = "fixed:0.2"
    seconds_per_token: float = 0.0  # extra latency per completion token
    concurrency: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    burst_s: float = 1.0
    seed: int = 0
    error_rate: float = 0.0  # share of admitted chat requests answered with a 500
    batch_seconds: float = 1.0
    batch_failure_rate: float = 0.0
    max_batch_requests: int = 50_000  # OpenAI's limits per batch and per uploaded file
    max_file_bytes: int = 200 * 1024 * 1024
    model: str = "gpt-4o-mini-sim"

    def __post_init__(self) -> None:
        parse_latency(self.latency)
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {self.concurrency}")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive or None, not {value}")
        if self.burst_s <= 0:
            raise ValueError(f"burst_s must be positive, not {self.burst_s}")
        for name in ("error_rate", "batch_failure_rate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be within [0, 1]")


def parse_latency(spec: str) -> tuple[str, tuple[float, ...]]:
    """``fixed:S`` / ``uniform:LO,HI`` / ``lognormal:MEDIAN,SIGMA`` -> (kind, numbers)."""
    kind, _, rest = spec.partition(":")
    wanted = {"fixed": 1, "uniform": 2, "lognormal": 2}
    try:
        numbers = tuple(float(part) for part in rest.split(",")) if rest else ()
    except ValueError:
        numbers = ()
    if kind not in wanted or len(numbers) != wanted[kind] or any(n < 0 for n in numbers):
        raise ValueError(f"bad latency {spec!r}: use fixed:S, uniform:LO,HI or "
                         "lognormal:MEDIAN,SIGMA (seconds, not negative)")
    if kind == "uniform" and numbers[0] > numbers[1]:
        raise ValueError(f"bad latency {spec!r}: LO is above HI")
    return kind, numbers


def sampler(spec: str, rng: random.Random) -> Any:
    kind, numbers = parse_latency(spec)
    if kind == "fixed":
        return lambda: numbers[0]
    if kind == "uniform":
        return lambda: rng.uniform(numbers[0], numbers[1])
    median, sigma = numbers
    if median == 0:
        return lambda: 0.0
    return lambda: rng.lognormvariate(math.log(median), sigma)



def reset_text(seconds: float) -> str:
    """A duration as OpenAI writes it in x-ratelimit-reset-*: '120ms', '1.5s', '6m0s'."""
    if seconds < 1.0:
        return f"{max(0, math.ceil(seconds * 1000))}ms"
    if seconds < 60.0:
        return f"{round(seconds, 3):g}s"
    minutes, rest = divmod(seconds, 60.0)
    hours, minutes = divmod(int(minutes), 60)
    head = f"{hours}h" if hours else ""
    return f"{head}{minutes}m{round(rest, 3):g}s"


class TokenBucket:
    """Refills at ``per_minute / 60`` per second up to ``capacity``; may go into debt by
    one request's cost so that a request larger than the bucket still passes when full."""

    def __init__(self, per_minute: float, burst_s: float, now: float) -> None:
        self.limit = per_minute
        self.rate = per_minute / 60.0
        self.capacity = max(self.rate * burst_s, 1.0)
        self.level = self.capacity
        self.stamp = now

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, cost: float, now: float) -> float:
        """Seconds until ``cost`` can be taken (0: now)."""
        self._refill(now)
        needed = min(cost, self.capacity)
        return 0.0 if self.level >= needed else (needed - self.level) / self.rate

    def take(self, cost: float) -> None:
        self.level -= cost

    def headers(self, kind: str, now: float) -> dict[str, str]:
        self._refill(now)
        return {
            f"x-ratelimit-limit-{kind}": str(int(self.limit)),
            f"x-ratelimit-remaining-{kind}": str(max(0, int(self.level))),
            f"x-ratelimit-reset-{kind}": reset_text((self.capacity - self.level) / self.rate),
        }
