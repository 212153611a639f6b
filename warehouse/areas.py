"""The topic map's tables: one insert-only row set per clustering run, read back by views."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb

from papersift.warehouse.db import committed
from papersift.warehouse.rowdicts import query_dicts


@dataclass(frozen=True)
class AreaRow:
    area_id: int
    label: str
    terms: list[str]
    size: int
    carried_over: bool
    overlap: float | None


@dataclass(frozen=True)
class PaperArea:
    paper_id: str
    area_id: int
    similarity: float
    x: float
    y: float


def latest_members(con: duckdb.DuckDBPyConnection) -> tuple[str | None, dict[int, set[str]]]:
    """The latest topic run's id and the papers of each of its areas."""
    row = con.execute("SELECT topic_run_id FROM latest_topic_run").fetchone()
    if row is None:
        return None, {}
    members: dict[int, set[str]] = {}
    for paper_id, area_id in con.execute(
            "SELECT paper_id, area_id FROM topic_paper_areas WHERE topic_run_id = ?",
            [row[0]]).fetchall():
        members.setdefault(int(area_id), set()).add(paper_id)
    return str(row[0]), members


def latest_run_papers(con: duckdb.DuckDBPyConnection) -> int | None:
    """How many papers the latest topic run covered (None: no run yet)."""
    row = con.execute("SELECT papers FROM latest_topic_run").fetchone()
    return None if row is None else int(row[0])


def area_documents(con: duckdb.DuckDBPyConnection, paper_ids: Sequence[str]) -> dict[str, str]:
    """Each paper's text plus its task names: what the area labels are made from."""
    rows = con.execute(
        "SELECT p.paper_id, p.text || ' ' || coalesce(string_agg(t.name, ' '), '') FROM papers p "
        "LEFT JOIN tasks t USING (paper_id) WHERE p.paper_id IN (SELECT unnest(?)) GROUP BY "
        "p.paper_id, p.text", [list(paper_ids)]).fetchall()
    return {paper_id: text for paper_id, text in rows}


def store_topic_run(con: duckdb.DuckDBPyConnection, *, model_id: str, chosen_by: str,
                    scores: dict[int, float], previous_run: str | None,
                    areas: Sequence[AreaRow], papers: Sequence[PaperArea]) -> str:
    """Insert one topic run (run, areas, paper areas) in a transaction; return its id."""
    now = datetime.now(UTC).replace(tzinfo=None)
    run_id = f"topics_{now:%Y%m%dT%H%M%S%f}"
    with committed(con):
        con.execute("INSERT INTO topic_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [run_id, now, model_id, len(papers), len(areas), chosen_by,
                     json.dumps({str(k): v for k, v in scores.items()}), previous_run])
        con.executemany("INSERT INTO topic_areas VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [[run_id, a.area_id, a.label, a.terms, a.size, a.carried_over, a.overlap]
                         for a in areas])
        _insert_paper_areas(con, run_id, papers)
    return run_id


def _insert_paper_areas(con: duckdb.DuckDBPyConnection, run_id: str,
                        papers: Sequence[PaperArea]) -> None:
    import pyarrow as pa

    table = pa.table({
        "topic_run_id": pa.array([run_id] * len(papers), pa.string()),
        "paper_id": pa.array([p.paper_id for p in papers], pa.string()),
        "area_id": pa.array([p.area_id for p in papers], pa.int32()),
        "similarity": pa.array([p.similarity for p in papers], pa.float64()),
        "x": pa.array([p.x for p in papers], pa.float64()),
        "y": pa.array([p.y for p in papers], pa.float64()),
    })
    con.register("_paper_areas", table)
    try:
        con.execute("INSERT INTO topic_paper_areas SELECT * FROM _paper_areas")
    finally:
        con.unregister("_paper_areas")


def area_table(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """The latest areas, largest first."""
    return query_dicts(con, "SELECT area_id, label, size, terms, carried_over FROM areas "
                            "ORDER BY size DESC, area_id")
