"""The library functions behind `papersift corrections` and `eval --gold-from-corrections`:
reviewers' corrections read from a warehouse, written out as a file."""

from __future__ import annotations

import json
from pathlib import Path

from papersift.warehouse.corrections import export_corrections, gold_from_corrections
from papersift.warehouse.db import connect


def default_gold_path(db: Path) -> Path:
    """Where `eval --gold-from-corrections` writes the gold it scores against."""
    return db.parent / f"{db.name}.corrections-gold.json"


def write_gold(db: Path, out: Path | None = None) -> tuple[Path, int]:
    """Write the reviewed papers, as corrected, as a gold file; (its path, papers)."""
    con = connect(db, read_only=True)
    try:
        gold = gold_from_corrections(con)
    finally:
        con.close()
    path = out or default_gold_path(db)
    path.write_text(json.dumps(gold, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path, len(gold["papers"])


def write_corrections(db: Path, out: Path | None, fmt: str) -> tuple[str, int]:
    """Every correction as CSV or JSON lines, into ``out`` (None: returned as text);
    (the text, how many corrections)."""
    con = connect(db, read_only=True)
    try:
        text = export_corrections(con, fmt)
    finally:
        con.close()
    count = text.count("\n") - (1 if fmt == "csv" else 0)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    return text, count
