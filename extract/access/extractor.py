"""Ask the model for one abstract's draft, and say exactly what happened.

The model proposes a short draft (names, task phrases, numbers); code grounds it
(extract.assemble) when the result is recorded. The body of each ask and the reading of
each answer are request.py's; the HTTP goes through httpx2 and the retrying transport
(transport.py). An answer that does not validate is re-asked, at most ``max_reasks``
times, with the validation error (rare on llama.cpp, whose grammar holds it to the
schema).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator, Callable, Generator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import httpx2
from pydantic import ValidationError

from papersift.extract.access.limits import BudgetExceededError, RequestGate, answer_json
from papersift.extract.access.llm import (
    CallLog,
    Endpoint,
    RetryPolicy,
    build_async_http,
    build_http,
    call_log,
    chat_headers,
    chat_url,
    check_endpoint,
)
from papersift.extract.access.outcomes import Failure, Outcome, plain_draft
from papersift.extract.access.request import (
    Answer,
    AnswerParser,
    RequestBuilder,
    request_schema,
    serialise,
)
from papersift.extract.access.transport import AnswerTooLargeError
from papersift.extract.domain.fields import DEFAULT_FIELDS, FieldSet, prompt_for
from papersift.prompts import Prompt, sent_title
from papersift.schemas import PaperDraft
from papersift.schemas.paper import content_hash

if TYPE_CHECKING:
    from papersift.extract.access.batch_api import BatchApi

# Outcome and Failure live in outcomes.py (a row worker imports them without the SDK);
# they are still imported from here.
__all__ = [
    "INTERRUPTED", "Extractor", "Failure", "Outcome", "cache_key", "is_json_error",
    "plain_draft", "request_schema", "transport_failure",
]


INTERRUPTED = Failure("request", "interrupted",
                      "interrupted (Ctrl-C) while its request was in flight; rerun to "
                      "extract it")


class AskFailedError(Exception):
    """An abstract's asks ended without a draft, for the reason carried."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.reason)
        self.failure = failure


def cache_key(endpoint: Endpoint, prompt_version: str, text: str,
              fields: FieldSet = DEFAULT_FIELDS, title: str | None = None) -> str:
    """Fingerprint of everything that shapes the answer: endpoint, model, mode, sampling,
    prompt and schema versions, the grammar sent, the abstract's text and its title."""
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
    title = sent_title(title)
    if title:  # an untitled abstract keeps the key it had before titles were sent
        material["title_sha256"] = hashlib.sha256(title.encode("utf-8")).hexdigest()
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# One abstract's asks: yields each body to send, is sent each answer, returns the draft.
Conversation = Generator[dict[str, Any], httpx2.Response, PaperDraft]


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
        check_endpoint(endpoint)  # what building a client would raise, raised now
        self.endpoint = endpoint
        self.fields = fields
        self.prompt = prompt_for(prompt, fields)
        self.max_reasks = max_reasks
        self.builder = RequestBuilder(endpoint, self.prompt, fields)
        self.parser = AnswerParser(endpoint.mode, fields.draft_model)
        self._transport = transport
        self._policy = policy
        self._sleep = sleep
        self._url = chat_url(endpoint)
        self._headers = chat_headers(endpoint)
        self._sync: httpx2.Client | None = None
        self._async: httpx2.AsyncClient | None = None
        self._batch_api: BatchApi | None = None
        self._secrets = (endpoint.api_key,) if endpoint.api_key else ()
        self.interrupted: list[Outcome] = []

    @property
    def http(self) -> httpx2.Client:
        """The blocking HTTP client, built on first use (a run that only computes cache
        keys, or sends asynchronously, never needs one); the Batch API's client too."""
        if self._sync is None:
            self._sync = build_http(self.endpoint, transport=self._transport,
                                    policy=self._policy, sleep=self._sleep)
        return self._sync

    @property
    def batch_api(self) -> BatchApi:
        """The Batch API's files and batches over ``http``, built on first use."""
        if self._batch_api is None:
            from papersift.extract.access.batch_api import BatchApi  # the SDK: Batch runs only

            self._batch_api = BatchApi(self.endpoint, self.http)
        return self._batch_api

    def close(self) -> None:
        if self._batch_api is not None:
            self._batch_api.close()  # and the client under it
        elif self._sync is not None:
            self._sync.close()
        elif self._transport is not None:
            self._transport.close()  # a client would have closed it

    def key_for(self, text: str, title: str | None = None) -> str:
        return cache_key(self.endpoint, self.prompt.version, text, self.fields, title)

    def request_body(self, text: str, title: str | None = None) -> dict[str, Any]:
        """The first ask's body for this abstract (a Batch API line carries the same)."""
        return self.builder.body(text, title)

    def _request(self, client: httpx2.Client | httpx2.AsyncClient,
                 body: dict[str, Any]) -> httpx2.Request:
        return client.build_request("POST", self._url, content=serialise(body),
                                    headers=self._headers)

    def extract(self, paper_id: str, text: str, title: str | None = None) -> Outcome:
        """Ask the model for the paper's fields; never raises for model or network trouble."""
        outcome = Outcome(paper_id=paper_id, cache_key=self.key_for(text, title))
        with call_log(self._secrets) as log:
            conversation = self._conversation(text, log, title)
            try:
                body = next(conversation)
                while True:
                    try:
                        response = self.http.send(self._request(self.http, body))
                    except Exception as error:  # the network's or the budget's: a failure
                        raise AskFailedError(transport_failure(error, log)) from error
                    body = conversation.send(response)
            except StopIteration as done:
                outcome.draft = done.value
            except AskFailedError as failed:
                outcome.failure = failed.failure
            finally:
                conversation.close()
            self._finish(outcome, log)
        return outcome

    @asynccontextmanager
    async def session(self, gate: RequestGate | None = None) -> AsyncIterator[Extractor]:
        """Open an async client for this event loop (paced by ``gate``) until the block
        ends; extract_async needs one."""
        client = build_async_http(self.endpoint, transport=self._transport,
                                  policy=self._policy, gate=gate)
        self._async = client
        try:
            yield self
        finally:
            self._async = None
            await client.aclose()

    async def extract_async(self, paper_id: str, text: str,
                            title: str | None = None) -> Outcome:
        """extract() for an event loop, inside ``session()``."""
        client = self._async
        if client is None:
            raise RuntimeError("extract_async needs an open Extractor.session()")
        outcome = Outcome(paper_id=paper_id, cache_key=self.key_for(text, title))
        with call_log(self._secrets) as log:
            conversation = self._conversation(text, log, title)
            try:
                body = next(conversation)
                while True:
                    try:
                        response = await client.send(self._request(client, body))
                    except Exception as error:  # the network's or the budget's: a failure
                        raise AskFailedError(transport_failure(error, log)) from error
                    body = conversation.send(response)
            except StopIteration as done:
                outcome.draft = done.value
            except AskFailedError as failed:
                outcome.failure = failed.failure
            except (asyncio.CancelledError, KeyboardInterrupt):
                # Keep what was sent: the runner records it (calls rows, a failure).
                outcome.failure = INTERRUPTED
                self._finish(outcome, log)
                self.interrupted.append(outcome)
                raise
            finally:
                conversation.close()
            self._finish(outcome, log)
        return outcome

    def _conversation(self, text: str, log: CallLog, title: str | None = None) -> Conversation:
        """The asks of one abstract: the first ask, then a re-ask for each answer that
        does not validate while asks are left."""
        body = self.builder.body(text, title)
        asks = 1 + max(0, self.max_reasks)
        refused: Answer | None = None  # the last answer with content that did not validate
        for ask in range(1, asks + 1):
            response = yield body
            answer = self._read(response, ask, log)
            if answer.draft is not None:
                return answer.draft  # type: ignore[return-value]
            assert answer.error is not None
            log.mark_last_invalid(answer.error)
            if answer.problem == "invalid":
                refused = answer
            if ask == asks:
                raise AskFailedError(self._refused(refused or answer, ask, log))
            if answer.problem == "invalid":
                body = self.builder.reask(body, answer, answer.error)
            # else a JSON answer that did not arrive whole: the same body is asked again
        raise AssertionError("unreachable: the last ask returns or raises")

    def _read(self, response: httpx2.Response, ask: int, log: CallLog) -> Answer:
        """The answer of one ask; raises AskFailedError for one that ends the asking."""
        if not response.is_success:
            raise AskFailedError(status_failure(response, log))
        data = answer_json(response)
        if data is None and "json" in response.headers.get("content-type", ""):
            return Answer(problem="unreadable", error=ValueError(
                f"the answer's JSON body does not decode ({len(response.content):,} bytes)"))
        answer = self.parser.parse(data)
        if answer.problem == "length":
            raise AskFailedError(Failure(
                "request", "length",
                f"the answer hit max_tokens={self.endpoint.max_tokens} before the JSON ended"))
        if answer.problem == "no_answer":
            assert answer.error is not None
            log.mark_last_invalid(answer.error)
            raise AskFailedError(Failure("validation", "no_answer", log.redact(
                f"after {ask} attempt(s): {answer.error}")[:4000]))
        return answer

    @staticmethod
    def _refused(answer: Answer, asks: int, log: CallLog) -> Failure:
        """Asks ran out: why the last answer with content was refused (no_answer when
        none had any)."""
        error = answer.error
        if answer.problem == "unreadable":
            reason = "no_answer"
        elif isinstance(error, ValidationError) and is_json_error(error):
            reason = "invalid_json"
        else:
            reason = "schema_violation"
        return Failure("validation", reason,
                       log.redact(f"after {asks} attempt(s): {error}")[:4000])

    def take_interrupted(self) -> list[Outcome]:
        """The outcomes of extractions cut short by Ctrl-C since the last call."""
        taken, self.interrupted = self.interrupted, []
        return taken

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


def is_json_error(error: ValidationError) -> bool:
    return any(item.get("type") == "json_invalid" for item in error.errors())


def status_message(response: httpx2.Response) -> str:
    """What an error answer says, as the failure's detail has always put it."""
    text = response.text.strip()
    try:
        return f"Error code: {response.status_code} - {json.loads(text)}"
    except ValueError:
        return text or f"Error code: {response.status_code}"


def _attempts(log: CallLog) -> str:
    attempts = sum(1 for r in log.records if r.ask == log.asks) or 1
    note = f"{log.note}; " if log.note else ""
    return f"{note}after {attempts} attempt(s)"


def status_failure(response: httpx2.Response, log: CallLog) -> Failure:
    """An error status that the transport's retries did not get past."""
    return Failure("request", f"http_{response.status_code}",
                   log.redact(f"{_attempts(log)}: {status_message(response)}")[:4000])


def transport_failure(error: BaseException, log: CallLog) -> Failure:
    """A request that got no answer: over budget, timed out, too large, or unreachable."""
    if isinstance(error, BudgetExceededError):
        return Failure("budget", "max_cost", f"not sent: {error}")
    if isinstance(error, httpx2.TimeoutException):
        reason, said = "timeout", "Request timed out."
    elif isinstance(error, AnswerTooLargeError):
        reason, said = "answer_too_large", str(error)
    elif isinstance(error, httpx2.TransportError):
        reason, said = "connection_error", "Connection error."
    else:
        reason, said = "connection_error", f"{type(error).__name__}: {error}"
    return Failure("request", reason, log.redact(f"{_attempts(log)}: {said}")[:4000])
