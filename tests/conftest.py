"""Shared fixtures. Every test runs in a clean environment: no API keys, no endpoint
settings from the developer's shell, and a temporary working directory. The fakes live
in papersift.testing (ScriptedServer, ok and chat_completion are re-exported here)."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from papersift.testing.bodies import chat_completion
from papersift.testing.browser import browser_session
from papersift.testing.corpus import CORPUS, CORPUS_RECORDING, RECORDINGS, ROOT
from papersift.testing.mock import ScriptedServer, ok

# CI runs every property test on the same examples (derandomized), so a stop lands or not
# on its own code rather than on the draw; locally they draw new examples each run.
settings.register_profile("ci", derandomize=True)
if os.environ.get("PAPERSIFT_HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["PAPERSIFT_HYPOTHESIS_PROFILE"])

# A suite started in the background of a script (`cmd &`, nohup) inherits SIGINT ignored,
# and so would every papersift process the Ctrl-C tests start: Python would not turn their
# SIGINT into KeyboardInterrupt. A handler of our own is reset to the default at exec, so
# those children start as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

__all__ = ["CORPUS", "CORPUS_RECORDING", "RECORDINGS", "ROOT", "ScriptedServer",
           "chat_completion", "ok", "run_one_abstract", "stored_rows"]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
                 "PAPERSIFT_DB", "PAPERSIFT_BASE_URL", "PAPERSIFT_MODEL_DIR", "PAPERSIFT_ALIASES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PAPERSIFT_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture
def quiet_instructor() -> Iterator[None]:
    """instructor's retry logging silenced, as the CLI does (for runs full of faults)."""
    logger = logging.getLogger("instructor")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    yield
    logger.setLevel(level)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """One headless Chromium for every browser test of the session (starting one costs
    seconds); skipped with the reason where none can start."""
    yield from browser_session(1280, 1000)


@pytest.fixture(scope="module")
def browser(chromium: Any, request: pytest.FixtureRequest) -> Any:
    """The shared Chromium sized for this module (its BROWSER_SIZE, else 1280 x 1000)."""
    width, height = getattr(request.module, "BROWSER_SIZE", (1280, 1000))
    chromium.set_window_size(width, height)
    return chromium


@pytest.fixture
def corpus() -> Path:
    return CORPUS


@pytest.fixture(scope="session")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled corpus replayed from the real recording into a warehouse, built once per
    session; tests only read it."""
    from papersift.testing.corpus import replay_corpus

    db = tmp_path_factory.mktemp("corpus") / "corpus.duckdb"
    replay_corpus(db)
    return db


def run_one_abstract(tmp_path: Path, title: str, abstract: str, draft: dict[str, Any]) -> Path:
    """A warehouse holding one titled abstract, extracted from ``draft`` served at the HTTP
    boundary (a hand-written fake answer) by a fake endpoint; its path."""
    from papersift.extract.access.llm import Endpoint
    from papersift.extract.interface.app import RunSettings, run_inputs

    corpus = tmp_path / "one.txt"
    corpus.write_text(f"{title}\n\n{abstract}\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    server = ScriptedServer([ok(draft)])
    run_inputs([str(corpus)], RunSettings(db=db, use_cache=False), transport=server.transport(),
               endpoint=Endpoint(base_url="http://fake.test/v1", model="gpt-4o-mini",
                                 api_key="sk-test"))
    return db


def stored_rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows of a query on a warehouse, through the read-only path `papersift sql` uses."""
    from papersift.warehouse.query import run_sql

    return run_sql(db, sql).rows


@pytest.fixture
def db(corpus_db: Path, tmp_path: Path) -> Path:
    """A copy of the replayed corpus's warehouse (the serve tests'; a module may define its
    own ``db``)."""
    from papersift.testing.serving import copy_db

    return copy_db(corpus_db, tmp_path)


@pytest.fixture
def client(db: Path) -> Iterator[Any]:
    """An in-process client of `papersift serve` on ``db`` (reviewer 'tester', talking as
    127.0.0.1:8765)."""
    from papersift.extract.interface.serve import create_app
    from papersift.testing.serving import local_client, replay_config

    with local_client(create_app(replay_config(db, reviewer="tester"))) as test_client:
        yield test_client
