"""A hand-written simulated OpenAI-compatible endpoint for benchmarks (NOT a model).

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
- ``GET /sim/stats`` and ``POST /sim/reset``.

Run it in a thread of this process (``with SimEndpoint(config) as sim``) for tests, or as a
separate process (``with SimEndpoint.spawn(config) as sim``, which runs ``python -m
bench.simendpoint --port 0``) for benchmarks, so that it does not share the client's GIL.
``python -m bench.simendpoint --selftest`` prints the request rate it sustains.

Standard library only: it imports nothing of papersift's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

DEFAULT_MAX_TOKENS = 4096  # what a request without max_tokens is charged, as OpenAI does
TOKENS_PER_MESSAGE = 3
TOKENS_PER_REPLY = 3
TOOL_CALL_TOKENS = 6  # the call's framing around its arguments
MAX_BODY_BYTES = 512 * 1024 * 1024

# --------------------------------------------------------------------------- tokens

_PIECE = re.compile(r"[^\W\d_]+|\d{1,3}|[^\s\w]+|_+")
_WORD_CHARS_PER_TOKEN = 7


@functools.lru_cache(maxsize=1 << 16)
def _chunk_tokens(chunk: str) -> int:
    """Tokens of one whitespace-free chunk (chunks repeat a lot, hence the cache)."""
    total = 0
    for match in _PIECE.finditer(chunk):
        piece = match.group()
        if piece[0].isalpha():
            total += 1 if len(piece) <= _WORD_CHARS_PER_TOKEN + 2 else -(
                -len(piece) // _WORD_CHARS_PER_TOKEN)
        elif piece[0].isdigit() or piece[0] == "_":
            total += 1
        else:
            total += (len(piece) + 1) // 2
    return total


@functools.lru_cache(maxsize=8192)
def count_tokens(text: str) -> int:
    """Deterministic approximation of a BPE tokenizer's count (no vocabulary needed).

    The text is split as GPT-style tokenizers pre-split it: letter runs (with the space
    before them), digit groups of at most 3, punctuation runs. A word of up to 9 letters
    is one token, a longer one a token per 7 letters; a digit group one token; a
    punctuation run one per 2 characters; each line break, tab and double space one more.

    Measured against Qwen2.5's tokenizer (151k-token BPE, through llama_cpp with
    ``vocab_only=True``): the 63 bundled abstracts 16,388 vs 15,596 tokens (1.05x; per
    abstract 0.93x to 1.21x), the extract_v2 system prompt 1.08x, the draft's JSON schema
    1.02x, the example answers 1.00x. So it slightly over-counts, which is the safe side
    for budgets and rate limits. About 60 µs per 1,500-character abstract.
    """
    spacing = text.count("\n") + text.count("\t") + text.count("  ")
    return sum(map(_chunk_tokens, text.split())) + spacing


def _content_text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def prompt_tokens(body: dict[str, Any]) -> int:
    """Prompt tokens of a chat request: every message's text plus a few tokens per message,
    plus the JSON of ``tools`` and ``response_format`` (providers bill those as prompt)."""
    total = TOKENS_PER_REPLY
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        total += TOKENS_PER_MESSAGE + count_tokens(_content_text(message.get("content")))
        for call in message.get("tool_calls") or []:
            total += count_tokens(_canonical(call))
    for key in ("tools", "response_format"):
        if body.get(key):
            total += count_tokens(_canonical(body[key]))
    return total


def requested_max_tokens(body: dict[str, Any]) -> int:
    """The completion allowance a request reserves (max_completion_tokens, max_tokens)."""
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return DEFAULT_MAX_TOKENS


def rate_cost(body: dict[str, Any]) -> int:
    """What a request costs against a tokens-per-minute limit: prompt + max tokens."""
    return prompt_tokens(body) + requested_max_tokens(body)


# --------------------------------------------------------------------------- config


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


def _sampler(spec: str, rng: random.Random) -> Any:
    kind, numbers = parse_latency(spec)
    if kind == "fixed":
        return lambda: numbers[0]
    if kind == "uniform":
        return lambda: rng.uniform(numbers[0], numbers[1])
    median, sigma = numbers
    if median == 0:
        return lambda: 0.0
    return lambda: rng.lognormvariate(math.log(median), sigma)


# --------------------------------------------------------------------------- rate limits


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


# --------------------------------------------------------------------------- answers

_ABSTRACT = re.compile(r'Abstract:\s*"""\n?(.*?)\n?"""', re.S)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[$\\])")
_PROPOSAL = re.compile(r"\b(we|our|this (paper|work))\b[^.;]{0,80}?\b(propos|introduc|present|"
                       r"develop|design|call|build|formulat|creat)\w*", re.I)
_EVALUATION = re.compile(r"\b(benchmark|dataset|experiment|evaluat|datasets|corpus|suite)\w*",
                         re.I)
_NAME = re.compile(r"(?<![\w$\\{-])[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*"
                   r"(?![\w}-])")
_MODEL_FAMILY = re.compile(r"^(GPT|LLaMA|Llama|Qwen|Gemini|Claude|DeepSeek|Mistral|BERT|"
                           r"RoBERTa|T5|ViT|ResNet|CLIP|LLM|LLMs|AI|ML|RL|NLP|II|III|IV)\b")
_RESULT = re.compile(r"(?<![\w.^_@-])(\d+\.\d+|\d+)(?=\s*(%|\\%|percent|x\b|×|-fold|points?\b"
                     r"|pp\b))")
_PHRASE_END = re.compile(r"[,;:(]")
_CODEBLOCK_HINT = "```json codeblock"
CONTRIBUTION = "method"


def abstract_of(messages: Any) -> str:
    """The abstract a chat request is about: the text between the prompt's triple quotes
    (searched from the last message back), else the last user message's text."""
    if not isinstance(messages, list):
        return ""
    texts = [_content_text(m.get("content")) for m in messages if isinstance(m, dict)]
    for text in reversed(texts):
        found = _ABSTRACT.search(text)
        if found:
            return found.group(1).strip()
    users = [_content_text(m.get("content")) for m in messages
             if isinstance(m, dict) and m.get("role") == "user"]
    return users[-1].strip() if users else ""


def _task_phrase(sentence: str) -> str:
    """The head of a sentence, cut at its first comma or parenthesis, at most 14 words and
    100 characters, trimmed to start and end on letters or digits (an exact slice)."""
    head = _PHRASE_END.split(sentence, maxsplit=1)[0]
    words = head.split()[:14]
    phrase = " ".join(words)
    while len(phrase) > 100 and len(words) > 1:
        words = words[:-1]
        phrase = " ".join(words)
    phrase = re.sub(r"^[^\w]+|[^\w]+$", "", phrase)
    return phrase if phrase in sentence else re.sub(r"^[^\w]+|[^\w]+$", "", sentence[:100])


def _names(sentence: str) -> list[str]:
    return [m.group() for m in _NAME.finditer(sentence) if not _MODEL_FAMILY.match(m.group())
            and 2 <= len(m.group()) <= 40]


def _schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks the answer to follow, wherever the mode put it."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        direct = response_format.get("schema")
        if isinstance(direct, dict):
            return direct
        inner = response_format.get("json_schema")
        nested = inner.get("schema") if isinstance(inner, dict) else None
        if isinstance(nested, dict):
            return nested
    tools = body.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[0], dict):
        parameters = tools[0].get("function", {}).get("parameters")
        if isinstance(parameters, dict):
            return parameters
    return None


def _gain_enum(schema: dict[str, Any]) -> list[str] | None:
    """The values a gain may take when the schema restricts them ([] when it allows no
    gains), None when it does not restrict them."""
    gains = schema.get("properties", {}).get("gains", {})
    if isinstance(gains, dict) and gains.get("maxItems") == 0:
        return []
    definition = schema.get("$defs", {}).get("DraftGain", {})
    value = definition.get("properties", {}).get("value", {}) if isinstance(definition,
                                                                           dict) else {}
    enum = value.get("enum") if isinstance(value, dict) else None
    return [str(v) for v in enum] if isinstance(enum, list) else None


def _metric_before(text: str, start: int) -> str:
    words = re.findall(r"[A-Za-z][A-Za-z-]+", text[max(0, start - 60):start])
    return " ".join(words[-3:]) or "reported result"


def draft_for(abstract: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """A papersift draft (schema v2) built by code from the abstract: its opening task
    phrase, up to two names from sentences where the authors propose something, one name
    from an evaluation sentence, and one result number (from the schema's enum when the
    request restricts gain values)."""
    text = " ".join(abstract.split()) if abstract.strip() else "an empty abstract"
    sentences = [s for s in _SENTENCE.split(text) if s.strip()] or [text]
    methods: list[str] = []
    for sentence in sentences:
        if len(methods) >= 2:
            break
        lowered = sentence.lower()
        if ("we " in lowered or "our " in lowered or "this " in lowered) \
                and _PROPOSAL.search(sentence):
            methods += [n for n in _names(sentence) if n not in methods]
    methods = methods[:2]
    benchmarks: list[dict[str, Any]] = []
    for sentence in sentences:
        if _EVALUATION.search(sentence):
            names = [n for n in _names(sentence) if n not in methods]
            if names:
                benchmarks.append({"name": names[0], "new": False})
                break
    gains: list[dict[str, Any]] = []
    allowed = _gain_enum(schema) if schema is not None else None
    if allowed:
        value = allowed[0]
        place = text.find(value)
        gains.append({"value": value, "metric": _metric_before(text, max(place, 0)),
                      "vs": None, "on": None})
    elif allowed is None:
        match = _RESULT.search(text)
        if match:
            gains.append({"value": match.group(1), "metric": _metric_before(text, match.start()),
                          "vs": None, "on": None})
    return {"tasks": [_task_phrase(sentences[0]) or "the problem"], "methods": methods,
            "benchmarks": benchmarks, "gains": gains, "types": [CONTRIBUTION]}


def _request_hash(body: dict[str, Any]) -> str:
    return hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()[:24]


def completion_for(body: dict[str, Any], model: str, created: int) -> dict[str, Any]:
    """The chat-completion body answering ``body``: the draft as content (in a ```json
    block when the request asks for one) or as a tool call when the request has tools."""
    messages = body.get("messages")
    draft = draft_for(abstract_of(messages), _schema_of(body))
    arguments = json.dumps(draft)
    digest = _request_hash(body)
    message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        name = str(tools[0].get("function", {}).get("name", "PaperDraft"))
        message["tool_calls"] = [{"id": f"call_{digest[:16]}", "type": "function",
                                  "function": {"name": name, "arguments": arguments}}]
        finish = "tool_calls"
    else:
        texts = [_content_text(m.get("content")) for m in messages or [] if isinstance(m, dict)]
        wants_block = any(_CODEBLOCK_HINT in t for t in texts)
        message["content"] = f"```json\n{arguments}\n```" if wants_block else arguments
        finish = "stop"
    completion = count_tokens(arguments) + (TOOL_CALL_TOKENS if message.get("tool_calls") else 0)
    prompt = prompt_tokens(body)
    return {
        "id": f"chatcmpl-sim{digest}",
        "object": "chat.completion",
        "created": created,
        "model": str(body.get("model") or model),
        "system_fingerprint": "fp_sim",
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0}},
    }


def error_body(message: str, kind: str, code: str | None, param: str | None = None) -> dict[
        str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _bad_chat_request(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    return None


# --------------------------------------------------------------------------- stats


@dataclass
class Stats:
    """Counters served at GET /sim/stats."""

    requests: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    rate_limited: dict[str, int] = field(default_factory=lambda: {"requests": 0, "tokens": 0})
    prompt_tokens: int = 0
    completion_tokens: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    queued: int = 0
    max_queued: int = 0
    first_request_at: float | None = None
    last_request_at: float | None = None
    last_answer_at: float | None = None
    batches: int = 0
    batch_lines: int = 0
    batch_lines_failed: int = 0
    batch_prompt_tokens: int = 0
    batch_completion_tokens: int = 0
    files: int = 0

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# --------------------------------------------------------------------------- HTTP


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


@dataclass
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
            409: "Conflict", 413: "Payload Too Large", 429: "Too Many Requests",
            500: "Internal Server Error"}


def _json_response(status: int, value: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(status, json.dumps(value).encode("utf-8"), headers=headers or {})


def _error(status: int, message: str, kind: str = "invalid_request_error",
           code: str | None = None, param: str | None = None) -> Response:
    return _json_response(status, error_body(message, kind, code, param))


def _query(raw: str) -> dict[str, str]:
    pairs = (part.partition("=") for part in raw.split("&") if part)
    return {key: value for key, _, value in pairs}


def parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """multipart/form-data fields: name -> (filename or None, bytes)."""
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    if not match:
        raise ValueError("multipart body without a boundary")
    delimiter = b"--" + match.group(1).encode("latin-1")
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in body.split(delimiter)[1:]:
        if part.startswith(b"--"):
            break
        head, _, data = part.partition(b"\r\n\r\n")
        data = data.removesuffix(b"\r\n")
        disposition = head.decode("latin-1")
        name = re.search(r'\bname="([^"]*)"', disposition)
        filename = re.search(r'\bfilename="([^"]*)"', disposition)
        if name:
            fields[name.group(1)] = (filename.group(1) if filename else None, data)
    return fields


# --------------------------------------------------------------------------- batches


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "object": "file", "bytes": len(self.data),
                "created_at": self.created_at, "filename": self.filename,
                "purpose": self.purpose, "status": "processed", "expires_at": None,
                "status_details": None}


def validate_batch_input(data: bytes, endpoint: str) -> tuple[list[dict[str, Any]],
                                                               list[dict[str, Any]]]:
    """The requests of a batch input file, or the errors that make the batch fail: each
    line a JSON object with a unique ``custom_id``, ``method`` POST, ``url`` the batch's
    endpoint and an object ``body``. Errors name the line (1-based)."""
    requests: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()

    def fail(line: int, code: str, message: str, param: str | None = None) -> None:
        errors.append({"code": code, "line": line, "message": message, "param": param})

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        fail(1, "invalid_file_format", "the input file is not UTF-8 text")
        return [], errors
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except json.JSONDecodeError as problem:
            fail(number, "invalid_json_line", f"line {number} is not valid JSON: {problem.msg}")
            continue
        if not isinstance(line, dict):
            fail(number, "invalid_json_line", f"line {number} is not a JSON object")
            continue
        custom_id = line.get("custom_id")
        if not isinstance(custom_id, str) or not custom_id:
            fail(number, "missing_required_parameter", f"line {number} has no custom_id",
                 "custom_id")
        elif custom_id in seen:
            fail(number, "duplicate_custom_id",
                 f"line {number}: custom_id {custom_id!r} is used by an earlier line",
                 "custom_id")
        else:
            seen.add(custom_id)
        if line.get("method") != "POST":
            fail(number, "invalid_method", f"line {number}: method must be POST", "method")
        if line.get("url") != endpoint:
            fail(number, "invalid_url", f"line {number}: url must be {endpoint}", "url")
        if not isinstance(line.get("body"), dict):
            fail(number, "missing_required_parameter", f"line {number} has no body object",
                 "body")
        if not errors:
            requests.append(line)
    if not requests and not errors:
        fail(1, "empty_file", "the input file has no requests")
    return ([] if errors else requests), errors[:100]


@dataclass
class BatchJob:
    info: dict[str, Any]
    cancel: bool = False


# --------------------------------------------------------------------------- the server


class SimServer:
    """The simulated endpoint's state and routes; runs inside one asyncio loop."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.reset()

    def reset(self) -> None:
        config = self.config
        self.rng = random.Random(config.seed)
        self.latency = _sampler(config.latency, self.rng)
        self.slots = asyncio.Semaphore(config.concurrency) if config.concurrency else None
        now = time.monotonic()
        self.requests_bucket = TokenBucket(config.rpm, config.burst_s, now) if config.rpm \
            else None
        self.tokens_bucket = TokenBucket(config.tpm, config.burst_s, now) if config.tpm \
            else None
        self.stats = Stats()
        self.files: dict[str, StoredFile] = {}
        self.batches: dict[str, BatchJob] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.counter = 0

    def _next_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-sim{self.counter:06d}"

    # ---- routing

    async def handle(self, request: Request) -> Response:
        path = request.path
        try:
            if path in ("/v1/chat/completions", "/chat/completions"):
                if request.method != "POST":
                    return _error(405, "use POST")
                return await self.chat(request)
            if path == "/sim/stats":
                return _json_response(200, self.stats.as_json())
            if path == "/sim/reset" and request.method == "POST":
                for task in self.tasks:
                    task.cancel()
                self.reset()
                return _json_response(200, {"reset": True})
            if path.startswith("/v1/files"):
                return self.files_route(request)
            if path.startswith("/v1/batches"):
                return self.batches_route(request)
        except (ValueError, KeyError, TypeError) as problem:
            return _error(400, f"bad request: {problem}")
        return _error(404, f"no route {request.method} {path}", code="unknown_url")

    # ---- chat completions

    def _limit_headers(self, now: float) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self.requests_bucket is not None:
            headers.update(self.requests_bucket.headers("requests", now))
        if self.tokens_bucket is not None:
            headers.update(self.tokens_bucket.headers("tokens", now))
        return headers

    def _count(self, status: int) -> None:
        key = str(status)
        self.stats.by_status[key] = self.stats.by_status.get(key, 0) + 1

    async def chat(self, request: Request) -> Response:
        stats = self.stats
        stats.requests += 1
        wall = time.time()
        stats.first_request_at = stats.first_request_at or wall
        stats.last_request_at = wall
        try:
            body = json.loads(request.body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._count(400)
            return _error(400, "the request body is not valid JSON")
        problem = _bad_chat_request(body)
        if problem:
            self._count(400)
            return _error(400, problem)
        now = time.monotonic()
        limited = self._admit(body, now)
        if limited is not None:
            self._count(429)
            return limited
        headers = self._limit_headers(now)
        if self.slots is not None:
            stats.queued += 1
            stats.max_queued = max(stats.max_queued, stats.queued)
            await self.slots.acquire()
            stats.queued -= 1
        try:
            stats.in_flight += 1
            stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
            failed = self.config.error_rate > 0 and self.rng.random() < self.config.error_rate
            answer = completion_for(body, self.config.model, int(wall))
            tokens = answer["usage"]["completion_tokens"]
            delay = self.latency() + self.config.seconds_per_token * tokens
            if delay > 0:
                await asyncio.sleep(delay)
        finally:
            stats.in_flight -= 1
            if self.slots is not None:
                self.slots.release()
        stats.last_answer_at = time.time()
        if failed:
            self._count(500)
            return Response(500, json.dumps(error_body(
                "The server had an error while processing your request (simulated).",
                "server_error", None)).encode(), headers=headers)
        self._count(200)
        stats.prompt_tokens += answer["usage"]["prompt_tokens"]
        stats.completion_tokens += tokens
        headers["x-request-id"] = f"req_{answer['id'][-16:]}"
        return Response(200, json.dumps(answer).encode("utf-8"), headers=headers)

    def _admit(self, body: dict[str, Any], now: float) -> Response | None:
        """None when the request fits both limits (and is charged), else its 429."""
        cost = rate_cost(body) if self.tokens_bucket is not None else 0
        for kind, bucket, amount in (("requests", self.requests_bucket, 1),
                                     ("tokens", self.tokens_bucket, cost)):
            if bucket is None:
                continue
            wait = bucket.wait_for(amount, now)
            if wait > 0:
                self.stats.rate_limited[kind] += 1
                limit = int(bucket.limit)
                if kind == "requests":
                    message = (f"Rate limit reached for requests per min (RPM): Limit {limit}, "
                               f"Used {limit}, Requested 1. Please try again in "
                               f"{reset_text(wait)}.")
                else:
                    used = limit - max(0, int(bucket.level))
                    message = (f"Rate limit reached for tokens per min (TPM): Limit {limit}, "
                               f"Used {used}, Requested {amount}. Please try again in "
                               f"{reset_text(wait)}.")
                headers = self._limit_headers(now)
                headers["retry-after"] = str(max(1, math.ceil(wait)))
                headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
                return Response(429, json.dumps(error_body(
                    message, kind, "rate_limit_exceeded")).encode(), headers=headers)
        for bucket, amount in ((self.requests_bucket, 1), (self.tokens_bucket, cost)):
            if bucket is not None:
                bucket.take(amount)
        return None

    # ---- files

    def files_route(self, request: Request) -> Response:
        parts = request.path.strip("/").split("/")  # v1 files [id] [content]
        if len(parts) == 2:
            if request.method == "POST":
                return self.upload(request)
            listed = [f.describe() for f in self.files.values()]
            return _json_response(200, {"object": "list", "data": listed, "has_more": False})
        stored = self.files.get(parts[2])
        if stored is None:
            return _error(404, f"No such File object: {parts[2]}", param="id")
        if len(parts) == 3:
            return _json_response(200, stored.describe())
        if len(parts) == 4 and parts[3] == "content":
            return Response(200, stored.data, content_type="application/octet-stream")
        return _error(404, f"no route {request.path}")

    def store_file(self, filename: str, purpose: str, data: bytes) -> StoredFile:
        stored = StoredFile(self._next_id("file"), filename, purpose, data, int(time.time()))
        self.files[stored.id] = stored
        self.stats.files += 1
        return stored

    def upload(self, request: Request) -> Response:
        content_type = request.headers.get("content-type", "")
        if not content_type.startswith("multipart/form-data"):
            return _error(400, "upload files as multipart/form-data")
        fields = parse_multipart(content_type, request.body)
        if "file" not in fields:
            return _error(400, "missing the 'file' field", param="file")
        purpose = fields.get("purpose", (None, b""))[1].decode("utf-8", "replace")
        if purpose != "batch":
            return _error(400, f"this simulator stores purpose 'batch' files only, "
                          f"not {purpose!r}", param="purpose")
        filename, data = fields["file"]
        if len(data) > self.config.max_file_bytes:
            return _error(400, f"file of {len(data):,} bytes is over the "
                          f"{self.config.max_file_bytes:,}-byte limit", param="file")
        return _json_response(200, self.store_file(filename or "upload.jsonl", purpose,
                                                   data).describe())

    # ---- batches

    def batches_route(self, request: Request) -> Response:
        parts = request.path.strip("/").split("/")  # v1 batches [id] [cancel]
        if len(parts) == 2:
            if request.method == "POST":
                return self.create_batch(json.loads(request.body or b"{}"))
            return self.list_batches(request.query)
        job = self.batches.get(parts[2])
        if job is None:
            return _error(404, f"No batch found with id '{parts[2]}'", param="id")
        if len(parts) == 3:
            return _json_response(200, job.info)
        if len(parts) == 4 and parts[3] == "cancel" and request.method == "POST":
            if job.info["status"] in ("validating", "in_progress"):
                job.cancel = True
                job.info["status"] = "cancelling"
                job.info["cancelling_at"] = int(time.time())
                return _json_response(200, job.info)
            return _error(409, f"Cannot cancel a batch with status '{job.info['status']}'")
        return _error(404, f"no route {request.path}")

    def list_batches(self, query: dict[str, str]) -> Response:
        newest_first = list(reversed(self.batches))
        after = query.get("after")
        if after in self.batches:
            newest_first = newest_first[newest_first.index(after) + 1:]
        limit = max(1, min(100, int(query.get("limit", "20"))))
        page = newest_first[:limit]
        return _json_response(200, {
            "object": "list", "data": [self.batches[b].info for b in page],
            "first_id": page[0] if page else None, "last_id": page[-1] if page else None,
            "has_more": len(newest_first) > limit})

    def create_batch(self, body: dict[str, Any]) -> Response:
        input_file_id = body.get("input_file_id")
        endpoint = body.get("endpoint")
        if endpoint != "/v1/chat/completions":
            return _error(400, f"endpoint {endpoint!r} is not supported; use "
                          "/v1/chat/completions", param="endpoint")
        if body.get("completion_window") != "24h":
            return _error(400, "completion_window must be '24h'", param="completion_window")
        stored = self.files.get(str(input_file_id))
        if stored is None:
            return _error(404, f"No such File object: {input_file_id}", param="input_file_id")
        if stored.purpose != "batch":
            return _error(400, f"file {stored.id} has purpose {stored.purpose!r}, not 'batch'",
                          param="input_file_id")
        now = int(time.time())
        info: dict[str, Any] = {
            "id": self._next_id("batch"), "object": "batch", "endpoint": endpoint,
            "errors": None, "input_file_id": stored.id, "completion_window": "24h",
            "status": "validating", "output_file_id": None, "error_file_id": None,
            "created_at": now, "in_progress_at": None, "expires_at": now + 86400,
            "finalizing_at": None, "completed_at": None, "failed_at": None, "expired_at": None,
            "cancelling_at": None, "cancelled_at": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": body.get("metadata"), "model": None, "usage": None,
        }
        job = BatchJob(info)
        self.batches[info["id"]] = job
        self.stats.batches += 1
        task = asyncio.get_running_loop().create_task(self.run_batch(job, stored.data))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return _json_response(200, info)

    def _line_fails(self, custom_id: str) -> str | None:
        """Seeded per line: None (answered), 'server' (500) or 'client' (400 body)."""
        rate = self.config.batch_failure_rate
        if rate <= 0:
            return None
        digest = hashlib.sha256(f"{self.config.seed}:{custom_id}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big") / 2**64
        if draw >= rate:
            return None
        return "server" if digest[8] % 2 else "client"

    async def run_batch(self, job: BatchJob, data: bytes) -> None:
        info = job.info
        step = self.config.batch_seconds / 3
        await asyncio.sleep(step)
        requests, errors = validate_batch_input(data, info["endpoint"])
        if len(requests) > self.config.max_batch_requests:
            errors = [{"code": "too_many_requests", "line": None, "param": None,
                       "message": f"{len(requests):,} requests, over the limit of "
                                  f"{self.config.max_batch_requests:,} per batch"}]
        if errors:
            info.update(status="failed", failed_at=int(time.time()),
                        errors={"object": "list", "data": errors})
            return
        if job.cancel:
            info.update(status="cancelled", cancelled_at=int(time.time()))
            return
        info.update(status="in_progress", in_progress_at=int(time.time()),
                    model=str(requests[0]["body"].get("model") or self.config.model))
        counts = info["request_counts"]
        counts["total"] = len(requests)
        outputs: list[str] = []
        failures: list[str] = []
        prompt_total = completion_total = 0
        started = time.monotonic()
        for index, line in enumerate(requests):
            if job.cancel:
                break
            custom_id = line["custom_id"]
            record, ok, usage = self._batch_line(info["id"], custom_id, line["body"])
            (outputs if ok else failures).append(json.dumps(record))
            counts["completed" if ok else "failed"] += 1
            prompt_total += usage[0]
            completion_total += usage[1]
            if index % 200 == 199:  # let other requests in; spread the work over step
                target = started + step * (index + 1) / len(requests)
                await asyncio.sleep(max(0.0, target - time.monotonic()))
        await asyncio.sleep(max(0.0, started + step - time.monotonic()))
        if not job.cancel:
            info.update(status="finalizing", finalizing_at=int(time.time()))
            await asyncio.sleep(step)
        shuffler = random.Random(f"{self.config.seed}:{info['id']}")
        shuffler.shuffle(outputs)
        shuffler.shuffle(failures)
        if outputs:
            info["output_file_id"] = self.store_file(
                f"{info['id']}_output.jsonl", "batch_output",
                ("\n".join(outputs) + "\n").encode("utf-8")).id
        if failures:
            info["error_file_id"] = self.store_file(
                f"{info['id']}_error.jsonl", "batch_output",
                ("\n".join(failures) + "\n").encode("utf-8")).id
        info["usage"] = {"input_tokens": prompt_total,
                         "input_tokens_details": {"cached_tokens": 0},
                         "output_tokens": completion_total,
                         "output_tokens_details": {"reasoning_tokens": 0},
                         "total_tokens": prompt_total + completion_total}
        done = int(time.time())
        if job.cancel:
            info.update(status="cancelled", cancelled_at=done)
        else:
            info.update(status="completed", completed_at=done)

    def _batch_line(self, batch_id: str, custom_id: str, body: dict[str, Any]) -> tuple[
            dict[str, Any], bool, tuple[int, int]]:
        """One output or error file record, whether it succeeded, and its tokens."""
        stats = self.stats
        stats.batch_lines += 1
        line_id = f"batch_req_{hashlib.sha256(f'{batch_id}:{custom_id}'.encode()).hexdigest()[:24]}"
        request_id = f"req_{line_id[-20:]}"
        fate = self._line_fails(custom_id)
        problem = _bad_chat_request(body)
        if fate == "server":
            stats.batch_lines_failed += 1
            return ({"id": line_id, "custom_id": custom_id, "response": None,
                     "error": {"code": "server_error",
                               "message": "The server failed to process this request "
                                          "(simulated)."}}, False, (0, 0))
        if fate == "client" or problem:
            stats.batch_lines_failed += 1
            message = problem or "Invalid request (simulated failure)."
            return ({"id": line_id, "custom_id": custom_id,
                     "response": {"status_code": 400, "request_id": request_id,
                                  "body": error_body(message, "invalid_request_error", None)},
                     "error": None}, False, (0, 0))
        answer = completion_for(body, self.config.model, int(time.time()))
        usage = answer["usage"]
        stats.batch_prompt_tokens += usage["prompt_tokens"]
        stats.batch_completion_tokens += usage["completion_tokens"]
        return ({"id": line_id, "custom_id": custom_id,
                 "response": {"status_code": 200, "request_id": request_id, "body": answer},
                 "error": None}, True, (usage["prompt_tokens"], usage["completion_tokens"]))

    # ---- connections

    async def serve_connection(self, reader: asyncio.StreamReader,
                               writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                if isinstance(request, Response):
                    await _write_response(writer, request, keep_alive=False)
                    break
                response = await self.handle(request)
                keep_alive = request.headers.get("connection", "").lower() != "close"
                await _write_response(writer, response, keep_alive=keep_alive)
                if not keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()


async def _read_request(reader: asyncio.StreamReader) -> Request | Response | None:
    """The next request on a connection; None at a clean end; a Response for bad input."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, _ = lines[0].split(" ", 2)
    except ValueError:
        return _error(400, "malformed request line")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass  # trailers
                break
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
        body = b"".join(chunks)
    else:
        length = int(headers.get("content-length", "0") or 0)
        if length > MAX_BODY_BYTES:
            return _error(413, f"body over {MAX_BODY_BYTES} bytes")
        body = await reader.readexactly(length) if length else b""
    path, _, raw_query = target.partition("?")
    return Request(method.upper(), path, _query(raw_query), headers, body)


async def _write_response(writer: asyncio.StreamWriter, response: Response, *,
                          keep_alive: bool) -> None:
    lines = [f"HTTP/1.1 {response.status} {_REASONS.get(response.status, 'Status')}",
             f"content-type: {response.content_type}",
             f"content-length: {len(response.body)}",
             f"connection: {'keep-alive' if keep_alive else 'close'}"]
    lines += [f"{name}: {value}" for name, value in response.headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + response.body)
    await writer.drain()


async def serve(config: SimConfig, host: str, port: int, ready: Any,
                stop: asyncio.Event | None = None) -> None:
    """Serve until ``stop`` is set (or forever); ``ready(port)`` is called once listening."""
    state = SimServer(config)
    server = await asyncio.start_server(state.serve_connection, host, port, backlog=4096,
                                        limit=MAX_BODY_BYTES)
    ready(server.sockets[0].getsockname()[1])
    async with server:
        if stop is None:
            await server.serve_forever()
        else:
            await stop.wait()


# --------------------------------------------------------------------------- running it

REPO_ROOT = Path(__file__).resolve().parent.parent


class SimEndpoint:
    """A running simulated endpoint: in a background thread, or (``spawn``) in a separate
    process. A context manager; ``base_url`` ends in /v1."""

    def __init__(self, config: SimConfig | None = None, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self.config = config or SimConfig()
        self.host = host
        self.port = port
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._process: subprocess.Popen[str] | None = None

    @classmethod
    def spawn(cls, config: SimConfig | None = None, host: str = "127.0.0.1") -> SimEndpoint:
        """An endpoint that runs as ``python -m bench.simendpoint`` in its own process."""
        endpoint = cls(config, host)
        endpoint._process = subprocess.Popen(
            [sys.executable, "-m", "bench.simendpoint", "--host", host, "--port", "0",
             "--config-json", json.dumps(dataclasses.asdict(endpoint.config))],
            cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
        assert endpoint._process.stdout is not None
        line = endpoint._process.stdout.readline()
        match = re.match(r"listening on port (\d+)", line)
        if not match:
            endpoint._process.kill()
            raise RuntimeError(f"the simulated endpoint did not start: {line!r}")
        endpoint.port = int(match.group(1))
        return endpoint

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> SimEndpoint:
        if self._process is not None or self._thread is not None:
            return self
        started = threading.Event()
        failure: list[BaseException] = []

        def ready(port: int) -> None:
            self.port = port
            started.set()

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            self._stop = asyncio.Event()
            try:
                loop.run_until_complete(serve(self.config, self.host, self.port, ready,
                                              self._stop))
            except BaseException as problem:  # reported to the starting thread
                failure.append(problem)
                started.set()
            finally:  # end open connections and batches so no socket is left unclosed
                pending = asyncio.all_tasks(loop)
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()
                asyncio.set_event_loop(None)

        self._thread = threading.Thread(target=run, name="simendpoint", daemon=True)
        self._thread.start()
        started.wait(10)
        if failure:
            raise RuntimeError(f"the simulated endpoint did not start: {failure[0]}")
        return self

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            if self._process.stdout is not None:
                self._process.stdout.close()
            self._process = None
        if self._thread is not None and self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(10)
            self._thread = None

    def __enter__(self) -> SimEndpoint:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    def _call(self, method: str, path: str) -> dict[str, Any]:
        request = urllib.request.Request(self.root_url + path, method=method, data=(
            b"" if method == "POST" else None))
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback
        with direct.open(request, timeout=30) as answer:
            result: dict[str, Any] = json.loads(answer.read())
            return result

    def stats(self) -> dict[str, Any]:
        """The counters of GET /sim/stats."""
        return self._call("GET", "/sim/stats")

    def reset(self) -> None:
        """Forget counters, limits' state, files and batches (POST /sim/reset)."""
        self._call("POST", "/sim/reset")


# --------------------------------------------------------------------------- self-test


# Sized like papersift's requests: a ~4 KB static system prompt, a ~1.5 KB abstract.
_SELFTEST_SYSTEM = "Extract the paper's tasks, methods, benchmarks and gains as JSON. " * 60
_SELFTEST_FILLER = ("The evaluation covers several settings and ablations in detail, comparing "
                    "against strong baselines under equal compute budgets and reporting the "
                    "variance across seeds. ") * 7


def _selftest_body(index: int) -> bytes:
    abstract = (f"We propose SimNet-{index}, a method for fast sorting. {_SELFTEST_FILLER}"
                f"On the SortBench benchmark it improves accuracy by {index % 50}.5% over "
                "baselines.")
    body = {"model": "sim", "max_tokens": 256, "messages": [
        {"role": "system", "content": _SELFTEST_SYSTEM},
        {"role": "user", "content": f'Abstract:\n"""\n{abstract}\n"""'}]}
    return json.dumps(body).encode()


async def _selftest_client(port: int, requests: int, connections: int) -> tuple[float, int]:
    """Fire ``requests`` chat completions over ``connections`` keep-alive connections
    (raw sockets, so the client costs little); (seconds, answers with status 200)."""
    queue = list(range(requests))
    ok = 0

    async def worker() -> None:
        nonlocal ok
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while queue:
            body = _selftest_body(queue.pop())
            writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nhost: sim\r\n"
                         b"content-type: application/json\r\ncontent-length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"content-length: (\d+)", head).group(1))  # type: ignore[union-attr]
            await reader.readexactly(length)
            ok += head.startswith(b"HTTP/1.1 200")
        writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(connections)))
    return time.perf_counter() - started, ok


def selftest(requests: int = 2000, connections: int = 256, latency: str = "fixed:0.001") -> str:
    """Requests per second a spawned endpoint sustains with a tiny fixed latency, for
    requests sized like papersift's (~4 KB system prompt, ~1.5 KB abstract)."""
    config = SimConfig(latency=latency)
    with SimEndpoint.spawn(config) as sim:
        seconds, ok = asyncio.run(_selftest_client(sim.port, requests, connections))
        stats = sim.stats()
    return (f"selftest: {requests} requests over {connections} keep-alive connections, "
            f"latency {latency}: {seconds:.2f} s, {requests / seconds:,.0f} requests/s, "
            f"{ok} answered 200, max {stats['max_in_flight']} in processing at once")


# --------------------------------------------------------------------------- command line


def _config_from(args: argparse.Namespace) -> SimConfig:
    if args.config_json:
        return SimConfig(**json.loads(args.config_json))
    return SimConfig(latency=args.latency, seconds_per_token=args.seconds_per_token,
                     concurrency=args.concurrency, rpm=args.rpm, tpm=args.tpm,
                     burst_s=args.burst_s, seed=args.seed, error_rate=args.error_rate,
                     batch_seconds=args.batch_seconds,
                     batch_failure_rate=args.batch_failure_rate,
                     max_batch_requests=args.max_batch_requests)


def main(argv: list[str] | None = None) -> int:
    """Run the simulated endpoint (prints 'listening on port N'), or --selftest."""
    parser = argparse.ArgumentParser(prog="python -m bench.simendpoint", description=main.__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--latency", default="fixed:0.2")
    parser.add_argument("--seconds-per-token", type=float, default=0.0)
    parser.add_argument("--concurrency", type=int, default=None)
    parser.add_argument("--rpm", type=float, default=None)
    parser.add_argument("--tpm", type=float, default=None)
    parser.add_argument("--burst-s", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--error-rate", type=float, default=0.0)
    parser.add_argument("--batch-seconds", type=float, default=1.0)
    parser.add_argument("--batch-failure-rate", type=float, default=0.0)
    parser.add_argument("--max-batch-requests", type=int, default=50_000)
    parser.add_argument("--config-json", default=None, help="a SimConfig as JSON (overrides)")
    parser.add_argument("--selftest", action="store_true",
                        help="spawn an endpoint, fire requests at it, print requests/s")
    parser.add_argument("--requests", type=int, default=2000, help="for --selftest")
    parser.add_argument("--connections", type=int, default=256, help="for --selftest")
    args = parser.parse_args(argv)
    if args.selftest:
        print(selftest(args.requests, args.connections))
        return 0
    config = _config_from(args)

    def ready(port: int) -> None:
        print(f"listening on port {port}", flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(config, args.host, args.port, ready))
    return 0


def read_jsonl(data: bytes) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file's bytes (for reading output and error files)."""
    for line in data.decode("utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


if __name__ == "__main__":
    raise SystemExit(main())
