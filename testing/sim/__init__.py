"""A hand-written fake: the one simulated OpenAI-compatible server (NOT a model) that
tests and benchmarks share.

It listens on 127.0.0.1 and speaks HTTP/1.1 with keep-alive from one asyncio event loop
(no thread per request), so a client runs its real stack (httpx2, openai, instructor)
against it at tens of thousands of requests per run. What it simulates:

- latency: ``fixed:S``, ``uniform:LO,HI`` or ``lognormal:MEDIAN,SIGMA`` seconds from a
  seeded RNG, plus ``seconds_per_token`` per completion token;
- ``concurrency``: at most N requests processed at once, the rest wait in FIFO order;
- ``rpm`` / ``tpm``: token buckets refilled continuously at limit/60 per second, holding
  ``burst_s`` seconds of refill. A request costs 1 request and its prompt tokens plus its
  ``max_tokens`` (4096 when absent), as OpenAI counts it. Over a limit: 429 with an
  OpenAI-style error body, ``retry-after`` and ``retry-after-ms``. Every answer carries
  the ``x-ratelimit-*`` headers of the limits configured;
- answers: a valid papersift draft built by code from the abstract in the request (names,
  a task phrase and a number the abstract contains), as message content or as a tool call;
- the Files and Batches routes of OpenAI's API, batches moving validating -> in_progress
  -> finalizing -> completed over ``batch_seconds``, with seeded failed lines;
- ``GET /sim/stats`` and ``POST /sim/reset``;
- faults (faults.py: 429 with Retry-After, 500/502/503, hangs, dropped connections,
  truncated / schema-breaking / cut / empty / ungrounded answers), by rule or at a seeded
  rate, and a log of every request (``log_requests``): ``fault_profile(...)`` sets the
  server up as the fault tests, crash trials and ``bench.faults`` use it, answering with
  a hand-written draft (the abstract's first sentence as its task), one connection per
  request.

Run it in a thread of this process (``with SimEndpoint(config) as sim``) for tests, or as a
separate process (``with SimEndpoint.spawn(config) as sim``, which runs ``python -m
papersift.testing.sim --port 0``) for benchmarks, so that it does not share the client's GIL.
``python -m papersift.testing.sim --selftest`` (or ``python -m bench.simendpoint
--selftest``) prints the request rate it sustains.

Standard library only, beside the shared bodies and drafts of papersift.testing and the
paper id of papersift.extract.domain.reading.ingest (the fault log keys requests by paper).
Modules: tokens, config (settings, the fault profile, latency, token buckets), faults
(fault kinds, the request log), answers (drafts), wire (HTTP, files, batch input), server
(routes), endpoint (running it, the command line).
"""

from __future__ import annotations

from papersift.testing.sim.answers import completion_for, draft_for
from papersift.testing.sim.config import SimConfig, fault_profile, parse_latency, reset_text
from papersift.testing.sim.endpoint import SimEndpoint, main, read_jsonl, running, selftest
from papersift.testing.sim.faults import CONTENT_FAULTS, FAULTS, Rule, Served
from papersift.testing.sim.tokens import count_tokens, prompt_tokens, rate_cost
from papersift.testing.sim.wire import validate_batch_input

__all__ = ["CONTENT_FAULTS", "FAULTS", "Rule", "Served", "SimConfig", "SimEndpoint",
           "completion_for", "count_tokens", "draft_for", "fault_profile", "main",
           "parse_latency", "prompt_tokens", "rate_cost", "read_jsonl", "reset_text",
           "running", "selftest", "validate_batch_input"]
