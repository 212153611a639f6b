"""`papersift batch ...` and `papersift cache ...`: stored Batch API submissions and the
cache of model answers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import click

from papersift.extract.interface import options
from papersift.extract.interface.cli_common import (
    batch_display,
    db_option,
    endpoint_options,
    known_errors,
    print_result,
    print_summary,
    progress_bar,
)


@click.group()
def batch() -> None:
    """List, resume or cancel OpenAI Batch API submissions (see `run --batch`)."""


@batch.command("list")
@db_option
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True)
@known_errors
def batch_list(db: Path, fmt: str) -> None:
    """List stored batches, newest first: status, requests, and whether their results are
    stored (collected) yet."""
    from papersift.warehouse import reads

    result = reads.stored_batches(db)
    print_result(result, fmt)


@batch.command("resume")
@click.argument("batch_id")
@db_option
@endpoint_options
@click.option("--poll-interval", type=click.FloatRange(min=0.0), default=30.0,
              show_default=True, help="Seconds between status checks of the batch.")
@known_errors
def batch_resume(batch_id: str, db: Path, poll_interval: float, **kw: Any) -> None:
    """Poll stored batch BATCH_ID until it ends and store its results in a new run.

    Pass the endpoint options the batch was submitted with. A rerun of the same
    `run --batch` command resumes open batches too; this command needs no inputs.
    """
    from papersift.extract.interface import app
    from papersift.extract.runs.batch import BatchOptions

    settings = dataclasses.replace(options.pop_settings(db, kw),
                                   batch=BatchOptions(poll_interval_s=poll_interval))
    with progress_bar() as on_event, batch_display() as on_poll:
        summary = app.resume_batch(settings, batch_id, progress=on_event, on_poll=on_poll)
    print_summary(summary, db)


@batch.command("cancel")
@click.argument("batch_id")
@db_option
@endpoint_options
@known_errors
def batch_cancel(batch_id: str, db: Path, **kw: Any) -> None:
    """Ask the provider to cancel batch BATCH_ID. What it finished is still stored by
    `batch resume BATCH_ID` (or a rerun); the rest is recorded as failed, batch_cancelled."""
    from papersift.extract.interface import app

    status = app.cancel_stored_batch(options.pop_settings(db, kw), batch_id)
    click.echo(f"{batch_id}: {status}")


@click.group()
def cache() -> None:
    """Inspect or clear the cache of model answers."""


@cache.command("stats")
@db_option
@known_errors
def cache_stats(db: Path) -> None:
    """Show how many answers are cached, by model (reads only)."""
    from papersift.warehouse import Warehouse

    with Warehouse(db, read_only=True) as warehouse:
        stats = warehouse.cache_stats()
    click.echo(json.dumps(stats, indent=2))


@cache.command("clear")
@db_option
@click.option("--model", help="Clear only this model's answers.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@known_errors
def cache_clear(db: Path, model: str | None, yes: bool) -> None:
    """Delete cached answers (extractions already stored are kept)."""
    if not yes:
        click.confirm("Delete cached answers? Later runs will pay for them again", abort=True)
    from papersift.warehouse import Warehouse

    with Warehouse(db, create=False) as warehouse:
        count = warehouse.cache_clear(model)
    click.echo(f"deleted {count} cached answer(s)")
