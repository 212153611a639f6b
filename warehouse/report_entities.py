"""The report's view of canonical entities: each entity's spellings (shown on hover) and
the leaderboard section's rows."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb


@dataclass(frozen=True)
class LeaderRow:
    """One claimed result on a canonical benchmark (scores and improvements apart)."""

    benchmark: str
    metric: str
    direction: str | None
    method: str | None
    score: float | None
    improvement: float | None
    efficiency: float | None
    unit: str | None
    baseline: str | None
    paper_id: str
    evidence: str


def entity_aliases(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, ...]]:
    """entity_id -> every spelling seen for it."""
    return {str(e): tuple(a or ()) for e, a in con.execute(
        "SELECT entity_id, aliases FROM entities").fetchall()}


def load_leaderboard(con: duckdb.DuckDBPyConnection, limit: int = 500) -> list[LeaderRow]:
    """The leaderboard, benchmarks with the most results first."""
    rows = con.execute("""
        SELECT benchmark, metric, direction, method, score, improvement, efficiency, unit,
               baseline, paper_id, evidence
        FROM leaderboard
        ORDER BY count(*) OVER (PARTITION BY benchmark_id, benchmark) DESC, benchmark, metric,
                 score IS NULL, CASE WHEN direction = 'lower' THEN score ELSE -score END,
                 improvement DESC, paper_id
        LIMIT ?
    """, [limit]).fetchall()
    return [LeaderRow(*row) for row in rows]
