"""The OpenAI Batch API's files and batches, through the SDK's public client.

Runs (extract/runs/batch.py) use :class:`BatchApi` and never import the SDK: its errors
arrive as :class:`BatchApiError`, which says why in the live path's terms (timeout,
connection_error, http_NNN). The requests go through the extractor's retrying client.
"""

from __future__ import annotations

from typing import Any

import httpx2
import openai

from papersift.errors import PapersiftError
from papersift.extract.access.llm import Endpoint


def failure_reason(error: openai.APIError) -> str:
    """The short failure code of an SDK error: timeout, connection_error, http_NNN."""
    if isinstance(error, openai.APITimeoutError):
        return "timeout"
    if isinstance(error, openai.APIConnectionError):
        return "connection_error"
    if isinstance(error, openai.APIStatusError):
        return f"http_{error.status_code}"
    return "api_error"


class BatchApiError(PapersiftError):
    """The provider refused or did not answer a files or batches request."""

    def __init__(self, error: openai.APIError | str) -> None:
        super().__init__(str(error))
        self.reason = failure_reason(error) if isinstance(error, openai.APIError) else "error"
        self.status_code: int | None = getattr(error, "status_code", None)
        self.message = error.message if isinstance(error, openai.APIError) else error


class BatchApi:
    """Upload request files, create, list, follow and cancel batches, read result files.
    Every method raises BatchApiError for what the provider or the network says."""

    def __init__(self, endpoint: Endpoint, http: httpx2.Client) -> None:
        self._sdk = openai.OpenAI(base_url=endpoint.base_url,
                                     api_key=endpoint.api_key or "not-needed",
                                     max_retries=0, timeout=endpoint.timeout_s,
                                     http_client=http)

    def upload(self, name: str, content: bytes) -> str:
        """The id of a new batch input file holding ``content``."""
        try:
            return self._sdk.files.create(file=(name, content, "application/jsonl"),
                                             purpose="batch").id
        except openai.APIError as error:
            raise BatchApiError(error) from error

    def create(self, input_file_id: str, endpoint: str, window: str,
               metadata: dict[str, str]) -> Any:
        try:
            return self._sdk.batches.create(input_file_id=input_file_id,
                                               endpoint=endpoint,  # type: ignore[arg-type]
                                               completion_window=window,  # type: ignore[arg-type]
                                               metadata=metadata)
        except openai.APIError as error:
            raise BatchApiError(error) from error

    def newest(self, limit: int) -> list[Any]:
        """The provider's newest ``limit`` batches."""
        try:
            return list(self._sdk.batches.list(limit=limit).data)
        except openai.APIError as error:
            raise BatchApiError(error) from error

    def retrieve(self, batch_id: str) -> Any:
        try:
            return self._sdk.batches.retrieve(batch_id)
        except openai.APIError as error:
            raise BatchApiError(error) from error

    def cancel(self, batch_id: str) -> Any:
        try:
            return self._sdk.batches.cancel(batch_id)
        except openai.APIError as error:
            raise BatchApiError(error) from error

    def content(self, file_id: str) -> str:
        """A file's text (a batch's output or error lines)."""
        try:
            return self._sdk.files.content(file_id).text
        except openai.APIError as error:
            raise BatchApiError(error) from error

    def close(self) -> None:
        self._sdk.close()
