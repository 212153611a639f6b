"""Collecting a Batch API result file: answers/s and peak memory for N answers.

Builds (once, cached under --work) a synthetic corpus of N abstracts, the request body
papersift sends for each, and a result file answering every line as the simulated
endpoint would (``bench.simendpoint.completion_for``). Then, in a fresh process per
measurement, a warehouse with the papers, the run and the batch stored (as after a
submit) collects the file through ``BatchDispatch.collect``, the code a real run uses:
parse every line with instructor, ground it, build its rows, write them. Prints the
collection time, answers/s, the process's CPU seconds (its own and its workers'), peak
RSS (``ru_maxrss``; a process that only imports papersift is about 120 MiB) and the rows
stored.

    python -m bench.batch_collect --answers 50000 [--work /tmp/papersift-collect]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.simendpoint import completion_for
from bench.synth import write_corpus
from papersift.extract.access.extractor import Extractor
from papersift.extract.access.llm import Endpoint
from papersift.extract.runs.batch import BatchDispatch, read_jsonl
from papersift.extract.runs.ingest_files import ingest
from papersift.extract.runs.pipeline import Runner, ingest_batch, jobs_from
from papersift.prompts import load_prompt
from papersift.warehouse import Warehouse
from papersift.warehouse.batches import BatchRecord, BatchRequest, record_submission

ENDPOINT = Endpoint(base_url="http://127.0.0.1:1/v1", model="gpt-4o-mini", mode="json")
BATCH_ID = "batch_bench"


def prepare(work: Path, answers: int) -> Path:
    """The corpus and the result file for ``answers`` abstracts (reused when present)."""
    results = work / f"results-{answers}.jsonl"
    if results.exists():
        return results
    write_corpus(work / f"corpus-{answers}", answers, files=1, fmt="jsonl", seed=5)
    extractor = Extractor(ENDPOINT, load_prompt())
    created = int(time.time())
    partial = results.with_suffix(".partial")  # renamed when whole: a rerun never reads half
    with partial.open("w", encoding="utf-8") as out:
        for paper in ingest([work / f"corpus-{answers}"]).papers:
            body = extractor.request_body(paper.text)
            line = {"id": f"line-{paper.paper_id[7:23]}", "custom_id": paper.paper_id,
                    "response": {"status_code": 200, "request_id": "req",
                                 "body": completion_for(body, "gpt-4o-mini", created)},
                    "error": None}
            out.write(json.dumps(line) + "\n")
    extractor.close()
    partial.rename(results)
    return results


def collect(work: Path, answers: int) -> dict[str, float]:
    """One measurement (run in its own process): store papers and batch, then collect."""
    results = work / f"results-{answers}.jsonl"
    extractor = Extractor(ENDPOINT, load_prompt())
    with tempfile.TemporaryDirectory() as folder, Warehouse(Path(folder) / "c.duckdb") as wh:
        ingested = ingest([work / f"corpus-{answers}"])
        wh.write(ingest_batch(ingested, None))
        jobs = jobs_from(ingested)
        dispatch = BatchDispatch(wh)
        runner = Runner(wh, extractor, dispatch=dispatch)
        runner.start()
        wanted = {extractor.key_for(job.text, job.title): job for job in jobs}
        runner.add_jobs(jobs)
        record = BatchRecord(batch_id=BATCH_ID, run_id=runner.run_id,
                             endpoint=ENDPOINT.cache_identity, model=ENDPOINT.model,
                             mode=ENDPOINT.mode, prompt_version=extractor.prompt.version,
                             schema_version=None, input_file_id="file-in",
                             status="completed", request_count=len(jobs),
                             submitted=datetime.now(UTC).replace(tzinfo=None),
                             output_file_id="file-out")
        record_submission(wh, record, [BatchRequest(job.paper_id, job.paper_id, key)
                                       for key, job in wanted.items()])
        text = results.read_text(encoding="utf-8")
        # The result file from disk instead of the provider's files API.
        dispatch.download = (  # type: ignore[method-assign]
            lambda _client, file_id: read_jsonl(text) if file_id else {})
        before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        dispatch.collect(record, wanted, runner)
        runner.stop_row_workers()
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        stored = wh.con.execute("SELECT count(*) FROM extractions").fetchone()
        items = wh.con.execute("SELECT count(*) FROM extraction_tasks").fetchone()
    return {"answers": len(jobs), "seconds": seconds,
            "cpu_s": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
            "workers_cpu_s": children.ru_utime + children.ru_stime,
            "peak_rss_mib": after.ru_maxrss / 1024,
            "extractions": stored[0] if stored else 0, "tasks": items[0] if items else 0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=50_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/papersift-collect"))
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.measure:
        print(json.dumps(collect(args.work, args.answers)))
        return 0
    started = time.perf_counter()
    results = prepare(args.work, args.answers)
    print(f"result file: {results} ({results.stat().st_size / 1e6:.1f} MB), "
          f"prepared in {time.perf_counter() - started:.0f} s")
    measured = subprocess.run(
        [sys.executable, "-m", "bench.batch_collect", "--answers", str(args.answers),
         "--work", str(args.work), "--measure"],
        check=True, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    found = json.loads(measured.stdout.strip().splitlines()[-1])
    print(f"collected {found['answers']:,} answers in {found['seconds']:.1f} s = "
          f"{found['answers'] / found['seconds']:,.0f} answers/s; CPU {found['cpu_s']:.1f} s "
          f"(+ {found['workers_cpu_s']:.1f} s in row workers); peak RSS "
          f"{found['peak_rss_mib']:,.0f} MiB; stored {found['extractions']:,} extractions, "
          f"{found['tasks']:,} task rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
