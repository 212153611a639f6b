"""`papersift serve` under concurrent reviewing (issue 28, severe 2): N reviewers at once,
each on a paper of its own, each round a `GET /api/papers/{id}` then a `POST
/api/corrections` (accept, reject, restore, edit, in turn) on that paper's first item.

A request that does not answer within --timeout is a hang; after the load the server is
killed with SIGKILL and the warehouse opened again: every correction that got a 201 must
be stored (lost: those that are not). With --with-run N, a background run of N synthetic
abstracts (POST /api/runs, simulated endpoint) writes batches meanwhile. Prints
requests/s, p50/p99 latency, hangs, lost:

    python -m bench.serve_review_load [--clients 60] [--rounds 4] [--timeout 120]
                                      [--with-run 300]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.simendpoint import SimConfig, SimEndpoint
from bench.synth import write_corpus
from papersift.testing.corpus import replay_corpus
from papersift.testing.serving import server_process
from papersift.warehouse.db import connect, server_file


@dataclass
class Tally:
    """What the reviewers saw, gathered from every thread."""

    latencies: list[float] = field(default_factory=list)
    stored: list[str] = field(default_factory=list)  # correction ids answered with 201
    created: int = 0  # 201 answers (an edit of a name answers two rows: edit, grounding)
    hangs: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _action(round_no: int, item: dict[str, Any]) -> dict[str, Any]:
    """The round's action on the item: accept, reject, restore, then an edit."""
    kind = ("accept", "reject", "restore", "edit")[round_no % 4]
    body: dict[str, Any] = {"item_type": item["item_type"], "item_key": item["item_key"],
                            "version": item["version"], "action": kind}
    if kind == "reject":
        body["note"] = "load test"
    if kind == "edit":
        field_name = "unit" if item["item_type"] == "gain" else "name"
        old = str(item.get(field_name) or "")
        body["changes"] = {field_name: old + " (r)" if not old.endswith(" (r)")
                           else old[:-4]}
    return body


def reviewer(url: str, paper_id: str, rounds: int, timeout: float, tally: Tally,
             start: threading.Barrier) -> None:
    """One reviewer: read the paper, correct its first item, ``rounds`` times."""
    mine: list[float] = []
    stored: list[str] = []
    with httpx.Client(base_url=url, timeout=timeout) as client:
        start.wait()

        def timed(call: Callable[[], httpx.Response]) -> httpx.Response | None:
            began = time.perf_counter()
            try:
                answer = call()
            except httpx.TimeoutException:
                with tally.lock:
                    tally.hangs += 1
                return None
            mine.append(time.perf_counter() - began)
            return answer

        reviewed = 0  # a paper without items: marked reviewed, versions 1, 2, ...
        for round_no in range(rounds):
            paper = timed(lambda: client.get(f"/api/papers/{paper_id}"))
            if paper is None:
                break
            items = paper.json()["items"]
            body: dict[str, Any] = {"paper_id": paper_id, "version": reviewed,
                                    "item_type": "paper", "action": "reviewed"}
            if items:
                body = {"paper_id": paper_id, **_action(round_no, items[0])}
            else:
                reviewed += 1
            answer = timed(lambda b=body: client.post("/api/corrections", json=b))
            if answer is None:
                break
            if answer.status_code == 201:
                stored.extend(row["correction_id"] for row in answer.json()["corrections"])
                with tally.lock:
                    tally.created += 1
            else:
                with tally.lock:
                    tally.errors.append(f"{answer.status_code} {answer.text[:120]}")
    with tally.lock:
        tally.latencies.extend(mine)
        tally.stored.extend(stored)


def run_load(url: str, papers: list[str], rounds: int, timeout: float) -> tuple[Tally, float]:
    """Every reviewer at once; (what they saw, wall seconds)."""
    tally = Tally()
    start = threading.Barrier(len(papers))
    threads = [threading.Thread(target=reviewer, args=(url, pid, rounds, timeout, tally, start),
                                daemon=True) for pid in papers]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout * rounds * 2 + 30)
    return tally, time.perf_counter() - began


def stored_ids(db: Path) -> set[str]:
    con = connect(db, read_only=True)
    try:
        return {row[0] for row in con.execute("SELECT correction_id FROM corrections").fetchall()}
    finally:
        con.close()


def measure(db: Path, clients: int, rounds: int, timeout: float,
            run_file: Path | None = None, *server_args: str) -> dict[str, Any]:
    """The load on a server over ``db`` (with a background run of ``run_file``), then
    SIGKILL and a count of what was kept."""
    with server_process(db, *server_args, start_s=120) as url:
        listed = httpx.get(f"{url}/api/papers", params={"limit": 1000}, timeout=60).json()
        papers = [paper["paper_id"] for paper in listed["papers"]][:clients]
        job_id = None
        if run_file is not None:
            job_id = httpx.post(f"{url}/api/runs", json={"inputs": [str(run_file)]},
                                timeout=timeout).json()["job_id"]
        tally, wall = run_load(url, papers, rounds, timeout)
        job = (httpx.get(f"{url}/api/jobs/{job_id}", timeout=timeout).json()
               if job_id else {"status": "-", "done": 0})
        try:
            health = httpx.get(f"{url}/api/health", timeout=timeout).status_code
        except httpx.HTTPError:
            health = 0
        pid = int(json.loads(server_file(db).read_text(encoding="utf-8"))["pid"])
        os.kill(pid, signal.SIGKILL)  # what a 201 promised must survive a kill
        time.sleep(0.5)
    lost = set(tally.stored) - stored_ids(db)
    ordered = sorted(tally.latencies) or [0.0]
    return {"clients": len(papers), "requests": len(tally.latencies), "wall_s": wall,
            "rps": len(tally.latencies) / wall, "p50_ms": 1000 * statistics.median(ordered),
            "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
            "hangs": tally.hangs, "lost": len(lost), "stored": len(tally.stored),
            "created": tally.created,
            "refused": len(tally.errors), "health_after": health,
            "run": f"{job['status']}, {job['done']} abstracts done during the load",
            "first_refusal": tally.errors[0] if tally.errors else ""}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="seconds a request may take before it counts as a hang")
    parser.add_argument("--db", type=Path, help="a replayed corpus warehouse to copy "
                        "(default: replay the bundled corpus first)")
    parser.add_argument("--with-run", type=int, default=0, metavar="N",
                        help="a background run of N synthetic abstracts meanwhile")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, SimEndpoint.spawn(SimConfig()) as sim:
        db = Path(tmp) / "review.duckdb"
        if args.db is not None:
            db.write_bytes(args.db.read_bytes())
        else:
            replay_corpus(db)
        run_file = None
        if args.with_run:
            run_file = write_corpus(Path(tmp) / "run", args.with_run, seed=28)[0]
        got = measure(db, args.clients, args.rounds, args.timeout, run_file,
                      "--provider", "compatible", "--model", "gpt-4o-mini",
                      "--base-url", sim.base_url, "--inputs-root", tmp)
    print(f"{got['clients']} reviewers x {args.rounds} rounds (GET paper + POST correction): "
          f"{got['requests']} requests in {got['wall_s']:.1f}s -> {got['rps']:.1f} req/s | "
          f"p50 {got['p50_ms']:.0f} ms, p99 {got['p99_ms']:.0f} ms | hangs {got['hangs']} | "
          f"201s {got['created']} ({got['stored']} rows), lost after SIGKILL {got['lost']} | "
          f"refused "
          f"{got['refused']} | /api/health after: {got['health_after']}", flush=True)
    if args.with_run:
        print(f"background run: {got['run']}")
    if got["first_refusal"]:
        print(f"first refusal: {got['first_refusal']}")
    return 0 if got["hangs"] == 0 and got["lost"] == 0 and got["health_after"] == 200 else 1


if __name__ == "__main__":
    raise SystemExit(main())
