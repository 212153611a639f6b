"""How the one fake OpenAI server (hand-written, NOT a model) behaves: its settings (the
simulator's latency, slots, limits and batches; faults, logging and answers), the
fault-test profile, latency samplers and the token buckets behind its RPM / TPM limits."""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from papersift.testing.drafts import valid_answer
from papersift.testing.sim.faults import FAULTS, STATUS, Answer, ExtraHeaders, Rule


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
    keep_alive: bool = True  # False: one connection per request, as an HTTP/1.0 server
    # Faults (papersift.testing.sim.faults): rules first, then fault_rate from fault_mix.
    fault_rate: float = 0.0
    fault_mix: tuple[str, ...] = FAULTS
    fault_rules: tuple[Rule, ...] = ()
    retry_after: str = "1"  # the Retry-After header value sent with a 429 fault
    retry_after_ms: int | None = None  # also send retry-after-ms (OpenAI's header)
    hang_s: float = 2.0  # how long a hang lasts; set it above the client's timeout
    log_requests: bool = False  # keep a log of every chat request (Served)
    keep_bodies: bool = False  # ... with its JSON body
    echo_authorization: bool = False  # error bodies repeat the Authorization header
    echo_headers: bool = False  # error bodies repeat every request header, as JSON
    # Valid answers: None, the simulator's draft (names, task, a number) with its usage;
    # else this draft in a fixed hand-written body (faults.fault_completion).
    answer: Answer | None = None
    extra_headers: ExtraHeaders | None = None  # added to every chat answer, by fault

    def __post_init__(self) -> None:
        parse_latency(self.latency)
        unknown = sorted(set(self.fault_mix) - set(FAULTS) - set(STATUS))
        if unknown:
            raise ValueError(f"unknown faults {unknown}: use {', '.join(FAULTS)}")
        if self.concurrency is not None and self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {self.concurrency}")
        for name in ("rpm", "tpm"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive or None, not {value}")
        if self.burst_s <= 0:
            raise ValueError(f"burst_s must be positive, not {self.burst_s}")
        for name in ("error_rate", "batch_failure_rate", "fault_rate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be within [0, 1]")

    def as_json(self) -> dict[str, Any]:
        """The settings a spawned server takes on its command line; callables cannot
        cross a process boundary, so a config holding them refuses."""
        if self.fault_rules or self.answer is not None or self.extra_headers is not None:
            raise ValueError("rules, answers and extra headers work in this process only: "
                             "use SimEndpoint(config), not SimEndpoint.spawn(config)")
        values = dataclasses.asdict(self)
        for name in ("fault_rules", "answer", "extra_headers"):
            values.pop(name)
        return values


def fault_profile(*, rate: float = 0.0, mix: Sequence[str] = FAULTS,
                  rules: Sequence[Rule] = (), seed: int = 0, retry_after: str = "1",
                  retry_after_ms: int | None = None, hang_s: float = 2.0,
                  latency_s: float = 0.0, echo_authorization: bool = False,
                  echo_headers: bool = False, keep_bodies: bool = False,
                  answer: Answer = valid_answer,
                  headers: ExtraHeaders | None = None) -> SimConfig:
    """The server set up for fault tests: no latency unless asked, every request logged,
    one connection per request, and valid answers from ``answer`` (by default a draft
    whose task is the abstract's first sentence). Rules run first, then faults at
    ``rate`` drawn from ``mix`` with a ``seed``-ed generator."""
    return SimConfig(latency=f"fixed:{latency_s}", seed=seed, model="fault-server",
                     keep_alive=False, log_requests=True, fault_rate=rate,
                     fault_mix=tuple(mix), fault_rules=tuple(rules), retry_after=retry_after,
                     retry_after_ms=retry_after_ms, hang_s=hang_s,
                     echo_authorization=echo_authorization, echo_headers=echo_headers,
                     keep_bodies=keep_bodies, answer=answer, extra_headers=headers)


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
