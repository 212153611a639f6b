"""The Batch API's files: one request line per abstract in, one result line per answer out.

Each line's body is the live path's first ask for that abstract (the extractor's
RequestBuilder), and each answer is read by the live path's AnswerParser, so requests
and validation are the live path's; only the re-ask is missing (a rerun asks again).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final

from pydantic import ValidationError

from papersift.errors import PapersiftError
from papersift.extract.access.calls import finish_reason_of, token_count
from papersift.extract.access.extractor import Extractor, Failure, Outcome, is_json_error
from papersift.extract.access.llm import CallRecord, redact
from papersift.warehouse.batches import BatchRecord, BatchRequest

BATCH_URL: Final = "/v1/chat/completions"
COMPLETION_WINDOW: Final = "24h"
# OpenAI's limits per batch: 50,000 requests and a 200 MB input file.
MAX_REQUESTS = 50_000
MAX_BYTES = 190_000_000
# Why the requests of a batch that ended without an answer for them failed.
UNANSWERED = {
    "expired": "batch_expired",
    "cancelled": "batch_cancelled",
    "failed": "batch_failed",
    "completed": "batch_missing",
}


class BatchError(PapersiftError):
    """A batch cannot be submitted, resumed or cancelled as asked."""


# -- requests ------------------------------------------------------------------------------


def request_line(custom_id: str, body: dict[str, Any]) -> bytes:
    line = {"custom_id": custom_id, "method": "POST", "url": BATCH_URL, "body": body}
    return json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def chunks(lines: Iterator[tuple[BatchRequest, bytes]], max_requests: int,
           max_bytes: int) -> Iterator[list[tuple[BatchRequest, bytes]]]:
    """Group request lines into input files within the provider's limits."""
    chunk: list[tuple[BatchRequest, bytes]] = []
    size = 0
    for request, line in lines:
        if len(line) > max_bytes:
            raise BatchError(f"the request for {request.paper_id} is {len(line):,} bytes, "
                             f"over the {max_bytes:,}-byte batch file limit")
        if chunk and (len(chunk) >= max_requests or size + len(line) > max_bytes):
            yield chunk
            chunk, size = [], 0
        chunk.append((request, line))
        size += len(line)
    if chunk:
        yield chunk


# -- answers -------------------------------------------------------------------------------


class ResultReader:
    """Turns one line of a batch's output or error file into an :class:`Outcome`, read
    and validated as the live path reads an answer."""

    def __init__(self, extractor: Extractor) -> None:
        self.endpoint = extractor.endpoint
        self.parser = extractor.parser
        self.secrets = (self.endpoint.api_key,) if self.endpoint.api_key else ()

    def outcome(self, request: BatchRequest, entry: dict[str, Any] | None, *,
                batch: BatchRecord, unanswered: str, detail: str) -> Outcome:
        outcome = Outcome(paper_id=request.paper_id, cache_key=request.cache_key)
        if entry is None:
            outcome.failure = Failure("request", unanswered, detail)
            return outcome
        response = entry.get("response")
        response = response if isinstance(response, dict) else {}
        status = response.get("status_code")
        body = response.get("body")
        status = status if type(status) is int and 0 < status < 1000 else None
        record = CallRecord(ask=1, attempt=1, status="ok", started=batch.submitted,
                            http_status=status)
        outcome.calls, outcome.asks = [record], 1
        if status != 200 or not isinstance(body, dict):
            record.status = "http_error"
            record.error = self._redact(json.dumps(entry.get("error") or body)[:500])
            code = (entry.get("error") or {}).get("code")
            reason = (f"batch_http_{status}" if isinstance(status, int)
                      else f"batch_{code}" if isinstance(code, str) and code.isidentifier()
                      else "batch_error")
            outcome.failure = Failure("request", reason, f"{batch.batch_id}: {record.error}")
            return outcome
        usage = body.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        record.prompt_tokens = token_count(usage.get("prompt_tokens"))
        record.completion_tokens = token_count(usage.get("completion_tokens"))
        outcome.prompt_tokens = record.prompt_tokens or 0
        outcome.completion_tokens = record.completion_tokens or 0
        choices = body.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        first = first if isinstance(first, dict) else {}
        record.finish_reason = finish_reason_of(first.get("finish_reason"))
        if record.finish_reason == "length":
            record.status = "length"
        answer = self.parser.parse(body)
        if answer.problem == "length":
            outcome.failure = Failure(
                "request", "length",
                f"the answer hit max_tokens={self.endpoint.max_tokens} before the JSON ended")
        elif answer.draft is not None:
            outcome.draft = answer.draft  # type: ignore[assignment]
        else:
            error = answer.error
            record.status = "invalid"
            record.error = self._redact(str(error)[:2000])
            reason = ("invalid_json" if isinstance(error, ValidationError)
                      and is_json_error(error) else "schema_violation")
            if answer.problem == "no_answer":
                reason = "no_answer"
            outcome.failure = Failure("validation", reason, self._redact(str(error))[:4000])
        return outcome

    def _redact(self, text: str) -> str:
        return redact(text, self.secrets)


class ResultLines(dict[str, dict[str, Any]]):
    """Result lines by custom_id, and how many lines could not be read as one."""

    unreadable: int = 0


def read_jsonl(text: str) -> ResultLines:
    """custom_id -> result line; lines that are not JSON objects with a custom_id are
    skipped and counted (their requests then count as unanswered, and say so)."""
    found = ResultLines()
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            found.unreadable += 1
            continue
        if isinstance(entry, dict) and isinstance(entry.get("custom_id"), str):
            found.setdefault(entry["custom_id"], entry)
        else:
            found.unreadable += 1
    return found
