"""The DuckDB warehouse: migrations, bulk writes, read-only queries and exports.

Never imports an LLM client (see the import contracts in pyproject.toml).
"""

from papersift.warehouse.db import WarehouseError, connect, migrate
from papersift.warehouse.store import Warehouse

__all__ = ["Warehouse", "WarehouseError", "connect", "migrate"]
