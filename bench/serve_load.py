"""`papersift serve` under load: requests per second for page views and API reads on the
bundled warehouse (replayed from the recording, offline) and on a synthetic one of
--papers abstracts (bench/synth.py, extracted through the simulated endpoint), and the
extraction throughput through the API against the simulated endpoint.

Each server is the real CLI (`papersift serve`, uvicorn) in its own process; --clients
threads send requests back to back for --seconds per route, each on its own keep-alive
connection. Figures, not assertions:

    python -m bench.serve_load [--papers 10000] [--clients 8] [--seconds 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench.simendpoint import SimConfig, SimEndpoint
from bench.synth import write_corpus
from bench.warehouse_writes import RUN_ID, template_batches
from papersift.testing.corpus import replay_corpus
from papersift.testing.serving import server_process
from papersift.warehouse.db import server_file
from papersift.warehouse.store import Batch, RunCounts, Warehouse

ROOT = Path(__file__).resolve().parent.parent

TIMEOUT = 300.0  # seconds; a loaded machine answers slowly, and slow is the figure
SIM_ARGS = ("--provider", "compatible", "--model", "gpt-4o-mini", "--concurrency", "32")


def hammer(url: str, clients: int, seconds: float) -> tuple[float, float, int, int]:
    """(requests/s, median latency in ms, non-200 answers, requests) of ``clients``
    threads."""
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client() -> None:
        nonlocal errors
        mine: list[float] = []
        bad = 0
        with httpx.Client(timeout=TIMEOUT) as session:
            while time.monotonic() < stop:
                started = time.perf_counter()
                status = session.get(url).status_code
                mine.append(time.perf_counter() - started)
                bad += status != 200
        with lock:
            latencies.extend(mine)
            errors += bad

    threads = [threading.Thread(target=client) for _ in range(clients)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - began
    return len(latencies) / wall, 1000 * statistics.median(latencies), errors, len(latencies)


def routes(url: str) -> dict[str, str]:
    first = httpx.get(f"{url}/api/papers", params={"limit": 1}, timeout=TIMEOUT).json()["papers"][0]
    paper = first["paper_id"]
    return {
        "page: papers list (20 cards)": f"{url}/",
        "page: one paper": f"{url}/papers/{paper}",
        "api: /api/papers?limit=50": f"{url}/api/papers?limit=50",
        "api: /api/papers/{id}": f"{url}/api/papers/{paper}",
        "api: /api/items?item_type=gain": f"{url}/api/items?item_type=gain&limit=100",
    }


def server_cpu_seconds(db: Path) -> float:
    """CPU seconds (user + system) the server holding ``db`` has used so far, from
    /proc; its PID is in the file that names the server (warehouse/db.py server_file)."""
    pid = json.loads(server_file(db).read_text(encoding="utf-8"))["pid"]
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_reads(db: Path, label: str, clients: int, seconds: float) -> None:
    with server_process(db, start_s=TIMEOUT) as url:
        for name, target in routes(url).items():
            httpx.get(target, timeout=TIMEOUT)  # warm
            cpu = server_cpu_seconds(db)
            rate, median, errors, count = hammer(target, clients, seconds)
            per_request = 1000 * (server_cpu_seconds(db) - cpu) / max(count, 1)
            print(f"{label:>18} | {name:<32} | {rate:7.1f} req/s | median {median:7.1f} ms"
                  f" | server CPU {per_request:6.1f} ms/req | non-200: {errors}", flush=True)


def synthetic_warehouse(db: Path, papers: int) -> Path:
    """A warehouse of ``papers`` synthetic abstracts (bench/synth.py) holding the rows a
    run stores for each: its paper and source rows and one extraction, answered with the
    simulated endpoint's own draft and grounded by papersift (bench/warehouse_writes.py
    builds the same rows). No HTTP: through the simulator, 10,000 papers took over 35
    minutes on the loaded machine; read figures need the rows, not the requests."""
    started, cpu = time.perf_counter(), time.process_time()
    with Warehouse(db) as warehouse:
        warehouse.start_run(RUN_ID, params={"bench": "serve_load"}, inputs=["synthetic"])
        pending = Batch()
        for count, batch in enumerate(template_batches(papers), start=1):
            pending.extend(batch)
            if count % 500 == 0 or count == papers:
                warehouse.write(pending)
                pending = Batch()
        warehouse.finish_run(RUN_ID, "completed", RunCounts(papers, papers, 0, 0, 0, 0))
        stored = warehouse.con.execute("SELECT count(*) FROM latest_extractions").fetchone()
    print(f"built {db.name}: {stored[0] if stored else 0} papers with an extraction in "
          f"{time.perf_counter() - started:.0f}s wall, {time.process_time() - cpu:.0f}s CPU",
          flush=True)
    return db


def measure_extraction(folder: Path, papers: int, singles: int) -> None:
    """A background run of ``papers`` synthetic abstracts through POST /api/runs, and
    ``singles`` abstracts one POST /api/extract after another."""
    corpus = folder / "extract-corpus"
    written = write_corpus(corpus, papers + singles, files=1, fmt="jsonl", seed=11)
    lines = written[0].read_text(encoding="utf-8").splitlines()
    run_file = folder / "run.jsonl"
    run_file.write_text("\n".join(lines[:papers]) + "\n", encoding="utf-8")

    db = folder / "extract.duckdb"
    replay_corpus(db)  # a warehouse to start from
    with SimEndpoint.spawn(SimConfig(latency="fixed:0.2")) as sim, \
            server_process(db, *SIM_ARGS, "--base-url", sim.base_url,
                           "--inputs-root", str(folder)) as url:
        started = time.perf_counter()
        job = httpx.post(f"{url}/api/runs", json={"inputs": [str(run_file)]},
                         timeout=TIMEOUT).json()
        while job["status"] in ("queued", "running"):
            time.sleep(0.2)
            job = httpx.get(f"{url}/api/jobs/{job['job_id']}", timeout=TIMEOUT).json()
        wall = time.perf_counter() - started
        print(f"POST /api/runs: {job['extracted']} of {papers} extracted, status "
              f"{job['status']}, {wall:.1f}s -> {job['extracted'] / wall:.1f} abstracts/s "
              "(simulator: 0.2 s per answer, client concurrency 32)", flush=True)
        started = time.perf_counter()
        for line in lines[papers:papers + singles]:
            answer = httpx.post(f"{url}/api/extract", timeout=TIMEOUT,
                                json={"abstract": json.loads(line)["abstract"]})
            assert answer.status_code == 200, answer.text
        wall = time.perf_counter() - started
        print(f"POST /api/extract, one after another: {singles} in {wall:.1f}s -> "
              f"{singles / wall:.2f} abstracts/s, {1000 * wall / singles:.0f} ms each "
              "(0.2 s of it the simulator's latency)", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--extract-papers", type=int, default=1000)
    parser.add_argument("--singles", type=int, default=20)
    parser.add_argument("--synthetic-db", type=Path,
                        help="the synthetic warehouse: reused when it exists, else built "
                             "there and kept")
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=["bundled", "synthetic", "extraction"])
    args = parser.parse_args()
    cpus = subprocess.run(["nproc"], check=False, capture_output=True, text=True).stdout
    print(f"{cpus.strip()} CPUs; {args.clients} client threads, {args.seconds:g}s per route",
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if "bundled" not in args.skip:
            bundled = folder / "bundled.duckdb"
            replay_corpus(bundled)
            measure_reads(bundled, "bundled (63)", args.clients, args.seconds)
        if "synthetic" not in args.skip:
            synth = args.synthetic_db or folder / f"synth-{args.papers}.duckdb"
            if not synth.exists():
                synthetic_warehouse(synth, args.papers)
            measure_reads(synth, f"synthetic ({args.papers})", args.clients, args.seconds)
        if "extraction" not in args.skip:
            measure_extraction(folder, args.extract_papers, args.singles)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
