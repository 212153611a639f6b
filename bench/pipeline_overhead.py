"""How fast papersift itself is when the model answers instantly.

Runs the bundled corpus, repeated with small variations to reach --papers abstracts,
against the hand-written instant fake model (papersift/testing/mock.py), and prints the ingest,
extraction and warm-cache rates. This is the ceiling the pipeline puts on throughput:
with a real model the model's own speed dominates by orders of magnitude.

    python -m bench.pipeline_overhead --papers 2000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.ingest_files import ingest
from papersift.testing.mock import FakeModel

ROOT = Path(__file__).resolve().parent.parent


def build_corpus(folder: Path, papers: int) -> None:
    abstracts = [p.text for p in ingest([ROOT / "examples" / "neurips-2026"]).papers]
    lines = ["Bench 2026 Papers"]
    for index in range(papers):
        lines.append(f"{abstracts[index % len(abstracts)]} (variant {index})")
    (folder / "bench.txt").write_text("\n\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    endpoint = Endpoint(base_url="http://fake.test/v1", model="instant-fake", mode="json")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build_corpus(folder, args.papers)
        settings = RunSettings(db=folder / "bench.duckdb", concurrency=args.concurrency)
        for label in ("cold", "warm cache"):
            model = FakeModel()
            started = time.perf_counter()
            _, summary = run_inputs([str(folder / "bench.txt")], settings,
                                    transport=model.transport(), endpoint=endpoint)
            seconds = time.perf_counter() - started
            print(f"{label:>10}: {summary.line()} in {seconds:.2f}s = "
                  f"{summary.n_abstracts / seconds:,.0f} abstracts/s, "
                  f"{model.requests} HTTP requests")


if __name__ == "__main__":
    main()
