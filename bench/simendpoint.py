"""A hand-written fake: a simulated OpenAI-compatible endpoint for benchmarks (NOT a model).

The simulator lives in papersift.testing.sim; this module re-exports its names for the
benchmarks and runs it as ``python -m bench.simendpoint``.
"""

from __future__ import annotations

from papersift.testing.bodies import error_body
from papersift.testing.sim.answers import (
    CONTRIBUTION,
    abstract_of,
    bad_chat_request,
    completion_for,
    draft_for,
)
from papersift.testing.sim.config import SimConfig, TokenBucket, parse_latency, reset_text, sampler
from papersift.testing.sim.endpoint import REPO_ROOT, SimEndpoint, main, read_jsonl, selftest
from papersift.testing.sim.server import SimServer, serve
from papersift.testing.sim.tokens import (
    DEFAULT_MAX_TOKENS,
    TOKENS_PER_MESSAGE,
    TOKENS_PER_REPLY,
    TOOL_CALL_TOKENS,
    count_tokens,
    prompt_tokens,
    rate_cost,
    requested_max_tokens,
)
from papersift.testing.sim.wire import (
    MAX_BODY_BYTES,
    BatchJob,
    Request,
    Response,
    Stats,
    StoredFile,
    parse_multipart,
    validate_batch_input,
)

__all__ = ["CONTRIBUTION", "DEFAULT_MAX_TOKENS", "MAX_BODY_BYTES", "REPO_ROOT",
           "TOKENS_PER_MESSAGE", "TOKENS_PER_REPLY", "TOOL_CALL_TOKENS", "BatchJob",
           "Request", "Response", "SimConfig", "SimEndpoint", "SimServer", "Stats",
           "StoredFile", "TokenBucket", "abstract_of", "bad_chat_request",
           "completion_for", "count_tokens", "draft_for", "error_body", "main",
           "parse_latency", "parse_multipart", "prompt_tokens", "rate_cost",
           "read_jsonl", "requested_max_tokens", "reset_text", "sampler", "selftest",
           "serve", "validate_batch_input"]

if __name__ == "__main__":
    raise SystemExit(main())
