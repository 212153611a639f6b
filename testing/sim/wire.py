"""The simulator's HTTP/1.1 wire (a hand-written fake endpoint): requests and responses,
multipart uploads, stored files and batch input validation, and its counters."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any

from papersift.testing.bodies import error_body

MAX_BODY_BYTES = 512 * 1024 * 1024



@dataclass
class Gauge:
    """A level that goes up and down (requests in processing, waiting for a slot), and the
    highest it reached."""

    now: int = 0
    most: int = 0

    def up(self) -> None:
        self.now += 1
        self.most = max(self.most, self.now)

    def down(self) -> None:
        self.now -= 1


@dataclass
class Tokens:
    """Prompt and completion tokens, summed over the answers' usage."""

    prompt: int = 0
    completion: int = 0

    def add(self, usage: dict[str, Any]) -> None:
        self.prompt += usage["prompt_tokens"]
        self.completion += usage["completion_tokens"]


@dataclass
class Stats:
    """Counters served at GET /sim/stats."""

    requests: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    rate_limited: dict[str, int] = field(default_factory=lambda: {"requests": 0, "tokens": 0})
    tokens: Tokens = field(default_factory=Tokens)  # answered live
    in_flight: Gauge = field(default_factory=Gauge)
    queued: Gauge = field(default_factory=Gauge)
    first_request_at: float | None = None
    last_request_at: float | None = None
    last_answer_at: float | None = None
    batches: int = 0
    batch_lines: int = 0
    batch_lines_failed: int = 0
    batch_tokens: Tokens = field(default_factory=Tokens)  # answered in batch output files
    files: int = 0

    def as_json(self) -> dict[str, Any]:
        """The counters as flat JSON: a gauge NAME shows as NAME and max_NAME, tokens as
        prompt_tokens and completion_tokens (batch_ before each for batch_tokens)."""
        values = dataclasses.asdict(self)
        for name in ("in_flight", "queued"):
            gauge = values.pop(name)
            values[name], values[f"max_{name}"] = gauge["now"], gauge["most"]
        for name, prefix in (("tokens", ""), ("batch_tokens", "batch_")):
            for part, count in values.pop(name).items():
                values[f"{prefix}{part}_tokens"] = count
        return values


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
    drop: bool = False  # close the connection without answering (a fault)


REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
           405: "Method Not Allowed", 409: "Conflict", 413: "Payload Too Large",
           429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
           503: "Service Unavailable"}


def json_response(status: int, value: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(status, json.dumps(value).encode("utf-8"), headers=headers or {})


def error_response(status: int, message: str, kind: str = "invalid_request_error",
                   code: str | None = None, param: str | None = None) -> Response:
    return json_response(status, error_body(message, kind, code, param))


def parse_query(raw: str) -> dict[str, str]:
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




async def read_request(reader: asyncio.StreamReader) -> Request | Response | None:
    """The next request on a connection; None at a clean end; a Response for bad input."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, _ = lines[0].split(" ", 2)
    except ValueError:
        return error_response(400, "malformed request line")
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
            return error_response(413, f"body over {MAX_BODY_BYTES} bytes")
        body = await reader.readexactly(length) if length else b""
    path, _, raw_query = target.partition("?")
    return Request(method.upper(), path, parse_query(raw_query), headers, body)


async def write_response(writer: asyncio.StreamWriter, response: Response, *,
                         keep_alive: bool) -> None:
    lines = [f"HTTP/1.1 {response.status} {REASONS.get(response.status, 'Status')}",
             f"content-type: {response.content_type}",
             f"content-length: {len(response.body)}",
             f"connection: {'keep-alive' if keep_alive else 'close'}"]
    lines += [f"{name}: {value}" for name, value in response.headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + response.body)
    await writer.drain()
