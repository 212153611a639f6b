"""The DuckDB warehouse: migrations, bulk writes, read-only queries and exports.

Never imports an LLM client (see the import contracts in pyproject.toml). The names
below load on first use, so importing a light submodule (``choices``) loads no DuckDB.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from papersift.warehouse.db import DatabaseError, WarehouseError, connect, migrate
    from papersift.warehouse.repository import Repository, open_repository
    from papersift.warehouse.store import Warehouse

__all__ = ["DatabaseError", "Repository", "Warehouse", "WarehouseError", "connect",
           "is_database_error", "migrate", "open_repository"]
_HOMES = {"Warehouse": "store", "WarehouseError": "db", "connect": "db", "migrate": "db",
          "DatabaseError": "db", "Repository": "repository", "open_repository": "repository"}


def is_database_error(error: BaseException) -> bool:
    """Whether DuckDB raised ``error``; DuckDB is not loaded to tell (if it raised, it is)."""
    duckdb = sys.modules.get("duckdb")
    return duckdb is not None and isinstance(error, duckdb.Error)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
