"""The reads behind `papersift serve`'s review pages: the papers, sources and
contribution types of the cards, and each paper's review state for the filters and the
queue (flagged, reviewed, corrected, in conflict), all by named column."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from papersift.warehouse.corrections import CorrectionError
from papersift.warehouse.rowdicts import first_row, query_dicts

SHOWS = ("all", "queue", "unreviewed", "flagged", "corrected", "conflicts", "reviewed")


def card_papers(con: duckdb.DuckDBPyConnection,
                paper_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each paper's ``text`` and its latest extraction's ``extraction_id``, ``model``,
    ``mode``, ``prompt_version``, ``schema_version``, ``lenient`` and ``asks`` (None when
    it has none), by paper id."""
    return {row["paper_id"]: row for row in query_dicts(con, """
        SELECT p.paper_id, p.text, l.extraction_id, l.model, l.mode, l.prompt_version,
               l.schema_version, l.lenient, l.asks
        FROM papers p LEFT JOIN latest_extractions l USING (paper_id)
        WHERE list_contains(?, p.paper_id)""", [list(paper_ids)])}


def paper_sources(con: duckdb.DuckDBPyConnection,
                  paper_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The sources rows of these papers, in file and position order."""
    return query_dicts(con, "SELECT * FROM sources WHERE list_contains(?, paper_id) "
                            "ORDER BY file, position", [list(paper_ids)])


def contribution_types(con: duckdb.DuckDBPyConnection,
                       paper_ids: Sequence[str]) -> dict[str, list[str]]:
    """Each paper's contribution types in their stored order, by paper id."""
    types: dict[str, list[str]] = {}
    for paper_id, kind in con.execute(
            "SELECT paper_id, type FROM contribution_types WHERE list_contains(?, paper_id) "
            "ORDER BY paper_id, idx", [list(paper_ids)]).fetchall():
        types.setdefault(paper_id, []).append(kind)
    return types


# A paper's review state, for filters and the queue.
_STATE = """
WITH flagged AS (
    SELECT paper_id FROM tasks WHERE alignment = 'none' AND review IS NULL
    UNION SELECT paper_id FROM methods WHERE alignment = 'none' AND review IS NULL
    UNION SELECT paper_id FROM benchmarks WHERE alignment = 'none' AND review IS NULL
    UNION SELECT paper_id FROM gains WHERE (alignment = 'none' OR value_in_evidence = false)
                                      AND review IS NULL
    -- a user field's unsupported item (a false flag never has a sentence: not flagged)
    UNION SELECT c.paper_id FROM corrected_custom c LEFT JOIN custom_fields f ON f.name = c.field
          WHERE c.alignment = 'none' AND c.review IS NULL
            AND NOT (f.grounding = 'flag' AND c.value = 'false')
), place AS (
    SELECT paper_id, min(file || chr(0) || lpad(CAST(position AS VARCHAR), 9, '0')) AS place
    FROM sources GROUP BY paper_id
)
SELECT p.paper_id,
       p.paper_id IN (SELECT paper_id FROM flagged) AS flagged,
       p.paper_id IN (SELECT paper_id FROM corrections WHERE action = 'reviewed') AS reviewed,
       p.paper_id IN (SELECT paper_id FROM corrections WHERE item_type <> 'paper') AS corrected,
       p.paper_id IN (SELECT paper_id FROM correction_conflicts) AS conflicted,
       pl.place
FROM papers p LEFT JOIN place pl USING (paper_id)
WHERE ($q IS NULL OR p.text ILIKE '%' || $q || '%' OR p.paper_id = $q)
"""
_WHERE = {
    "all": "TRUE",
    "queue": "NOT reviewed",
    "unreviewed": "NOT reviewed",
    "flagged": "flagged",
    "corrected": "corrected",
    "conflicts": "conflicted",
    "reviewed": "reviewed",
}


def find_papers(con: duckdb.DuckDBPyConnection, *, q: str | None = None, show: str = "all",
                limit: int = 20, offset: int = 0) -> tuple[int, list[str]]:
    """(how many papers match, the ids of one page of them). ``show=queue`` orders
    conflicts first, then papers with flagged items, then the other unreviewed ones."""
    if show not in _WHERE:
        raise CorrectionError(f"unknown filter {show!r}; one of {list(SHOWS)}")
    order = ("conflicted DESC, flagged DESC, place NULLS LAST, paper_id" if show == "queue"
             else "place NULLS LAST, paper_id")
    params = {"q": q or None}
    sql = f"SELECT * FROM ({_STATE}) WHERE {_WHERE[show]}"
    total = first_row(con, f"SELECT count(*) FROM ({sql})", params)
    rows = con.execute(f"{sql} ORDER BY {order} LIMIT {int(limit)} OFFSET {int(offset)}",
                       params).fetchall()
    return (int(total[0]) if total else 0), [row[0] for row in rows]


def counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Papers in each filter, for the page's tabs."""
    row = first_row(con, f"""SELECT count(*), count(*) FILTER (WHERE NOT reviewed),
        count(*) FILTER (WHERE flagged), count(*) FILTER (WHERE corrected),
        count(*) FILTER (WHERE conflicted), count(*) FILTER (WHERE reviewed)
        FROM ({_STATE})""", {"q": None})
    values = list(row) if row else [0] * 6
    return dict(zip(("all", "unreviewed", "flagged", "corrected", "conflicts", "reviewed"),
                    (int(v) for v in values), strict=True))
