"""A whole real conference through papersift, measured (issue 25): one table per step.

    python -m bench.conference ../shared/conferences/neurips2025.jsonl [--work DIR]
        [--steps extract,index,topics,entities,report] [--label primary_area]

Steps (each prints its own table; later steps use the warehouse of the ``instant`` run):

- extract: ``papersift run FILE`` as its own process, timed from process start to exit,
  against the simulator (a hand-written fake endpoint, NOT a model) in two settings:
  ``instant`` (no latency, --concurrency 64) and ``fast`` (200 ms, 16 slots,
  --concurrency 16), next to a bare keep-alive client that sends papersift's own request
  bodies to the same simulator (bench.throughput.run_bare). Extracted, failed, tracebacks.
- index: ``papersift index`` (vectors, keyword index, topic map) as its own process: wall
  time and peak memory; then the latency of ``search`` and ``similar`` in this process.
- topics: when the file's records carry a label (``--label``, kept by ingest in
  sources.extra), the topic map's agreement with it (NMI, ARI) at the number of areas
  papersift chose, and the best over a grid of numbers of areas.
- entities: ``papersift entities build``: time, peak memory, canonical benchmarks and
  metrics shared by two or more papers, leaderboards with two or more papers; writes 50
  random merges and the 20 largest leaderboards to WORK/checks.md for checking by hand.
- report: ``papersift report``: time, size, and the time until it is usable in headless
  Chromium (charts drawn).

The simulator's answers are built by code from each abstract, so the entity, leaderboard
and topic-label figures describe papersift's machinery at this scale, not a model's quality
(the topic map uses only the abstracts' vectors, so its NMI/ARI are real).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.simendpoint import SimEndpoint
from bench.throughput import (
    SCENARIOS,
    Scenario,
    _config,
    _load,
    _served,
    papersift_bodies,
    run_bare,
)

ROOT = Path(__file__).resolve().parent.parent
STEPS = ("extract", "index", "topics", "entities", "report")
MAX_TOKENS = 512


def timed_process(argv: list[str]) -> dict[str, Any]:
    """Run a papersift command as its own process: wall seconds, CPU, peak RSS, output."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert process.stdout is not None
    output = process.stdout.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 2):  # 2: some papers failed, which the tables show
        raise SystemExit(f"{' '.join(argv[2:])} exited {process.returncode}:\n{output[-3000:]}")
    return {"wall_s": time.perf_counter() - started, "rc": process.returncode,
            "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": usage.ru_maxrss / 1024,
            "tracebacks": output.count("Traceback (most recent call last)"),
            "output": output}


def papersift(*args: str) -> list[str]:
    return [sys.executable, "-m", "papersift", *args]


def texts_of(path: Path) -> list[str]:
    from papersift.extract.runs.ingest_files import ingest

    return [paper.text for paper in ingest([path]).papers]


def extract_step(source: Path, work: Path) -> Path:
    texts = texts_of(source)
    bodies = papersift_bodies(texts, "http://127.0.0.1:1/v1")
    print(f"\n### extract: {source.name}, {len(texts):,} abstracts; load average before "
          f"{' / '.join(f'{x:.1f}' for x in _load())}\n")
    print("| setting | bare client req/s | papersift abstracts/s, process start to exit | "
          "of bare | inside the run, abstracts/s | extracted | failed | tracebacks | wall s | "
          "CPU s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    chosen = [s for s in SCENARIOS if s.name in ("instant", "fast")]
    instant_db = work / "instant.duckdb"
    for scenario in chosen:
        bare = run_bare(scenario, bodies)
        db = work / f"{scenario.name}.duckdb"
        ours, inside = run_through_simulator(scenario, source, db)
        counts = ours["counts"]
        rate = len(texts) / ours["wall_s"]
        print(f"| {scenario.name} ({scenario.latency}, {scenario.slots or 'no'} slots, "
              f"concurrency {scenario.concurrency}) | {bare['rate']:.1f} | {rate:.1f} | "
              f"{rate / bare['rate']:.2f} | {inside:.1f} | {counts.get('extracted', 0):,} | "
              f"{counts.get('failed', 0):,} | {ours['tracebacks']} | {ours['wall_s']:.1f} | "
              f"{ours['cpu_s']:.1f} |",
              flush=True)
    return instant_db


def run_through_simulator(scenario: Scenario, source: Path, db: Path
                          ) -> tuple[dict[str, Any], float]:
    """papersift run as its own process against a fresh simulator: its timing, outcome
    counts, and the rate the simulator saw (first request to last answer)."""
    for stale in db.parent.glob(db.name + "*"):
        stale.unlink()
    with SimEndpoint.spawn(_config(scenario)) as sim:
        result = timed_process(papersift(
            "run", str(source), "--db", str(db), "--base-url", sim.base_url,
            "--model", "gpt-4o-mini", "--max-tokens", str(MAX_TOKENS),
            "--concurrency", str(scenario.concurrency), "--no-cache"))
        stats = sim.stats()
    ok, window = _served(stats)
    inside = ok / window if window > 0 else math.nan
    result["counts"] = dict(query(db, "SELECT outcome, count(*) FROM run_papers GROUP BY 1"))
    result["counts"]["extracted"] = result["counts"].pop("extracted", 0)
    return result, inside


def query(db: Path, sql: str) -> list[tuple[Any, ...]]:
    from papersift.warehouse.query import run_sql

    return run_sql(db, sql).rows


def saved(db: Path, name: str, **params: str | None) -> list[dict[str, Any]]:
    from papersift.extract.interface.entities import saved_query

    result = saved_query(db, name, params)
    return [dict(zip(result.columns, row, strict=True)) for row in result.rows]


def index_step(db: Path) -> None:
    from papersift.extract.access.embedding import load_embedder
    from papersift.extract.interface.discover import search, similar

    result = timed_process(papersift("index", "--db", str(db)))
    papers = query(db, "SELECT count(*) FROM papers")[0][0]
    embedder = load_embedder()
    titles = [row[0] for row in query(db, "SELECT title FROM sources WHERE title IS NOT NULL "
                                          "ORDER BY hash(paper_id) LIMIT 20")]
    ids = [row[0] for row in query(db, "SELECT paper_id FROM papers ORDER BY hash(paper_id) "
                                       "LIMIT 20")]
    search_ms, similar_ms = [], []
    for title in titles:
        started = time.perf_counter()
        search(db, title, embedder=embedder)
        search_ms.append(1000 * (time.perf_counter() - started))
    for paper_id in ids:
        started = time.perf_counter()
        similar(db, paper_id)
        similar_ms.append(1000 * (time.perf_counter() - started))
    print(f"\n### index, search, similar: {papers:,} papers\n")
    print("| step | wall s | CPU s | peak MiB | latency median / max ms |")
    print("|---|---|---|---|---|")
    print(f"| papersift index (vectors, keyword index, topic map) | {result['wall_s']:.1f} | "
          f"{result['cpu_s']:.1f} | {result['peak_mib']:.0f} | |")
    print(f"| search (hybrid, 20 titles as queries) | | | | {statistics.median(search_ms):.0f}"
          f" / {max(search_ms):.0f} |")
    print(f"| similar (20 papers) | | | | {statistics.median(similar_ms):.0f} / "
          f"{max(similar_ms):.0f} |")


def topics_step(db: Path, label: str) -> None:
    import numpy as np

    from bench.search_quality import ari, nmi
    from papersift.extract.domain.topics import cluster

    rows = query(db, f"SELECT p.paper_id, json_extract_string(s.extra, '$.{label}'), a.area_id "
                     "FROM papers p JOIN sources s USING (paper_id) "
                     "LEFT JOIN paper_areas a USING (paper_id) ORDER BY p.paper_id")
    labelled = [(pid, truth, area) for pid, truth, area in rows if truth is not None]
    if not labelled:
        print(f"\n### topics: no record carries {label!r}; skipped")
        return
    truth = [t for _, t, _ in labelled]
    chosen = [str(a) for _, _, a in labelled]
    areas = len(set(chosen))
    print(f"\n### topic map vs {label!r}: {len(labelled):,} papers, {len(set(truth))} labels\n")
    print("| numbers of areas | chosen by | NMI | ARI |")
    print("|---|---|---|---|")
    print(f"| {areas} | papersift (silhouette) | {nmi(truth, chosen):.3f} | "
          f"{ari(truth, chosen):.3f} |")
    vectors = dict(query(db, "SELECT p.paper_id, e.vector FROM papers p JOIN embeddings e "
                             "ON e.text_sha256 = p.text_sha256"))
    x = np.asarray([vectors[pid] for pid, _, _ in labelled], dtype=np.float32)
    best = (0.0, 0, 0.0)
    for k in (5, 10, 15, 20, 25, 30, 40):
        found = [str(v) for v in cluster(x, k=k).labels.tolist()]
        score = nmi(truth, found)
        print(f"| {k} | fixed | {score:.3f} | {ari(truth, found):.3f} |", flush=True)
        best = max(best, (score, k, ari(truth, found)))
    print(f"\nbest NMI over the grid: {best[0]:.3f} at {best[1]} areas (ARI {best[2]:.3f})")


def entities_step(db: Path, work: Path) -> None:
    result = timed_process(papersift("entities", "build", "--db", str(db)))
    shared = {kind: query(db, "SELECT count(*) FROM (SELECT entity_id FROM "
                              f"{view} WHERE entity_id IS NOT NULL GROUP BY entity_id "
                              "HAVING count(DISTINCT paper_id) >= 2)")[0][0]
              for kind, view in (("benchmarks", "benchmarks"), ("methods", "methods"),
                                 ("tasks", "tasks"))}
    metrics = query(db, "SELECT count(*) FROM (SELECT metric_entity_id FROM gains WHERE "
                        "metric_entity_id IS NOT NULL GROUP BY 1 HAVING "
                        "count(DISTINCT paper_id) >= 2)")[0][0]
    boards = saved(db, "shared_leaderboards")
    merges = query(db, "SELECT kind, a_key, b_key, stage, score, detail FROM entity_decisions "
                       "WHERE verdict = 'same'")
    print(f"\n### entities and leaderboards (entities build: {result['wall_s']:.1f} s, "
          f"{result['peak_mib']:.0f} MiB peak)\n")
    print("| canonical, shared by 2+ papers | count |")
    print("|---|---|")
    for kind, count in shared.items():
        print(f"| {kind} | {count:,} |")
    print(f"| metrics | {metrics:,} |")
    print(f"| leaderboards (benchmark x metric) with 2+ papers | {len(boards):,}"
          f"{'+' if len(boards) >= 50 else ''} |")
    print(f"| automatic merges | {len(merges):,} ({dict(Counter(m[0] for m in merges))}) |")
    sample = random.Random(25).sample(merges, min(50, len(merges)))
    lines = ["# Hand checks: 50 random merges and the 20 largest leaderboards", "",
             "## Merges (kind, a, b, stage, score, detail): mark each right or wrong", ""]
    lines += [f"- [ ] {k}: `{a}` = `{b}` ({stage}, {score}, {detail})"
              for k, a, b, stage, score, detail in sample]
    lines += ["", "## Leaderboards: is every row a result on it, right metric, own method?", ""]
    for board in boards[:20]:
        lines.append(f"### {board['benchmark']} · {board['metric']} ({board['papers']} papers)")
        for row in saved(db, "leaderboard", benchmark=str(board["benchmark"])):
            if row["metric"] == board["metric"]:
                lines.append(f"- [ ] {row['title']}: {row['method']} · score {row['score']} "
                             f"· improvement {row['improvement']} · “{row['evidence']}”")
        lines.append("")
    (work / "checks.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"\nfor checking by hand: {work / 'checks.md'}")


def report_step(db: Path, work: Path) -> None:
    from bench.report_figures import open_in_browser

    out = work / "report.html"
    result = timed_process(papersift("report", "--db", str(db), "--out", str(out)))
    print(f"\n### report: {out.stat().st_size / 1e6:.1f} MB, written in "
          f"{result['wall_s']:.1f} s ({result['peak_mib']:.0f} MiB peak)")
    open_in_browser(out, work / "report.png", 1280, 1000)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--work", type=Path, help="folder for warehouses and checks "
                        "(default: a new temporary folder)")
    parser.add_argument("--steps", default=",".join(STEPS),
                        help=f"comma-separated, of {', '.join(STEPS)}")
    parser.add_argument("--label", default="primary_area",
                        help="the record field the topic map is compared with")
    args = parser.parse_args(argv)
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        parser.error(f"unknown steps: {', '.join(unknown)}")
    if not args.file.is_file():
        parser.error(f"no such file: {args.file}")
    work = args.work or Path(tempfile.mkdtemp(prefix="papersift-conference-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "instant.duckdb"
    print(f"# {args.file.name} · work folder {work} · {os.cpu_count()} CPUs")
    if "extract" in steps:
        db = extract_step(args.file, work)
    if not db.exists():
        parser.error(f"no warehouse {db}: run the extract step first")
    if "index" in steps:
        index_step(db)
    if "topics" in steps:
        topics_step(db, args.label)
    if "entities" in steps:
        entities_step(db, work)
    if "report" in steps:
        report_step(db, work)
    print(json.dumps({"load_average_after": _load()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
