"""The SQL behind `papersift eval`: what a run stored for the gold papers, what its calls
cost, and the stored evaluations. The scoring itself is extract.domain.evaluation.evaluate's."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import duckdb

from papersift.schemas.fields import builtin

Rows = list[tuple[Any, ...]]


def _table(field: str) -> str:
    return builtin(field).table


# The child rows the scoring of the original fields reads (evaluate.py: each has its own
# matching), by the key evaluate uses, in stored order; tables from the registry.
_ITEM_QUERIES = {
    "types": f"SELECT extraction_id, type FROM {_table('contribution_types')}",
    "tasks": f"SELECT extraction_id, name, alignment FROM {_table('tasks')}",
    "methods": f"SELECT extraction_id, name, expansion, aliases, alignment "
               f"FROM {_table('methods')}",
    "benchmarks": f"SELECT extraction_id, name, introduced, alignment "
                  f"FROM {_table('benchmarks')}",
    "gains": f"SELECT extraction_id, value, metric, alignment, value_in_evidence "
             f"FROM {_table('claimed_gains')}",
}
_GAIN_ATTRIBUTES = ("metric", "baseline", "dataset")


def latest_run_handling(con: duckdb.DuckDBPyConnection, paper_ids: Sequence[str]) -> str | None:
    """The most recent run that handled any of these papers, if any did."""
    row = con.execute(
        "SELECT r.run_id FROM runs r WHERE EXISTS (SELECT 1 FROM run_papers p "
        "WHERE p.run_id = r.run_id AND list_contains(?, p.paper_id)) "
        "ORDER BY r.started DESC LIMIT 1",
        [list(paper_ids)],
    ).fetchone()
    return None if row is None else str(row[0])


def run_identity(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[Any, ...] | None:
    """(model, prompt_version, schema_version, endpoint, batch) of a run, or None."""
    return con.execute(
        "SELECT model, prompt_version, schema_version, endpoint, "
        "coalesce(json_extract(params, '$.batch')::BOOLEAN, false) FROM runs "
        "WHERE run_id = ?", [run_id]).fetchone()


def papers_known(con: duckdb.DuckDBPyConnection, paper_ids: Sequence[str]) -> int:
    """How many of these papers the warehouse holds."""
    row = con.execute("SELECT count(*) FROM papers WHERE list_contains(?, paper_id)",
                      [list(paper_ids)]).fetchone()
    return int(row[0]) if row else 0


def run_outcomes(con: duckdb.DuckDBPyConnection, run_id: str, paper_ids: Sequence[str]) -> Rows:
    """(paper_id, text, outcome, extraction_id, asks) of each paper, for one run; outcome
    and extraction are None where the run did not handle the paper."""
    return con.execute(
        "SELECT p.paper_id, p.text, rp.outcome, rp.extraction_id, e.asks "
        "FROM papers p LEFT JOIN run_papers rp ON rp.paper_id = p.paper_id AND rp.run_id = ? "
        "LEFT JOIN extractions e ON e.extraction_id = rp.extraction_id "
        "WHERE list_contains(?, p.paper_id)",
        [run_id, list(paper_ids)],
    ).fetchall()


def stored_items(con: duckdb.DuckDBPyConnection, extraction_ids: list[str]) -> dict[
        str, dict[str, Rows]]:
    """kind ('types', 'tasks', 'methods', 'benchmarks', 'gains') -> extraction id -> its
    rows in stored order, without the id (columns as in _ITEM_QUERIES)."""
    out: dict[str, dict[str, Rows]] = {}
    for kind, select in _ITEM_QUERIES.items():
        by_id: dict[str, Rows] = {}
        sql = select + " WHERE list_contains(?, extraction_id) ORDER BY extraction_id, idx"
        for row in con.execute(sql, [extraction_ids]).fetchall():
            by_id.setdefault(row[0], []).append(row[1:])
        out[kind] = by_id
    return out


def call_costs(con: duckdb.DuckDBPyConnection, extraction_ids: list[str]) -> Rows:
    """(paper_id, latency_ms, prompt_tokens, completion_tokens) summed over the calls of
    the latest run that sent each extraction's cache key (a cached or re-grounded answer
    keeps the cost of the original ask)."""
    return con.execute(
        "SELECT e.paper_id, sum(c.latency_ms), sum(c.prompt_tokens), sum(c.completion_tokens) "
        "FROM extractions e JOIN calls c ON c.cache_key = e.cache_key AND c.run_id = ("
        "  SELECT max(c2.run_id) FROM calls c2 WHERE c2.cache_key = e.cache_key) "
        "WHERE list_contains(?, e.extraction_id) GROUP BY e.paper_id",
        [extraction_ids],
    ).fetchall()


def gain_attribute_counts(con: duckdb.DuckDBPyConnection, extraction_ids: Sequence[str]) -> \
        dict[str, dict[str, int]]:
    """How many stored gains had each attribute found in the abstract (exact, normalized,
    fuzzy), flagged or rejected ('none': not in the abstract), or not given."""
    out: dict[str, dict[str, int]] = {}
    for attribute in _GAIN_ATTRIBUTES:
        rows = con.execute(
            f"SELECT coalesce({attribute}_alignment, 'not given'), count(*) "
            f"FROM {_table('claimed_gains')} WHERE list_contains(?, extraction_id) "
            "GROUP BY 1",
            [list(extraction_ids)]).fetchall()
        out[attribute] = {str(status): int(n) for status, n in sorted(rows)}
    return out


def item_names(con: duckdb.DuckDBPyConnection, kind: str, extraction_ids: list[str]) -> Rows:
    """(extraction_id, name) of each stored method or benchmark (``kind``), in stored order."""
    return con.execute(f"SELECT extraction_id, name FROM {_table(kind)} "
                       "WHERE list_contains(?, extraction_id) ORDER BY extraction_id, idx",
                       [extraction_ids]).fetchall()


def source_labels(con: duckdb.DuckDBPyConnection, paper_ids: Sequence[str]) -> Rows:
    """(paper_id, label): the venue of each paper's first occurrence, else its file name."""
    return con.execute(
        "SELECT paper_id, coalesce(venue, regexp_extract(file, '[^/]+$')) FROM sources "
        "WHERE list_contains(?, paper_id) "
        "QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY file, position) = 1",
        [list(paper_ids)]).fetchall()


def insert_eval(con: duckdb.DuckDBPyConnection, *, eval_id: str, created: datetime,
                run_id: str, gold_file: str, gold_sha256: str, gold_papers: int,
                model: str | None, prompt_version: str | None, schema_version: str | None,
                metrics: dict[str, Any]) -> None:
    """Store one evaluation's figures in ``evals``, by column name."""
    con.execute(
        "INSERT INTO evals (eval_id, created, run_id, gold_file, gold_sha256, gold_papers, "
        "model, prompt_version, schema_version, metrics) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [eval_id, created, run_id, gold_file, gold_sha256, gold_papers, model,
         prompt_version, schema_version, json.dumps(metrics)],
    )
