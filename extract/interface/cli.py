"""The papersift command line: each command parses options, calls one library function,
and turns known errors into one clean message."""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click
import duckdb
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from papersift.errors import PapersiftError
from papersift.extract.domain.evaluate import headline
from papersift.extract.domain.ingest import DEFAULT_MAX_CHARS, IngestProblem
from papersift.extract.interface import app, cli_discover, eval_report, options
from papersift.extract.interface import entities as entities_lib
from papersift.extract.interface.entities_cli import entities
from papersift.extract.runs.batch import BatchOptions, BatchProgress
from papersift.extract.runs.pipeline import RunSummary
from papersift.report.render import write_report
from papersift.warehouse import Warehouse, reads
from papersift.warehouse.db import storage_failure
from papersift.warehouse.export import FORMATS, export
from papersift.warehouse.query import DEFAULT_TIMEOUT_S, QueryResult, run_sql, saved_queries
from papersift.warehouse.report import Price

DEFAULT_DB = "papersift.duckdb"
console = Console(stderr=True)
out = Console()

P = ParamSpec("P")
R = TypeVar("R")


def _known_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn any expected error (a :class:`PapersiftError`) into its one-line message and
    exit status 1; anything else is a bug and keeps its traceback."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except PapersiftError as error:
            raise click.ClickException(str(error)) from error
        except (duckdb.Error, OSError) as error:  # a full disk, a read-only place, a bad block
            db = kwargs.get("db")
            raise click.ClickException(storage_failure(
                error, db if isinstance(db, str | Path) else None)) from None

    return wrapper


db_option: Callable[[Callable[..., Any]], Callable[..., Any]] = click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DB,
    show_default=True,
    envvar="PAPERSIFT_DB",
    help="The DuckDB warehouse file.",
)


endpoint_options = options.apply(options.RUN_OPTIONS)
batch_options = options.apply(options.BATCH_OPTIONS)


@contextmanager
def batch_display() -> Iterator[Callable[[BatchProgress], None]]:
    """A rich progress bar per batch, fed at every poll: status, requests done, failed."""
    bar = Progress(
        TextColumn("[bold]batch {task.fields[batch_id]}"),
        TextColumn("{task.fields[status]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    tasks: dict[str, TaskID] = {}

    def on_poll(progress: BatchProgress) -> None:
        if not tasks:
            bar.start()
        if progress.batch_id not in tasks:
            tasks[progress.batch_id] = bar.add_task(
                "batch", total=progress.total, batch_id=progress.batch_id, status="", failed=0)
        bar.update(tasks[progress.batch_id], total=progress.total,
                   completed=progress.completed + progress.failed, status=progress.status,
                   failed=progress.failed)

    try:
        yield on_poll
    finally:
        bar.stop()


@contextmanager
def progress_bar() -> Iterator[Callable[[str, RunSummary], None]]:
    """A rich progress bar fed by the runner's events: papers, rate, ETA, tokens."""
    bar = Progress(
        TextColumn("[bold]extracting"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[detail]}"),
        console=console,
        transient=False,
    )
    task: list[TaskID] = []

    def on_event(event: str, summary: RunSummary) -> None:
        if event == "start":
            bar.start()
            task.append(bar.add_task("extract", total=summary.n_abstracts, rate="", detail=""))
            return
        if not task:
            return
        elapsed = bar.tasks[0].elapsed or 0.0
        rate = f"{summary.done / elapsed * 60:.1f}/min" if elapsed > 0 else ""
        tokens = summary.prompt_tokens + summary.completion_tokens
        detail = (
            f"{summary.n_cached} cached · {summary.n_failed} failed · {tokens:,} tok"
            + (f" ({summary.completion_tokens / elapsed:.1f} gen tok/s)" if elapsed else "")
        )
        # A streamed corpus grows its total as chunks arrive.
        bar.update(task[0], total=summary.n_abstracts, completed=summary.done, rate=rate,
                   detail=detail)
        if event == "end":
            bar.stop()

    try:
        yield on_event
    finally:
        bar.stop()


def _print_summary(summary: RunSummary, db: Path) -> None:
    click.echo(summary.line())
    extras = [f"run {summary.run_id}", f"{summary.seconds:.1f}s",
              f"{summary.http_requests} HTTP requests",
              f"{summary.prompt_tokens:,} prompt + {summary.completion_tokens:,} completion tokens"]
    if summary.n_reasked:
        extras.append(f"{summary.n_reasked} needed a re-ask")
    if summary.n_cache_invalid:
        extras.append(f"{summary.n_cache_invalid} cached answer(s) no longer valid, asked again")
    click.echo("  " + " · ".join(extras))
    for paper_id, reason, detail in summary.failures[:10]:
        click.echo(f"  failed {paper_id[:19]}… {reason}: {detail[:160]}")
    if len(summary.failures) > 10:
        click.echo(f"  … and {len(summary.failures) - 10} more: papersift query failures --db {db}")
    _print_problems(summary.input_problems, "input problem", db)
    if summary.status == "budget_reached":
        click.echo("  run stopped at its --max-cost budget: rerun with a larger budget to "
                   "continue (what is stored stays; nothing is paid twice)")
    elif summary.status != "finished":
        click.echo(f"  run {summary.status}: rerun the same command to continue")


def _print_problems(problems: list[IngestProblem], label: str, db: Path,
                    limit: int = 20) -> None:
    """The first ``limit`` input problems, then a count (a broken file can have 100,000)."""
    for problem in problems[:limit]:
        click.echo(f"  {label}: {problem.message}")
    if len(problems) > limit:
        click.echo(f"  … and {len(problems) - limit} more: papersift query failures --db {db}")


def _print_result(result: QueryResult, fmt: str) -> None:
    if fmt == "csv":
        click.echo(result.to_csv(), nl=False)
    elif fmt == "json":
        click.echo(result.to_json())
    else:
        table = Table(show_lines=False)
        for column in result.columns:
            table.add_column(column, overflow="fold")
        for row in result.rows:
            table.add_row(*["" if v is None else str(v) for v in row])
        out.print(table)
        console.print(f"{len(result.rows)} row(s)")


@click.group()
@click.version_option(package_name="papersift")
def cli() -> None:
    """papersift: research-paper abstracts in, a grounded DuckDB dataset out.

    Typical use: `papersift run examples/neurips-2026/`, then `papersift sql` or
    `papersift export`.
    """


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@db_option
@endpoint_options
@click.option("--record", "record_to", type=click.Path(dir_okay=False, path_type=Path),
              help="Save every HTTP exchange to this file (test recordings; see `make record`).")
@click.option("--dry-run", is_flag=True,
              help="Count abstracts and cache hits and estimate tokens and cost; send nothing.")
@batch_options
@_known_errors
def run(inputs: tuple[str, ...], db: Path, record_to: Path | None, dry_run: bool,
        **kw: Any) -> None:
    """Ingest INPUTS (files, folders, globs) and extract every abstract.

    Cached answers are reused, so rerunning after Ctrl-C or a crash continues where it
    stopped. Ends with `N abstracts: X extracted, Y from cache, Z failed`.
    """
    settings = dataclasses.replace(options.pop_settings(db, kw), record_to=record_to)
    if dry_run:
        for line in app.estimate_run(list(inputs), settings).lines():
            click.echo(line)
        return
    with progress_bar() as on_event, batch_display() as on_poll:
        try:
            report, summary = app.run_inputs(list(inputs), settings, progress=on_event,
                                             on_poll=on_poll)
        except KeyboardInterrupt:
            click.echo("interrupted: finished work is stored; rerun to continue", err=True)
            sys.exit(130)
    click.echo(f"read {report.files} file(s): {report.occurrences} abstracts, "
               f"{report.papers} distinct ({report.new_papers} new)")
    _print_summary(summary, db)
    if summary.n_failed or summary.input_problems:
        sys.exit(2 if summary.done == summary.n_failed else 0)


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@db_option
@click.option("--max-chars", type=click.IntRange(min=1), default=DEFAULT_MAX_CHARS,
              show_default=True)
@_known_errors
def ingest(inputs: tuple[str, ...], db: Path, max_chars: int) -> None:
    """Store the abstracts of INPUTS and where they occur, without extracting. Exits 2
    when no abstract at all could be read."""
    report = app.ingest_only(db, list(inputs), max_chars=max_chars)
    click.echo(f"read {report.files} file(s): {report.occurrences} abstracts, "
               f"{report.papers} distinct ({report.new_papers} new)")
    _print_problems(report.problems, "problem", db)
    if report.occurrences == 0:
        click.echo("no abstract was read: see the problems above", err=True)
        sys.exit(2)


@cli.command()
@db_option
@endpoint_options
@click.option("--all", "all_papers", is_flag=True,
              help="Extract every stored paper, not only those without an extraction.")
@click.option("--ids", "ids_file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Only these papers: a gold file, or one sha256: paper id per line.")
@batch_options
@_known_errors
def extract(db: Path, all_papers: bool, ids_file: Path | None, **kw: Any) -> None:
    """Extract stored papers (those without an extraction yet, unless --all)."""
    settings = options.pop_settings(db, kw)
    paper_ids = app.paper_ids_from(ids_file) if ids_file is not None else None
    with progress_bar() as on_event, batch_display() as on_poll:
        summary = app.extract_stored(settings, only_missing=not all_papers,
                                     paper_ids=paper_ids, progress=on_event, on_poll=on_poll)
    _print_summary(summary, db)


@cli.command("eval")
@click.option("--gold", "gold_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Hand-annotated gold file (format papersift-gold/1).")
@click.option("--gold-from-corrections", "from_corrections", is_flag=True,
              help="Score against the papers reviewers corrected in `papersift serve` "
                   "(written as a gold file beside the warehouse).")
@click.option("--run", "run_id", help="The run to score; default: the latest on the gold papers.")
@click.option("--compare", "compare", nargs=2, metavar="RUN_A RUN_B",
              help="Score two runs on the same gold file and show them side by side.")
@click.option("--ids", "ids_file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Score only these gold papers (one sha256: paper id per line).")
@click.option("--errors", "show_errors", is_flag=True,
              help="List each paper's false positives and false negatives per field.")
@click.option("--by-source", "by_source", is_flag=True,
              help="Also score each source (venue, else file) on its own.")
@db_option
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@_known_errors
def eval_command(gold_file: Path | None, from_corrections: bool, run_id: str | None,
                 compare: tuple[str, str] | None, ids_file: Path | None,
                 show_errors: bool, by_source: bool, db: Path,
                 fmt: str) -> None:
    """Score extractions against a gold file: per-field precision, recall and F1.

    Methods and benchmarks match by normalised name (aliases and acronyms count), gains by
    value and by value plus metric; also contribution types, the `introduced` flag, a soft
    task score, grounding (gain metrics, baselines and datasets too), re-asks, failures,
    tokens, latency and cost. Each evaluation is stored in the `evals` table. `--errors`
    lists what each paper got wrong, `--by-source` splits the scores, and `--compare`
    also lists the papers whose errors changed.
    """
    if (gold_file is None) == (not from_corrections):
        raise click.UsageError("give one of --gold FILE or --gold-from-corrections")
    if from_corrections:
        from papersift.extract.interface.corrections import write_gold

        gold_file, papers = write_gold(db)
        console.print(f"gold from corrections: {papers} reviewed papers -> {gold_file}")
    assert gold_file is not None
    only = app.paper_ids_from(ids_file) if ids_file is not None else None
    if compare:
        evaluations = app.compare_runs(db, gold_file, list(compare), only=only)
    else:
        evaluations = [app.evaluate_run(db, gold_file, run_id, only=only)]
    wanted = show_errors or by_source or bool(compare)
    extra = app.evaluation_details(db, gold_file, [e.run_id for e in evaluations], only=only) \
        if wanted else []
    if fmt == "json":
        click.echo(json.dumps([
            {"eval_id": e.eval_id, "run_id": e.run_id, "model": e.model,
             "prompt_version": e.prompt_version, "schema_version": e.schema_version,
             "gold_file": e.gold.path, "gold_sha256": e.gold.sha256, "metrics": e.metrics,
             **(eval_report.details_json(extra[n], show_errors, by_source) if extra else {})}
            for n, e in enumerate(evaluations)], indent=2))
        return
    table = Table(title=f"{gold_file} · {len(evaluations[0].gold.papers)} gold papers")
    table.add_column("figure")
    for evaluation in evaluations:
        table.add_column(f"{evaluation.run_id}\n{evaluation.model or ''}", justify="right")
    if len(evaluations) == 2:
        table.add_column("B - A", justify="right")
    rows = [headline(e.metrics) for e in evaluations]
    for index, (label, _) in enumerate(rows[0]):
        values = [row[index][1] for row in rows]
        cells = ["" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))
                 for v in values]
        if len(values) == 2:
            a, b = values
            numeric = isinstance(a, (int, float)) and isinstance(b, (int, float))
            cells.append(f"{b - a:+.3f}" if numeric else "")
        table.add_row(label, *cells)
    out.print(table)
    if by_source:
        for found in extra:
            out.print(eval_report.source_table(found))
    if show_errors:
        for found in extra:
            eval_report.print_errors(out, found)
    if compare:
        eval_report.print_changes(out, extra[0], extra[1])


@cli.command()
@click.argument("query")
@db_option
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True)
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True),
              default=DEFAULT_TIMEOUT_S, show_default=True,
              help="Stop the query after this many seconds.")
@click.option("--memory-limit", default="1GB", show_default=True,
              help="Most memory the query may hold (DuckDB size, e.g. 512MB, 4GB); beyond "
                   "it, it spills to a temporary folder removed afterwards.")
@_known_errors
def sql(query: str, db: Path, fmt: str, timeout_s: float, memory_limit: str) -> None:
    """Run a read-only SQL QUERY on the warehouse (writes fail).

    Tables and views: papers, sources, tasks, methods, benchmarks, gains,
    contribution_types, paper_summary, extractions, runs, calls, failures,
    embeddings, areas, paper_areas. Table macros (after `papersift index`):
    search_papers('query') (hybrid: BM25 + vectors, reciprocal rank fusion),
    similar_papers('sha256:...'). Ctrl-C stops a query at once.
    """
    _print_result(run_sql(db, query, timeout_s=timeout_s, memory_limit=memory_limit,
                          prepare=_search_macros()), fmt)


def _search_macros() -> Callable[[Any], None] | None:
    """search_papers(q) / similar_papers(id) for `papersift sql`, when [embed] is installed."""
    try:
        from papersift.extract.interface.discover import sql_preparer
    except ImportError:
        return None
    return sql_preparer()


@cli.command()
@click.argument("name", required=False)
@db_option
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True)
@click.option("--benchmark", help="For queries that take one (leaderboard): any spelling "
                                  "of the benchmark, or its entity id.")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="A parameter the saved query declares (`-- params:` line).")
@_known_errors
def query(name: str | None, db: Path, fmt: str, benchmark: str | None,
          params: tuple[str, ...]) -> None:
    """Run the saved query NAME, or list the saved queries."""
    saved = saved_queries()
    if name is None:
        for item in saved.values():
            takes = f" [--{' --'.join(item.params)}]" if item.params else ""
            click.echo(f"{item.name:26} {item.description}{takes}")
        return
    values: dict[str, str | None] = {"benchmark": benchmark}
    for param in params:
        key, sep, value = param.partition("=")
        if not sep:
            raise click.BadParameter(f"{param!r} is not KEY=VALUE", param_hint="--param")
        values[key.strip()] = value
    _print_result(entities_lib.saved_query(db, name, values), fmt)


cli.add_command(entities)


@cli.command("export")
@db_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="csv", show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("exports"), show_default=True)
@_known_errors
def export_command(db: Path, fmt: str, out_dir: Path) -> None:
    """Write the paper table and one long table per field as CSV, Parquet or JSONL."""
    for item in export(db, out_dir, fmt):
        click.echo(f"{item.path}  {item.rows} rows")


@cli.command("report")
@db_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              default=Path("report.html"), show_default=True, help="The HTML file to write.")
@click.option("--price", nargs=2, type=float, metavar="PROMPT COMPLETION",
              help="USD per million prompt and completion tokens, to price runs on a paid "
                   "endpoint (local runs cost nothing).")
@click.option("--top", type=int, default=10, show_default=True,
              help="How many tasks and benchmarks the overview ranks.")
@_known_errors
def report_command(db: Path, out: Path, price: tuple[float, float] | None, top: int) -> None:
    """Write a self-contained HTML review report of the warehouse.

    An overview with charts (contribution types, tasks, benchmarks, claimed gains, models,
    versions, tokens and cost) and one card per paper: the abstract with every evidence
    quote highlighted in its field's colour, flagged items marked, the fields beside it,
    and where it came from. Search and filters work offline: the file needs no network.
    """
    written = write_report(db, out, price=Price(*price) if price else None, top=top)
    click.echo(f"{written.path}  {written.papers} papers · {written.bytes / 1e6:.2f} MB · "
               f"{written.seconds:.2f}s")


@cli.command()
@db_option
@click.option("--limit", type=int, default=20, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True)
@_known_errors
def runs(db: Path, limit: int, fmt: str) -> None:
    """List recent runs with their counts, model and tokens."""
    result = reads.recent_runs(db, limit)
    _print_result(result, fmt)


@cli.group()
def batch() -> None:
    """List, resume or cancel OpenAI Batch API submissions (see `run --batch`)."""


@batch.command("list")
@db_option
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True)
@_known_errors
def batch_list(db: Path, fmt: str) -> None:
    """List stored batches, newest first: status, requests, and whether their results are
    stored (collected) yet."""
    result = reads.stored_batches(db)
    _print_result(result, fmt)


@batch.command("resume")
@click.argument("batch_id")
@db_option
@endpoint_options
@click.option("--poll-interval", type=click.FloatRange(min=0.0), default=30.0,
              show_default=True, help="Seconds between status checks of the batch.")
@_known_errors
def batch_resume(batch_id: str, db: Path, poll_interval: float, **kw: Any) -> None:
    """Poll stored batch BATCH_ID until it ends and store its results in a new run.

    Pass the endpoint options the batch was submitted with. A rerun of the same
    `run --batch` command resumes open batches too; this command needs no inputs.
    """
    settings = dataclasses.replace(options.pop_settings(db, kw),
                                   batch=BatchOptions(poll_interval_s=poll_interval))
    with progress_bar() as on_event, batch_display() as on_poll:
        summary = app.resume_batch(settings, batch_id, progress=on_event, on_poll=on_poll)
    _print_summary(summary, db)


@batch.command("cancel")
@click.argument("batch_id")
@db_option
@endpoint_options
@_known_errors
def batch_cancel(batch_id: str, db: Path, **kw: Any) -> None:
    """Ask the provider to cancel batch BATCH_ID. What it finished is still stored by
    `batch resume BATCH_ID` (or a rerun); the rest is recorded as failed, batch_cancelled."""
    status = app.cancel_stored_batch(options.pop_settings(db, kw), batch_id)
    click.echo(f"{batch_id}: {status}")


@cli.group()
def cache() -> None:
    """Inspect or clear the cache of model answers."""


@cache.command("stats")
@db_option
@_known_errors
def cache_stats(db: Path) -> None:
    """Show how many answers are cached, by model (reads only)."""
    with Warehouse(db, read_only=True) as warehouse:
        stats = warehouse.cache_stats()
    click.echo(json.dumps(stats, indent=2))


@cache.command("clear")
@db_option
@click.option("--model", help="Clear only this model's answers.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@_known_errors
def cache_clear(db: Path, model: str | None, yes: bool) -> None:
    """Delete cached answers (extractions already stored are kept)."""
    if not yes:
        click.confirm("Delete cached answers? Later runs will pay for them again", abort=True)
    with Warehouse(db) as warehouse:
        count = warehouse.cache_clear(model)
    click.echo(f"deleted {count} cached answer(s)")


@cli.command()
@_known_errors
def models() -> None:
    """List the local models: catalogue entries and GGUF files in the model cache.

    A catalogue model is 'assembled' once its GGUF has been built from the installed
    chunk packages and verified; `papersift run` does that on first use.
    """
    from papersift.extract.access.models import list_models

    for entry in list_models():
        marker = "*" if entry.get("default") else " "
        size = entry.get("size")
        size_text = f"{int(size) / 1e9:.2f} GB" if isinstance(size, int) else "?"
        click.echo(f"{marker} {entry.get('name')}  [{entry.get('status')}]  {size_text}")
        if entry.get("description"):
            click.echo(f"    {entry['description']}")
        click.echo(f"    {entry.get('path')}")
        if entry.get("install"):
            click.echo(f"    install: {entry['install']}")


cli_discover.register(cli, db_option, _known_errors, out, console)
from papersift.extract.interface.cli_review import register  # noqa: E402

register(cli)


def main() -> None:
    # instructor logs every failed attempt at ERROR; papersift records them in `calls`.
    logging.getLogger("instructor").setLevel(logging.CRITICAL)
    cli(prog_name="papersift")


if __name__ == "__main__":
    main()
