"""What every papersift command shares: the error guard, the --db option, the consoles,
and the progress, summary and table displays."""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click
from rich.console import Console

from papersift.errors import InputError, PapersiftError
from papersift.extract.interface import options
from papersift.warehouse import is_database_error

if TYPE_CHECKING:  # the library loads when a command runs, not for `papersift --help`
    from papersift.extract.domain.reading.ingest_results import IngestProblem
    from papersift.extract.runs.batch import BatchProgress
    from papersift.extract.runs.pipeline import RunSummary
    from papersift.warehouse.query import QueryResult

DEFAULT_DB = "papersift.duckdb"
console = Console(stderr=True)
out = Console()

P = ParamSpec("P")
R = TypeVar("R")


class _NothingToRead(click.ClickException):
    exit_code = 2  # as when the inputs hold no abstract


def known_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn any expected error (a :class:`PapersiftError`) into its one-line message and
    exit status 1 (2 for inputs that name nothing: nothing to process); anything else is a
    bug and keeps its traceback."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except InputError as error:
            raise _NothingToRead(str(error)) from error
        except PapersiftError as error:
            raise click.ClickException(str(error)) from error
        except Exception as error:  # a full disk, a read-only place, a bad block
            if not _storage_error(error):
                raise
            from papersift.warehouse.db import storage_failure

            db = kwargs.get("db")
            raise click.ClickException(storage_failure(
                error, db if isinstance(db, str | Path) else None)) from None

    return wrapper


def _storage_error(error: Exception) -> bool:
    """An OSError, or DuckDB's own (warehouse.is_database_error)."""
    return isinstance(error, OSError) or is_database_error(error)


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
def sigterm_as_ctrl_c() -> Iterator[None]:
    """Inside the block SIGTERM stops the work like Ctrl-C does (KeyboardInterrupt): what
    was answered is stored before the process ends. Without it a `kill` lost the answers
    of the batch not yet written. Only where the command runs in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


@contextmanager
def batch_display() -> Iterator[Callable[[BatchProgress], None]]:
    """A rich progress bar per batch, fed at every poll: status, requests done, failed."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
    )

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
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

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


def print_summary(summary: RunSummary, db: Path) -> None:
    click.echo(summary.line())
    extras = [f"run {summary.run_id}", f"{summary.seconds:.1f}s",
              f"{summary.http_requests} HTTP requests",
              f"{summary.prompt_tokens:,} prompt + {summary.completion_tokens:,} completion tokens"]
    if summary.n_reasked:
        extras.append(f"{summary.n_reasked} needed a re-ask")
    if summary.n_cache_invalid:
        extras.append(f"{summary.n_cache_invalid} cached answer(s) no longer valid, asked again")
    click.echo("  " + " · ".join(extras))
    if summary.completion_tokens and summary.seconds:
        rate = summary.completion_tokens / summary.seconds
        click.echo(f"  {rate:.1f} completion tokens/s over the run")
    for note in summary.notes:
        click.echo(f"  {note}")
    for paper_id, reason, detail in summary.failures[:10]:
        click.echo(f"  failed {paper_id[:19]}… {reason}: {detail[:160]}")
    if len(summary.failures) > 10:
        click.echo(f"  … and {len(summary.failures) - 10} more: papersift query failures --db {db}")
    print_problems(summary.input_problems, "input problem", db)
    if summary.status == "budget_reached":
        click.echo("  run stopped at its --max-cost budget: rerun with a larger budget to "
                   "continue (what is stored stays; nothing is paid twice)")
    elif summary.status != "finished":
        click.echo(f"  run {summary.status}: rerun the same command to continue")


def print_problems(problems: list[IngestProblem], label: str, db: Path,
                    limit: int = 20) -> None:
    """The first ``limit`` input problems, then a count (a broken file can have 100,000)."""
    for problem in problems[:limit]:
        click.echo(f"  {label}: {problem.message}")
    if len(problems) > limit:
        click.echo(f"  … and {len(problems) - limit} more: papersift query failures --db {db}")


def print_result(result: QueryResult, fmt: str) -> None:
    if fmt == "csv":
        click.echo(result.to_csv(), nl=False)
    elif fmt == "json":
        click.echo(result.to_json())
    else:
        print_readable(result.columns, result.rows)
        console.print(f"{len(result.rows)} row(s)")


def print_readable(columns: list[str], rows: list[tuple[Any, ...]]) -> None:
    """A table when the columns fit the terminal, else one block per record; cells on
    one line, clipped with an ellipsis (see result_view)."""
    from rich.markup import escape
    from rich.table import Table

    from papersift.extract.interface import result_view

    shape, cut = result_view.layout(columns, rows, out.width)
    if shape == "records":
        for line in result_view.records(columns, rows, out.width):
            click.echo(line)
    else:
        widths = result_view.column_widths(result_view.natural_widths(columns, rows),
                                           out.width)
        table = Table(show_lines=False)
        for column, width in zip(columns, widths, strict=True):
            table.add_column(result_view.clip(column, width), width=width, no_wrap=True)
        for row in rows:
            table.add_row(*[escape(result_view.clip(result_view.cell_text(v), w))
                            for v, w in zip(row, widths, strict=True)])
        out.print(table)
    if cut:
        console.print("(long values clipped with …: --format csv or json gives them whole)")
