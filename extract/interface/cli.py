"""The papersift command line: each command parses options, calls one library function,
and turns known errors into one clean message."""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from papersift.extract.domain.reading.ingest_text import DEFAULT_MAX_CHARS
from papersift.extract.interface import cli_discover, cli_review, options
from papersift.extract.interface.cli_batch import batch, cache
from papersift.extract.interface.cli_common import (
    batch_display,
    batch_options,
    console,
    db_option,
    endpoint_options,
    known_errors,
    out,
    print_problems,
    print_result,
    print_summary,
    progress_bar,
    sigterm_as_ctrl_c,
)
from papersift.extract.interface.entities_cli import entities
from papersift.warehouse.choices import DEFAULT_TIMEOUT_S, FORMATS

if TYPE_CHECKING:
    from papersift.extract.interface.explain import Explained
    from papersift.warehouse.query import Prepare

# Each command imports the library it calls inside its body: `papersift --help` and
# `--version` load only click and rich (tests/test_cli_start.py checks it).


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
@known_errors
def run(inputs: tuple[str, ...], db: Path, record_to: Path | None, dry_run: bool,
        **kw: Any) -> None:
    """Ingest INPUTS (files, folders, globs) and extract every abstract.

    Cached answers are reused, so rerunning after Ctrl-C or a crash continues where it
    stopped. Ends with `N abstracts: X extracted, Y from cache, Z failed`.
    """
    from papersift.extract.interface import app

    settings = dataclasses.replace(options.pop_settings(db, kw), record_to=record_to)
    if dry_run:
        estimate = app.estimate_run(list(inputs), settings)
        for line in estimate.lines():
            click.echo(line)
        if not estimate.ok:
            sys.exit(2)
        return
    with sigterm_as_ctrl_c(), progress_bar() as on_event, batch_display() as on_poll:
        try:
            report, summary = app.run_inputs(list(inputs), settings, progress=on_event,
                                             on_poll=on_poll)
        except KeyboardInterrupt:
            click.echo("interrupted: finished work is stored; rerun to continue", err=True)
            sys.exit(130)
    click.echo(f"read {report.files} file(s): {report.occurrences} abstracts, "
               f"{report.papers} distinct ({report.new_papers} new)")
    print_summary(summary, db)
    if summary.n_failed or summary.input_problems:
        sys.exit(2 if summary.done == summary.n_failed else 0)


@cli.command()
@click.argument("inputs", nargs=-1, required=True)
@db_option
@click.option("--max-chars", type=click.IntRange(min=1), default=DEFAULT_MAX_CHARS,
              show_default=True)
@known_errors
def ingest(inputs: tuple[str, ...], db: Path, max_chars: int) -> None:
    """Store the abstracts of INPUTS and where they occur, without extracting. Exits 2
    when no abstract at all could be read."""
    from papersift.extract.interface import app

    report = app.ingest_only(db, list(inputs), max_chars=max_chars)
    click.echo(f"read {report.files} file(s): {report.occurrences} abstracts, "
               f"{report.papers} distinct ({report.new_papers} new)")
    print_problems(report.problems, "problem", db)
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
@known_errors
def extract(db: Path, all_papers: bool, ids_file: Path | None, **kw: Any) -> None:
    """Extract stored papers (those without an extraction yet, unless --all)."""
    from papersift.extract.interface import app

    settings = options.pop_settings(db, kw)
    paper_ids = app.paper_ids_from(ids_file) if ids_file is not None else None
    with sigterm_as_ctrl_c(), progress_bar() as on_event, batch_display() as on_poll:
        summary = app.extract_stored(settings, only_missing=not all_papers,
                                     paper_ids=paper_ids, progress=on_event, on_poll=on_poll)
    print_summary(summary, db)


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
@known_errors
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
    from rich.table import Table

    from papersift.extract.domain.evaluation.evaluate import headline
    from papersift.extract.interface import app, eval_report

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
@known_errors
def sql(query: str, db: Path, fmt: str, timeout_s: float, memory_limit: str) -> None:
    """Run a read-only SQL QUERY on the warehouse (writes fail).

    Tables and views: papers, sources, tasks, methods, benchmarks, gains,
    contribution_types, paper_summary, extractions, runs, calls, failures,
    embeddings, areas, paper_areas. Table macros (after `papersift index`):
    search_papers('query') (hybrid: BM25 + vectors, reciprocal rank fusion),
    similar_papers('sha256:...'). Ctrl-C stops a query at once.
    """
    from papersift.extract.interface.served import readable
    from papersift.warehouse.query import run_sql

    # while `papersift serve` holds the warehouse, the snapshot it publishes is read
    print_result(run_sql(readable(db), query, timeout_s=timeout_s, memory_limit=memory_limit,
                          prepare=_search_macros()), fmt)


def _search_macros() -> Prepare | None:
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
@known_errors
def query(name: str | None, db: Path, fmt: str, benchmark: str | None,
          params: tuple[str, ...]) -> None:
    """Run the saved query NAME, or list the saved queries."""
    from papersift.extract.interface import entities as entities_lib
    from papersift.warehouse.query import saved_queries

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
    print_result(entities_lib.saved_query(db, name, values), fmt)


cli.add_command(entities)


@cli.command("export")
@db_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="csv", show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("exports"), show_default=True)
@click.option("--excel", is_flag=True,
              help="CSV for Excel: UTF-8 with a byte-order mark, so CJK and accented text "
                   "opens right.")
@known_errors
def export_command(db: Path, fmt: str, out_dir: Path, excel: bool) -> None:
    """Write the paper table and one long table per field as CSV, Parquet or JSONL, or
    one Excel workbook (xlsx: a sheet per table)."""
    from papersift.warehouse.export import export

    for item in export(db, out_dir, fmt, bom=excel):
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
@known_errors
def report_command(db: Path, out: Path, price: tuple[float, float] | None, top: int) -> None:
    """Write a self-contained HTML review report of the warehouse.

    An overview with charts (contribution types, tasks, benchmarks, claimed gains, models,
    versions, tokens and cost) and one card per paper: the abstract with every evidence
    quote highlighted in its field's colour, flagged items marked, the fields beside it,
    and where it came from. Search and filters work offline: the file needs no network.
    """
    from papersift.report.render import write_report
    from papersift.warehouse.report import Price

    written = write_report(db, out, price=Price(*price) if price else None, top=top)
    click.echo(f"{written.path}  {written.papers} papers · {written.bytes / 1e6:.2f} MB · "
               f"{written.seconds:.2f}s")


@cli.command()
@db_option
@click.option("--limit", type=int, default=20, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True)
@known_errors
def runs(db: Path, limit: int, fmt: str) -> None:
    """List recent runs with their counts, model and tokens."""
    from papersift.warehouse import reads

    result = reads.recent_runs(db, limit)
    print_result(result, fmt)


@cli.command()
@click.argument("paper")
@db_option
@known_errors
def explain(paper: str, db: Path) -> None:
    """Why each name that may be PAPER's method, and each number that may be one of its
    results, was kept, flagged or refused, and what code added that the model did not
    give.

    PAPER is a paper_id (or its first 12+ characters), a source id or words of a title.
    Each line gives the decision's score (the probability that the name is the paper's
    own method, or that the number is a result it reports) and the features that pushed
    hardest toward the outcome; then each benchmark or gain code found in the abstract
    itself, with its reason.
    """
    from papersift.extract.interface.explain import added_by_code, explain_paper

    decided: dict[str, list[Explained]] = {}
    for item in explain_paper(db, paper):
        decided.setdefault(item.paper_id, []).append(item)
    added = added_by_code(db, paper)
    for paper_id in dict.fromkeys([*decided, *added]):  # papers with either, in order
        items = decided.get(paper_id, [])
        title, lines = added.get(paper_id, (items[0].title if items else None, []))
        click.echo(f"{title or '(no title)'}  [{paper_id[:19]}]")
        for item in items:
            stale = " (older weights)" if item.weights_changed else ""
            label = f"gain {item.name}" if item.field == "gains" else item.name
            click.echo(f"  {item.outcome:8} {item.score:.2f}  {label}{stale}")
            for reason in item.reasons:
                click.echo(f"             - {reason}")
        if lines:
            click.echo("  added by code (not in the model's answer):")
            for line in lines:
                click.echo(f"             - {line}")


@cli.command()
@known_errors
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


cli.add_command(batch)
cli.add_command(cache)
cli_discover.register(cli, db_option, known_errors, out, console)
cli_review.register(cli)


def main() -> None:
    # instructor logs every failed attempt at ERROR; papersift records them in `calls`.
    logging.getLogger("instructor").setLevel(logging.CRITICAL)
    cli(prog_name="papersift")


if __name__ == "__main__":
    main()
