"""The review commands, `papersift serve`, `papersift corrections` and `papersift
introductions`, added to the CLI group by cli.py (kept apart so cli.py stays short)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from papersift.extract.interface import options
from papersift.extract.interface.cli_common import db_option, known_errors
from papersift.extract.interface.serve.defaults import DEFAULT_PORT, TOKEN_ENV


@click.command("serve")
@db_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; anything but loopback needs --token.")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True)
@click.option("--token", envvar=TOKEN_ENV, help=f"Every request must carry it (env {TOKEN_ENV}).")
@click.option("--read-only", is_flag=True, help="Browse only: every change is refused.")
@click.option("--reviewer", help="The reviewer name stored with corrections (the page can "
                                 "override it).")
@click.option("--inputs-root", "inputs_roots", multiple=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="POST /api/runs reads files only below this folder (repeatable; "
                   "default: the current folder).")
@options.apply(options.RUN_OPTIONS)
@known_errors
def serve_command(db: Path, host: str, port: int, token: str | None, read_only: bool,
                  reviewer: str | None, inputs_roots: tuple[Path, ...], **kw: Any) -> None:
    """Serve the review UI and the JSON API over a warehouse.

    Pages: paper cards with highlighted evidence, accept / reject / edit per item, add a
    missed item by selecting abstract text, a queue (conflicts, flagged, unreviewed). API
    under /api (schema at /api/openapi.json), including POST /api/extract and /api/runs,
    which extract with the endpoint options given here. The server holds the warehouse:
    while it runs, extract through it.
    """
    from papersift.extract.interface.serve.config import ServeConfig, ServeError
    from papersift.extract.interface.serve.main import serve

    try:
        serve(ServeConfig(db=db, host=host, port=port, token=token, read_only=read_only,
                          reviewer=reviewer, inputs_roots=inputs_roots,
                          settings=options.pop_settings(db, kw)))
    except ServeError as error:
        raise click.ClickException(str(error)) from error


@click.group("corrections")
def corrections_group() -> None:
    """Reviewers' corrections (made in `papersift serve`)."""


@corrections_group.command("export")
@db_option
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), default="csv",
              show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write here (default: standard output).")
@click.option("--gold", "gold_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the reviewed papers as a gold file (papersift-gold/1).")
@known_errors
def corrections_export(db: Path, fmt: str, out: Path | None, gold_out: Path | None) -> None:
    """Write every correction (append-only history, with its conflict state)."""
    from papersift.extract.interface import corrections as library

    text, count = library.write_corrections(db, out, fmt)
    if out is None:
        click.echo(text, nl=False)
    else:
        click.echo(f"{count} corrections -> {out}", err=True)
    if gold_out is not None:
        path, papers = library.write_gold(db, gold_out)
        click.echo(f"{papers} reviewed papers -> {path}", err=True)


@corrections_group.command("pool")
@db_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The pool file to write, e.g. prompts/pools/mine.json.")
@known_errors
def corrections_pool(db: Path, out: Path) -> None:
    """Write the reviewed papers, corrections applied, as a few-shot pool for
    `papersift run --fewshot-pool FILE` (versioned by content hash)."""
    from papersift.extract.interface import corrections as library

    report = library.write_pool(db, out)
    for result in report.skipped:
        click.echo(f"left out {result.paper_id}: {result.reason}", err=True)
    for result in report.trimmed:
        for item in result.left_out:
            click.echo(f"{result.paper_id}: left out {item}", err=True)
    click.echo(f"{report.examples} examples ({len(report.skipped)} reviewed papers left "
               f"out) -> {report.path}, version {report.version}", err=True)


@click.command("introductions")
@db_option
@click.option("--check", is_flag=True,
              help="Check again now (every run checks after extracting).")
@click.option("--dry-run", is_flag=True, help="Check and print, write nothing.")
@known_errors
def introductions_command(db: Path, check: bool, dry_run: bool) -> None:
    """Benchmarks marked not introduced because other papers of the same collection name
    them, with each reason. Undo one in `papersift serve` (set introduced back)."""
    from papersift.extract.runs import introductions as library

    if check or dry_run:
        result = library.check_introductions(db, apply=not dry_run)
        for paper_id, verdict in result.marked:
            click.echo(f"{paper_id}  {verdict.name}: {verdict.reason}")
        click.echo(f"checked {result.checked} introduced benchmark(s): "
                   f"{len(result.marked)} {'would be ' if dry_run else ''}marked not "
                   f"introduced, {result.kept_against_users} kept by their own cue, "
                   f"{result.left_to_people} left to people", err=True)
        if dry_run:
            return
    verdicts = library.listed_verdicts(db)
    for row in verdicts:
        state = "holds" if row["holds"] else "changed since"
        click.echo(f"{row['paper_id']}  {row['item_key']}  [{state}]  {row['note']}")
    click.echo(f"{len(verdicts)} verdict(s) of the collection check", err=True)


def register(group: click.Group) -> None:
    group.add_command(serve_command)
    group.add_command(corrections_group)
    group.add_command(introductions_command)
