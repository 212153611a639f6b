"""Running the app on uvicorn, and the file that says which server holds a warehouse."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import uvicorn

from papersift.extract.interface.serve.app import create_app
from papersift.extract.interface.serve.config import ServeConfig
from papersift.warehouse.db import server_file


def serve(config: ServeConfig) -> None:
    """Serve until interrupted; the warehouse is held (and named as held) meanwhile."""
    config = config.checked()
    app = create_app(config)
    marker = server_file(config.db)
    marker.write_text(json.dumps({"pid": os.getpid(), "url": config.url,
                                  "argv": " ".join(sys.argv)[:200]}), encoding="utf-8")
    try:
        print(f"papersift serve: {config.url}/ (reviews, queue) · {config.url}/api "
              f"(OpenAPI: /api/openapi.json) · warehouse {config.db}"
              + (" · read-only" if config.read_only else "")
              + (" · token required" if config.token else ""), flush=True)
        uvicorn.run(app, host=config.host, port=config.port, log_level="warning",
                    lifespan="on")
    finally:
        _remove(marker)


def _remove(marker: Path) -> None:
    try:
        owner = json.loads(marker.read_text(encoding="utf-8")).get("pid")
    except (OSError, ValueError):
        return
    if owner == os.getpid():
        marker.unlink(missing_ok=True)
