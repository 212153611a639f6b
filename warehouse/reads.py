"""Reads the pipeline needs: which papers to extract, which answers are cached, what a
listing shows. The SQL lives here, in the warehouse, so the layers above pass values in and
get rows back."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import duckdb

from papersift.warehouse.query import QueryResult, run_sql
from papersift.warehouse.rowdicts import first_row


def count_papers(con: duckdb.DuckDBPyConnection) -> int:
    row = first_row(con, "SELECT count(*) FROM papers")
    return int(row[0]) if row else 0


def unknown_paper_ids(con: duckdb.DuckDBPyConnection, paper_ids: Collection[str]) -> set[str]:
    """The ids in ``paper_ids`` that no stored paper has."""
    stored = con.execute("SELECT paper_id FROM papers WHERE list_contains(?, paper_id)",
                         [list(paper_ids)]).fetchall()
    return set(paper_ids) - {row[0] for row in stored}


# The title an input gave a stored paper (grounding may read a method's name in it).
_FIRST_TITLE = ("(SELECT s.title FROM sources s WHERE s.paper_id = papers.paper_id AND "
                "s.title IS NOT NULL ORDER BY s.file, s.position LIMIT 1)")


def papers_to_extract(con: duckdb.DuckDBPyConnection, *, only_missing: bool,
                      paper_ids: Collection[str] | None = None,
                      ) -> list[tuple[str, str, str | None]]:
    """(paper_id, text, title) in first-seen order: all papers, or those without an
    extraction, narrowed to ``paper_ids`` when given."""
    conditions = []
    if only_missing:
        conditions.append("paper_id NOT IN (SELECT paper_id FROM latest_extractions)")
    if paper_ids is not None:
        conditions.append("list_contains($ids, paper_id)")
    where = ("WHERE " + " AND ".join(conditions)) if conditions else ""
    params = {"ids": list(paper_ids)} if paper_ids is not None else {}
    rows = con.execute(
        f"SELECT paper_id, text, {_FIRST_TITLE} FROM papers {where} "
        "ORDER BY first_seen, paper_id", params
    ).fetchall()
    return [(str(paper_id), str(text), title) for paper_id, text, title in rows]


def papers_by_id(con: duckdb.DuckDBPyConnection,
                 paper_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(paper_id, text) of these papers, in first-seen order."""
    rows = con.execute(
        "SELECT paper_id, text FROM papers WHERE list_contains(?, paper_id) "
        "ORDER BY first_seen, paper_id", [list(paper_ids)]
    ).fetchall()
    return [(str(paper_id), str(text)) for paper_id, text in rows]


def cached_keys(con: duckdb.DuckDBPyConnection, keys: Collection[str]) -> set[str]:
    """The cache keys among ``keys`` that have a stored answer."""
    if not keys:
        return set()
    rows = con.execute("SELECT cache_key FROM llm_cache WHERE list_contains(?, cache_key)",
                       [list(keys)]).fetchall()
    return {str(row[0]) for row in rows}


def recent_runs(db: str | Path, limit: int) -> QueryResult:
    """The latest runs with their counts, model and tokens (`papersift runs`)."""
    return run_sql(
        db,
        "SELECT run_id, status, model, mode, n_abstracts AS n, n_extracted AS extracted, "
        "n_cached AS cached, n_failed AS failed, prompt_tokens + completion_tokens AS tokens, "
        "round(epoch(finished - started), 1) AS seconds FROM runs ORDER BY started DESC LIMIT ?",
        [limit],
    )


def stored_batches(db: str | Path) -> QueryResult:
    """Stored Batch API submissions, newest first (`papersift batch list`)."""
    return run_sql(
        db,
        "SELECT batch_id, status, model, request_count AS requests, completed_count AS "
        "completed, failed_count AS failed, run_id, submitted, finished, collected, "
        "collected_run_id FROM batches ORDER BY submitted DESC",
    )


# The papers a user's words name: a paper_id (or 12+ of its first characters), a source
# id or words of a title. Five parameters, all the user's words.
_WANTED_PAPERS = (
    "WITH titled AS (SELECT paper_id, any_value(title) AS title, "
    "list(DISTINCT source_id) AS source_ids FROM sources GROUP BY paper_id), "
    "wanted AS (SELECT p.paper_id FROM papers p LEFT JOIN titled t USING (paper_id) "
    "WHERE p.paper_id = ? OR (length(?) >= 12 AND p.paper_id LIKE ? || '%') "
    "OR list_contains(t.source_ids, ?) OR t.title ILIKE '%' || ? || '%') ")


def code_additions(db: str | Path, paper: str) -> QueryResult:
    """What code stored in a paper's latest extraction that the model did not give, one
    row per item with its reason; ``paper`` as for decisions."""
    return run_sql(
        db,
        _WANTED_PAPERS +
        "SELECT e.paper_id, t.title, unnest(e.added) AS added "
        "FROM wanted w JOIN latest_extractions e USING (paper_id) "
        "LEFT JOIN titled t USING (paper_id) ORDER BY e.paper_id",
        [paper, paper, paper, paper, paper],
    )


_DECISION_VIEWS = {"methods": "method_decisions", "gains": "gain_decisions"}


def decisions(db: str | Path, paper: str, field: str = "methods") -> QueryResult:
    """The calibrated decisions of a paper's latest extraction for one field ("methods":
    migration 0012, "gains": 0016), best score first; ``paper`` is its paper_id (or a
    prefix of it), its source id or words of its title."""
    view = _DECISION_VIEWS[field]
    return run_sql(
        db,
        _WANTED_PAPERS +
        "SELECT d.paper_id, t.title, d.name, d.outcome, d.score, d.features, d.weights "
        f"FROM wanted w JOIN {view} d USING (paper_id) "
        "LEFT JOIN titled t USING (paper_id) ORDER BY d.paper_id, d.score DESC",
        [paper, paper, paper, paper, paper],
    )
