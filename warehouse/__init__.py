"""The DuckDB warehouse: migrations, bulk writes, read-only queries and exports.

Never imports an LLM client (see the import contracts in pyproject.toml).
"""

from warehouse.db import WarehouseError, connect, migrate
from warehouse.store import Warehouse

__all__ = ["Warehouse", "WarehouseError", "connect", "migrate"]
