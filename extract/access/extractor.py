"""Ask the model for one abstract's draft through instructor, and say exactly what happened.

The model proposes a short draft (names, task phrases, numbers); code grounds it
(extract.assemble) when the result is recorded. Instructor re-asks only when the answer
is not valid JSON of the draft schema, which the grammar makes rare on llama.cpp.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import instructor
import openai
from instructor.core import IncompleteOutputException, InstructorRetryException
from instructor.processing import handle_response_model
from pydantic import ValidationError
from tenacity import AsyncRetrying, Retrying, retry_if_exception_type, stop_after_attempt

from papersift.extract.access.fastpath import PLACEHOLDER, FastPath, Handover, handing_over
from papersift.extract.access.limits import BudgetExceededError, RequestGate
from papersift.extract.access.llm import (
    MODES,
    CallLog,
    Endpoint,
    RetryPolicy,
    async_sdk_over,
    build_async_http,
    build_client,
    call_log,
    check_endpoint,
    wrap_async,
)
from papersift.extract.access.outcomes import Failure, Outcome, plain_draft
from papersift.extract.domain.fields import DEFAULT_FIELDS, FieldSet, prompt_for
from papersift.prompts import Prompt
from papersift.schemas import PaperDraft
from papersift.schemas.paper import content_hash

# Outcome and Failure live in outcomes.py (a row worker imports them without the SDK);
# they are still imported from here.
__all__ = [
    "INTERRUPTED", "Extractor", "Failure", "Outcome", "answer_model", "cache_key",
    "completion_text", "failure_reason", "instructor_version", "is_json_error",
    "plain_draft", "request_schema",
]


INTERRUPTED = Failure("request", "interrupted",
                      "interrupted (Ctrl-C) while its request was in flight; rerun to "
                      "extract it")


def answer_model(model: type[PaperDraft] = PaperDraft) -> type[PaperDraft]:
    """The draft model as instructor wraps it for a request, one per model and process."""
    return _wrapped(model)


@functools.cache
def _wrapped(model: type[PaperDraft]) -> type[PaperDraft]:
    """The draft model (PaperDraft, or a run's with user fields) as instructor wraps it
    for a request, built once per process.

    instructor wraps a plain model anew on every ``create`` (a new pydantic class) and
    builds its JSON schema again; handed a model it has wrapped already, it uses it as it
    is, and this one also returns its JSON schema from a copy made once. The schema and so
    every request body are instructor's own (tests compare them with a fresh wrap).
    """
    wrapped = instructor.response_schema(model)
    schema = wrapped.model_json_schema()
    plain = wrapped.model_json_schema

    def model_json_schema(*args: Any, **kwargs: Any) -> dict[str, Any]:
        if args or kwargs:
            return plain(*args, **kwargs)
        copy: dict[str, Any] = json.loads(frozen)  # callers may change their copy
        return copy

    frozen = json.dumps(schema)
    wrapped.model_json_schema = model_json_schema  # type: ignore[method-assign]
    return wrapped


def request_schema(endpoint: Endpoint, text: str,
                   fields: FieldSet = DEFAULT_FIELDS) -> dict[str, Any] | None:
    """The grammar sent with this abstract's request (None when the endpoint gets none)."""
    if not endpoint.constrain_json:
        return None
    return fields.grammar(text)


def cache_key(endpoint: Endpoint, prompt_version: str, text: str,
              fields: FieldSet = DEFAULT_FIELDS) -> str:
    """Fingerprint of everything that shapes the answer: endpoint, model, mode, sampling,
    prompt and schema versions, the grammar sent, and the abstract's text."""
    grammar = request_schema(endpoint, text, fields)
    material = {
        "grammar": content_hash(grammar) if grammar is not None else None,
        "endpoint": endpoint.cache_identity,
        "model": endpoint.model,
        "mode": endpoint.mode,
        "sampling": endpoint.sampling(),
        "prompt_version": prompt_version,
        "schema_version": fields.schema_version(),
        "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Extractor:
    """Extracts papers through one endpoint: ``extract`` blocks, ``extract_async`` runs on
    an event loop inside ``session``. Each call keeps its own call log (a context
    variable), so calls in flight at once do not mix their records."""

    def __init__(
        self,
        endpoint: Endpoint,
        prompt: Prompt,
        *,
        max_reasks: int = 2,
        transport: httpx2.BaseTransport | None = None,
        policy: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], None] = time.sleep,
        fields: FieldSet = DEFAULT_FIELDS,
    ) -> None:
        self.endpoint = endpoint
        self.fields = fields
        self.prompt = prompt_for(prompt, fields)
        self.max_reasks = max_reasks
        self._transport = transport
        self._policy = policy
        self._sleep = sleep
        self._sync: tuple[instructor.Instructor, openai.OpenAI] | None = None
        check_endpoint(endpoint)  # what building a client would raise, raised now
        self._async_raw: openai.AsyncOpenAI | None = None
        self._async_client: instructor.AsyncInstructor | None = None
        self._fast: FastPath | None = None
        self._secrets = (endpoint.api_key,) if endpoint.api_key else ()
        self.interrupted: list[Outcome] = []

    @property
    def client(self) -> instructor.Instructor:
        """The blocking instructor client, built on first use (a run that only computes
        cache keys, or sends asynchronously, never needs one)."""
        return self._sync_clients()[0]

    @property
    def raw_client(self) -> openai.OpenAI:
        """The blocking SDK client under ``client`` (Batch API files), built on first use."""
        return self._sync_clients()[1]

    def _sync_clients(self) -> tuple[instructor.Instructor, openai.OpenAI]:
        if self._sync is None:
            self._sync = build_client(self.endpoint, transport=self._transport,
                                      policy=self._policy, sleep=self._sleep)
        return self._sync

    def close(self) -> None:
        if self._sync is not None:
            self._sync[1].close()
        elif self._transport is not None:
            self._transport.close()  # a client would have closed it

    def key_for(self, text: str) -> str:
        return cache_key(self.endpoint, self.prompt.version, text, self.fields)

    def _request_options(self, text: str) -> dict[str, Any]:
        options: dict[str, Any] = {
            "model": self.endpoint.model,
            "temperature": self.endpoint.temperature,
            "max_tokens": self.endpoint.max_tokens,
        }
        if self.endpoint.seed is not None:
            options["seed"] = self.endpoint.seed
        schema = request_schema(self.endpoint, text, self.fields)
        if schema is not None:
            # llama.cpp turns this schema into a grammar; it overrides instructor's json_object.
            # The grammar also restricts gain values to the numbers this abstract states.
            options["extra_body"] = {"response_format": {"type": "json_object", "schema": schema}}
        elif self.endpoint.plain_json:
            # Overrides the schema instructor's json_schema mode would send: the format is
            # in the (short) prompt, and the answer is validated against the draft schema.
            options["extra_body"] = {"response_format": {"type": "json_object"}}
        return options

    def create_kwargs(self, text: str) -> dict[str, Any]:
        """The arguments instructor's ``create`` gets for this abstract (a Batch API line
        is built from the same)."""
        # No `context=`: with one, instructor renders every message as a Jinja
        # template, and '{{ 7*7 }}' or '{%' in an abstract would be evaluated.
        return {
            "response_model": answer_model(self.fields.draft_model),
            "messages": self.prompt.messages(text),
            **self._request_options(text),
        }

    def _reask_rule(self) -> dict[str, Any]:
        return {
            "stop": stop_after_attempt(1 + self.max_reasks),
            "retry": retry_if_exception_type((ValidationError, json.JSONDecodeError)),
            "reraise": True,
        }

    def extract(self, paper_id: str, text: str) -> Outcome:
        """Ask the model for the paper's fields; never raises for model or network trouble."""
        outcome = Outcome(paper_id=paper_id, cache_key=self.key_for(text))
        with call_log(self._secrets) as log:
            try:
                outcome.draft = self.client.chat.completions.create(
                    max_retries=Retrying(**self._reask_rule()), **self.create_kwargs(text)
                )
            except (IncompleteOutputException, InstructorRetryException,
                    openai.APIError) as error:
                self._failed(outcome, error, log)
            self._finish(outcome, log)
        return outcome

    @asynccontextmanager
    async def session(self, gate: RequestGate | None = None) -> AsyncIterator[Extractor]:
        """Open an async client for this event loop (paced by ``gate``) until the block
        ends; extract_async needs one."""
        http = build_async_http(self.endpoint, transport=self._transport,
                                policy=self._policy, gate=gate)
        raw = async_sdk_over(self.endpoint, http)
        self._async_raw = raw
        # Wrapped now, not at the first answer that needs it: wrapping (and the SDK's
        # resources it imports) takes about a second, which would stall the loop mid-run.
        self._async_client = wrap_async(raw, self.endpoint)
        self._fast = self._fast_path(raw, http)
        try:
            yield self
        finally:
            self._async_raw = None
            self._async_client = None
            self._fast = None
            await raw.close()

    def first_ask_body(self) -> dict[str, Any] | None:
        """The request body of a first ask for fastpath.PLACEHOLDER, as instructor builds
        it and the SDK sends it (``extra_body`` merged in); None when the body depends on
        the abstract beyond its text (a grammar of the abstract's numbers, or few-shot
        examples chosen for each abstract from a pool)."""
        if self.endpoint.constrain_json or self.prompt.pool is not None:
            return None
        create_kwargs = self.create_kwargs(PLACEHOLDER)
        _, kwargs = handle_response_model(create_kwargs.pop("response_model"),
                                          mode=MODES[self.endpoint.mode], **create_kwargs)
        extra = kwargs.pop("extra_body", None) or {}
        return {**kwargs, **extra}

    def _fast_path(self, raw: openai.AsyncOpenAI, http: httpx2.AsyncClient) -> FastPath | None:
        body = self.first_ask_body()
        if body is None:
            return None
        return FastPath.make(raw, http, body, self.endpoint.mode,
                             answer_model(self.fields.draft_model))

    async def extract_async(self, paper_id: str, text: str) -> Outcome:
        """extract() for an event loop, inside ``session()``."""
        if self._async_raw is None:
            raise RuntimeError("extract_async needs an open Extractor.session()")
        outcome = Outcome(paper_id=paper_id, cache_key=self.key_for(text))
        with call_log(self._secrets) as log:
            try:
                first = await self._fast.ask(text) if self._fast is not None else Handover()
                if isinstance(first, Handover):
                    with handing_over(first):
                        outcome.draft = await self._instructor_async().chat.completions.create(
                            max_retries=AsyncRetrying(**self._reask_rule()),
                            **self.create_kwargs(text),
                        )
                else:
                    outcome.draft = first  # type: ignore[assignment]
            except (IncompleteOutputException, InstructorRetryException,
                    openai.APIError) as error:
                self._failed(outcome, error, log)
            except (asyncio.CancelledError, KeyboardInterrupt):
                # Keep what was sent: the runner records it (calls rows, a failure).
                outcome.failure = INTERRUPTED
                self._finish(outcome, log)
                self.interrupted.append(outcome)
                raise
            self._finish(outcome, log)
        return outcome

    def _instructor_async(self) -> instructor.AsyncInstructor:
        """instructor around the session's client."""
        assert self._async_client is not None
        return self._async_client

    def take_interrupted(self) -> list[Outcome]:
        """The outcomes of extractions cut short by Ctrl-C since the last call."""
        taken, self.interrupted = self.interrupted, []
        return taken

    def _failed(self, outcome: Outcome, error: Exception, log: CallLog) -> None:
        if isinstance(error, IncompleteOutputException):
            outcome.failure = Failure(
                "request",
                "length",
                f"the answer hit max_tokens={self.endpoint.max_tokens} before the JSON ended",
            )
        elif isinstance(error, InstructorRetryException):
            self._after_retries(outcome, error, log)
        elif isinstance(error, openai.APIError):
            outcome.failure = _request_failure(error, log)

    def _after_retries(
        self, outcome: Outcome, error: InstructorRetryException, log: CallLog
    ) -> None:
        cause = error.__cause__
        if isinstance(cause, IncompleteOutputException):
            outcome.failure = Failure("request", "length", "the answer hit max_tokens")
            return
        if isinstance(cause, openai.APIError):
            outcome.failure = _request_failure(cause, log)
            return
        # Re-asks ran out: say why the last answer was refused.
        text = completion_text(error.last_completion)
        if text is not None:
            try:
                self.fields.draft_model.model_validate_json(text)
                reason, detail = "schema_violation", str(error)
            except ValidationError as last_error:
                reason = "invalid_json" if is_json_error(last_error) else "schema_violation"
                detail = str(last_error)
            except ValueError as last_error:
                reason, detail = "invalid_json", str(last_error)
        else:
            reason, detail = "no_answer", str(error)
        outcome.failure = Failure(
            "validation",
            reason,
            log.redact(f"after {error.n_attempts} attempt(s): {detail}")[:4000],
        )

    def _revalidate(self, outcome: Outcome, log: CallLog) -> None:
        """What is stored must validate again: a draft whose stored form fails the
        schema (a validator that changed it into something it refuses) is a failure."""
        if outcome.draft is None:
            return
        try:
            self.fields.draft_model.model_validate(
                outcome.draft.model_dump(mode="json", exclude_none=True))
        except ValidationError as error:
            outcome.draft = None
            outcome.failure = Failure("validation", "schema_violation", log.redact(
                f"the answer validates once but not as stored: {error}")[:4000])

    def _finish(self, outcome: Outcome, log: CallLog) -> None:
        self._revalidate(outcome, log)
        outcome.calls = list(log.records)
        outcome.asks = log.asks
        outcome.prompt_tokens = log.prompt_tokens
        outcome.completion_tokens = log.completion_tokens


def completion_text(completion: Any) -> str | None:
    try:
        message = completion.choices[0].message
    except (AttributeError, IndexError, TypeError):
        return None
    if getattr(message, "content", None):
        return str(message.content)
    tool_calls = getattr(message, "tool_calls", None)
    if tool_calls:
        return str(tool_calls[0].function.arguments)
    return None


def is_json_error(error: ValidationError) -> bool:
    return any(item.get("type") == "json_invalid" for item in error.errors())


def failure_reason(error: openai.APIError) -> str:
    """The short failure code of an endpoint error: timeout, connection_error, http_NNN."""
    if isinstance(error, openai.APITimeoutError):
        return "timeout"
    if isinstance(error, openai.APIConnectionError):
        return "connection_error"
    if isinstance(error, openai.APIStatusError):
        return f"http_{error.status_code}"
    return "api_error"


def _request_failure(error: openai.APIError, log: CallLog) -> Failure:
    if isinstance(error.__cause__, BudgetExceededError):
        return Failure("budget", "max_cost", f"not sent: {error.__cause__}")
    reason = failure_reason(error)
    attempts = sum(1 for r in log.records if r.ask == log.asks) or 1
    note = f"{log.note}; " if log.note else ""
    return Failure("request", reason,
                   log.redact(f"{note}after {attempts} attempt(s): {error}")[:4000])


def instructor_version() -> str:
    return str(getattr(instructor, "__version__", "?"))
