"""Running the app on uvicorn, and the file that says which server holds a warehouse."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from types import FrameType

import uvicorn

from papersift.extract.interface.serve.app import create_app
from papersift.extract.interface.serve.config import ServeConfig
from papersift.warehouse.db import describe_command, server_file


def serve(config: ServeConfig) -> None:
    """Serve until interrupted; the warehouse is held (and named as held) meanwhile."""
    config = config.checked()
    app = create_app(config)
    marker = server_file(config.db)
    written = _announce(marker, config)
    # uvicorn stops gracefully on SIGTERM, then raises it again; with the default handler
    # that killed the process before the marker was removed (a stale *.serve.json)
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        print(f"papersift serve: {config.url}/ (reviews, queue) · {config.url}/api "
              f"(OpenAPI: /api/openapi.json) · warehouse {config.db}"
              + (" · read-only" if config.read_only else "")
              + (" · token required" if config.token else ""), flush=True)
        uvicorn.run(app, host=config.host, port=config.port, log_level="warning",
                    lifespan="on")
    finally:
        signal.signal(signal.SIGTERM, previous)
        if written:
            _remove(marker)


def _terminated(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _announce(marker: Path, config: ServeConfig) -> bool:
    """Write who holds the warehouse: pid, URL and the command's name only (never its
    arguments: --token may be among them), readable by its owner only. A read-only
    server on a read-only disk goes on without it (it holds no write lock to explain)."""
    info = {"pid": os.getpid(), "url": config.url, "argv": describe_command(sys.argv)}
    try:
        marker.unlink(missing_ok=True)  # a stale one may be another user's, or world-readable
        handle = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(info, out)
    except OSError as error:
        if not config.read_only:
            raise
        print(f"papersift serve: {marker} not written ({error.strerror}); serving "
              "read-only anyway", file=sys.stderr, flush=True)
        return False
    return True


def _remove(marker: Path) -> None:
    try:
        owner = json.loads(marker.read_text(encoding="utf-8")).get("pid")
    except (OSError, ValueError):
        return
    if owner == os.getpid():
        marker.unlink(missing_ok=True)
