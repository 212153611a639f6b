"""Shared pieces of the serve tests: a writable copy of the replayed corpus warehouse,
the app over it (extraction answered by the real recording), and a real server process."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient

from papersift.extract.access.recording import Recording, ReplayTransport
from papersift.extract.interface.serve import ServeConfig
from papersift.extract.interface.serve.defaults import DEFAULT_PORT
from papersift.testing.corpus import CORPUS_RECORDING, recorded_endpoint


def copy_db(corpus_db: Path, folder: Path) -> Path:
    """A writable copy of the session's corpus warehouse."""
    db = folder / "review.duckdb"
    shutil.copy(corpus_db, db)
    return db


def replay_config(db: Path, **fields: Any) -> ServeConfig:
    """A server config whose extractions are answered by the recorded local model."""
    recording = Recording.load(CORPUS_RECORDING)
    return ServeConfig(db=db, transport=ReplayTransport(recording),
                       endpoint=recorded_endpoint(recording), **fields)


# The address tests talk to an app in-process: a loopback name with the default port,
# the only Host a server without a token answers (security.py).
LOCAL_URL = f"http://127.0.0.1:{DEFAULT_PORT}"


def local_client(app: Any) -> TestClient:
    """A TestClient that names the server as a browser on this machine would."""
    return TestClient(app, base_url=LOCAL_URL)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def server_process(db: Path, *args: str, reviewer: str = "ann",
                   start_s: float = 60.0) -> Iterator[str]:
    """`papersift serve` in a child process on a free loopback port; yields its URL and
    stops it (SIGINT, as Ctrl-C) afterwards."""
    port = free_port()
    command = [sys.executable, "-m", "papersift", "serve", "--db", str(db), "--port",
               str(port), "--reviewer", reviewer, *args]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_s
        while True:
            if child.poll() is not None:
                said = child.stdout.read() if child.stdout else ""
                raise RuntimeError(f"papersift serve exited: {said}")
            try:
                if httpx.get(url + "/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"papersift serve did not answer within {start_s:g} s")
            time.sleep(0.2)
        yield url
    finally:
        child.send_signal(signal.SIGINT)
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()
