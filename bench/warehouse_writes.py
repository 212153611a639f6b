"""Bulk write speed of the warehouse (warehouse/store.py `Warehouse.write`).

The rows are those a live run stores for each abstract: its paper and source rows (the
ingest rows of `ingest_batch` in papersift.extract.runs.pipeline) and the rows of one
extracted outcome (`outcome_batch`, the same module: a call, the extraction with its
grounded items, the cache entry, the run_papers row). Outcomes are built for a pool of
synthetic abstracts (bench/synth.py), answered with the simulated endpoint's own draft
(bench/simendpoint.py `draft_for`) and grounded by papersift; the pool is then repeated under fresh
ids, so building rows costs little and the figures are the writer's.

For each batch size (papers per `write`, i.e. per transaction and CHECKPOINT) a fresh
warehouse receives --papers papers; the time of every statement `write` runs is summed by
kind, so the table shows where the time goes.

    python -m bench.warehouse_writes [--papers 100000] [--batch 16 100 500 2000] [--pool 300]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.simendpoint import draft_for
from bench.synth import synth_papers
from papersift.extract.access.extractor import Outcome
from papersift.extract.access.llm import CallRecord
from papersift.extract.domain.reading.ingest import IngestResult, Occurrence, Paper, paper_id_for
from papersift.extract.runs.pipeline import Job, ingest_batch, outcome_batch
from papersift.schemas import PaperDraft
from papersift.warehouse.store import Batch, Warehouse

RUN_ID = "bench-run"
PROVENANCE = {"endpoint": "sim", "model": "gpt-4o-mini", "mode": "tools",
              "prompt_version": "bench", "schema_version": "bench"}
# Columns that hold a paper's or an answer's identity: suffixed to make a copy distinct.
_IDENTITIES = ("paper_id", "extraction_id", "cache_key")


def template_batches(pool: int) -> list[Batch]:
    """All rows of ``pool`` synthetic abstracts, each extracted once."""
    batches = []
    for synth in synth_papers(pool):
        text = synth.abstract
        paper_id = paper_id_for(text)
        place = Occurrence(file="/bench/corpus.jsonl", position=synth.index + 1,
                           line=synth.index + 1, collection=None, venue="SynthConf",
                           year=2026, source_id=synth.id, title=synth.title)
        batch = ingest_batch(IngestResult([Paper(paper_id, text, (place,))], [], []), RUN_ID)
        call = CallRecord(ask=1, attempt=1, status="ok", started=datetime.now(UTC),
                          http_status=200, latency_ms=812.0, prompt_tokens=640,
                          completion_tokens=180, finish_reason="stop")
        outcome = Outcome(paper_id=paper_id, cache_key=f"cache:{paper_id}",
                          draft=PaperDraft.model_validate(draft_for(text)), calls=[call],
                          asks=1, prompt_tokens=640, completion_tokens=180)
        batch.extend(outcome_batch(outcome, Job(paper_id, text), run_id=RUN_ID,
                                   provenance=PROVENANCE, model="gpt-4o-mini"))
        batches.append(batch)
    return batches


def copy_of(template: Batch, copy: int) -> Batch:
    """The template's rows under identities of their own (copy 0 is the template)."""
    if copy == 0:
        return template
    suffix = f"~{copy}"
    batch = Batch()
    for table, rows in template.rows.items():
        batch.rows[table] = [
            {key: (f"{value}{suffix}" if key in _IDENTITIES and value is not None else value)
             for key, value in row.items()}
            for row in rows
        ]
    return batch


def paper_batches(templates: list[Batch], papers: int) -> Iterator[Batch]:
    for index in range(papers):
        yield copy_of(templates[index % len(templates)], index // len(templates))


class TimedConnection:
    """Forwards to a DuckDB connection, summing the seconds each kind of statement takes."""

    def __init__(self, con: Any, spent: dict[str, float]) -> None:
        self._con = con
        self._spent = spent

    def execute(self, sql: str, *args: Any) -> Any:
        words = sql.split()
        kind = words[0].upper()
        if kind == "INSERT":
            kind = f"INSERT {words[2]}"
        elif kind == "SELECT" and "LIMIT 0" in sql:
            kind = "SELECT target schema"
        started = time.perf_counter()
        try:
            return self._con.execute(sql, *args)
        finally:
            self._spent[kind] += time.perf_counter() - started

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


def run(templates: list[Batch], papers: int, per_write: int, folder: Path) -> dict[str, Any]:
    path = folder / f"w{per_write}.duckdb"
    spent: dict[str, float] = defaultdict(float)
    rows = writes = 0
    write_seconds = 0.0
    with Warehouse(path) as warehouse:
        warehouse.con = TimedConnection(warehouse.con, spent)  # type: ignore[assignment]
        pending = Batch()
        in_pending = 0
        for batch in paper_batches(templates, papers):
            pending.extend(batch)
            in_pending += 1
            if in_pending == per_write:
                rows += len(pending)
                started = time.perf_counter()
                warehouse.write(pending)
                write_seconds += time.perf_counter() - started
                writes += 1
                pending, in_pending = Batch(), 0
        if in_pending:
            rows += len(pending)
            started = time.perf_counter()
            warehouse.write(pending)
            write_seconds += time.perf_counter() - started
            writes += 1
        stored = warehouse.con.execute("SELECT count(*) FROM papers").fetchone()
    assert stored == (papers,), (stored, papers)
    return {"rows": rows, "writes": writes, "seconds": write_seconds, "spent": dict(spent),
            "mb": path.stat().st_size / 1e6}


def main(argv: list[str] | None = None) -> int:
    """Print rows/s of Warehouse.write per batch size and where the time goes."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--batch", type=int, nargs="+", default=[16, 100, 500, 2000],
                        help="papers per write (transaction + CHECKPOINT)")
    parser.add_argument("--pool", type=int, default=300, help="distinct abstracts built")
    parser.add_argument("--max-writes", type=int, default=2_000,
                        help="cap on writes per size: fewer papers for the small batches")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    templates = template_batches(args.pool)
    per_paper = sum(len(batch) for batch in templates) / len(templates)
    print(f"{args.pool} abstracts built and grounded in {time.perf_counter() - started:.1f} s;"
          f" {per_paper:.1f} rows per paper")
    print()
    print("| papers/write | papers | writes | rows | seconds | rows/s | papers/s | "
          "ms/write | of which outside DuckDB | warehouse MB | "
          "top statements (share of write time) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory(prefix="warehouse-writes-") as scratch:
        for per_write in args.batch:
            papers = min(args.papers, per_write * args.max_writes)
            figures = run(templates, papers, per_write, Path(scratch))
            seconds = figures["seconds"]
            outside = seconds - sum(figures["spent"].values())  # building Arrow tables etc.
            top = sorted(figures["spent"].items(), key=lambda item: -item[1])[:4]
            where = ", ".join(f"{kind} {share / seconds:.0%}" for kind, share in top)
            print(f"| {per_write:,} | {papers:,} | {figures['writes']:,} | "
                  f"{figures['rows']:,} | {seconds:.1f} | {figures['rows'] / seconds:,.0f} | "
                  f"{papers / seconds:,.0f} | {1000 * seconds / figures['writes']:.1f} | "
                  f"{1000 * outside / figures['writes']:.1f} | "
                  f"{figures['mb']:.0f} | {where} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
