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
    title: str | None = None
    papers: int = 1  # papers with a result on this benchmark and metric


def entity_aliases(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, ...]]:
    """entity_id -> every spelling seen for it."""
    return {str(e): tuple(a or ()) for e, a in con.execute(
        "SELECT entity_id, aliases FROM entities").fetchall()}


def load_leaderboard(con: duckdb.DuckDBPyConnection, limit: int = 500) -> list[LeaderRow]:
    """The leaderboard: the benchmark-and-metric pairs that two or more papers report
    first (most papers first), then the rest; each row names its paper by title."""
    rows = con.execute("""
        WITH shared AS (
            SELECT benchmark, metric, count(DISTINCT paper_id) AS papers
            FROM leaderboard GROUP BY benchmark, metric
        )
        SELECT l.benchmark, l.metric, l.direction, l.method, l.score, l.improvement,
               l.efficiency, l.unit, l.baseline, l.paper_id, l.evidence, l.title, s.papers
        FROM leaderboard l JOIN shared s USING (benchmark, metric)
        ORDER BY s.papers DESC, l.benchmark, l.metric, l.score IS NULL,
                 CASE WHEN l.direction = 'lower' THEN l.score ELSE -l.score END,
                 l.improvement DESC, l.paper_id
        LIMIT ?
    """, [limit]).fetchall()
    return [LeaderRow(*row) for row in rows]
