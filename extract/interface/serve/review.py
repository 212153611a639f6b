"""What the review pages and the API show: papers found by filters, and each paper's card
with its corrected items, their origin and review version, rejected items and conflicts.

Items are read from the corrected views and turned into the report's ``Item``s, so the
abstract is highlighted by the report's own code (report.render.abstract_html)."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from papersift.extract.domain.assembly.assemble import sentence_spans
from papersift.report.render import abstract_html
from papersift.warehouse import corrections, review_state
from papersift.warehouse.corrections import ITEM_TYPES, Mention, editable
from papersift.warehouse.custom import declared_fields
from papersift.warehouse.report import (
    FIELDS,
    OPTIONAL_SHOWN,
    SHOWN_FIELDS,
    Extraction,
    Item,
    PaperCard,
    Source,
    item_from_row,
)
from papersift.warehouse.repository import Repository
from papersift.warehouse.review_state import SHOWS, counts, find_papers
from papersift.warehouse.views import stored_fields

__all__ = ["SHOWS", "ReviewCard", "ReviewItem", "counts", "find_papers", "load_cards",
           "mention_for"]


@dataclass(frozen=True)
class ReviewItem:
    """An item as a reviewer sees it: the report's Item plus its identity and review."""

    item: Item
    item_type: str
    item_key: str
    origin: str  # model / corrected / added
    review: str | None  # accept, or None
    version: int
    fields: dict[str, Any]  # the editable fields' current values

    def as_dict(self) -> dict[str, Any]:
        return {"item_type": self.item_type, "item_key": self.item_key, "origin": self.origin,
                "review": self.review, "version": self.version, **self.fields,
                "evidence": self.item.evidence, "alignment": self.item.alignment,
                "mention_start": self.item.char_start, "mention_end": self.item.char_end,
                "flagged": self.item.flagged}


@dataclass(frozen=True)
class ReviewCard:
    card: PaperCard
    items: tuple[ReviewItem, ...]
    rejected: tuple[dict[str, Any], ...]
    conflicts: tuple[dict[str, Any], ...]
    reviewed_version: int  # 0: never marked reviewed
    custom_types: tuple[str, ...] = ()  # the warehouse's user fields, as custom-NAME
    optional_types: tuple[str, ...] = ()  # the optional fields a run stored items of

    @property
    def fields(self) -> tuple[str, ...]:
        """The card's sections: the default fields, the optional ones the warehouse
        holds, then the user fields."""
        return (*FIELDS, *self.optional_types, *self.custom_types)

    @property
    def add_types(self) -> tuple[str, ...]:
        """The built-in item types a reviewer may add on this card."""
        return tuple(kind for kind in ITEM_TYPES if kind in self.fields)

    @property
    def paper_id(self) -> str:
        return self.card.paper_id

    def of(self, item_type: str) -> list[ReviewItem]:
        return [item for item in self.items if item.item_type == item_type]

    def abstract(self) -> Any:
        return abstract_html(self.card)

    def as_dict(self) -> dict[str, Any]:
        return {"paper_id": self.paper_id, "text": self.card.text,
                "headline": self.card.headline,
                "contribution_types": list(self.card.contribution_types),
                "items": [item.as_dict() for item in self.items],
                "rejected": [_plain(row) for row in self.rejected],
                "conflicts": [_plain(row) for row in self.conflicts],
                "reviewed": self.reviewed_version > 0}


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in row.items()}


def _report_item(kind: str, row: dict[str, Any]) -> Item:
    spec = SHOWN_FIELDS.get(kind)
    item = item_from_row(spec, kind, row)
    return dataclasses.replace(item, canonical=None)


def load_cards(repo: Repository, paper_ids: Sequence[str]) -> list[ReviewCard]:
    """The review cards of these papers, in the order given."""
    ids = list(paper_ids)
    if not ids:
        return []
    papers = repo.run(review_state.card_papers, ids)
    sources: dict[str, list[Source]] = defaultdict(list)
    for row in repo.run(review_state.paper_sources, ids):
        sources[row["paper_id"]].append(Source(
            file=row["file"], position=row["position"], line=row["line"],
            collection=row["collection"], venue=row["venue"], year=row["year"],
            title=row["title"]))
    types = repo.run(review_state.contribution_types, ids)
    versions = repo.run(corrections.versions, ids)
    items: dict[str, list[ReviewItem]] = defaultdict(list)
    custom = tuple(spec.item_type for spec in repo.run(declared_fields))
    optional = tuple(spec.item for spec in repo.run(stored_fields)
                     if spec.optional and spec.item in OPTIONAL_SHOWN)
    for kind in (*ITEM_TYPES, *custom):
        for row in repo.run(corrections.item_rows, kind, ids):
            items[row["paper_id"]].append(ReviewItem(
                item=_report_item(kind, row), item_type=kind, item_key=row["item_key"],
                origin=row["origin"], review=row["review"],
                version=versions.get((row["paper_id"], kind, row["item_key"]), 0),
                fields={name: row.get(name) for name in editable(kind)}))
    rejected: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in repo.run(corrections.rejected_items, ids):
        rejected[row["paper_id"]].append(row)
    conflicted: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in repo.run(corrections.conflicts, ids):
        conflicted[row["paper_id"]].append(row)
    cards = []
    for paper_id in ids:
        paper = papers.get(paper_id)
        if paper is None:
            continue
        extraction = None if paper["extraction_id"] is None else Extraction(
            extraction_id=paper["extraction_id"], model=paper["model"], mode=paper["mode"],
            prompt_version=paper["prompt_version"], schema_version=paper["schema_version"],
            lenient=bool(paper["lenient"]), asks=paper["asks"])
        mine = tuple(items[paper_id])
        card = PaperCard(paper_id=paper_id, text=paper["text"],
                         sources=tuple(sources[paper_id]), extraction=extraction,
                         contribution_types=tuple(types.get(paper_id, ())),
                         items=tuple(item.item for item in mine))
        cards.append(ReviewCard(card=card, items=mine, rejected=tuple(rejected[paper_id]),
                                conflicts=tuple(conflicted[paper_id]),
                                reviewed_version=versions.get((paper_id, "paper", ""), 0),
                                custom_types=custom, optional_types=optional))
    return cards


def mention_for(text: str, start: int, end: int, selected: str) -> Mention:
    """A reviewer's selection with the sentence around it (the added item's evidence);
    the offsets are checked against the text by corrections.add_item."""
    sentence = (start, end)
    if 0 <= start < end <= len(text):
        for low, high in sentence_spans(text):
            if low <= start < high:
                sentence = (low, max(high, end))
                break
    return Mention(start=start, end=end, selected=selected, sentence=sentence)
