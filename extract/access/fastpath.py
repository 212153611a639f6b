"""The first ask of an abstract without the SDK's and instructor's work per call.

Most answers are one clean HTTP 200 whose JSON validates the first time. For those, what
openai and instructor do per call (transforming the parameters, wrapping the messages,
building the request, parsing the answer into SDK objects, retry bookkeeping) costs more
CPU than the rest of papersift together on a fast endpoint. So the first ask goes out
here: the request body is instructor's own for a placeholder abstract, serialised once
and split where the abstract goes; each abstract is spliced in as its JSON string. The
request goes through the same HTTP client (the retrying, logging, paced transport), so
every attempt lands in the call log as before.

Anything but the clean case (an error status after the transport's retries, a network
error, ``finish_reason == "length"``, an answer that does not validate) is handed to
instructor as it arrived: the transport gives instructor's first request this very
answer (or raises this very error) instead of sending it again, and instructor carries
on (re-asks, typed errors) exactly as if it had received it itself.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
from instructor.v2.validation import model_declares_async_validators
from pydantic import BaseModel, ValidationError

from papersift.extract.access.limits import answer_json

# Stands for the abstract while the body is built; no abstract or prompt contains it.
PLACEHOLDER = "\u0000papersift-abstract\u0000"
_ENCODED = json.dumps(PLACEHOLDER)[1:-1].encode()
# Modes whose answer is one JSON text that instructor validates as it is.
_CONTENT_MODES = {"json", "json_schema"}


@dataclass(frozen=True)
class Handover:
    """What the fast path received for a request: instructor's first request gets it."""

    response: httpx2.Response | None = None
    error: BaseException | None = None


_handover: contextvars.ContextVar[Handover | None] = contextvars.ContextVar(
    "papersift_handover", default=None)


def take_handover() -> Handover | None:
    """The answer waiting for instructor's first request in this context, taken once."""
    waiting = _handover.get()
    if waiting is not None:
        _handover.set(None)
    return waiting


@contextmanager
def handing_over(handover: Handover) -> Iterator[None]:
    """Give ``handover`` to the next request made in this context (within the block)."""
    token = _handover.set(handover)
    try:
        yield
    finally:
        _handover.reset(token)


@dataclass(frozen=True)
class BodyTemplate:
    """A request body serialised once, split where the abstract goes."""

    parts: tuple[bytes, ...]

    def body(self, text: str) -> bytes:
        """The body for ``text``: the same bytes as serialising the whole body with it."""
        return json.dumps(text, ensure_ascii=False)[1:-1].encode().join(self.parts)


def serialise(body: dict[str, Any]) -> bytes:
    """JSON as the SDK sends it (compact, UTF-8, no NaN)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode()


def body_template(body: dict[str, Any]) -> BodyTemplate | None:
    """The template of a body built for PLACEHOLDER; None when it cannot be one (the
    placeholder is missing, or changed on its way into the body)."""
    try:
        parts = tuple(serialise(body).split(_ENCODED))
    except (TypeError, ValueError):
        return None
    return BodyTemplate(parts) if len(parts) > 1 else None


def sdk_request(raw: openai.AsyncOpenAI, http: httpx2.AsyncClient) -> httpx2.Request:
    """A chat-completions POST as the SDK client ``raw`` sends one through ``http`` (the
    client it was built with), from their public attributes: the SDK's URL, headers and
    timeout, the first attempt's retry count."""
    # lower-case names, the key first, then the SDK's own, as the SDK sends them; it
    # leaves out the values that are its Omit markers
    headers = {name.lower(): value
               for name, value in {**raw.auth_headers, **raw.default_headers}.items()
               if isinstance(value, str)}
    headers["x-stainless-retry-count"] = "0"
    timeout: Any = raw.timeout
    if isinstance(timeout, float | int):
        headers["x-stainless-read-timeout"] = str(float(timeout))
    elif isinstance(timeout, httpx2.Timeout) and timeout.read is not None:
        headers["x-stainless-read-timeout"] = str(timeout.read)
    options: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
    return http.build_request("POST", raw.base_url.join("chat/completions"),
                              headers=headers, content=b"{}", **options)


class FastPath:
    """Sends first asks for one async SDK client and parses clean answers."""

    def __init__(self, raw: openai.AsyncOpenAI, http: httpx2.AsyncClient,
                 template: BodyTemplate, mode: str, model: type[BaseModel]) -> None:
        self.template = template
        self.mode = mode
        self.model = model
        self._http = http
        probe = sdk_request(raw, http)
        self._url = probe.url
        # The SDK's headers (with Host), as bytes; each body adds its Content-Length.
        self._headers = [(k, v) for k, v in probe.headers.raw
                         if k.lower() != b"content-length"]
        self._extensions = dict(probe.extensions)

    @classmethod
    def make(cls, raw: openai.AsyncOpenAI, http: httpx2.AsyncClient, body: dict[str, Any],
             mode: str, model: type[BaseModel]) -> FastPath | None:
        """A fast path for this client, or None when the request or mode needs instructor
        every time (a body that depends on the abstract beyond its text, md_json, a model
        with async validators instructor refuses)."""
        if mode not in _CONTENT_MODES and mode != "tools":
            return None
        template = body_template(body)
        if template is None:
            return None
        if model_declares_async_validators(model):  # instructor refuses it on every call
            return None
        return cls(raw, http, template, mode, model)

    async def ask(self, text: str) -> BaseModel | Handover:
        """The validated answer of a clean first ask, or what to hand to instructor."""
        try:
            body = self.template.body(text)
        except UnicodeEncodeError:  # a lone surrogate: instructor reports it as before
            return Handover()
        # A stream, not content: httpx2 then neither encodes the body nor adds headers.
        request = httpx2.Request(
            "POST", self._url, headers=[*self._headers, (b"Content-Length", b"%d" % len(body))],
            stream=httpx2.ByteStream(body), extensions=self._extensions)
        try:
            response = await self._http.send(request)
        except Exception as error:
            return Handover(error=error)
        parsed = self.parse(response)
        return Handover(response=response) if parsed is None else parsed

    def parse(self, response: httpx2.Response) -> BaseModel | None:
        """The answer as instructor would validate it, or None when instructor must look."""
        if response.status_code != 200:
            return None
        try:
            data: Any = answer_json(response)
            choice = data["choices"][0]
            if choice.get("finish_reason") == "length":
                return None
            message = choice["message"]
            if self.mode == "tools":
                if message.get("refusal") is not None:
                    return None
                text = message["tool_calls"][0]["function"]["arguments"]
            else:
                text = message.get("content") or ""
            if not isinstance(text, str):
                return None
            return self.model.model_validate_json(text, strict=True)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError,
                ValidationError):
            return None
