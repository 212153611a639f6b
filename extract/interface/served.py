"""Reading a warehouse that `papersift serve` holds: DuckDB lets one process write a
file and no other open it meanwhile, so `papersift sql` and `query` ask the server to
publish a read-only snapshot (POST /api/snapshot) and read that (issue 28: a review
kept everyone else out). Without a running server, the warehouse itself is read."""

from __future__ import annotations

import json
import os
from pathlib import Path

from papersift.extract.access.http import post_json
from papersift.warehouse.db import server_file

TOKEN_ENV = "PAPERSIFT_TOKEN"  # as serve/config.py: the server's token, if it has one


def readable(db: Path) -> Path:
    """The file to read ``db``'s data from: the snapshot a running server publishes, or
    ``db`` itself (no server, a read-only one, or one that does not answer)."""
    try:
        info = json.loads(server_file(db).read_text(encoding="utf-8"))
        url = str(info["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return db
    headers = {"content-type": "application/json"}
    if os.environ.get(TOKEN_ENV):
        headers["authorization"] = f"Bearer {os.environ[TOKEN_ENV]}"
    answer = post_json(f"{url}/api/snapshot", headers=headers, timeout=120)
    try:
        path = Path(answer["path"]) if isinstance(answer, dict) else None
    except (KeyError, TypeError):
        return db
    return path if path is not None and path.exists() else db
