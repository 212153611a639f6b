"""One request path: each ask's body built once, each answer parsed and validated here.

The body is instructor's public ``handle_response_model`` for the endpoint's mode (the
schema text, ``tools`` or ``response_format`` it adds), computed once per extractor for
a placeholder abstract and filled in per abstract, plus papersift's own ``response_format``
(the grammar of the abstract's numbers, or plain JSON). The live path, Batch API lines and
the benchmarks all send :meth:`RequestBuilder.body`.

The answer is read from the chat completion as plain JSON and validated with pydantic
against the draft model; a refused answer becomes the re-ask body of the next ask
(:meth:`RequestBuilder.reask`), in the words instructor's re-asks have always used, so
recordings and caches made before still match.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

import instructor
from instructor.processing import handle_response_model
from pydantic import BaseModel, ValidationError

from papersift.extract.access.llm import Endpoint
from papersift.extract.domain.fields import DEFAULT_FIELDS, FieldSet
from papersift.prompts import Prompt

# Stands for the abstract while a body is built; no abstract or prompt contains it.
PLACEHOLDER = "\u0000papersift-abstract\u0000"
_JSON_REASK = "Correct your JSON ONLY RESPONSE, based on the following errors:\n{error}"
_TOOL_REASK = "Validation Error found:\n{error}\nRecall the function correctly, fix the errors"
# An md_json answer longer than this is validated as it is, not searched for its JSON.
MAX_SEARCHED_CHARS = 1 << 20
MODES = {
    "json": instructor.Mode.JSON,
    "tools": instructor.Mode.TOOLS,
    "json_schema": instructor.Mode.JSON_SCHEMA,
    "md_json": instructor.Mode.MD_JSON,
}


@functools.cache
def _wrapped(model: type[BaseModel]) -> type[BaseModel]:
    """The draft model as instructor wraps it for its request, once per process: its JSON
    schema (title, descriptions) is what every body has always carried."""
    return instructor.response_schema(model)


def request_schema(endpoint: Endpoint, text: str,
                   fields: FieldSet = DEFAULT_FIELDS) -> dict[str, Any] | None:
    """The grammar sent with this abstract's request (None when the endpoint gets none)."""
    if not endpoint.constrain_json:
        return None
    return fields.grammar(text)


class RequestBuilder:
    """The request bodies of one endpoint, prompt and field set."""

    def __init__(self, endpoint: Endpoint, prompt: Prompt,
                 fields: FieldSet = DEFAULT_FIELDS) -> None:
        self.endpoint = endpoint
        self.prompt = prompt
        self.fields = fields
        self.mode = endpoint.mode
        # Few-shot examples chosen per abstract change the messages beyond its text: those
        # bodies are shaped per abstract; every other body is the placeholder's, filled in.
        self._base = None if prompt.pool is not None else self._shaped(
            prompt.messages(PLACEHOLDER))
        if self._base is not None and not any(
                PLACEHOLDER in str(message.get("content")) for message in self._base["messages"]):
            self._base = None  # the abstract did not survive as text: shape each body

    @property
    def fills_in(self) -> bool:
        """Whether bodies are one prepared body with the abstract filled in (else each is
        shaped by instructor's preparation anew)."""
        return self._base is not None

    def _options(self) -> dict[str, Any]:
        endpoint = self.endpoint
        options: dict[str, Any] = {"model": endpoint.model,
                                   "temperature": endpoint.temperature,
                                   "max_tokens": endpoint.max_tokens}
        if endpoint.seed is not None:
            options["seed"] = endpoint.seed
        return options

    def _shaped(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The body instructor's request preparation makes of these messages."""
        _, body = handle_response_model(_wrapped(self.fields.draft_model),
                                        mode=MODES[self.mode], messages=messages,
                                        **self._options())
        return dict(body)

    def body(self, text: str, title: str | None = None) -> dict[str, Any]:
        """The first ask's body for this abstract (its title, when the input has one, goes
        before it): a fresh dict with fresh messages (the caller may change those; the
        schema values are shared, read-only)."""
        sent = self.prompt.titled(text, title)
        if self._base is not None:
            body = dict(self._base)
            body["messages"] = [_filled(message, sent) for message in self._base["messages"]]
        else:
            body = self._shaped(self.prompt.messages(sent))
        schema = request_schema(self.endpoint, text, self.fields)
        if schema is not None:
            # llama.cpp turns this schema into a grammar; it restricts gain values to the
            # numbers this abstract states, and replaces instructor's response_format.
            body["response_format"] = {"type": "json_object", "schema": schema}
        elif self.endpoint.plain_json:
            # The format is in the (short) prompt; the answer is validated all the same.
            body["response_format"] = {"type": "json_object"}
        return body

    def reask(self, body: dict[str, Any], answer: Answer, error: Exception) -> dict[str, Any]:
        """The next ask's body: this one, the refused answer, and why it was refused."""
        message = answer.message or {}
        said: dict[str, Any] = {"role": message.get("role") or "assistant",
                                "content": message.get("content") or ""}
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            said["tool_calls"] = calls
        added = [said]
        if self.mode == "tools":
            why = _TOOL_REASK.format(error=error)
            added += [{"role": "tool", "tool_call_id": call.get("id"),
                       "name": (call.get("function") or {}).get("name"), "content": why}
                      for call in calls or () if isinstance(call, dict)]
            if len(added) == 1:
                added.append({"role": "user", "content": why})
        else:
            added.append({"role": "user", "content": _JSON_REASK.format(error=error)})
        return {**body, "messages": [*body["messages"], *added]}


def _filled(message: dict[str, Any], text: str) -> dict[str, Any]:
    """A copy of the message, the abstract in place of the placeholder."""
    content = message.get("content")
    if isinstance(content, str) and PLACEHOLDER in content:
        return {**message, "content": content.replace(PLACEHOLDER, text)}
    return dict(message)


def serialise(body: dict[str, Any]) -> bytes:
    """JSON as it goes on the wire (compact, UTF-8, no NaN)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode()


@dataclass(frozen=True)
class Answer:
    """What one chat completion said: a validated draft, or why not.

    ``problem``: None (a draft), ``no_answer`` (no choice to read: not re-asked),
    ``length`` (cut at max_tokens: not re-asked), ``invalid`` (the text does not
    validate: re-asked while asks are left) or ``unreadable`` (a JSON body that did not
    arrive whole: asked again as it was)."""

    draft: BaseModel | None = None
    problem: str | None = None
    error: Exception | None = None
    text: str | None = None
    message: dict[str, Any] | None = None


class AnswerParser:
    """Reads a chat completion in the endpoint's mode and validates it (strict pydantic)."""

    def __init__(self, mode: str, model: type[BaseModel]) -> None:
        self.mode = mode
        self.model = model

    def parse(self, data: object) -> Answer:
        choices = data.get("choices") if isinstance(data, dict) else None
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(choice, dict) or not isinstance(message, dict):
            return Answer(problem="no_answer",
                          error=ValueError("the answer holds no chat completion choice"))
        if choice.get("finish_reason") == "length":
            return Answer(problem="length", message=message)
        text = self.text_of(message)
        try:
            return Answer(draft=self.model.model_validate_json(text, strict=True),
                          text=text, message=message)
        except ValidationError as error:
            return Answer(problem="invalid", error=error, text=text, message=message)

    def text_of(self, message: dict[str, Any]) -> str:
        """The JSON text the answer gives in this mode ('' when there is none)."""
        if self.mode == "tools":
            calls = message.get("tool_calls")
            call = calls[0] if isinstance(calls, list) and calls else None
            function = call.get("function") if isinstance(call, dict) else None
            arguments = function.get("arguments") if isinstance(function, dict) else None
            if isinstance(arguments, dict):
                return json.dumps(arguments)
            return arguments if isinstance(arguments, str) else ""
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        return json_span(text) if self.mode == "md_json" else text


def json_span(text: str) -> str:
    """The last complete JSON object or array in ``text`` (a fenced block, prose around
    it), else the text itself: the model's own answer comes last."""
    if len(text) > MAX_SEARCHED_CHARS:
        return text
    decoder = json.JSONDecoder()
    found, index = None, 0
    while index < len(text):
        starts = [at for at in (text.find("{", index), text.find("[", index)) if at >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            _, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            index = start + 1
            continue
        found, index = text[start:end], end
    return found if found is not None else text
