"""Memory of reading a corpus whole (`ingest`) vs in chunks (`ingest_stream`).

For each size N a synthetic corpus (bench/synth.py) is written once per format; then each
way of reading it runs in a fresh Python process, twice: once for the wall time and the
peak resident set size (getrusage ru_maxrss, the whole process, interpreter included), once
under tracemalloc for the peak of Python allocations (slower; its time is not reported).
The streaming reader keeps each chunk only until the next one comes, as a consumer that
stores chunks elsewhere would. The baseline row is a process that only imports papersift.

    python -m bench.ingest_memory [--papers 10000 100000] [--format jsonl txt] [--chunk 2000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.synth import write_corpus

REPO_ROOT = Path(__file__).resolve().parent.parent

# What the child process runs: read the corpus one way, print figures as JSON.
CHILD = r"""
import json, resource, sys, time, tracemalloc
from papersift.extract.domain.reading.ingest import ingest, ingest_stream
mode, folder, chunk, traced = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
if traced:
    tracemalloc.start()
started = time.perf_counter()
papers = occurrences = 0
if mode == "ingest":
    result = ingest([folder])
    papers, occurrences = len(result.papers), result.occurrences
elif mode == "stream":
    for part in ingest_stream([folder], chunk_papers=chunk):
        papers += len(part.papers)
        occurrences += part.occurrences
seconds = time.perf_counter() - started
figures = {"seconds": seconds, "papers": papers, "occurrences": occurrences,
           "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
if traced:
    figures["traced_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
print(json.dumps(figures))
"""


def measure(mode: str, folder: Path, chunk: int, traced: bool) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(folder), str(chunk), "1" if traced else "0"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=True,
    )
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def kept_ids_mib(count: int) -> float:
    """What the stream keeps for the whole run: the set of returned ids (32-byte digests)."""
    done = subprocess.run([sys.executable, "-c", (
        "import hashlib, sys, tracemalloc\n"
        "tracemalloc.start()\n"
        f"kept = {{hashlib.sha256(str(i).encode()).digest() for i in range({count})}}\n"
        "print(tracemalloc.get_traced_memory()[0] / 2**20)\n")],
        capture_output=True, text=True, check=True)
    return float(done.stdout)


def main(argv: list[str] | None = None) -> int:
    """Print peak RSS and tracemalloc peaks of ingest vs ingest_stream on synthetic corpora."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--papers", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--format", nargs="+", choices=("jsonl", "txt"), default=["jsonl"])
    parser.add_argument("--chunk", type=int, default=2_000, help="chunk_papers of the stream")
    args = parser.parse_args(argv)
    base = measure("none", REPO_ROOT, args.chunk, traced=False)
    print(f"baseline: a process that imports papersift peaks at {base['rss_mib']:.0f} MiB RSS")
    print()
    print("| papers | format | corpus MB | reader | seconds | peak RSS MiB | "
          "tracemalloc peak MiB |")
    print("|---:|---|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="ingest-memory-") as scratch:
        for count in args.papers:
            for fmt in args.format:
                folder = Path(scratch) / f"{count}-{fmt}"
                paths = write_corpus(folder, count, fmt=fmt)
                size = sum(path.stat().st_size for path in paths) / 1e6
                for mode, label in (("ingest", "ingest"),
                                    ("stream", f"ingest_stream({args.chunk})")):
                    plain = measure(mode, folder, args.chunk, traced=False)
                    traced = measure(mode, folder, args.chunk, traced=True)
                    assert plain["papers"] == count, plain
                    print(f"| {count:,} | {fmt} | {size:.1f} | {label} | "
                          f"{plain['seconds']:.1f} | {plain['rss_mib']:.0f} | "
                          f"{traced['traced_mib']:.1f} |", flush=True)
                    if mode == "stream":
                        assert plain["occurrences"] == count
    print()
    for count in args.papers:
        print(f"ids kept by the stream for {count:,} papers: {kept_ids_mib(count):.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
