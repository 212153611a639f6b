"""Run a reference baseline on the same OpenAI-compatible server as papersift, stored as an
ordinary papersift run so that `papersift eval --gold FILE --run RUN_ID` scores it.

    python -m bench.baselines naive --base-url http://127.0.0.1:8080/v1 --model qwen \\
        --db bench.duckdb --gold bench/gold/neurips-2026.gold.json
    python -m bench.baselines langextract --base-url ... --model ... --db ... \\
        --papers examples/neurips-2026/ --limit 5

naive: a plain instructor call with a naive schema (bench/baseline_naive.py).
langextract: google's langextract with few-shot examples (bench/baseline_langextract.py;
needs `pip install -e '.[baselines]'`).

--gold extracts exactly the gold file's papers, which must be in the warehouse (add
--papers to ingest them first); --papers alone extracts every abstract it reads. Prints the
run id, a summary line and the time each paper took.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.baseline_common import BaselineExtractor
from papersift.extract.domain.reading.ingest import DEFAULT_MAX_CHARS
from papersift.extract.runs.pipeline import (
    Job,
    Progress,
    Runner,
    RunSummary,
    ingest_into,
    jobs_for_stored,
    jobs_from,
    new_run_id,
)
from papersift.warehouse import Warehouse

ROOT = Path(__file__).resolve().parent.parent


class BaselineError(Exception):
    """Bad arguments or input: the message names the file and the problem."""


def gold_paper_ids(path: Path) -> list[str]:
    """The paper ids of a gold file ({"papers": [{"paper_id": ...}, ...]}), in its order."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise BaselineError(f"{path}: no such gold file") from error
    except UnicodeDecodeError as error:
        raise BaselineError(f"{path}: not UTF-8 text (byte {error.start})") from error
    except json.JSONDecodeError as error:
        raise BaselineError(f"{path}: invalid JSON at line {error.lineno}, column "
                            f"{error.colno}: {error.msg}") from error
    papers = data.get("papers") if isinstance(data, dict) else None
    if not isinstance(papers, list):
        raise BaselineError(f'{path}: expected an object with a "papers" list')
    ids: list[str] = []
    for index, paper in enumerate(papers):
        paper_id = paper.get("paper_id") if isinstance(paper, dict) else None
        if not isinstance(paper_id, str) or not paper_id:
            raise BaselineError(f'{path}: papers[{index}] has no "paper_id" string')
        if paper_id not in ids:
            ids.append(paper_id)
    return ids


def _gold_jobs(warehouse: Warehouse, gold: Path) -> list[Job]:
    ids = gold_paper_ids(gold)
    rows = warehouse.con.execute(
        "SELECT paper_id, text FROM papers WHERE list_contains(?, paper_id)", [ids]
    ).fetchall()
    texts = {paper_id: text for paper_id, text in rows}
    missing = [paper_id for paper_id in ids if paper_id not in texts]
    if missing:
        raise BaselineError(
            f"{gold}: {len(missing)} of {len(ids)} gold papers are not in the warehouse "
            f"(first: {missing[0]}); add --papers with the corpus they come from, e.g. "
            "--papers examples/neurips-2026/"
        )
    return jobs_for_stored([(paper_id, texts[paper_id]) for paper_id in ids], DEFAULT_MAX_CHARS)


@dataclass
class BaselineRun:
    summary: RunSummary
    extractor: BaselineExtractor
    shares_warehouse: bool = False  # the warehouse also holds papersift's own runs

    def seconds(self) -> list[float]:
        return [seconds for _, seconds in self.extractor.timings]

    def lines(self) -> list[str]:
        """The run id, the summary and the per-paper time figures, for people."""
        summary = self.summary
        lines = [
            f"{self.extractor.baseline}: run {summary.run_id} ({summary.status})",
            f"  {summary.line()} in {summary.seconds:.1f}s · {summary.http_requests} HTTP "
            f"requests · {summary.prompt_tokens:,} prompt + {summary.completion_tokens:,} "
            "completion tokens",
        ]
        seconds = self.seconds()
        if seconds:
            lines.append(
                f"  seconds per paper asked: median {statistics.median(seconds):.2f}, mean "
                f"{statistics.fmean(seconds):.2f}, max {max(seconds):.2f} ({len(seconds)} "
                "papers)"
            )
        for paper_id, reason, detail in summary.failures:
            lines.append(f"  failed {paper_id}: {reason}: {detail[:160]}")
        if self.shares_warehouse:
            lines.append("  note: this warehouse also holds papersift runs; the baseline's answers "
                         "are now the latest for its papers (views, exports), until "
                         "`papersift run` is repeated (from the cache)")
        if self.extractor.notes:
            coerced = ", ".join(f"{what} ×{count}"
                                for what, count in sorted(self.extractor.notes.items()))
            lines.append(f"  coerced to the stored schema: {coerced}")
        return lines


def run_baseline(
    extractor: BaselineExtractor,
    db: Path,
    *,
    gold: Path | None = None,
    papers: Sequence[str] = (),
    limit: int | None = None,
    use_cache: bool = True,
    progress: Progress | None = None,
) -> BaselineRun:
    """Extract the gold papers (or every paper read from ``papers``) with the baseline,
    stored as a papersift run whose params name the baseline."""
    if gold is None and not papers:
        raise BaselineError("give --gold FILE, --papers PATH, or both")
    run_id = new_run_id()
    with Warehouse(db) as warehouse:
        jobs: list[Job] = []
        if papers:
            result, _ = ingest_into(warehouse, list(papers), max_chars=DEFAULT_MAX_CHARS,
                                    run_id=run_id)
            jobs = jobs_from(result)
        if gold is not None:
            jobs = _gold_jobs(warehouse, gold)
        if limit is not None:
            jobs = jobs[:limit]
        inputs = ([str(gold)] if gold is not None else []) + [str(p) for p in papers]
        runner = Runner(warehouse, extractor, use_cache=use_cache, progress=progress,
                        run_id=run_id, inputs=inputs,
                        extra_params={"baseline": extractor.baseline, "limit": limit})
        summary = runner.run(jobs)
        shared = warehouse.con.execute(
            "SELECT count(*) FROM runs WHERE prompt_version NOT LIKE 'baseline:%'").fetchone()
    return BaselineRun(summary, extractor, shares_warehouse=bool(shared and shared[0]))


def _make_extractor(args: argparse.Namespace) -> BaselineExtractor:
    if args.baseline == "naive":
        from bench.baseline_naive import naive_extractor

        return naive_extractor(args.base_url, args.model, timeout_s=args.timeout)
    try:
        from bench.baseline_langextract import langextract_extractor
    except ImportError as error:
        raise BaselineError(f"langextract is not installed ({error}); "
                            "pip install -e '.[baselines]'") from error
    return langextract_extractor(args.base_url, args.model, timeout_s=args.timeout,
                                 max_char_buffer=args.max_char_buffer)


def _print_each_paper(extractor: BaselineExtractor) -> Progress:
    """Print each paper the baseline answers, with the seconds it took."""
    shown = 0

    def progress(event: str, summary: RunSummary) -> None:
        nonlocal shown
        if event != "advance":
            return
        for paper_id, seconds in extractor.timings[shown:]:
            print(f"  [{summary.done}/{summary.n_abstracts}] {paper_id[:19]} {seconds:.2f}s",
                  flush=True)
        shown = len(extractor.timings)

    return progress


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("baseline", choices=["naive", "langextract"])
    parser.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", required=True, help="model name sent to the server")
    parser.add_argument("--db", type=Path, required=True, help="the warehouse (DuckDB file)")
    parser.add_argument("--gold", type=Path, help="extract exactly this gold file's papers")
    parser.add_argument("--papers", action="append", default=[],
                        help="ingest these files or folders (repeatable)")
    parser.add_argument("--limit", type=int, help="only the first N papers")
    parser.add_argument("--no-cache", action="store_true", help="ask even when cached")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per request")
    parser.add_argument("--max-char-buffer", type=int, default=4000,
                        help="langextract: characters per chunk (default: one chunk each)")
    args = parser.parse_args(argv)
    try:
        extractor = _make_extractor(args)
        try:
            run = run_baseline(extractor, args.db, gold=args.gold, papers=args.papers,
                               limit=args.limit, use_cache=not args.no_cache,
                               progress=_print_each_paper(extractor))
        finally:
            extractor.close()
    except BaselineError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("\n".join(run.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
