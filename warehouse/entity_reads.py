"""The reads behind `papersift entities list|show` and the lookups of an entity by id or by
one of its keys; the writes of a pass are warehouse.entities'."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from papersift.warehouse.query import QueryResult, run_sql

# Which entity each paper's latest extraction uses, one row per use.
_USAGE = """
SELECT paper_id, entity_id FROM tasks UNION ALL SELECT paper_id, entity_id FROM methods
UNION ALL SELECT paper_id, entity_id FROM benchmarks
UNION ALL SELECT paper_id, metric_entity_id FROM gains
UNION ALL SELECT paper_id, dataset_entity_id FROM gains
"""
_LIST = f"""
SELECT entity_id, kind, canonical, keys, array_to_string(aliases, '; ') AS aliases,
       direction, metric_kind,
       (SELECT count(DISTINCT paper_id) FROM ({_USAGE}) u WHERE u.entity_id = e.entity_id)
           AS papers
FROM entities e
WHERE ($kind IS NULL OR kind = $kind) AND (NOT $merged OR len(aliases) > 1)
  AND (NOT $unknown OR (kind = 'metric' AND direction IS NULL))
ORDER BY papers DESC, entity_id
LIMIT $limit
"""
# Every spelling each paper's latest extraction uses, by kind.
_ITEM_NAMES = """
SELECT paper_id, 'task' AS kind, name FROM tasks
UNION ALL SELECT paper_id, 'method', name FROM methods
UNION ALL SELECT paper_id, 'benchmark', name FROM benchmarks
UNION ALL SELECT paper_id, 'benchmark', dataset FROM gains WHERE dataset IS NOT NULL
UNION ALL SELECT paper_id, 'metric', metric FROM gains
"""


def list_entities(db: Path, kind: str | None, merged: bool, unknown_metrics: bool,
                  limit: int) -> QueryResult:
    """Entities with their spellings and how many papers use them, most used first."""
    return run_sql(db, _LIST, {"kind": kind, "merged": merged, "unknown": unknown_metrics,
                               "limit": limit})


def entity_keys(con: duckdb.DuckDBPyConnection, entity_id: str) -> list[tuple[Any, ...]]:
    """(kind, canonical, name_key) of each key of an entity, by key; none if unknown."""
    return con.execute("SELECT kind, canonical, name_key FROM entity_keys WHERE entity_id = ? "
                       "ORDER BY name_key", [entity_id]).fetchall()


def entity_holding(con: duckdb.DuckDBPyConnection, kind: str, key: str) -> str | None:
    """The id of the entity of ``kind`` that holds ``key``, if one does."""
    row = con.execute("SELECT entity_id FROM entity_keys WHERE kind = ? AND name_key = ?",
                      [kind, key]).fetchone()
    return str(row[0]) if row else None


def spellings(con: duckdb.DuckDBPyConnection, kind: str,
              keys: Sequence[str]) -> list[tuple[str, str, str, int]]:
    """(name, key, source, papers) of every spelling under these keys, most used first."""
    return [(str(n), str(k), str(s), int(p)) for n, k, s, p in con.execute(f"""
        SELECT n.name, n.name_key, n.source, count(DISTINCT i.paper_id)
        FROM entity_names n LEFT JOIN ({_ITEM_NAMES}) i ON i.kind = n.kind AND i.name = n.name
        WHERE n.kind = $kind AND list_contains($keys, n.name_key)
        GROUP BY ALL ORDER BY 4 DESC, 1
    """, {"kind": kind, "keys": list(keys)}).fetchall()]


def decisions_about(con: duckdb.DuckDBPyConnection, kind: str,
                    keys: Sequence[str]) -> list[tuple[Any, ...]]:
    """(verdict, stage, a, b, score, detail, by) of every automatic and user decision that
    touches one of these keys."""
    return con.execute("""
        SELECT verdict, stage, a_key, b_key, score, detail, 'automatic' FROM entity_decisions
        WHERE kind = $kind AND (list_contains($keys, a_key) OR list_contains($keys, b_key))
        UNION ALL
        SELECT verdict, 'user', a_key, b_key, NULL, note, 'user #' || seq
        FROM entity_user_decisions
        WHERE kind = $kind AND (list_contains($keys, a_key) OR list_contains($keys, b_key))
        ORDER BY 7, 2, 3, 4
    """, {"kind": kind, "keys": list(keys)}).fetchall()


def metric_meta(con: duckdb.DuckDBPyConnection, entity_id: str) -> tuple[Any, ...] | None:
    """(direction, metric_kind) of an entity, or None when it is unknown."""
    return con.execute("SELECT direction, metric_kind FROM entity_keys WHERE entity_id = ? "
                       "LIMIT 1", [entity_id]).fetchone()


def names_of_kind(db: Path, kind: str) -> list[str]:
    """Every name an entity of ``kind`` answers to (spellings, canonical names, ids),
    and for benchmarks the leaderboard's own names: what a parameter may match."""
    board = "UNION SELECT benchmark FROM leaderboard" if kind == "benchmark" else ""
    result = run_sql(db, f"""
        SELECT DISTINCT name FROM (
            SELECT name FROM entity_lookup WHERE kind = $kind
            UNION SELECT canonical FROM entity_lookup WHERE kind = $kind
            UNION SELECT entity_id FROM entity_lookup WHERE kind = $kind {board})
        WHERE name IS NOT NULL ORDER BY name
    """, {"kind": kind})
    return [str(row[0]) for row in result.rows]
