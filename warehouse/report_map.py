"""The report's topic map: areas, each paper's map position, and its nearest papers.

Read from the latest topic run (``papersift index`` makes it) and the stored vectors;
absent when the warehouse has no topic map yet, so the report simply leaves it out.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

NEIGHBOURS = 8  # nearest papers kept per paper: "similar papers" and the page's search


@dataclass(frozen=True)
class MapArea:
    area_id: int
    label: str
    size: int
    terms: tuple[str, ...]


@dataclass(frozen=True)
class MapPoint:
    paper_id: str
    area_id: int
    x: float
    y: float


@dataclass(frozen=True)
class MapData:
    topic_run_id: str
    model_id: str
    areas: tuple[MapArea, ...]
    points: dict[str, MapPoint]
    neighbours: dict[str, tuple[tuple[str, float], ...]]  # paper -> (paper, cosine), nearest first


def _has(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    row = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                      [table]).fetchone()
    return bool(row and row[0])


def load_map(con: duckdb.DuckDBPyConnection) -> MapData | None:
    """The latest topic map with neighbour lists, or None when there is none."""
    if not _has(con, "topic_runs"):
        return None
    run = con.execute("SELECT topic_run_id, model_id FROM latest_topic_run").fetchone()
    if run is None:
        return None
    run_id, model_id = str(run[0]), str(run[1])
    areas = tuple(MapArea(int(a), str(label), int(size), tuple(terms)) for a, label, size, terms
                  in con.execute("SELECT area_id, label, size, terms FROM areas "
                                 "ORDER BY size DESC, area_id").fetchall())
    points = {paper_id: MapPoint(paper_id, int(area), float(x), float(y))
              for paper_id, area, x, y in con.execute(
                  "SELECT paper_id, area_id, x, y FROM paper_areas").fetchall()}
    # Top-k per paper with max_by's bounded state: a window over all n^2 pairs held
    # every pair (NeurIPS 2025's 5,823 papers: 34 million rows, 8 GB peak).
    neighbours: dict[str, list[tuple[str, float]]] = {}
    for paper_id, nearest in con.execute(
            """
            WITH v AS (SELECT p.paper_id, e.vector FROM papers p JOIN embeddings e
                       ON e.text_sha256 = p.text_sha256 AND e.model_id = ?),
            pairs AS (SELECT a.paper_id, b.paper_id AS other,
                             array_cosine_similarity(a.vector, b.vector) AS cosine
                      FROM v a JOIN v b ON a.paper_id <> b.paper_id)
            SELECT paper_id, max_by(struct_pack(other, cosine), cosine, ?)
            FROM pairs GROUP BY paper_id""", [model_id, NEIGHBOURS]).fetchall():
        ranked = sorted(((float(n["cosine"]), str(n["other"])) for n in nearest),
                        key=lambda pair: (-pair[0], pair[1]))
        neighbours[str(paper_id)] = [(other, round(cosine, 4)) for cosine, other in ranked]
    return MapData(run_id, model_id, areas, points,
                   {paper: tuple(near) for paper, near in neighbours.items()})
