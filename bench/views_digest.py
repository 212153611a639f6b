"""A digest of every view's rows in a warehouse built by replaying the bundled corpus,
with a few fixed corrections (an accept, a reject, edits with their grounding, added
items), so that a change to how views are defined shows whether any view reads
differently. Prints one line per view and one overall digest; compare two checkouts.

    python -m bench.views_digest
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.rows_digest import VOLATILE, print_digests
from papersift.schemas.fields import optional_fields
from papersift.warehouse import Warehouse

_CREATED = "2026-01-01 00:00:00"


def _correction(number: int, paper_id: str, item_type: str, item_key: str, action: str,
                field: str | None = None, after: Any = None) -> list[Any]:
    return [f"fixed-{number:03d}", _CREATED, paper_id, item_type, item_key, 1, action,
            field, None, None if after is None else json.dumps(after), "bench", None, None]


def add_corrections(con: Any) -> None:
    """Fixed corrections on the first papers that have items of each type."""
    def first(view: str, column: str, skip: int = 0) -> tuple[str, str]:
        row = con.execute(f"SELECT paper_id, item_key FROM {view} ORDER BY paper_id, "
                          f"{column} LIMIT 1 OFFSET {skip}").fetchone()
        return row[0], row[1]

    rows = []
    paper, key = first("tasks", "idx")
    rows.append(_correction(1, paper, "task", key, "accept"))
    paper, key = first("methods", "idx")
    rows.append(_correction(2, paper, "method", key, "edit", "name", "Renamed Method"))
    rows.append(_correction(3, paper, "method", key, "edit", "grounding",
                            {"alignment": "none", "align_score": 0.0, "mention_start": None,
                             "mention_end": None}))
    paper, key = first("benchmarks", "idx")
    rows.append(_correction(4, paper, "benchmark", key, "reject"))
    paper, key = first("benchmarks", "idx", 1)
    rows.append(_correction(5, paper, "benchmark", key, "edit", "introduced", True))
    paper, key = first("gains", "idx")
    rows.append(_correction(6, paper, "gain", key, "edit", "value", 99.5))
    rows.append(_correction(7, paper, "gain", key, "edit", "dataset", "Edited Set"))
    rows.append(_correction(8, paper, "method", "added:fixed8", "add", None,
                            {"name": "Added Method", "evidence": "An added sentence.",
                             "char_start": 0, "char_end": 18, "mention_start": 3,
                             "mention_end": 8}))
    rows.append(_correction(9, paper, "gain", "added:fixed9", "add", None,
                            {"metric": "accuracy", "value": 1.5, "unit": "%",
                             "value_in_evidence": False, "evidence": "Up 1.5%.",
                             "char_start": 0, "char_end": 8}))
    rows.append(_correction(10, paper, "paper", "", "reviewed"))
    con.executemany("INSERT INTO corrections VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    rows)


def view_digests(con: Any) -> dict[str, tuple[int, str]]:
    """view -> (rows, sha256 of its sorted rows without the volatile columns)."""
    views = [row[0] for row in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main' "
        "ORDER BY view_name").fetchall()]
    optional = {name for spec in optional_fields()
                for name in (spec.view, spec.corrected_view)}
    found = {}
    for view in views:
        if view in optional and not con.execute(f"SELECT count(*) FROM {view}").fetchone()[0]:
            continue  # an optional field no run enabled: as if its views did not exist
        columns = [row[0] for row in con.execute(f"DESCRIBE {view}").fetchall()
                   if row[0] not in VOLATILE]
        rows = con.execute(f"SELECT {', '.join(columns)} FROM {view}").fetchall()
        lines = sorted(repr(row) for row in rows)
        found[view] = (len(lines), hashlib.sha256(
            ("\n".join(columns) + "\n" + "\n".join(lines)).encode()).hexdigest())
    return found


def build(db: Path) -> dict[str, tuple[int, str]]:
    from papersift.testing.corpus import replay_corpus

    replay_corpus(db)
    with Warehouse(db) as warehouse:
        add_corrections(warehouse.con)
        return view_digests(warehouse.con)


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        found = build(Path(folder) / "views.duckdb")
    print_digests(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
