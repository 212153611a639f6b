"""Cost of canonicalisation at scale: the entities of N synthetic papers.

    python -m bench.canon_scale --papers 100000 --db /tmp/canon-100k.duckdb [--embeddings]

Papers come from bench/synth.py (real abstracts, renumbered and reordered); their
extracted items are written straight into the warehouse tables (no model runs), drawn so
that the name distribution looks like a conference's: benchmarks, metrics and tasks from
pools of shared names in several spellings (the alias table's entries among them) plus a
long tail of rare ones, and methods mostly unique to their paper. Then, each in a fresh
process so its peak memory is its own: the first pass (cheap stages, as a run does), a
second pass on the unchanged warehouse (must write nothing), and the embedding stage's
throughput on a sample of the names (the stage itself is linear in new names).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from bench.synth import synth_papers
from papersift.extract.domain.entities.vocab import load_vocabulary
from papersift.warehouse.db import connect

CHUNK = 10_000
_WORDS = ("graph", "vision", "language", "causal", "robust", "sparse", "federated",
          "diffusion", "temporal", "multimodal", "few-shot", "contrastive", "neural",
          "bayesian", "adversarial", "continual", "spectral", "geometric", "offline",
          "hierarchical", "probabilistic", "generative", "retrieval", "reasoning")
_TASK_HEADS = ("classification", "segmentation", "forecasting", "generation", "detection",
               "estimation", "alignment", "retrieval", "translation", "planning", "control",
               "question answering", "summarization", "recommendation", "discovery")


def _spellings(name: str, rng: random.Random) -> str:
    """One of the ways papers write ``name``."""
    choice = rng.random()
    if choice < 0.6:
        return name
    if choice < 0.75:
        return name.lower()
    if choice < 0.85:
        return name.replace("-", " ")
    if choice < 0.95:
        return f"the {name} benchmark" if " " not in name else name.upper()
    return name.replace("-", "")


def _pools(rng: random.Random) -> dict[str, list[str]]:
    vocabulary = load_vocabulary([])
    pools: dict[str, list[str]] = {"benchmark": [], "metric": [], "task": []}
    for (kind, _), entry in vocabulary.entries.items():
        if kind in pools:
            pools[kind] += [entry.name, *entry.aliases]
    suffixes = ("QA", "Bench", "Set", "Eval")
    pools["benchmark"] += [f"{rng.choice(_WORDS).title()}{rng.choice(suffixes)}-{n}"
                           for n in range(20_000)]
    pools["metric"] += [f"{rng.choice(_WORDS)} score {n}" for n in range(3_000)]
    pools["task"] += [f"{a} {b}" for a in _WORDS for b in _TASK_HEADS]
    pools["task"] += [f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} {rng.choice(_TASK_HEADS)}"
                      for _ in range(20_000)]
    return pools


def _zipf(pool: list[str], rng: random.Random) -> str:
    """Mostly the first names of a pool, sometimes the long tail."""
    index = min(int(rng.paretovariate(1.1)) - 1, len(pool) - 1)
    return pool[index] if rng.random() < 0.7 else rng.choice(pool)


def _item(extraction: str, paper: str, idx: int, name: str, evidence: str) -> dict[str, Any]:
    return {"extraction_id": extraction, "paper_id": paper, "idx": idx, "name": name,
            "evidence": evidence[:200], "char_start": 0, "char_end": min(len(evidence), 200),
            "alignment": "exact", "align_score": 1.0}


def build_warehouse(db: Path, papers: int, seed: int = 0) -> dict[str, float]:
    """Write ``papers`` synthetic papers and their items; time and rows written."""
    started = time.perf_counter()
    rng = random.Random(seed)
    pools = _pools(rng)
    db.unlink(missing_ok=True)
    con = connect(db)
    now = "2026-12-01 00:00:00"
    con.execute("INSERT INTO runs (run_id, started, status) VALUES ('synth', ?, 'finished')",
                [now])
    rows = {t: [] for t in ("papers", "extractions", "run_papers", "extraction_tasks",
                            "extraction_methods", "extraction_benchmarks",
                            "extraction_gains")}  # type: dict[str, list[dict[str, Any]]]

    def flush() -> None:
        for table, batch in rows.items():
            if batch:
                con.register("_rows", pa.Table.from_pylist(batch))
                columns = ", ".join(batch[0])
                con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM _rows")
                con.unregister("_rows")
                batch.clear()
        con.execute("CHECKPOINT")

    for paper in synth_papers(papers, seed):
        pid, eid = f"sha256:{paper.id}", f"sha256:x{paper.id}"
        text = paper.abstract
        rows["papers"].append({"paper_id": pid, "text": text, "text_sha256": pid,
                               "chars": len(text), "first_seen": now})
        rows["extractions"].append({
            "extraction_id": eid, "paper_id": pid, "run_id": "synth", "cache_key": eid,
            "raw_json": "{}", "lenient": False, "items": 8, "items_ungrounded": 0,
            "created": now})
        rows["run_papers"].append({"run_id": "synth", "paper_id": pid, "outcome": "extracted",
                                   "extraction_id": eid, "recorded": now})
        for idx in range(2):
            rows["extraction_tasks"].append(_item(eid, pid, idx, _zipf(pools["task"], rng),
                                                  text))
            method = (f"{rng.choice(_WORDS).title()}{paper.index}-{idx}" if rng.random() < 0.8
                      else rng.choice(("LoRA", "DPO", "PPO", "ViT", "GPT-4", "CLIP")))
            rows["extraction_methods"].append(_item(eid, pid, idx, method, text))
            bench = _spellings(_zipf(pools["benchmark"], rng), rng)
            rows["extraction_benchmarks"].append(
                {**_item(eid, pid, idx, bench, text), "kind": "benchmark",
                 "introduced": rng.random() < 0.05})
            gain = _item(eid, pid, idx, "", text)
            del gain["name"]
            rows["extraction_gains"].append({
                **gain, "metric": _zipf(pools["metric"], rng), "value": rng.uniform(0, 100),
                "unit": "%", "kind": rng.choice(("score", "improvement")),
                "dataset": _spellings(_zipf(pools["benchmark"], rng), rng),
                "value_in_evidence": True})
        if len(rows["papers"]) >= CHUNK:
            flush()
    flush()
    distinct = con.execute("""SELECT count(*) FROM (SELECT name FROM extraction_tasks UNION
        SELECT name FROM extraction_methods UNION SELECT name FROM extraction_benchmarks
        UNION SELECT metric FROM extraction_gains UNION SELECT dataset FROM extraction_gains)
    """).fetchone()
    con.close()
    return {"seconds": time.perf_counter() - started, "distinct_spellings": distinct[0]
            if distinct else 0}


class _CountingEmbedder:
    """Wraps the real embedder to count what the embedding stage asks it to embed."""

    def __init__(self, embedder: Any) -> None:
        self.embedder, self.model_id = embedder, embedder.model_id
        self.names, self.calls, self.cpu_s = 0, 0, 0.0

    def embed(self, texts: Any) -> Any:
        cpu = _cpu_seconds()
        vectors = self.embedder.embed(texts)
        self.names, self.calls = self.names + len(texts), self.calls + 1
        self.cpu_s += _cpu_seconds() - cpu
        return vectors


def one_pass(db: Path, embeddings: bool) -> dict[str, Any]:
    """A canonicalisation pass in this process: its wall time, CPU, peak RSS and what it
    did (with embeddings: how many names the embedding stage embedded, and its CPU)."""
    from papersift.extract.runs.canon import CanonOptions, canonicalise, load_embedder_or_note
    from papersift.warehouse import Warehouse

    started, cpu = time.perf_counter(), _cpu_seconds()
    counting = None
    if embeddings:
        loaded, _ = load_embedder_or_note()
        counting = _CountingEmbedder(loaded) if loaded is not None else None
    with Warehouse(db) as warehouse:
        passes = warehouse.con.execute("SELECT count(*) FROM entity_passes").fetchone()
        summary = canonicalise(warehouse, CanonOptions(embeddings=embeddings),
                               embedder=counting)
        after = warehouse.con.execute("SELECT count(*) FROM entity_passes").fetchone()
    embedded = ({"names_embedded": counting.names, "embed_cpu_s": round(counting.cpu_s, 2)}
                if counting is not None else {})
    return {"seconds": round(time.perf_counter() - started, 2),
            "cpu_s": round(_cpu_seconds() - cpu, 2), **embedded,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "up_to_date": summary.up_to_date, "new_names": summary.new_names,
            "decisions": summary.decisions, "changed_keys": summary.changed_keys,
            "entities": summary.entities, "merged": summary.merged,
            "passes_written": (after[0] if after else 0) - (passes[0] if passes else 0)}


def _cpu_seconds() -> float:
    """User + system CPU of this process (BLAS threads included)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def embed_rate(sample: int) -> dict[str, Any]:
    """Names per second of the embedding model on ``sample`` spellings."""
    from papersift.extract.runs.canon import load_embedder_or_note

    embedder, note = load_embedder_or_note()
    if embedder is None:
        return {"skipped": note}
    rng = random.Random(1)
    pools = _pools(rng)
    names = [rng.choice(pools[kind]) for kind in pools for _ in range(sample // 3)]
    started, cpu = time.perf_counter(), _cpu_seconds()
    embedder.embed(names)
    seconds, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
    return {"model": embedder.model_id, "names": len(names), "seconds": round(seconds, 1),
            "names_per_s": round(len(names) / seconds, 1),
            "names_per_cpu_s": round(len(names) / cpu, 1)}


def _child(args: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-m", "bench.canon_scale", *args], check=True,
                         capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    """Build the synthetic warehouse, then time the passes, each in its own process."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--db", type=Path, default=Path("/tmp/canon-scale.duckdb"))
    parser.add_argument("--embed-sample", type=int, default=300)
    parser.add_argument("--child", choices=("pass", "embed"))
    parser.add_argument("--embeddings", action="store_true",
                        help="run the embedding stage in both passes (instead of sampling "
                             "its throughput)")
    args = parser.parse_args(argv)
    if args.child == "pass":
        print(json.dumps(one_pass(args.db, args.embeddings)))
        return 0
    if args.child == "embed":
        print(json.dumps(embed_rate(args.embed_sample)))
        return 0
    built = build_warehouse(args.db, args.papers)
    print(f"{args.papers:,} synthetic papers, {built['distinct_spellings']:,} distinct "
          f"spellings written in {built['seconds']:.1f}s ({args.db})")
    stages = "normalise, abstracts, alias table"
    if args.embeddings:
        # the whole pipeline, embedding stage included, then again on the unchanged warehouse
        embed = ["--embeddings"]
        first = _child(["--child", "pass", "--db", str(args.db), *embed])
        print(f"first pass ({stages}, embeddings): {first}")
        again = _child(["--child", "pass", "--db", str(args.db), *embed])
        print(f"second pass with embeddings, unchanged warehouse: {again}")
        return 0
    first = _child(["--child", "pass", "--db", str(args.db)])
    print(f"first pass ({stages}): {first}")
    again = _child(["--child", "pass", "--db", str(args.db)])
    print(f"second pass, unchanged warehouse: {again}")
    rate = _child(["--child", "embed", "--embed-sample", str(args.embed_sample)])
    print(f"embedding stage throughput: {rate}")
    if "names_per_s" in rate:
        pending = first["new_names"]
        print(f"  so the embedding stage over all {pending:,} new spellings would take about "
              f"{pending / rate['names_per_s'] / 60:.0f} min on this machine (once; "
              "later passes embed only new spellings)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
