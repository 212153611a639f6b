"""The warehouse side of canonical entities: which spellings are new, what is decided,
and the rows a canonicalisation pass writes. Plain rows in, plain rows out; the
canonicalisation itself is extract/runs/canon.py."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from papersift.warehouse.db import WarehouseError, _now, committed

# Every (kind, spelling) the item tables hold, from every stored extraction.
_SPELLINGS = """
SELECT 'task' AS kind, name FROM extraction_tasks
UNION SELECT 'method', name FROM extraction_methods
UNION SELECT 'benchmark', name FROM extraction_benchmarks
UNION SELECT 'benchmark', dataset FROM extraction_gains WHERE dataset IS NOT NULL
UNION SELECT 'metric', metric FROM extraction_gains
"""
# Mentions per spelling in each paper's latest extraction (to choose display names).
_MENTIONS = """
SELECT kind, name, count(*) FROM (
    SELECT 'task' AS kind, name FROM tasks
    UNION ALL SELECT 'method', name FROM methods
    UNION ALL SELECT 'benchmark', name FROM benchmarks
    UNION ALL SELECT 'benchmark', dataset FROM gains WHERE dataset IS NOT NULL
    UNION ALL SELECT 'metric', metric FROM gains
) GROUP BY ALL
"""


@dataclass(frozen=True)
class PassState:
    """What the last pass saw: compared with now, it says whether anything changed."""

    seq: int
    vocabulary: str | None
    user_seq: int


def last_pass(con: duckdb.DuckDBPyConnection) -> PassState:
    row = con.execute("SELECT seq, vocabulary, user_seq FROM entity_passes "
                      "ORDER BY seq DESC LIMIT 1").fetchone()
    return PassState(int(row[0]), row[1], int(row[2] or 0)) if row else PassState(0, None, 0)


def user_seq(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT coalesce(max(seq), 0) FROM entity_user_decisions").fetchone()
    return int(row[0]) if row else 0


def new_spellings(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(kind, name) of every spelling in the item tables that has no entity_names row."""
    return [(str(k), str(n)) for k, n in con.execute(
        f"SELECT kind, name FROM ({_SPELLINGS}) s WHERE NOT EXISTS (SELECT 1 FROM "
        "entity_names e WHERE e.kind = s.kind AND e.name = s.name) ORDER BY kind, name"
    ).fetchall()]


def unembedded_keys(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(kind, key) of every stored key the embedding stage has not compared yet."""
    return [(str(k), str(key)) for k, key in con.execute(
        "SELECT DISTINCT kind, name_key FROM entity_names n WHERE NOT EXISTS (SELECT 1 FROM "
        "entity_embedded e WHERE e.kind = n.kind AND e.name_key = n.name_key)"
    ).fetchall()]


def all_names(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str]]:
    """(kind, name, key) of every stored spelling."""
    return [(str(k), str(n), str(key)) for k, n, key in con.execute(
        "SELECT kind, name, name_key FROM entity_names ORDER BY kind, name").fetchall()]


def mention_counts(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], int]:
    return {(str(k), str(n)): int(c) for k, n, c in con.execute(_MENTIONS).fetchall()}


def texts_mentioning(con: duckdb.DuckDBPyConnection,
                     spellings: Sequence[tuple[str, str]]) -> Iterable[tuple[str, list[str]]]:
    """(abstract, [kind\\tname, ...]) for each paper whose extractions name a spelling
    of ``spellings``, streamed in batches."""
    wanted = pa.table({"kind": [k for k, _ in spellings], "name": [n for _, n in spellings]})
    con.register("_wanted_spellings", wanted)
    try:
        cursor = con.execute("""
            WITH items AS (
                SELECT paper_id, 'task' AS kind, name FROM extraction_tasks
                UNION SELECT paper_id, 'method', name FROM extraction_methods
                UNION SELECT paper_id, 'benchmark', name FROM extraction_benchmarks
                UNION SELECT paper_id, 'benchmark', dataset FROM extraction_gains
                UNION SELECT paper_id, 'metric', metric FROM extraction_gains
            )
            SELECT p.text, list(DISTINCT i.kind || chr(9) || i.name)
            FROM items i JOIN _wanted_spellings w USING (kind, name)
            JOIN papers p USING (paper_id)
            GROUP BY p.paper_id, p.text
        """)
        while rows := cursor.fetchmany(2048):
            for text, names in rows:
                yield str(text), [str(n) for n in names]
    finally:
        con.unregister("_wanted_spellings")


def method_expansions(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(name, expansion or alias) pairs grounding already found for methods."""
    return [(str(a), str(b)) for a, b in con.execute("""
        SELECT DISTINCT name, expansion FROM extraction_methods
        WHERE expansion IS NOT NULL AND expansion <> name
        UNION SELECT DISTINCT name, unnest(aliases) FROM extraction_methods
        WHERE aliases IS NOT NULL
    """).fetchall() if b]


def stored_decisions(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    """Automatic decisions: (kind, a_key, b_key, verdict, stage, score, detail)."""
    return con.execute("SELECT kind, a_key, b_key, verdict, stage, score, detail "
                       "FROM entity_decisions ORDER BY created, a_key, b_key").fetchall()


def user_decisions(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    """User decisions in the order made: (seq, kind, a_key, b_key, verdict, note, created)."""
    return con.execute("SELECT seq, kind, a_key, b_key, verdict, note, created "
                       "FROM entity_user_decisions ORDER BY seq").fetchall()


def current_assignments(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], tuple[Any, ...]]:
    """(kind, key) -> (entity_id, canonical, direction, metric_kind) as now stored."""
    return {(str(k), str(key)): (e, c, d, m) for k, key, e, c, d, m in con.execute(
        "SELECT kind, name_key, entity_id, canonical, direction, metric_kind FROM entity_keys"
    ).fetchall()}


def _insert(con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str],
            rows: Sequence[Sequence[Any]]) -> None:
    if not rows:
        return
    data = pa.table({column: [row[i] for row in rows] for i, column in enumerate(columns)})
    con.register("_entity_rows", data)
    try:
        con.execute(f"INSERT INTO {table} ({', '.join(columns)}) "
                    f"SELECT {', '.join(columns)} FROM _entity_rows")
    finally:
        con.unregister("_entity_rows")


@dataclass
class PassRows:
    """Everything one pass writes, in one transaction."""

    names: list[tuple[str, str, str, str]]  # kind, name, key, source
    decisions: list[tuple[str, str, str, str, str, float | None, str]]
    assignments: list[tuple[str, str, str, str, str | None, str | None]]
    vocabulary: str
    user_seq: int
    seconds: float
    embedder: str
    notes: str
    embedded: list[tuple[str, str, str]] = field(default_factory=list)  # kind, key, model


def write_pass(con: duckdb.DuckDBPyConnection, rows: PassRows) -> str:
    """Store one pass (names, decisions, changed assignments, the pass row); its id."""
    pass_id = f"ent_{_now():%Y%m%dT%H%M%S}_{uuid.uuid4().hex[:6]}"
    seq = last_pass(con).seq + 1
    now = _now()
    with committed(con):
        known = {(k, n) for k, n in con.execute(
            "SELECT kind, name FROM entity_names").fetchall()}
        fresh: dict[tuple[str, str], tuple[Any, ...]] = {}
        for row in rows.names:  # the first occurrence of a spelling says its source
            if (row[0], row[1]) not in known:
                fresh.setdefault((row[0], row[1]), (*row, now))
        _insert(con, "entity_names", ("kind", "name", "name_key", "source", "first_seen"),
                list(fresh.values()))
        _insert(con, "entity_decisions", ("pass_id", "kind", "a_key", "b_key", "verdict",
                                          "stage", "score", "detail", "created"),
                [(pass_id, *row, now) for row in rows.decisions])
        _insert(con, "entity_assignments", ("pass_id", "seq", "kind", "name_key", "entity_id",
                                            "canonical", "direction", "metric_kind",
                                            "created"),
                [(pass_id, seq, *row, now) for row in rows.assignments])
        _insert(con, "entity_embedded", ("kind", "name_key", "model", "pass_id"),
                [(*row, pass_id) for row in rows.embedded])
        con.execute("INSERT INTO entity_passes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [pass_id, seq, now, rows.seconds, rows.vocabulary, rows.user_seq,
                     len(rows.names), len(rows.decisions), len(rows.assignments),
                     rows.embedder, rows.notes])
    return pass_id


def add_user_decisions(con: duckdb.DuckDBPyConnection,
                       decisions: Sequence[tuple[str, str, str, str, str | None]]) -> int:
    """Store user verdicts (kind, a_key, b_key, verdict, note); the last seq written."""
    if not decisions:
        raise WarehouseError("nothing to record")
    seq = user_seq(con)
    now = _now()
    with committed(con):
        for offset, (kind, a, b, verdict, note) in enumerate(decisions, start=1):
            con.execute("INSERT INTO entity_user_decisions VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [seq + offset, kind, a, b, verdict, note, now])
    return seq + len(decisions)
