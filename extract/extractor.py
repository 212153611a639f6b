"""Extract the v1 fields of one abstract through instructor, and say exactly what happened.

The model proposes; code verifies. Strict validation (quotes found in the abstract,
numbers found in their quotes) drives instructor's re-asks. When re-asks run out and the
last answer is only ungrounded, it is kept *leniently*: parsed without the grounding
checks, stored with its items flagged, never presented as grounded.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import instructor
import openai
from instructor.core.exceptions import IncompleteOutputException, InstructorRetryException
from pydantic import ValidationError
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt

from extract.grounding import locator
from extract.llm import CallLog, CallRecord, Endpoint, RetryPolicy, build_client, call_log
from prompts import Prompt
from schemas import PaperExtraction, json_schema, schema_version

# Where the abstract goes in the messages instructor templates (see Extractor.extract).
ABSTRACT_VARIABLE = "{{ abstract }}"


@dataclass(frozen=True)
class Failure:
    stage: str  # request / validation
    reason: str  # short code
    detail: str


@dataclass
class Outcome:
    """What one abstract's extraction produced: fields, or a failure, plus every attempt."""

    paper_id: str
    cache_key: str
    extraction: PaperExtraction | None = None
    lenient: bool = False
    failure: Failure | None = None
    calls: list[CallRecord] = field(default_factory=list)
    asks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    from_cache: bool = False

    @property
    def ok(self) -> bool:
        return self.extraction is not None


def cache_key(endpoint: Endpoint, prompt_version: str, text: str) -> str:
    """Fingerprint of everything that shapes the answer: endpoint, model, mode, sampling,
    prompt and schema versions, and the abstract's text."""
    material = {
        "endpoint": endpoint.cache_identity,
        "model": endpoint.model,
        "mode": endpoint.mode,
        "sampling": endpoint.sampling(),
        "prompt_version": prompt_version,
        "schema_version": schema_version(),
        "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Extractor:
    """Extracts papers through one endpoint; safe to call from several threads."""

    def __init__(
        self,
        endpoint: Endpoint,
        prompt: Prompt,
        *,
        max_reasks: int = 2,
        transport: httpx2.BaseTransport | None = None,
        policy: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.endpoint = endpoint
        self.prompt = prompt
        self.max_reasks = max_reasks
        self.client, self.raw_client = build_client(
            endpoint, transport=transport, policy=policy, sleep=sleep
        )
        self._secrets = (endpoint.api_key,) if endpoint.api_key else ()

    def close(self) -> None:
        self.raw_client.close()

    def key_for(self, text: str) -> str:
        return cache_key(self.endpoint, self.prompt.version, text)

    def _request_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {
            "model": self.endpoint.model,
            "temperature": self.endpoint.temperature,
            "max_tokens": self.endpoint.max_tokens,
        }
        if self.endpoint.seed is not None:
            options["seed"] = self.endpoint.seed
        if self.endpoint.constrain_json:
            # llama.cpp turns this schema into a grammar; it overrides instructor's json_object.
            options["extra_body"] = {
                "response_format": {"type": "json_object", "schema": json_schema()}
            }
        return options

    def extract(self, paper_id: str, text: str) -> Outcome:
        """Ask the model for the paper's fields; never raises for model or network trouble."""
        outcome = Outcome(paper_id=paper_id, cache_key=self.key_for(text))
        with call_log(self._secrets) as log:
            try:
                outcome.extraction = self.client.chat.completions.create(
                    response_model=PaperExtraction,
                    # instructor renders every message as a Jinja template with the
                    # context: the abstract goes in as a variable, so '{{ 7*7 }}', '{%' or
                    # CRLF in it reach the model verbatim instead of being evaluated.
                    messages=self.prompt.messages(ABSTRACT_VARIABLE),  # type: ignore[arg-type]
                    max_retries=Retrying(
                        stop=stop_after_attempt(1 + self.max_reasks),
                        retry=retry_if_exception_type((ValidationError, json.JSONDecodeError)),
                        reraise=True,
                    ),
                    context={"locate": locator(text), "abstract": text},
                    **self._request_options(),
                )
            except IncompleteOutputException:
                outcome.failure = Failure(
                    "request",
                    "length",
                    f"the answer hit max_tokens={self.endpoint.max_tokens} before the JSON ended",
                )
            except InstructorRetryException as error:
                self._after_retries(outcome, error, log)
            except openai.APIError as error:
                outcome.failure = _request_failure(error, log)
            self._finish(outcome, log)
        return outcome

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
        # Re-asks ran out. Keep the last answer if only grounding checks failed.
        text = _completion_text(error.last_completion)
        if text is not None:
            try:
                outcome.extraction = PaperExtraction.model_validate_json(text)
                outcome.lenient = True
                return
            except ValidationError as lenient_error:
                reason = "invalid_json" if _is_json_error(lenient_error) else "schema_violation"
                detail = str(lenient_error)
            except ValueError as lenient_error:
                reason, detail = "invalid_json", str(lenient_error)
        else:
            reason, detail = "no_answer", str(error)
        outcome.failure = Failure(
            "validation",
            reason,
            log.redact(f"after {error.n_attempts} attempt(s): {detail}")[:4000],
        )

    def _finish(self, outcome: Outcome, log: CallLog) -> None:
        outcome.calls = list(log.records)
        outcome.asks = log.asks
        outcome.prompt_tokens = log.prompt_tokens
        outcome.completion_tokens = log.completion_tokens


def _completion_text(completion: Any) -> str | None:
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


def _is_json_error(error: ValidationError) -> bool:
    return any(item.get("type") == "json_invalid" for item in error.errors())


def _request_failure(error: openai.APIError, log: CallLog) -> Failure:
    if isinstance(error, openai.APITimeoutError):
        reason = "timeout"
    elif isinstance(error, openai.APIConnectionError):
        reason = "connection_error"
    elif isinstance(error, openai.APIStatusError):
        reason = f"http_{error.status_code}"
    else:
        reason = "api_error"
    attempts = sum(1 for r in log.records if r.ask == log.asks) or 1
    return Failure("request", reason, log.redact(f"after {attempts} attempt(s): {error}")[:4000])


def instructor_version() -> str:
    return str(getattr(instructor, "__version__", "?"))
