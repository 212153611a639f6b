"""`papersift serve`: the review UI and the JSON API over one warehouse, on uvicorn.

The server holds the warehouse's one read-write connection for as long as it runs, so
extractions started through its API and reviewers' corrections are written by this one
process; another `papersift run` on the same file is told which server holds it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from papersift.extract.interface.serve.app import create_app
    from papersift.extract.interface.serve.config import ServeConfig, ServeError

__all__ = ["ServeConfig", "ServeError", "create_app"]
# Loaded on first use: the CLI reads serve.defaults without loading FastAPI.
_HOMES = {"create_app": "app", "ServeConfig": "config", "ServeError": "config"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
