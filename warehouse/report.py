"""What the review report shows, read from a warehouse: one card per paper and an overview.

Everything here is plain data (no HTML). Each paper's items come from its latest
extraction; the overview's counts are aggregated in Python from those same cards, so the
page never shows a number that disagrees with the cards under it.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from papersift.schemas.fields import CUSTOM_VIEW, FieldSpec
from papersift.warehouse.custom import declared_fields
from papersift.warehouse.db import WarehouseError, connect
from papersift.warehouse.report_entities import entity_aliases, load_leaderboard
from papersift.warehouse.report_map import load_map
from papersift.warehouse.report_model import (
    CUSTOM_PREFIX,
    FIELDS,
    OPTIONAL_SHOWN,
    SHOWN_FIELDS,
    TITLES,
    Count,
    Extraction,
    GainGroup,
    Item,
    Overview,
    PaperCard,
    Price,
    ReportData,
    RunInfo,
    Source,
    Versions,
)
from papersift.warehouse.rowdicts import query_dicts
from papersift.warehouse.store import RunCounts

__all__ = ["CUSTOM_PREFIX", "FIELDS", "OPTIONAL_SHOWN", "SHOWN_FIELDS", "SHOWN_TEXT_CHARS",
           "TITLES", "Count", "Extraction", "GainGroup", "Item", "Overview", "PaperCard",
           "Price", "ReportData", "RunInfo", "Source", "Versions", "item_details",
           "item_from_row", "load_cards", "load_report", "load_runs", "normalise_name",
           "shown_text", "summarise"]


def normalise_name(name: str) -> str:
    """The key names are grouped by: case-folded, inner whitespace collapsed."""
    return re.sub(r"\s+", " ", name).strip().casefold()




def item_details(row: dict[str, Any], names: Iterable[str]) -> tuple[tuple[str, str], ...]:
    """(name, text) of the row's optional fields that have a value."""
    found = []
    for name in names:
        value = row.get(name)
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        if value not in (None, ""):
            found.append((name, str(value)))
    return tuple(found)


_COUNTS = tuple(field.name for field in dataclasses.fields(RunCounts))
_ATTRIBUTE_LABELS = (("metric_alignment", "metric"), ("baseline_alignment", "baseline"),
                     ("dataset_alignment", "dataset"))


def _unverified_attributes(row: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """A gain's attributes code did not find in the abstract: a flagged metric (kept in the
    model's words) and a rejected baseline or dataset (not stored)."""
    missing = [label for column, label in _ATTRIBUTE_LABELS if row.get(column) == "none"]
    return (("not in the abstract", ", ".join(missing)),) if missing else ()


def _item(kind: str, row: dict[str, Any],
          aliases: dict[str, tuple[str, ...]] | None = None) -> Item:
    spec = SHOWN_FIELDS.get(kind)
    return item_from_row(spec, kind, row, aliases,
                         _unverified_attributes(row) if kind == "gain" else ())


def item_from_row(spec: FieldSpec | None, kind: str, row: dict[str, Any],
                  aliases: dict[str, tuple[str, ...]] | None = None,
                  flags: tuple[tuple[str, str], ...] = ()) -> Item:
    """A row of a field's view as the report's Item (``spec`` None: a user field's):
    its label and details as declared, its canonical entity (the first it looks up), a
    number field's value and unit, a flag column ``introduced`` when it has one."""
    label = spec.label if spec is not None else "value"
    details = spec.details if spec is not None else ("unit",)
    entity = spec.entities[0].names if spec is not None and spec.entities else None
    numeric = spec is not None and spec.grounding == "number"
    entity_id = row.get(entity[0]) if entity else None
    return Item(
        canonical=row.get(entity[1]) if entity else None,
        aliases=(aliases or {}).get(str(entity_id), ()) if entity_id else (),
        field=kind,
        idx=int(row["idx"]),
        name=str(row[label]),
        details=item_details(row, details) + flags,
        evidence=str(row["evidence"] or ""),
        # highlight the item itself where code found it, else its evidence quote
        char_start=row["char_start"] if row.get("mention_start") is None
        else row["mention_start"],
        char_end=row["char_end"] if row.get("mention_end") is None else row["mention_end"],
        alignment=str(row["alignment"]),
        align_score=row["align_score"],
        value=row.get("value") if numeric else None,
        unit=row.get("unit") if numeric else None,
        value_in_evidence=row.get("value_in_evidence") if numeric else None,
        introduced=row.get("introduced") if spec is not None else None,
    )


def _custom_items(con: duckdb.DuckDBPyConnection) -> dict[str, list[Item]]:
    """Items of user-defined fields, by extraction, as fields named custom-NAME."""
    items: dict[str, list[Item]] = defaultdict(list)
    for row in query_dicts(con, f"SELECT * FROM {CUSTOM_VIEW} ORDER BY extraction_id, field, idx"):
        items[row["extraction_id"]].append(_item(CUSTOM_PREFIX + row["field"], row))
    return items


# A paper without an extraction shows at most this much of its text: a too_long input (a
# whole book in one cell) must not make the page as large as the input.
SHOWN_TEXT_CHARS = 4_000


def shown_text(text: str) -> str:
    """The text a card shows for a paper with no extraction (no offsets index it)."""
    if len(text) <= SHOWN_TEXT_CHARS:
        return text
    return (text[:SHOWN_TEXT_CHARS] + f" … [{len(text) - SHOWN_TEXT_CHARS:,} more characters "
            "not shown; the full text is in the papers table]")


def load_cards(con: duckdb.DuckDBPyConnection) -> list[PaperCard]:
    """Every paper, in order of first occurrence, with its latest extraction's items."""
    papers = query_dicts(con, """
        SELECT p.paper_id, p.text, l.extraction_id, l.model, l.mode, l.prompt_version,
               l.schema_version, l.lenient, l.asks,
               (SELECT min(s.file || chr(0) || lpad(CAST(s.position AS VARCHAR), 9, '0'))
                FROM sources s WHERE s.paper_id = p.paper_id) AS first_place
        FROM papers p LEFT JOIN latest_extractions l USING (paper_id)
        ORDER BY first_place NULLS LAST, p.paper_id
    """)
    sources: dict[str, list[Source]] = defaultdict(list)
    for row in query_dicts(con, "SELECT * FROM sources ORDER BY file, position"):
        sources[row["paper_id"]].append(Source(
            file=row["file"], position=row["position"], line=row["line"],
            collection=row["collection"], venue=row["venue"], year=row["year"],
            title=row["title"]))
    types: dict[str, list[str]] = defaultdict(list)
    for row in query_dicts(con, "SELECT extraction_id, type FROM contribution_types ORDER BY idx"):
        types[row["extraction_id"]].append(row["type"])
    items: dict[str, list[Item]] = defaultdict(list)
    aliases = entity_aliases(con)
    for kind, spec in SHOWN_FIELDS.items():
        for row in query_dicts(con, f"SELECT * FROM {spec.view} ORDER BY extraction_id, idx"):
            items[row["extraction_id"]].append(_item(kind, row, aliases))
    for extraction_id, custom in _custom_items(con).items():
        items[extraction_id].extend(custom)
    failures = {row["paper_id"]: f"{row['stage']} · {row['reason']}: {row['detail'] or ''}"
                for row in query_dicts(con, """
        SELECT paper_id, stage, reason, detail FROM failures WHERE paper_id IS NOT NULL
        QUALIFY row_number() OVER (PARTITION BY paper_id ORDER BY created DESC) = 1
    """)}
    cards = []
    for row in papers:
        extraction_id = row["extraction_id"]
        extraction = None if extraction_id is None else Extraction(
            extraction_id=extraction_id, model=row["model"], mode=row["mode"],
            prompt_version=row["prompt_version"], schema_version=row["schema_version"],
            lenient=bool(row["lenient"]), asks=row["asks"])
        cards.append(PaperCard(
            paper_id=row["paper_id"],
            text=row["text"] if extraction else shown_text(row["text"]),
            sources=tuple(sources[row["paper_id"]]),
            extraction=extraction,
            contribution_types=tuple(types.get(extraction_id or "", ())),
            items=tuple(items.get(extraction_id or "", ())),
            failure=None if extraction else failures.get(row["paper_id"]),
        ))
    return cards


def load_runs(con: duckdb.DuckDBPyConnection) -> list[RunInfo]:
    """Every run, oldest first, with the HTTP requests and re-asks it made."""
    rows = query_dicts(con, """
        SELECT r.*, json_extract_string(r.params, '$.kind') AS kind,
               (SELECT count(*) FROM calls c WHERE c.run_id = r.run_id) AS requests,
               (SELECT count(*) FROM calls c WHERE c.run_id = r.run_id AND c.ask > 1) AS reasks
        FROM runs r ORDER BY r.started, r.run_id
    """)
    return [RunInfo(
        run_id=row["run_id"], started=row["started"], finished=row["finished"],
        status=row["status"], endpoint=row["endpoint"], kind=row["kind"], model=row["model"],
        mode=row["mode"], prompt_version=row["prompt_version"],
        schema_version=row["schema_version"], papersift_version=row["papersift_version"],
        counts=RunCounts(**{name: row[name] or 0 for name in _COUNTS}),
        requests=row["requests"], reasks=row["reasks"],
    ) for row in rows]


def _count_names(names_per_paper: Iterable[Iterable[str]], top: int | None) -> tuple[Count, ...]:
    """Papers per name (grouped by normalise_name, shown in its most common spelling)."""
    papers: Counter[str] = Counter()
    spellings: dict[str, Counter[str]] = defaultdict(Counter)
    for names in names_per_paper:
        seen = set()
        for name in names:
            key = normalise_name(name)
            spellings[key][name] += 1
            if key not in seen:
                seen.add(key)
                papers[key] += 1
    ranked = sorted(papers.items(), key=lambda pair: (-pair[1], pair[0]))
    if top is not None:
        ranked = ranked[:top]
    return tuple(Count(spellings[key].most_common(1)[0][0], n) for key, n in ranked)


def _gain_groups(cards: Iterable[PaperCard]) -> tuple[GainGroup, ...]:
    grouped: dict[tuple[str, str], list[tuple[str, Item]]] = defaultdict(list)
    for card in cards:
        for item in card.of("gain"):
            grouped[normalise_name(item.shown), normalise_name(item.unit or "")].append(
                (card.paper_id, item))
    groups = []
    for members in grouped.values():
        metric = Counter(item.shown for _, item in members).most_common(1)[0][0]
        unit = Counter(item.unit for _, item in members).most_common(1)
        values = tuple(sorted(item.value for _, item in members if item.value is not None))
        groups.append(GainGroup(
            metric=metric, unit=unit[0][0], claims=len(members),
            papers=len({paper for paper, _ in members}),
            with_value=len(values),
            value_in_quote=sum(1 for _, item in members if item.value_in_evidence),
            values=values,
        ))
    groups.sort(key=lambda g: (-g.claims, -g.with_value, normalise_name(g.metric)))
    return tuple(groups)


def _most_results(cards: list[PaperCard], top: int) -> tuple[Count, ...]:
    """The papers that state the most results (gains with a number), by headline."""
    counted = [(sum(1 for g in card.of("gain") if g.value is not None), card.headline)
               for card in cards]
    ranked = sorted((pair for pair in counted if pair[0]), key=lambda p: (-p[0], p[1]))
    return tuple(Count(headline, n) for n, headline in ranked[:top])


def summarise(cards: list[PaperCard], runs: list[RunInfo], top: int | None = 10) -> Overview:
    """The overview of a set of cards (and the runs that made them); ``top`` caps the
    task and benchmark rankings (None: all)."""
    extracted = [card for card in cards if card.extraction]
    versions: Counter[tuple[str | None, str | None, str | None, str | None]] = Counter(
        (c.extraction.model, c.extraction.mode, c.extraction.prompt_version,
         c.extraction.schema_version)
        for c in extracted if c.extraction
    )
    collections: Counter[str] = Counter()
    for card in cards:
        collections.update(card.collections)
    # The tiles count what the model proposed, as before code-found fields existed.
    all_items = [item for card in cards for item in card.items if item.drafted]
    return Overview(
        papers=len(cards),
        extracted=len(extracted),
        occurrences=sum(len(card.sources) for card in cards),
        files=tuple(sorted({s.file for card in cards for s in card.sources})),
        collections=tuple(Count(name, n) for name, n in sorted(
            collections.items(), key=lambda pair: (-pair[1], pair[0]))),
        contribution_types=_count_names((c.contribution_types for c in cards), None),
        top_tasks=_count_names(([i.shown for i in c.of("task")] for c in cards), top),
        top_benchmarks=_count_names(
            ([i.shown for i in c.of("benchmark")] for c in cards), top),
        new_benchmarks=_count_names(
            ([i.shown for i in c.of("benchmark") if i.introduced]
             for c in cards), None),
        artifacts=_count_names(([i.name for i in c.of("artifact")] for c in cards), None),
        most_results=_most_results(cards, top or 10),
        gains=_gain_groups(cards),
        versions=tuple(Versions(*key, papers=n) for key, n in versions.most_common()),
        runs=tuple(runs),
        items=len(all_items),
        items_not_located=sum(1 for item in all_items if not item.located),
        numbers_unverified=sum(1 for item in all_items if item.number_unverified),
        lenient=sum(1 for c in extracted if c.extraction and c.extraction.lenient),
        custom=tuple((field, _count_names(([i.shown for i in c.of(field)] for c in cards), top))
                     for field in _custom_of(cards)),
    )


def _custom_of(cards: Iterable[PaperCard]) -> list[str]:
    """The user fields (custom-NAME) the cards hold items of, in order of appearance."""
    return list(dict.fromkeys(item.field for card in cards for item in card.items
                              if item.field.startswith(CUSTOM_PREFIX)))


def load_report(db_path: str | Path, *, top: int = 10, price: Price | None = None) -> ReportData:
    """Read everything the report shows from a warehouse, without changing it."""
    con = connect(db_path, read_only=True)
    try:
        cards = load_cards(con)
        declared = {f"{CUSTOM_PREFIX}{spec.name}": spec for spec in declared_fields(con)}
        runs = load_runs(con)
        topic_map = load_map(con)
        leaderboard = tuple(load_leaderboard(con))
    except duckdb.Error as error:
        raise WarehouseError(f"cannot read the report's data from {db_path}: {error}") from error
    finally:
        con.close()
    order = list(declared)
    custom = sorted(_custom_of(cards), key=lambda name: (
        order.index(name) if name in order else len(order), name))
    return ReportData(
        db_path=str(db_path),
        generated=datetime.now().replace(microsecond=0),
        overview=summarise(cards, runs, top=top),
        papers=tuple(cards),
        price=price,
        fields=(*FIELDS, *(item for item in OPTIONAL_SHOWN
                           if any(card.of(item) for card in cards)), *custom),
        titles={**TITLES, **{name: name.removeprefix(CUSTOM_PREFIX) for name in custom}},
        descriptions={name: declared[name].description for name in custom if name in declared},
        topic_map=topic_map,
        leaderboard=leaderboard,
    )
