"""`papersift serve`: does `/api/health` keep answering while N `POST /api/extract`
requests wait (issue 28)? Against the simulated endpoint (a fake, papersift.testing.sim),
with --latency per model answer.

The server is the real CLI (`papersift serve`, uvicorn) over the replayed bundled
warehouse. N clients each post a synthetic abstract of their own at once; meanwhile one
client asks `/api/health` every --interval seconds until the last extraction answers.
Prints health latency p50/p99/max, the extractions' outcomes and wall time; figures, not
assertions:

    python -m bench.serve_extract_load [--clients 45] [--latency 1.0] [--interval 0.1]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

from bench.simendpoint import SimConfig, SimEndpoint
from bench.synth import write_corpus
from papersift.testing.corpus import replay_corpus
from papersift.testing.serving import server_process

TIMEOUT = 600.0


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values) or [0.0]
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def abstracts(folder: Path, count: int) -> list[str]:
    (path,) = write_corpus(folder, count, seed=45)
    return [json.loads(line)["abstract"] for line in path.read_text("utf-8").splitlines()]


def load(url: str, texts: list[str], interval: float) -> dict[str, object]:
    """Post every text at once while health is polled; what both saw."""
    outcomes: Counter[str] = Counter()
    extract_s: list[float] = []
    health_s: list[float] = []
    health_bad = 0
    lock = threading.Lock()
    start = threading.Barrier(len(texts) + 1)
    finished = threading.Event()

    def extractor(text: str) -> None:
        with httpx.Client(base_url=url, timeout=TIMEOUT) as client:
            start.wait()
            began = time.perf_counter()
            try:
                answer = client.post("/api/extract", json={"abstract": text})
                said = (answer.json().get("outcome") or "?" if answer.status_code == 200
                        else f"HTTP {answer.status_code}")
            except httpx.HTTPError as error:
                said = type(error).__name__
            with lock:
                extract_s.append(time.perf_counter() - began)
                outcomes[str(said)] += 1

    def poller() -> None:
        nonlocal health_bad
        with httpx.Client(base_url=url, timeout=TIMEOUT) as client:
            start.wait()
            while not finished.is_set():
                began = time.perf_counter()
                try:
                    ok = client.get("/api/health").status_code == 200
                except httpx.HTTPError:
                    ok = False
                health_s.append(time.perf_counter() - began)
                health_bad += not ok
                finished.wait(interval)

    threads = [threading.Thread(target=extractor, args=(text,), daemon=True) for text in texts]
    polling = threading.Thread(target=poller, daemon=True)
    began = time.perf_counter()
    for thread in [*threads, polling]:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT + 30)
    finished.set()
    polling.join(TIMEOUT)
    return {"wall_s": time.perf_counter() - began, "outcomes": dict(outcomes),
            "extract_p50_s": statistics.median(extract_s or [0.0]),
            "extract_max_s": max(extract_s or [0.0]),
            "health_n": len(health_s), "health_bad": health_bad,
            "health_p50_ms": 1000 * statistics.median(health_s or [0.0]),
            "health_p99_ms": 1000 * percentile(health_s, 0.99),
            "health_max_ms": 1000 * max(health_s or [0.0])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=45)
    parser.add_argument("--latency", type=float, default=1.0,
                        help="seconds the simulated endpoint takes per answer")
    parser.add_argument("--interval", type=float, default=0.1,
                        help="seconds between two health requests")
    args = parser.parse_args()
    config = SimConfig(latency=f"fixed:{args.latency}")
    with tempfile.TemporaryDirectory() as tmp, SimEndpoint.spawn(config) as sim:
        db = Path(tmp) / "serve.duckdb"
        replay_corpus(db)
        texts = abstracts(Path(tmp) / "in", args.clients)
        with server_process(db, "--provider", "compatible", "--model", "gpt-4o-mini",
                            "--base-url", sim.base_url, "--inputs-root", tmp,
                            start_s=120) as url:
            got = load(url, texts, args.interval)
    print(f"{args.clients} concurrent POST /api/extract (simulated endpoint, "
          f"{args.latency:g} s per answer): all answered in {got['wall_s']:.1f} s, "
          f"extract p50 {got['extract_p50_s']:.1f} s, max {got['extract_max_s']:.1f} s | "
          f"outcomes {got['outcomes']}")
    print(f"/api/health meanwhile: {got['health_n']} requests, p50 "
          f"{got['health_p50_ms']:.0f} ms, p99 {got['health_p99_ms']:.0f} ms, max "
          f"{got['health_max_ms']:.0f} ms, not 200: {got['health_bad']}", flush=True)
    return 0 if got["health_bad"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
