"""The commands that find and show: index, search, similar, areas (thin; see discover.py).

They need the ``[embed]`` extra; it is imported only when one of them runs, so the rest
of the CLI works without numpy.
"""

from __future__ import annotations

import csv
import functools
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from papersift.schemas.fields import search_fields

P = ParamSpec("P")
R = TypeVar("R")
# The fields a hit shows and `similar` compares: those search filters by (the registry's
# FieldSpec.search), and the paper's area.
FIELDS = (*(spec.name for spec in search_fields()), "area")


def _embedding_errors(func: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            from papersift.extract.access.embedding import EmbeddingError
        except ImportError as error:  # numpy missing: the [embed] extra is not installed
            raise click.ClickException(
                f"search needs the [embed] extra ({error}): pip install 'papersift[embed]'"
            ) from error
        try:
            return func(*args, **kwargs)
        except EmbeddingError as error:
            raise click.ClickException(str(error)) from error
    return wrapper


def _filters(options: dict[str, Any]) -> Any:
    """The SearchFilters of a command's filter options (see _filter_options)."""
    from papersift.warehouse.search import SearchFilters

    pairs = []
    for given in options.pop("custom"):
        name, equals, value = given.partition("=")
        if not equals or not name.strip() or not value.strip():
            raise click.BadParameter(f"{given!r}: write NAME=VALUE (a user field and its "
                                     "value)", param_hint="--field")
        pairs.append((name.strip(), value.strip()))
    named = tuple((key.removeprefix(_NAMED), str(value)) for key, value in options.items()
                  if key.startswith(_NAMED) and value)
    return SearchFilters(named=named, has_numbers=options["has_numbers"],
                         area=options["area"], custom=tuple(pairs))


_NAMED = "named_"  # a field's filter option (--task...) arrives as named_task


def _filter_options(func: Callable[P, R]) -> Callable[P, R]:
    """A filter option per field the registry lets search filter by, then the others."""
    named = [click.option(f"--{spec.search[0]}", f"{_NAMED}{spec.search[0]}",
                          help=spec.search[1])
             for spec in search_fields() if spec.search is not None]
    for option in reversed((
        *named,
        click.option("--has-numbers", is_flag=True, help="Only papers with claimed gains."),
        click.option("--area", help="Only papers of this area (its id, or words of its label)."),
        click.option("--field", "custom", multiple=True, metavar="NAME=VALUE",
                     help="Only papers whose user field (--fields) NAME has VALUE (a choice "
                     "or flag exactly, another field's item containing it); repeatable."),
    )):
        func = option(func)
    return func


def _rows(hits: list[Any], *, with_ranks: bool) -> list[dict[str, Any]]:
    rows = []
    for rank, hit in enumerate(hits, start=1):
        row: dict[str, Any] = {"rank": rank, "paper_id": hit.paper_id,
                               "title": hit.fields.get("title"),
                               "source_id": hit.fields.get("source_id"),
                               "score": round(hit.score, 5)}
        if with_ranks:
            row |= {"keyword_rank": hit.keyword_rank, "vector_rank": hit.vector_rank}
        row["snippet"] = hit.snippet
        row |= {name: hit.fields.get(name) for name in FIELDS}
        row |= {name: value for name, value in hit.fields.items() if name.startswith("custom_")}
        rows.append(row)
    return rows


def paper_label(row: dict[str, Any]) -> str:
    """How a paper is shown: its title, else the input file's own id, else a short hash."""
    return str(row.get("title") or row.get("source_id")
               or row["paper_id"].removeprefix("sha256:")[:12])


def _print(rows: list[dict[str, Any]], fmt: str, out: Console, title: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if fmt == "csv":
        from papersift.warehouse.cells import sheet_safe

        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["rank"],
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows({key: sheet_safe(value) for key, value in row.items()} for row in rows)
        click.echo(buffer.getvalue(), nl=False)
        return
    table = Table(title=title, show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("paper", overflow="fold", max_width=28)
    table.add_column("score", justify="right")
    table.add_column("snippet", overflow="fold", ratio=3)
    table.add_column("fields", overflow="fold", ratio=2)
    for row in rows:
        marked = escape(row["snippet"]).replace("«", "[bold yellow]").replace("»", "[/]")
        shown = [*FIELDS, *(name for name in row if name.startswith("custom_"))]
        fields = "\n".join(f"[dim]{name}:[/] {escape(str(row[name]))}" for name in shown
                           if row.get(name))
        table.add_row(str(row["rank"]), escape(paper_label(row)),
                      f"{row['score']:.4f}", marked, fields)
    out.print(table)


def register(cli: click.Group, db_option: Callable[[Any], Any],
             known_errors: Callable[[Any], Any], out: Console, console: Console) -> None:
    """Add index, search, similar and areas to the CLI group."""
    fmt_option = click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]),
                              default="table", show_default=True)

    @cli.command("index")
    @db_option
    @click.option("--areas", "k", type=int, default=None,
                  help="Cluster into this many areas instead of choosing by silhouette.")
    @click.option("--no-areas", is_flag=True, help="Vectors and keyword index only.")
    @click.option("--remap", is_flag=True,
                  help="Cluster again even if the papers did not change.")
    @known_errors
    @_embedding_errors
    def index_command(db: Path, k: int | None, no_areas: bool, remap: bool) -> None:
        """Embed new papers (cached by text hash and model), build the keyword index, map areas."""
        from papersift.extract.interface.discover import index_collection

        summary = index_collection(db, areas=not no_areas, k=k, remap=remap)
        console.print(f"{summary.papers} papers: {summary.embedded} embedded "
                      f"({summary.embed_seconds:.1f}s), {summary.cached} from cache; keyword "
                      f"index {'rebuilt' if summary.keyword_index_built else 'current'}")
        if summary.topic_run:
            console.print(f"topic map {summary.topic_run}: {summary.areas} areas")

    @cli.command()
    @click.argument("query")
    @db_option
    @_filter_options
    @click.option("--mode", type=click.Choice(["hybrid", "keyword", "vector"]), default="hybrid",
                  show_default=True, help="Fuse both rankings, or use one alone.")
    @click.option("--limit", type=int, default=10, show_default=True)
    @fmt_option
    @known_errors
    @_embedding_errors
    def search(query: str, db: Path, mode: str, limit: int, fmt: str,
               **filters: Any) -> None:
        """Papers about QUERY: full-text BM25 and vector similarity, fused by reciprocal rank."""
        from papersift.extract.interface.discover import no_good_match
        from papersift.extract.interface.discover import search as run_search

        hits = run_search(db, query, mode=mode, limit=limit,
                          filters=_filters(filters))
        _print(_rows(hits, with_ranks=True), fmt, out, f"{mode} search: {query}")
        weak = no_good_match(hits)
        if weak:
            console.print(f"{escape(query)!r}: {weak}; try other words or --mode keyword",
                          highlight=False)

    @cli.command()
    @click.argument("paper_id", required=False)
    @click.option("--text", help="Find papers like this text instead of a stored paper.")
    @db_option
    @_filter_options
    @click.option("--limit", type=int, default=10, show_default=True)
    @fmt_option
    @known_errors
    @_embedding_errors
    def similar(paper_id: str | None, text: str | None, db: Path, limit: int, fmt: str,
                **filters: Any) -> None:
        """The papers nearest to PAPER_ID (an id or its prefix) or to --text, by cosine."""
        from papersift.extract.interface.discover import similar as run_similar

        origin, hits = run_similar(db, paper_id, text=text, limit=limit,
                                   filters=_filters(filters))
        rows = _rows(hits, with_ranks=False)
        if origin is not None:
            for row in rows:
                row["shared"] = "; ".join(_shared(origin, row))
        title = f"like {paper_label(origin) if origin else repr(text)}"
        _print(rows, fmt, out, title)

    @cli.command("areas")
    @db_option
    @fmt_option
    @known_errors
    @_embedding_errors
    def areas_command(db: Path, fmt: str) -> None:
        """The latest topic map's areas (run `papersift index` to make or refresh it)."""
        from papersift.extract.interface.discover import areas

        rows = [{**row, "terms": ", ".join(row["terms"])} for row in areas(db)]
        if fmt != "table":
            _print(rows, fmt, out, "")
            return
        table = Table(title="areas")
        for column in ("area_id", "size", "label", "terms"):
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(str(row["area_id"]), str(row["size"]), row["label"], row["terms"])
        out.print(table)


def _shared(origin: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """The field values a hit shares with the paper it is similar to."""
    shared = []
    for name in FIELDS:
        mine = {v.strip().lower() for v in str(origin.get(name) or "").split(";") if v.strip()}
        theirs = {v.strip().lower() for v in str(row.get(name) or "").split(";") if v.strip()}
        both = sorted(mine & theirs)
        if both:
            shared.append(f"{name}: {', '.join(both)}")
    return shared
