"""`papersift entities ...`: see, explain, build and change canonical entities."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from papersift.extract.domain.entities.normalise import KINDS
from papersift.extract.interface.cli_common import db_option, known_errors, print_result

if TYPE_CHECKING:
    from papersift.extract.runs.canon import PassSummary

_kind = click.option("--kind", type=click.Choice(KINDS),
                     help="benchmark, method, metric or task (when a name is ambiguous).")


def _summary(summary: PassSummary) -> None:
    if summary.up_to_date:
        click.echo(f"entities up to date: nothing new ({summary.seconds:.2f}s, nothing written)")
        return
    counts = ", ".join(f"{summary.entities[k]} {k}s ({summary.merged[k]} merged)"
                       for k in summary.entities)
    click.echo(f"{summary.new_names} new spellings, {summary.decisions} decisions, "
               f"{summary.changed_keys} keys changed entity · {summary.seconds:.2f}s")
    click.echo(f"  {counts}")
    for note in summary.notes:
        click.echo(f"  note: {note}")




@click.group("entities")
def entities() -> None:
    """Canonical entities: one id for every spelling of a benchmark, method, metric or task.

    Each merge is stored with its reason (alias table, an abstract's own acronym, an
    embedding score) and can be undone; your merges and splits win over automatic ones
    and survive re-runs.
    """


@entities.command("build")
@db_option
@click.option("--aliases", "alias_files", multiple=True,
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Your alias TOML file(s), besides PAPERSIFT_ALIASES.")
@click.option("--no-embeddings", is_flag=True, help="Skip the embedding-similarity stage.")
@known_errors
def build_command(db: Path, alias_files: tuple[Path, ...], no_embeddings: bool) -> None:
    """Canonicalise new spellings (runs do this too); nothing is redone when nothing changed."""
    from papersift.extract.domain.entities.vocab import user_alias_files
    from papersift.extract.interface import entities as lib
    from papersift.extract.runs.canon import CanonOptions

    files = user_alias_files(alias_files)
    _summary(lib.build(db, CanonOptions(alias_files=files, embeddings=not no_embeddings)))


@entities.command("list")
@db_option
@_kind
@click.option("--merged", is_flag=True, help="Only entities with several spellings.")
@click.option("--unknown-metrics", is_flag=True,
              help="Only metrics the vocabulary does not know (no direction or kind).")
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table")
@known_errors
def list_command(db: Path, kind: str | None, merged: bool, unknown_metrics: bool, limit: int,
                 fmt: str) -> None:
    """Entities, most used first, with their spellings."""
    from papersift.extract.interface import entities as lib

    print_result(lib.list_entities(db, kind, merged, unknown_metrics, limit), fmt)


@entities.command("show")
@click.argument("entity")
@db_option
@_kind
@known_errors
def show_command(entity: str, db: Path, kind: str | None) -> None:
    """One ENTITY (an id like benchmark:coco, or any spelling): its spellings and why."""
    from papersift.extract.interface import entities as lib

    view = lib.show(db, entity, kind)
    ref = view.entity
    extra = f" · {view.direction} is better · {view.metric_kind}" if view.direction else ""
    click.echo(f"{ref.entity_id}  {ref.canonical}  ({ref.kind}{extra})")
    for name, key, source, papers in view.spellings:
        stated = "" if source == "items" else " · stated in an abstract"
        click.echo(f"  {name!r:40} key {key:28} {papers} paper(s){stated}")
    if view.decisions:
        click.echo("decisions:")
    for verdict, stage, a, b, score, detail, by in view.decisions:
        scored = f" {score:.3f}" if score is not None else ""
        click.echo(f"  {verdict:9} {a} ~ {b}  [{stage}{scored}, {by}] {detail or ''}")


@entities.command("merge")
@click.argument("names", nargs=-1, required=True)
@db_option
@_kind
@click.option("--note", help="Why (stored with the decision).")
@known_errors
def merge_command(names: tuple[str, ...], db: Path, kind: str | None, note: str | None) -> None:
    """Merge the entities NAMES (ids or spellings) into one: a user decision that wins."""
    from papersift.extract.interface import entities as lib

    merged, summary = lib.merge(db, names, kind, note)
    click.echo(f"merged into {merged.entity_id} ({merged.canonical}): "
               f"{len(merged.keys)} spelling keys")
    _summary(summary)


@entities.command("split")
@click.argument("entity")
@click.argument("names", nargs=-1)
@db_option
@_kind
@click.option("--note", help="Why (stored with the decision).")
@known_errors
def split_command(entity: str, names: tuple[str, ...], db: Path, kind: str | None,
                  note: str | None) -> None:
    """Take the spellings NAMES out of ENTITY (without NAMES: split it completely)."""
    from papersift.extract.interface import entities as lib

    parts, summary = lib.split(db, entity, names, kind, note)
    click.echo(f"now {len(parts)} entities: " + ", ".join(p.entity_id for p in parts))
    _summary(summary)
