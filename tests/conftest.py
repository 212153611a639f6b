"""Shared fixtures. Every test runs in a clean environment: no API keys, no endpoint
settings from the developer's shell, and a temporary working directory."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "examples" / "neurips-2026"
RECORDINGS = ROOT / "tests" / "recordings"
CORPUS_RECORDING = RECORDINGS / "neurips-2026.qwen2.5-coder-1.5b-q4_k_m.json"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
                 "PAPERSIFT_DB", "PAPERSIFT_BASE_URL", "PAPERSIFT_MODEL_DIR", "PAPERSIFT_ALIASES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PAPERSIFT_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.chdir(tmp_path)
    yield


def chat_completion(content: str, *, finish_reason: str = "stop", prompt_tokens: int = 100,
                    completion_tokens: int = 50) -> dict[str, Any]:
    """A hand-written OpenAI chat-completion body (used only for scripted fault tests)."""
    return {
        "id": "chatcmpl-handwritten",
        "object": "chat.completion",
        "created": 0,
        "model": "handwritten-fake",
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


Step = httpx2.Response | Exception | Callable[[httpx2.Request], httpx2.Response]


class ScriptedServer:
    """Hand-written fake endpoint: answers requests with a script of responses or errors,
    and keeps every request it saw (labelled: not a recording)."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if not self.steps:
            raise AssertionError(f"unexpected extra request #{len(self.requests)}")
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        if callable(step) and not isinstance(step, httpx2.Response):
            return step(request)
        return step

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self)

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]


def ok(content: dict[str, Any] | str, **kwargs: Any) -> httpx2.Response:
    text = content if isinstance(content, str) else json.dumps(content)
    return httpx2.Response(200, json=chat_completion(text, **kwargs))


@pytest.fixture
def corpus() -> Path:
    return CORPUS


@pytest.fixture(scope="session")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled corpus replayed from the real recording into a warehouse, built once per
    session; tests only read it."""
    from tests.corpus_warehouse import replay_corpus

    db = tmp_path_factory.mktemp("corpus") / "corpus.duckdb"
    replay_corpus(db)
    return db


def stored_rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows of a query on a warehouse, through the read-only path `papersift sql` uses."""
    from papersift.warehouse.query import run_sql

    return run_sql(db, sql).rows
