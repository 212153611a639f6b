"""The warehouse side of the conference-wide check of `introduced` (issue 26).

A collection is what the papers were read from together: the title line of a text
corpus when it has one, else the input file (one conference file of a JSONL list). The
check itself is pure code (extract/domain/rules/used_elsewhere.py); what it decides is
written here as an ordinary, append-only correction by the reviewer ``REVIEWER`` with its
reason as the note, so every view, export and the report show it, `papersift
introductions` lists it, and a person undoes it the way any correction is undone
(`papersift serve`: set introduced back). Items a person has corrected are never touched.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import duckdb

from papersift.warehouse.corrections import Review, edit_item, item_version

REVIEWER = "papersift (collection evidence)"
_COLLECTION = "coalesce(s.collection, s.file)"


def introduced_benchmarks(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Each benchmark the current data marks introduced, with the first collection (by
    name) its paper is in and the reviewers of the item's corrections."""
    rows = con.execute(f"""
        SELECT b.paper_id, b.item_key, any_value(b.name), any_value(b.evidence),
               min({_COLLECTION}) AS coll,
               coalesce(list(DISTINCT coalesce(c.reviewer, ''))
                        FILTER (WHERE c.correction_id IS NOT NULL), [])
        FROM corrected_benchmarks b JOIN sources s USING (paper_id)
        LEFT JOIN corrections c ON c.paper_id = b.paper_id AND c.item_type = 'benchmark'
                               AND c.item_key = b.item_key
        WHERE b.introduced
        GROUP BY b.paper_id, b.item_key
        ORDER BY coll, b.paper_id, b.item_key""").fetchall()
    return [{"paper_id": p, "item_key": k, "name": n, "evidence": e or "", "collection": c,
             "reviewers": sorted(r)}
            for p, k, n, e, c, r in rows]


def collection_texts(con: duckdb.DuckDBPyConnection,
                     collections: list[str]) -> dict[str, dict[str, str]]:
    """The abstracts of each named collection, by paper id."""
    texts: dict[str, dict[str, str]] = defaultdict(dict)
    if not collections:
        return texts
    for coll, paper_id, text in con.execute(f"""
            SELECT DISTINCT {_COLLECTION} AS coll, p.paper_id, p.text
            FROM sources s JOIN papers p USING (paper_id)
            WHERE {_COLLECTION} IN (SELECT unnest(?))""", [collections]).fetchall():
        texts[coll][paper_id] = text
    return texts


def mark_not_introduced(con: duckdb.DuckDBPyConnection, paper_id: str, item_key: str,
                        reason: str) -> None:
    """Record the check's verdict as a correction that sets introduced to false."""
    version = item_version(con, paper_id, "benchmark", item_key)
    edit_item(con, paper_id, "benchmark", item_key, {"introduced": False},
              Review(reviewer=REVIEWER, version=version, note=reason))


def automatic_verdicts(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every verdict the check has written, newest first, and whether it still holds
    (no later correction of the same item)."""
    rows = con.execute("""
        SELECT c.paper_id, c.item_key, c.created, c.note,
               c.version = (SELECT max(d.version) FROM corrections d
                            WHERE d.paper_id = c.paper_id AND d.item_type = 'benchmark'
                              AND d.item_key = c.item_key) AS holds
        FROM corrections c
        WHERE c.item_type = 'benchmark' AND c.reviewer = ? AND c.field = 'introduced'
        ORDER BY c.created DESC""", [REVIEWER]).fetchall()
    return [{"paper_id": p, "item_key": k, "created": t, "note": n, "holds": bool(h)}
            for p, k, t, n, h in rows]
